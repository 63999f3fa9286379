package sessionbench

// Crush is what Crush's requests cost on a scenario, on the same fake
// server and billing model: the reference the goals of issue 30 compare
// gencode with (billed at a 10% cached price at most half of Crush's,
// uncached prompt tokens at most 0.7 of Crush's).
type Crush struct {
	// Prompt is the total prompt tokens (0: not known).
	Prompt int
	// Uncached is the prompt tokens not a prefix of the previous request.
	Uncached int
	// Billed10 is the bill at a 10% cached price: Uncached + 0.1 x cached.
	Billed10 int
	// Source says where the figures come from.
	Source string
}

// The goals of issue 30, as shares of Crush's figures.
const (
	crushBilledShare   = 0.5
	crushUncachedShare = 0.7
)

// CrushReference is Crush's figures for a scenario played as defined: its
// turns, message sizes and window (any Seed: a seed changes the words, not
// the sizes), and whether there are any.
//
// Scenario B was measured with Crush itself on this fake in issue 11
// (150 turns, 32k window): 2,780,473 prompt tokens, 114,782 uncached,
// billed at 10% 381,351. Its version was not recorded.
//
// Scenario long could not be measured here: the module proxy refuses
// github.com/charmbracelet/crush (403 on `go install ...@latest`, on
// @v0.10.0 and on @main, 2026-12-01), and nothing else is reachable. Its
// figures are derived from gencode's on main at 596f79a (one run of
// `benchsession -scenarios long`: billed at 10% 1,398,830, uncached
// 561,461) and the ratios issue 30 measured side by side over 600 turns
// (billed 0.72x Crush, uncached 0.93x): 1,398,830 / 0.72 and
// 561,461 / 0.93. They are estimates, not a measurement.
func CrushReference(sc Scenario) (Crush, bool) {
	same := func(base Scenario) bool {
		return sc.Name == base.Name && sc.Turns == base.Turns && sc.UserWords == base.UserWords &&
			sc.AnswerWords == base.AnswerWords && sc.Window == base.Window
	}
	switch {
	case same(ScenarioB()):
		return Crush{Prompt: 2_780_473, Uncached: 114_782, Billed10: 381_351,
			Source: "measured with Crush on this fake (issue 11)"}, true
	case same(ScenarioLong()):
		return Crush{Uncached: 603_721, Billed10: 1_942_819,
			Source: "derived: gencode 596f79a's figures over issue 30's ratios 0.72x and 0.93x"}, true
	}
	return Crush{}, false
}
