package facts

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// How many of the user's sentences a summary keeps verbatim
// (UserConstraints). A view shows them within the summary's KeepChars
// (view.joinKept): duplicates merged, long ones shortened (memos to
// KeptShortChars, the others to KeptMinChars), then the least important
// and oldest left out. The record keeps every sentence any view could
// show: the most important and newest, until they fill MaxKeptChars
// counted at their shortest. Without a bound the list grew with the
// session (11,943 sentences at 100k messages), and was decoded and ranked
// on every turn.
const (
	// MaxKeptChars is the largest KeepChars a summary is given (the
	// budget without a narrative, in the largest windows).
	MaxKeptChars = 16000
	// KeptShortChars is the length a view shortens any kept sentence to
	// before it leaves one out; KeptMinChars the length it shortens all
	// but the memos to after that.
	KeptShortChars = 120
	KeptMinChars   = 80
)

// KeptKey is the form two kept sentences that say the same thing share:
// case, spacing and final punctuation set aside.
// It is strings.ToLower(strings.Join(strings.Fields(s), " ")) with the
// final punctuation trimmed, in one pass: the view keys every kept
// sentence of every summary for every request.
func KeptKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteByte(byte(r))
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.TrimRight(b.String(), ".;!? ")
}

// keptCost is the room a view gives a kept sentence at its shortest,
// with its separator.
func keptCost(s string, rank int) int {
	short := KeptMinChars
	if rank == RankMemo {
		short = KeptShortChars
	}
	n := len(s)
	if n > short {
		n = short + len("…")
	}
	return n + len("; ")
}

// CapKept bounds a summary's kept sentences (see MaxKeptChars): it
// returns the ones kept, in their order, with duplicates merged, and how
// many it left out (the least important, then the oldest). Linear in the
// items but for the sort of those over the bound.
func CapKept(items []string) (kept []string, leftOut int) {
	type entry struct{ i, rank, cost int }
	entries := make([]entry, 0, len(items))
	seen := make(map[string]bool, len(items))
	total := 0
	for i, it := range items {
		k := KeptKey(it)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		rank, ok := KeepRank(it)
		if !ok {
			rank = RankOther
		}
		e := entry{i: i, rank: rank, cost: keptCost(it, rank)}
		entries = append(entries, e)
		total += e.cost
	}
	if total <= MaxKeptChars {
		if len(entries) == len(items) {
			return items, 0
		}
		kept = make([]string, 0, len(entries))
		for _, e := range entries {
			kept = append(kept, items[e.i])
		}
		return kept, 0
	}
	// The view leaves out the least important first, the oldest first
	// among equals: keep from the other end until the bound.
	byImportance := slices.Clone(entries)
	slices.SortStableFunc(byImportance, func(a, b entry) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return b.i - a.i
	})
	keep := make([]bool, len(items))
	used := 0
	for _, e := range byImportance {
		if used+e.cost > MaxKeptChars && used > 0 {
			break
		}
		keep[e.i] = true
		used += e.cost
	}
	for _, e := range entries {
		if keep[e.i] {
			kept = append(kept, items[e.i])
		}
	}
	return kept, len(entries) - len(kept)
}
