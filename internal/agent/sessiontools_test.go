package agent

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session/sessiontest"
	"github.com/gencode/gencode/internal/tools"
)

// sessionTools is a hand-written sessionRunner: it records the session
// each call was run for.
type sessionTools struct {
	echoTools
	mu       sync.Mutex
	sessions []string
}

func (s *sessionTools) RunInSession(ctx context.Context, sessionID string, c tools.Call) tools.Result {
	s.mu.Lock()
	s.sessions = append(s.sessions, sessionID)
	s.mu.Unlock()
	return s.Run(ctx, c)
}

func TestToolsAreGivenTheTurnsSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	store := sessiontest.Open(t)
	st := &sessionTools{}
	a := New(store, llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "test"}), st, vocabs.Counter("gpt-4o-mini"),
		Options{Model: "gpt-4o-mini", WorkDir: "/w", MaxIterations: 5, Window: 8192})

	var want []string
	for range 2 { // one agent, turns of two sessions
		sess, err := store.CreateSession(ctx, t.TempDir(), "gpt-4o-mini")
		require.NoError(t, err)
		srv.Enqueue(openaitest.Calls(openaitest.ToolCall{Name: "Echo", Arguments: `{"text":"x"}`}), openaitest.Text("done"))
		evs := collect(a.Start(ctx, sess.ID, "go"))
		require.Equal(t, EventDone, lastEvent(evs).Kind, "%+v", lastEvent(evs))
		want = append(want, sess.ID)
	}
	require.Equal(t, want, st.sessions)
}
