package agent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session/sessiontest"
)

// TestRetriesAreEvents: while the client waits to retry a refused
// request, the turn says so, before the answer comes.
func TestRetriesAreEvents(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	srv.Enqueue(
		openaitest.Reply{Status: 429, Header: map[string]string{"Retry-After": "3"}, Body: `{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}`},
		openaitest.Text("answer"),
	)
	store := sessiontest.Open(t)
	sess, err := store.CreateSession(context.Background(), "/w", "m")
	require.NoError(t, err)
	var waited []time.Duration
	client := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "test", Sleep: func(_ context.Context, d time.Duration) error {
		waited = append(waited, d)
		return nil
	}})
	a := New(store, client, nil, vocabs.Counter("gpt-4o-mini"), Options{Model: "m", WorkDir: "/w", Window: 8192})
	var kinds []EventKind
	var retry string
	for ev := range a.Start(context.Background(), sess.ID, "hi") {
		if ev.Kind == EventTextDelta || ev.Kind == EventMessage || ev.Kind == EventUsage || ev.Kind == EventContext {
			continue
		}
		kinds = append(kinds, ev.Kind)
		if ev.Kind == EventRetry {
			retry = ev.Text
		}
	}
	require.Equal(t, []EventKind{EventRetry, EventDone}, kinds)
	require.Equal(t, "rate limited, retrying in 3 s (2/5)", retry)
	require.Equal(t, []time.Duration{3 * time.Second}, waited)
}
