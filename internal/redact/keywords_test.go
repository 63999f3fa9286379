package redact

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeywordScanFindsEveryKeyword: the keyword index reports every
// occurrence of every rule's keyword, in any case, at any position (the
// end of the text included), as comparing each keyword at each byte does:
// texts made of keywords, their starts, case flips and other bytes.
func TestKeywordScanFindsEveryKeyword(t *testing.T) {
	t.Parallel()
	k := compiledRules().keywords
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{" ", "\n", "x", "é", "\xff", "_", "=", "\"", "9"}
	for _, w := range k.words {
		pieces = append(pieces, w, strings.ToUpper(w), w[:2], w[:len(w)-1])
	}
	for range 2000 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		type hit struct{ pos, kw int }
		var got, want []hit
		k.scan(s, func(pos, kw int) { got = append(got, hit{pos, kw}) })
		for i := 0; i+1 < len(s); i++ {
			for id, w := range k.words {
				if hasPrefixFold(s[i:], w) {
					want = append(want, hit{i, id})
				}
			}
		}
		require.Equal(t, want, got, "%q", s)
	}
}
