package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func openStore(t testing.TB) *Store {
	t.Helper()
	raw, err := emptyStore()
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), raw, 0o600))
	s, err := Open(context.Background(), dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// emptyStore is the file of a new, migrated store, made once for the test
// binary, as sessiontest.Open does for other packages (it cannot be
// imported here): migrating is most of what opening a new store costs
// under -race. The tests of Open and of the migrations open theirs from
// nothing.
var emptyStore = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "gencode-empty-store-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	st, err := Open(context.Background(), dir)
	if err != nil {
		return nil, err
	}
	// Closing the last connection checkpoints the write-ahead log into
	// the file and removes it: the file is the whole store.
	if err := st.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, FileName))
})

func TestOpenIsPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	s, err := Open(context.Background(), dir)
	require.NoError(t, err)
	defer s.Close()
	sess, err := s.CreateSession(context.Background(), "/w", "m")
	require.NoError(t, err)
	_, err = s.Append(context.Background(), sess.ID, Message{Role: RoleUser, Content: "secret code"})
	require.NoError(t, err)

	st, err := os.Stat(dir)
	require.NoError(t, err)
	if got := st.Mode().Perm(); got != 0o700 {
		t.Errorf("data dir mode = %o, want 700", got)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, e := range entries {
		info, err := e.Info()
		require.NoError(t, err)
		if got := info.Mode().Perm(); got&0o077 != 0 {
			t.Errorf("%s mode = %o, want no group/other access", e.Name(), got)
		}
	}
}

func TestAppendAndLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess, err := s.CreateSession(ctx, "/w", "gpt-4o")
	require.NoError(t, err)
	code := 2
	in := []Message{
		{Role: RoleUser, Content: "hi", Tokens: 5},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "Bash", Arguments: `{"command":"ls"}`}}, Tokens: 9},
		{Role: RoleTool, ToolCallID: "c1", Name: "Bash", Content: "head…tail", Full: "head middle tail", Tokens: 4,
			Meta: Meta{Tool: "Bash", Command: "ls", ExitCode: &code, Failed: true, Capped: true}},
	}
	out, err := s.Append(ctx, sess.ID, in...)
	require.NoError(t, err)
	for i, m := range out {
		if m.Seq != int64(i+1) {
			t.Errorf("Append()[%d].Seq = %d, want %d", i, m.Seq, i+1)
		}
	}
	got, err := s.Messages(ctx, sess.ID, 1, 0)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, in[1].ToolCalls, got[1].ToolCalls)
	require.Equal(t, "head middle tail", got[2].Text())
	require.Equal(t, 2, *got[2].Meta.ExitCode)
	require.True(t, got[2].Meta.Capped)

	sess, err = s.Session(ctx, sess.ID[:4])
	require.NoError(t, err)
	require.Equal(t, 3, sess.MessageCount)
	require.EqualValues(t, 3, sess.LastSeq)

	tail, err := s.Tail(ctx, sess.ID, 2)
	require.NoError(t, err)
	require.EqualValues(t, 2, tail[0].Seq)
}

func TestSessionLookup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Unix(1000, 0)
	s, err := Open(ctx, t.TempDir(), WithClock(func() time.Time { now = now.Add(time.Second); return now }))
	require.NoError(t, err)
	defer s.Close()
	a, _ := s.CreateSession(ctx, "/a", "m")
	b, _ := s.CreateSession(ctx, "/a", "m")
	c, _ := s.CreateSession(ctx, "/c", "m")
	_, err = s.Append(ctx, a.ID, Message{Role: RoleUser, Content: "x"})
	require.NoError(t, err)

	latest, err := s.LatestSession(ctx, "/a")
	require.NoError(t, err)
	require.Equal(t, a.ID, latest.ID, "the session appended to last is the latest")
	_, err = s.LatestSession(ctx, "/nowhere")
	require.ErrorIs(t, err, ErrNotFound)
	_, err = s.Session(ctx, "zzzz")
	require.ErrorIs(t, err, ErrNotFound)
	got, err := s.Session(ctx, c.ID)
	require.NoError(t, err)
	require.Equal(t, "/c", got.Cwd)
	list, err := s.Sessions(ctx, 0)
	require.NoError(t, err)
	require.Len(t, list, 3)
	_ = b
}

