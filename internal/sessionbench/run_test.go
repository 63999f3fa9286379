package sessionbench

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestRunThroughBinary plays a short scenario through the built binary: every
// turn runs, the early fact is recalled, and with no compaction each agent
// request re-reads all of the previous one from the cache (the system
// prompt and the history are byte-stable across print-mode runs).
func TestRunThroughBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gencode binary")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "gencode")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/gencode/gencode/cmd/gencode").CombinedOutput()
	require.NoError(t, err, "%s", out)

	sc := ScenarioB()
	sc.Turns, sc.ReadEvery = 5, 2
	res, err := Run(context.Background(), sc, Options{Binary: bin})
	require.NoError(t, err)
	require.Len(t, res.Turns, 6, "5 turns and the recall question")
	for _, tn := range res.Turns {
		require.Zero(t, tn.Code, "turn %d: %s", tn.N, tn.Stderr)
		require.Positive(t, tn.CPU, "turn %d", tn.N)
	}
	require.True(t, res.Recalled, res.RecallAnswer)
	require.Zero(t, res.Bill.SummaryRequests, "5 short turns do not compact")
	require.Equal(t, 1, res.SystemPrompts)
	require.Zero(t, res.Alternation)
	require.Zero(t, res.Breaks, "no request rewrote the history sent before")

	// Turns 2 and 4 read a file: two requests each; the others one.
	require.Len(t, res.Accounts, 8)
	for i, a := range res.Accounts {
		require.Equal(t, openaitest.PurposeAgent, a.Purpose)
		if i == 0 {
			require.Zero(t, a.Cached)
			continue
		}
		prev := res.Accounts[i-1]
		require.Equal(t, prev.Messages, a.SharedMessages, "request %d shares all of request %d", i+1, i)
		require.Equal(t, prev.Prompt-3, a.Cached, "request %d: all but the reply priming of request %d is cached", i+1, i)
	}
	require.Equal(t, res.Bill.Prompt-res.Bill.Cached, res.Bill.Uncached())
}
