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