func seed(t testing.TB, s *Store, n int) Session {
	t.Helper()
	ctx := context.Background()
	sess, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	const batch = 1000
	for i := 0; i < n; i += batch {
		msgs := make([]Message, 0, batch)
		for j := i; j < n && j < i+batch; j++ {
			msgs = append(msgs, Message{Role: RoleUser, Content: fmt.Sprintf("message %d %s", j+1, strings.Repeat("x", 900)), Tokens: 200})
		}
		_, err := s.Append(ctx, sess.ID, msgs...)
		require.NoError(t, err)
	}
	return sess
}

func TestApplySummaryRangesAndMerge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess := seed(t, s, 30)

	first, err := s.ApplySummary(ctx, Summary{SessionID: sess.ID, FromSeq: 1, ToSeq: 10, Content: "a"}, nil, false)
	require.NoError(t, err)
	// A background summary that raced with the first one is refused whole.
	_, err = s.ApplySummary(ctx, Summary{SessionID: sess.ID, FromSeq: 5, ToSeq: 15, Content: "late"}, nil, false)
	require.ErrorIs(t, err, ErrRangeTaken)
	// Past the log's end.
	_, err = s.ApplySummary(ctx, Summary{SessionID: sess.ID, FromSeq: 11, ToSeq: 31}, nil, false)
	require.Error(t, err)
	second, err := s.ApplySummary(ctx, Summary{SessionID: sess.ID, FromSeq: 11, ToSeq: 20, Content: "b"}, nil, false)
	require.NoError(t, err)

	v, err := s.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	require.Len(t, v.Summaries, 2)
	require.EqualValues(t, 20, v.SummarizedThrough())
	require.Len(t, v.Messages, 10)
	require.EqualValues(t, 21, v.Messages[0].Seq)

	merged, err := s.ApplySummary(ctx, Summary{SessionID: sess.ID, FromSeq: 1, ToSeq: 20, Content: "ab",
		Merged: []string{first.ID, second.ID}}, []string{first.ID, second.ID}, false)
	require.NoError(t, err)
	active, err := s.Summaries(ctx, sess.ID, false)
	require.NoError(t, err)
	require.Len(t, active, 1)
	require.Equal(t, merged.ID, active[0].ID)
	all, err := s.Summaries(ctx, sess.ID, true)
	require.NoError(t, err)
	require.Len(t, all, 3)
	// The originals are all still there.
	msgs, err := s.Messages(ctx, sess.ID, 1, 0)
	require.NoError(t, err)
	require.Len(t, msgs, 30)
	require.Contains(t, msgs[0].Content, "message 1 ")
}

func TestApplySummaryConcurrentOnlyOneWins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess := seed(t, s, 40)
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, taken := 0, 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := s.ApplySummary(ctx, Summary{SessionID: sess.ID, FromSeq: 1, ToSeq: int64(10 + i)}, nil, false)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, ErrRangeTaken):
				taken++
			default:
				t.Errorf("ApplySummary: %v", err)
			}
		}(i)
	}
	wg.Wait()
	require.Equal(t, 1, wins)
	require.Equal(t, 7, taken)
}

func TestDeleteOriginalsIsAudited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess := seed(t, s, 12)
	sum, err := s.ApplySummary(ctx, Summary{SessionID: sess.ID, FromSeq: 1, ToSeq: 5}, nil, true)
	require.NoError(t, err)
	msgs, err := s.Messages(ctx, sess.ID, 1, 0)
	require.NoError(t, err)
	require.Len(t, msgs, 12, "deleted messages keep their place in the log")
	require.True(t, msgs[0].Meta.Deleted)
	require.NotContains(t, msgs[0].Content, "message 1 ")
	require.Contains(t, msgs[5].Content, "message 6 ")
	dels, err := s.Deletions(ctx, sess.ID)
	require.NoError(t, err)
	require.Equal(t, []Deletion{{SummaryID: sum.ID, FromSeq: 1, ToSeq: 5, Messages: 5, At: dels[0].At}}, dels)
}

