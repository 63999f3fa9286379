package transcript

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/gencode/gencode/internal/session"
)

// Store is where Import writes a session.
type Store interface {
	CreateSession(ctx context.Context, cwd, model string) (session.Session, error)
	Append(ctx context.Context, sessionID string, msgs ...session.Message) ([]session.Message, error)
	SetTitle(ctx context.Context, id, title string) error
}

// ImportOptions say how Import stores a session.
type ImportOptions struct {
	Cwd, Model string
	// Count counts a message's tokens, once, before it is stored. It must be
	// safe for concurrent use: messages are counted on every core.
	Count func(session.Message) int
	// Title makes the session's title from its first user request (nil: the
	// request's first line).
	Title func(string) string
}

// importBatch is how many messages one transaction appends.
const importBatch = 2000

// Import stores msgs (as Read returns them) as a new session and returns
// it. Each message is counted once; counting, the bulk of the work, runs
// on every core.
func Import(ctx context.Context, st Store, msgs []session.Message, o ImportOptions) (session.Session, error) {
	countAll(msgs, o.Count)
	sess, err := st.CreateSession(ctx, o.Cwd, o.Model)
	if err != nil {
		return session.Session{}, err
	}
	for start := 0; start < len(msgs); start += importBatch {
		end := min(start+importBatch, len(msgs))
		if _, err := st.Append(ctx, sess.ID, msgs[start:end]...); err != nil {
			return session.Session{}, fmt.Errorf("import into session %s: %w", sess.ID, err)
		}
	}
	if title, ok := titleOf(msgs, o.Title); ok {
		if err := st.SetTitle(ctx, sess.ID, title); err != nil {
			return session.Session{}, err
		}
		sess.Title = title
	}
	sess.MessageCount = len(msgs)
	sess.LastSeq = int64(len(msgs))
	return sess, nil
}

// countAll sets every message's token count, on every core. Messages are
// handed out largest first, so one long tool output does not leave the
// other cores idle at the end.
func countAll(msgs []session.Message, count func(session.Message) int) {
	if count == nil {
		return
	}
	workers := min(runtime.GOMAXPROCS(0), len(msgs))
	next := make(chan int, len(msgs))
	for _, i := range bySize(msgs) {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				msgs[i].Tokens = count(msgs[i])
			}
		})
	}
	wg.Wait()
}

// bySize returns the indexes of msgs, largest message first.
func bySize(msgs []session.Message) []int {
	sizes := make([]int, len(msgs))
	idx := make([]int, len(msgs))
	for i, m := range msgs {
		idx[i] = i
		sizes[i] = len(m.Content)
		for _, c := range m.ToolCalls {
			sizes[i] += len(c.Arguments)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(sizes[b], sizes[a]) })
	return idx
}
