package sessionbench

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

func TestCPUByRange(t *testing.T) {
	t.Parallel()
	sc := Scenario{Name: "long", Turns: 6, CPURange: 3, FactTurn: 2}
	r := Result{Scenario: sc}
	for n, ms := range []int{100, 200, 300, 400, 500, 600, 9000} { // the last is the recall question
		r.Turns = append(r.Turns, Turn{N: n + 1, CPU: time.Duration(ms) * time.Millisecond})
	}
	r.Turns[2].CPU = 900 * time.Millisecond // one slow run moves the mean, not the median
	ms := time.Millisecond
	require.Equal(t, []CPURange{{1, 3, 400 * ms, 200 * ms}, {4, 6, 500 * ms, 500 * ms}}, r.CPUByRange())
	require.InDelta(t, 2.5, r.CPUGrowth(), 1e-9)
	var miss *Target
	for _, tg := range r.Targets() {
		if tg.What == "CPU per turn, last range / first" {
			miss = &tg
		}
	}
	require.NotNil(t, miss)
	require.False(t, miss.OK)
	require.Equal(t, "2.50x", miss.Got)

	// With a baseline, the first range played beside the last, growth is
	// measured against it: the early turns ran on a quieter machine here.
	r.Baseline = []Turn{{N: 1, CPU: 450 * ms}, {N: 2, CPU: 480 * ms}, {N: 3, CPU: 9000 * ms}}
	require.InDelta(t, 500.0/480.0, r.CPUGrowth(), 1e-9)
	var out bytes.Buffer
	r.Write(&out)
	require.Contains(t, out.String(), "last range / first played beside it (medians): 1.04x")
}

// TestTargetsOfScenarioB: each of the limits for scenario B is
// checked, and one miss fails the run.
func TestTargetsOfScenarioB(t *testing.T) {
	t.Parallel()
	good := Result{Scenario: ScenarioB(), Recalled: true, Turns: []Turn{{N: 1}},
		Accounts: []openaitest.Account{{Purpose: openaitest.PurposeAgent, Prompt: 1_000_000, Cached: 910_000}}}
	good.Bill = openaitest.Total(good.Accounts)
	var out bytes.Buffer
	require.True(t, WriteTargets(&out, good), out.String())

	tests := []struct {
		name   string
		mutate func(*Result)
		want   string
	}{
		{"too much uncached", func(r *Result) { r.Accounts[0].Cached = 900_000 }, "MISS uncached prompt tokens"},
		{"billed too high", func(r *Result) { r.Accounts[0].Prompt, r.Accounts[0].Cached = 1_380_000, 1_290_000 }, "MISS billed at a 10% cached price"},
		{"over the window", func(r *Result) {
			r.Accounts = append(r.Accounts, openaitest.Account{Rejected: openaitest.RejectWindow})
		}, "MISS requests over the window"},
		{"broken pairing", func(r *Result) {
			r.Accounts = append(r.Accounts, openaitest.Account{Rejected: openaitest.RejectRules})
		}, "MISS tool-call pairing violations"},
		{"fact lost", func(r *Result) { r.Recalled = false }, "MISS early fact recalled"},
		{"a turn failed", func(r *Result) { r.Turns[0].Code = 1 }, "MISS failed turns"},
		{"a baseline turn failed", func(r *Result) { r.Baseline = []Turn{{N: 1, Code: 1}} }, "MISS failed turns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := good
			r.Accounts = append([]openaitest.Account(nil), good.Accounts...)
			r.Turns = append([]Turn(nil), good.Turns...)
			tt.mutate(&r)
			r.Bill = openaitest.Total(r.Accounts)
			var out bytes.Buffer
			require.False(t, WriteTargets(&out, r))
			require.Contains(t, out.String(), tt.want)
		})
	}
}