func TestReopenKeepsEverything(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	require.NoError(t, err)
	sess := seed(t, s, 5)
	require.NoError(t, s.Close())
	s, err = Open(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	v, err := s.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	require.Len(t, v.Messages, 5)
}

// BenchmarkAppend compares appending one message to a session of 100 and of
// 100,000 messages: the log's append must not depend on its length.
func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("at=%d", n), func(b *testing.B) {
			s := openStore(b)
			sess := seed(b, s, n)
			msg := Message{Role: RoleAssistant, Content: strings.Repeat("y", 1024), Tokens: 256}
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.Append(ctx, sess.ID, msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadView loads the view of a 10,000-message session; tokens are
// stored, so no tokenizer runs here.
func BenchmarkLoadView(b *testing.B) {
	s := openStore(b)
	sess := seed(b, s, 10_000)
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.LoadView(ctx, sess.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadViewOfCalls loads the view of a 2,000-message session of
// tool calls and their results, as the agent does before each request:
// each message's calls or meta is JSON the store decodes.
func BenchmarkLoadViewOfCalls(b *testing.B) {
	s := openStore(b)
	ctx := context.Background()
	sess, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(b, err)
	for i := range 1000 {
		id := fmt.Sprintf("call_%d", i)
		exit := i % 2
		_, err := s.Append(ctx, sess.ID,
			Message{Role: RoleAssistant, Tokens: 40, ToolCalls: []ToolCall{{ID: id, Name: "Bash",
				Arguments: fmt.Sprintf(`{"command":"go test ./pkg%d/...","timeout":120}`, i)}}},
			Message{Role: RoleTool, ToolCallID: id, Name: "Bash", Tokens: 200, Content: strings.Repeat("ok ", 200),
				Meta: Meta{Tool: "Bash", Command: fmt.Sprintf("go test ./pkg%d/...", i), ExitCode: &exit,
					Changes: &FileChanges{Observed: true, Modified: []string{fmt.Sprintf("pkg%d/a.go", i)}}}})
		require.NoError(b, err)
	}
	for b.Loop() {
		if _, err := s.LoadView(ctx, sess.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPromptsOfAProject: the messages the user sent in a working
// directory's sessions, across sessions, oldest first, the last n; other
// directories' and other roles' are left out; pastes keep their spans.
func TestPromptsOfAProject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st, err := Open(ctx, t.TempDir(), WithClock(func() time.Time { now = now.Add(time.Second); return now }))
	require.NoError(t, err)
	defer st.Close()
	add := func(cwd string, texts ...string) {
		s, err := st.CreateSession(ctx, cwd, "m")
		require.NoError(t, err)
		for _, tx := range texts {
			_, err := st.Append(ctx, s.ID, Message{Role: RoleUser, Content: tx, Meta: Meta{Pastes: []Paste{{Start: 0, End: 1, N: 1}}}},
				Message{Role: RoleAssistant, Content: "answer to " + tx})
			require.NoError(t, err)
		}
	}
	add("/proj", "one", "two")
	add("/other", "elsewhere")
	add("/proj", "three")
	got, err := st.Prompts(ctx, "/proj", 10, 0)
	require.NoError(t, err)
	var texts []string
	for _, m := range got {
		texts = append(texts, m.Content)
		require.Equal(t, RoleUser, m.Role)
		require.Len(t, m.Meta.Pastes, 1)
	}
	require.Equal(t, []string{"one", "two", "three"}, texts)
	got, err = st.Prompts(ctx, "/proj", 2, 0)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "two", got[0].Content)
	got, err = st.Prompts(ctx, "/none", 2, 0)
	require.NoError(t, err)
	require.Empty(t, got)
}
