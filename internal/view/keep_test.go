package view

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
			out := joinKept(tt.items, tt.chars)
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
