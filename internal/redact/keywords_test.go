package redact

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
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

// TestRuleKeywordsAreTheRules: the keywords Redact checks before the
// rules are built are the rules' own; a rule with a keyword not in
// ruleKeywords would miss a secret in a process's first texts.
func TestRuleKeywordsAreTheRules(t *testing.T) {
	t.Parallel()
	rules := slices.Clone(buildRules().keywords.words)
	slices.Sort(rules)
	listed := slices.Clone(ruleKeywords)
	slices.Sort(listed)
	require.Equal(t, rules, listed, "ruleKeywords (keywords.go) must list every rule's keywords, lower case")
}

// TestNoSecretWithoutAKeyword: every secret of the corpus is in a text
// the check before the rules lets through, and what the rules leave alone
// is left alone by it too.
func TestNoSecretWithoutAKeyword(t *testing.T) {
	t.Parallel()
	secrets, notSecrets := corpus(t)
	rs := buildRules()
	for _, tt := range secrets {
		_, n := rs.redact(tt.Text)
		require.NotZero(t, n, tt.Name)
		require.True(t, mayHoldSecret(unescapeBreaks(tt.Text)), "%s: %q", tt.Name, tt.Text)
	}
	for _, text := range notSecrets {
		if !mayHoldSecret(unescapeBreaks(text)) {
			got, n := rs.redact(text)
			require.Equal(t, text, got)
			require.Zero(t, n)
		}
	}
}

// TestFirstLogLineBuildsNoRules: a process whose first texts hold no
// keyword (gencode's start record: its command, directories and model)
// redacts them without building the rules; a text with a secret still
// has it redacted. Run in a process of its own: the rules are built once
// per process.
func TestFirstLogLineBuildsNoRules(t *testing.T) {
	if os.Getenv("REDACT_FIRST_LINE") == "1" {
		for _, v := range []string{"gencode", "/home/user/src/project", "/home/user/.local/share/gencode", "gpt-4o-mini"} {
			got, n := Redact(v)
			if got != v || n != 0 || rulesBuilt.Load() {
				os.Exit(3)
			}
		}
		if got, n := Redact("export GITHUB_TOKEN=ghp_" + "0123456789abcdefghijklmnopqrstuvwxyzAB"); n != 1 || got == "" || !rulesBuilt.Load() {
			os.Exit(4)
		}
		os.Exit(0)
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFirstLogLineBuildsNoRules$")
	cmd.Env = append(os.Environ(), "REDACT_FIRST_LINE=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}
