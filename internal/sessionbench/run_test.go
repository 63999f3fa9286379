package sessionbench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/gencodetest"
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
	bin := buildGencode(t)

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

// TestBaselineRunsBesideTheLastRange: with a baseline, the first range's
// turns are played again in a session of their own, each one right before a
// turn of the last range, and the growth target compares the two.
func TestBaselineRunsBesideTheLastRange(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gencode binary")
	}
	t.Parallel()
	bin := buildGencode(t)

	sc := ScenarioLong()
	sc.Turns, sc.CPURange, sc.FactTurn = 5, 2, 0 // ranges 1-2, 3-4, 5
	dir := t.TempDir()
	res, err := Run(context.Background(), sc, Options{Binary: bin, Dir: dir})
	require.NoError(t, err)
	require.Len(t, res.Turns, 5)
	require.Len(t, res.Baseline, 1, "the last range (turn 5) has one turn, so one baseline turn")
	earlier, err := os.ReadDir(filepath.Join(dir, "baseline", "home", "project", "earlier-notes"))
	require.NoError(t, err)
	require.Len(t, earlier, 4, "the baseline's project holds the 4 notes the session wrote before the last range")
	b := res.Baseline[0]
	require.Zero(t, b.Code, b.Stderr)
	require.Equal(t, 1, b.N)
	require.Contains(t, b.Stdout, "Done with turn 1.", "the baseline plays turn 1")
	require.True(t, b.Start.After(res.Turns[3].Start) && b.Start.Before(res.Turns[4].Start),
		"the baseline turn runs between turns 4 and 5")
	require.Len(t, res.Accounts, 5*2, "each turn writes and runs in one call, then answers; the baseline's requests are not counted")

	got, _ := res.BaselineCPU()
	ranges := res.CPUByRange()
	require.InDelta(t, float64(ranges[len(ranges)-1].Median)/float64(got.Median), res.CPUGrowth(), 1e-9)
}

// buildGencode returns the binary the tests of this package run.
func buildGencode(t *testing.T) string {
	t.Helper()
	bin, err := gencodetest.Binary()
	require.NoError(t, err)
	return bin
}
