package sessionbench

import (
	"bytes"
	"strings"
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

// TestTargetsOfScenarioB: each of the issues' limits for scenario B is
// checked, and one miss fails the run. Crush's figures there: billed at
// 10% 381,351 (half: 190,675), uncached 114,782 (0.7x: 80,347).
func TestTargetsOfScenarioB(t *testing.T) {
	t.Parallel()
	good := Result{Scenario: ScenarioB(), Recalled: true, Turns: []Turn{{N: 1}},
		Accounts: []openaitest.Account{{Purpose: openaitest.PurposeAgent, Prompt: 1_000_000, Cached: 921_000}}}
	good.Bill = openaitest.Total(good.Accounts)
	var out bytes.Buffer
	require.True(t, WriteTargets(&out, good), out.String())

	tests := []struct {
		name   string
		mutate func(*Result)
		want   string
	}{
		{"too much uncached", func(r *Result) { r.Accounts[0].Cached = 919_000 }, "MISS uncached prompt tokens"},
		{"billed too high", func(r *Result) { r.Accounts[0].Prompt, r.Accounts[0].Cached = 1_380_000, 1_301_000 }, "MISS billed at a 10% cached price"},
		{"too many prompt tokens", func(r *Result) { r.Accounts[0].Prompt, r.Accounts[0].Cached = 1_400_000, 1_330_000 }, "MISS total prompt tokens"},
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

// TestTargetsAgainstCrush: the long scenario is held to half of Crush's
// bill and 0.7x its uncached tokens, on a held-out seed too; a shortened
// run has no Crush figures to compare with, and says so.
func TestTargetsAgainstCrush(t *testing.T) {
	t.Parallel()
	c, ok := CrushReference(ScenarioLong())
	require.True(t, ok)
	require.Equal(t, Crush{Uncached: 603_721, Billed10: 1_942_819}, Crush{Uncached: c.Uncached, Billed10: c.Billed10})
	bill := func(prompt, cached int) Result {
		r := Result{Scenario: ScenarioLong(), Recalled: true,
			Accounts: []openaitest.Account{{Purpose: openaitest.PurposeAgent, Prompt: prompt, Cached: cached}}}
		r.Bill = openaitest.Total(r.Accounts)
		return r
	}
	find := func(r Result, what string) Target {
		for _, tg := range r.Targets() {
			if tg.What == what {
				return tg
			}
		}
		t.Fatalf("no target %q in %+v", what, r.Targets())
		return Target{}
	}
	// 400k uncached + 0.1 x 5.5M cached = 950k: 0.49x and 0.66x.
	r := bill(5_900_000, 5_500_000)
	require.True(t, find(r, "billed at a 10% cached price").OK)
	require.True(t, find(r, "uncached prompt tokens").OK)
	require.Equal(t, "400000 (0.66x Crush)", find(r, "uncached prompt tokens").Got)

	// 430k uncached: over 0.7x Crush's 603,721.
	r = bill(5_930_000, 5_500_000)
	require.False(t, find(r, "uncached prompt tokens").OK)
	// 300k uncached + 0.1 x 7M cached = 1M: over half of 1,942,819.
	r = bill(7_300_000, 7_000_000)
	require.False(t, find(r, "billed at a 10% cached price").OK)
	require.True(t, find(r, "uncached prompt tokens").OK)

	r.Scenario.Seed = 2
	require.False(t, find(r, "billed at a 10% cached price").OK, "a held-out seed keeps the sizes, and the reference")

	r.Scenario.UserWords = 60
	for _, tg := range r.Targets() {
		require.NotContains(t, tg.Want, "Crush", "Crush's figures are for 40-word messages, not 60")
	}
	r.Scenario.UserWords = ScenarioLong().UserWords

	r.Scenario.Turns = 40
	for _, tg := range r.Targets() {
		require.NotContains(t, tg.Want, "Crush", "40 turns are not the 600 Crush's figures are for")
	}
	var out bytes.Buffer
	r.Write(&out)
	require.Contains(t, out.String(), "none for 40 turns of long")
}

// TestSeedChangesWordsNotSizes: a held-out variant sends other text of
// the same length; seed 0 is the scenario's own text.
func TestSeedChangesWordsNotSizes(t *testing.T) {
	t.Parallel()
	sc := ScenarioLong()
	held := sc
	held.Seed = 2
	require.Equal(t, sc.Prompt(7), ScenarioLong().Prompt(7))
	require.NotEqual(t, sc.Prompt(7), held.Prompt(7))
	require.Equal(t, len(strings.Fields(sc.Prompt(7))), len(strings.Fields(held.Prompt(7))))
	require.Contains(t, held.Prompt(sc.FactTurn), Fact)
}
