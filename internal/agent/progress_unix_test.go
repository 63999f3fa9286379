//go:build unix

package agent

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/tokens"
	"github.com/gencode/gencode/internal/tools"
)

// TestBashProgressArrivesBeforeTheResult: the model's Bash command prints,
// then waits on a FIFO the test holds. Its output reaches the front end as
// an EventToolProgress while it still runs; the result the log keeps and
// the model is sent is the whole output, as without progress.
func TestBashProgressArrivesBeforeTheResult(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	require.NoError(t, syscall.Mkfifo(gate, 0o600))
	a := New(f.store, llm.New(llm.Config{BaseURL: f.srv.URL(), APIKey: "test"}), tools.New(tools.Options{WorkDir: dir, Yolo: true}),
		tokens.New("gpt-4o-mini"), Options{Model: "gpt-4o-mini", MaxIterations: 5, Window: 8192})
	f.srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "call_1", Name: "Bash", Arguments: `{"command":"echo ready; cat gate; echo after"}`}),
		openaitest.Text("done"),
	)
	ch := a.Start(context.Background(), f.sess.ID, "run it")
	timeout := time.After(20 * time.Second)
	var live *ToolProgress
	for live == nil {
		select {
		case ev, ok := <-ch:
			require.True(t, ok, "the turn ended before its command printed")
			if ev.Kind == EventMessage && ev.Message.Role == session.RoleTool {
				t.Fatalf("the result came before any progress: %+v", ev.Message)
			}
			if ev.Kind == EventToolProgress && ev.Progress.Tail != "" {
				live = ev.Progress
			}
		case <-timeout:
			t.Fatal("no progress while the command ran")
		}
	}
	require.Equal(t, "call_1", live.CallID)
	require.Equal(t, "ready\n", live.Tail)

	w, err := os.OpenFile(gate, os.O_WRONLY, 0) // the command goes on
	require.NoError(t, err)
	require.NoError(t, w.Close())
	evs := collect(ch)
	require.Equal(t, EventDone, lastEvent(evs).Kind, "%+v", lastEvent(evs))

	const want = "ready\nafter\n[exit code 0]"
	msgs, err := f.store.Messages(context.Background(), f.sess.ID, 3, 3)
	require.NoError(t, err)
	require.Equal(t, want, msgs[0].Content, "the log keeps the whole result")
	reqs := f.srv.Requests()
	require.Len(t, reqs, 2)
	require.Equal(t, want, reqs[1].Messages[3].Content, "the model is sent the whole result")
}
