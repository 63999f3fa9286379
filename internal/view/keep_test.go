package view

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/facts"
)

func TestJoinKept(t *testing.T) {
	t.Parallel()
	facts := func(n int) []string {
		var out []string
		for i := 1; i <= n; i++ {
			out = append(out, fmt.Sprintf("FACT%02d: the staging port is %d", i, 7400+i))
		}
		return out
	}
	long := func(i int) string {
		return fmt.Sprintf("Prefer %d small functions without ", i) + strings.Repeat("long winded prose ", 12)
	}
	tests := []struct {
		name      string
		items     []string
		chars     int
		wantAll   []string // each shown whole
		wantCut   []string // each shown, shortened (its head)
		wantGone  []string
		wantNotes string // the note on what was left out; "" none
	}{
		{name: "all fit", items: facts(5), chars: 1000, wantAll: facts(5)},
		{name: "no limit", items: facts(40), chars: 0, wantAll: facts(40)},
		{name: "duplicates merged", items: append(facts(3), "fact01: the staging port is 7401.", facts(3)[1]), chars: 1000,
			wantAll: facts(3)},
		{name: "forty facts in a 6,000 window's fallback budget", items: facts(40), chars: 1800, wantAll: facts(40)},
		{name: "prose shortened before anything is left out",
			items: append([]string{long(1), "Never push to main."}, facts(10)...), chars: 640,
			wantAll: append([]string{"Never push to main."}, facts(10)...), wantCut: []string{"Prefer 1 small functions without"}},
		{name: "the least important go first",
			items: append([]string{long(1), long(2), "Always run go vet."}, facts(20)...), chars: 720,
			wantAll: append([]string{"Always run go vet."}, facts(20)...), wantGone: []string{"Prefer 1", "Prefer 2"},
			wantNotes: "(2 not shown to fit"},
		{name: "memos dropped last, the oldest first", items: facts(40), chars: 600,
			wantAll: facts(40)[25:], wantGone: facts(40)[:10], wantNotes: "not shown to fit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := joinKept(tt.items, tt.chars, 0)
			if tt.chars > 0 {
				require.LessOrEqual(t, len(out), tt.chars+120, "joinKept(%d items, %d) = %d chars", len(tt.items), tt.chars, len(out))
			}
			for _, s := range tt.wantAll {
				require.Contains(t, out, s, "%q not shown whole", s)
			}
			for _, s := range tt.wantCut {
				require.Contains(t, out, s)
			}
			for _, s := range tt.wantGone {
				require.NotContains(t, out, s)
			}
			if tt.wantNotes == "" {
				require.NotContains(t, out, "not shown")
			} else {
				require.Contains(t, out, tt.wantNotes)
				require.Contains(t, out, "all are kept in the summary record")
			}
		})
	}
}

// TestCappedRecordShowsWhatTheWholeListShowed: a summary record keeps only
// the sentences facts.CapKept keeps; rendered at any budget up to the
// largest, it shows every sentence the whole list showed, and says how
// many are not shown.
func TestCappedRecordShowsWhatTheWholeListShowed(t *testing.T) {
	t.Parallel()
	var items []string
	for i := range 800 {
		switch i % 5 {
		case 0:
			items = append(items, fmt.Sprintf("FACT%04d: the staging port is %d", i, 7000+i))
		case 1:
			items = append(items, fmt.Sprintf("Never touch file %04d. ", i)+strings.Repeat("Really never, whatever the reason. ", i%4))
		default:
			items = append(items, fmt.Sprintf("The port of service %d is %d.", i, 9000+i))
		}
	}
	kept, left := facts.CapKept(items)
	require.Less(t, len(kept), len(items))
	for _, chars := range []int{400, 1800, 4000, facts.MaxKeptChars} {
		whole, capped := joinKept(items, chars, 0), joinKept(kept, chars, left)
		for _, it := range items {
			head := it[:22] // unique to the sentence
			if strings.Contains(whole, head) {
				require.Contains(t, capped, head, "at %d chars the record lost %q", chars, it)
			}
		}
		require.Contains(t, capped, "not shown to fit")
		require.Contains(t, capped, "each is in the session log")
	}
}
