package redact

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// keywordsOnly indexes ruleKeywords, without the rules (Redact).
var keywordsOnly = sync.OnceValue(func() *keywordIndex { return indexWords(ruleKeywords) })

// rulesBuilt is set once the rules are (compiledRules): from then on
// the rules' own index is as quick.
var rulesBuilt atomic.Bool

// mayHoldSecret reports whether a rule could find a secret in view (an
// unescapeBreaks text): whether it holds a keyword or a PEM block's mark.
func mayHoldSecret(view string) bool {
	return strings.Contains(view, "PRIVATE KEY") || keywordsOnly().holds(view)
}

// indexWords indexes words (lower case, ASCII, two bytes or more) for
// holds alone: it knows no rules.
func indexWords(words []string) *keywordIndex {
	k := &keywordIndex{words: slices.Clone(words)}
	for id, w := range k.words {
		p := pairIndex(w[0], w[1])
		if k.pair[p] == 0 {
			k.pairs = append(k.pairs, nil)
			k.pair[p] = uint16(len(k.pairs))
		}
		k.pairs[k.pair[p]-1] = append(k.pairs[k.pair[p]-1], id)
	}
	return k
}

// holds reports whether s holds one of the keywords (ASCII case folded).
func (k *keywordIndex) holds(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		p := k.pair[pairIndex(s[i], s[i+1])]
		if p == 0 {
			continue
		}
		for _, id := range k.pairs[p-1] {
			if hasPrefixFold(s[i:], k.words[id]) {
				return true
			}
		}
	}
	return false
}
