package facts

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKeptKey(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "  ", "The Port  is 7407.", "ÉTÉ\tÀ  Paris !?", "a\u00a0b\u2003c", "bad \xff utf8", "Straße İstanbul KELVIN \u212a", "done...;"} {
		want := strings.TrimRight(strings.ToLower(strings.Join(strings.Fields(s), " ")), ".;!? ")
		if got := KeptKey(s); got != want {
			t.Errorf("KeptKey(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestCapKept: past the bound, the record keeps what a view of the
// largest budget could show, the memos and rules first and the newest
// first among equals, in their order, and counts the rest.
func TestCapKept(t *testing.T) {
	t.Parallel()
	var items []string
	items = append(items, "Remember: the deploy key is in vault 7.") // a memo, the oldest
	for i := range 1000 {
		items = append(items, fmt.Sprintf("The port of service %d is %d.", i, 7000+i))
	}
	items = append(items, "Never push to main.", "The staging port is 7407.") // a rule; the newest stated value
	items = append(items, "the port of service 998 is  7998")                 // said before: merged
	kept, left := CapKept(items)
	has := func(s string) bool { return slices.Contains(kept, s) }
	require.True(t, has(items[0]), "the memo is kept, though the oldest")
	require.True(t, has("Never push to main."))
	require.True(t, has("The staging port is 7407."), "the newest stated value is kept")
	require.True(t, has("The port of service 998 is 7998."))
	require.False(t, has(items[1]), "the oldest stated value is left out")
	require.False(t, has(items[len(items)-1]), "a sentence said before is merged")
	require.Equal(t, len(items)-1, len(kept)+left, "every distinct sentence is kept or counted")
	require.Equal(t, items[0], kept[0], "kept in their order")
	cost := 0
	for _, k := range kept {
		cost += len(k) + 2
	}
	require.LessOrEqual(t, cost, MaxKeptChars)
	require.Greater(t, cost, MaxKeptChars-100, "the bound is filled")

	few := items[:10]
	kept, left = CapKept(few)
	require.Equal(t, few, kept)
	require.Zero(t, left)
}

// keepRankByPatterns is KeepRank without its word filters: the patterns
// alone, as they decide.
func keepRankByPatterns(s string) (int, bool) {
	switch {
	case memoRe().MatchString(s) || labelRe().MatchString(s):
		return RankMemo, true
	case constraintRe().MatchString(s):
		return RankConstraint, true
	case preferenceRe().MatchString(s):
		return RankOther, true
	case len(s) <= maxStatedChars && statedRe().MatchString(s) && valueRe().MatchString(s):
		return RankOther, true
	}
	return 0, false
}

var rankSentences = []string{
	"Remember: the deploy key is in vault 7.", "REMEMBER this", "Note that the API is v2.", "keep in mind the quota",
	"Don't forget the tests", "DO NOT FORGET", "For the record, it failed", "IMPORTANT: read me", "FACT07: the port is 7407",
	"Always run go vet.", "NEVER push to main", "You must not delete it", "Make sure it builds", "only use POSIX sh",
	"Avoid globals", "Prefer small functions", "without comments please", "keep the output verbatim", "Keep it as is",
	"The staging port is 7407.", "the config lives in /etc/app", "x = 3", "PORT=8080", "it runs on :9000", "this is fine",
	"The answer equals 42", "it should be 5", "nothing to see here", "", "ReMeMbEr", "Kelvin \u212ake\u212ap in mind",
	"the longſ muſt hold", "\u017fhould be 4", "IS 5", "remembering is 9 things", "unimportant 3 is",
	"Héllo wörld is 3", "the value is `x`", "DON'T", "don\u2019t go", "never\u00a0ever", strings.Repeat("the port is 7. ", 20),
}

func TestKeepRankFiltersChangeNothing(t *testing.T) {
	t.Parallel()
	for _, s := range rankSentences {
		gotRank, gotOK := KeepRank(s)
		wantRank, wantOK := keepRankByPatterns(s)
		if gotRank != wantRank || gotOK != wantOK {
			t.Errorf("KeepRank(%q) = %d, %v, want %d, %v", s, gotRank, gotOK, wantRank, wantOK)
		}
	}
}

// BenchmarkKeepRank ranks kept sentences with and without the word
// filters, one run:
//
//	go test ./internal/facts -run '^$' -bench KeepRank
func BenchmarkKeepRank(b *testing.B) {
	var kept []string
	for i := range 421 {
		kept = append(kept, fmt.Sprintf("The port of service %d is %d.", i, 7000+i))
	}
	for _, tt := range []struct {
		name string
		rank func(string) (int, bool)
	}{{"patterns", keepRankByPatterns}, {"filtered", KeepRank}} {
		b.Run(tt.name+"/sentences=421", func(b *testing.B) {
			for b.Loop() {
				for _, s := range kept {
					tt.rank(s)
				}
			}
		})
	}
}
