package tokens

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/dlclark/regexp2"
	"github.com/stretchr/testify/require"
)

// The patterns run by regexp2, as tiktoken-go runs them: the reference
// the hand-read ones (ascii.go, runes.go) are checked against.
var patterns = sync.OnceValue(func() map[string]*regexp2.Regexp {
	return map[string]*regexp2.Regexp{
		O200KBase:  regexp2.MustCompile(o200kPattern, regexp2.None),
		CL100KBase: regexp2.MustCompile(cl100kPattern, regexp2.None),
	}
})

// countPattern counts text as tiktoken-go does: the pattern's matches,
// each through the encoding's BPE (invalid UTF-8 read as U+FFFD).
func countPattern(t testing.TB, name, text string) int {
	e := testEncoder(t, name)
	n := 0
	for _, p := range regexpPiecesRe(t, patterns()[name], text) {
		n += e.vocab.pieceTokens([]byte(p))
	}
	return n
}

// readings are each encoding's hand-read patterns.
var readings = []struct {
	name  string
	ascii func(string, int) int
	runes func(*runeText, int) int
}{{CL100KBase, cl100kNext, cl100kNextRune}, {O200KBase, o200kNext, o200kNextRune}}

// requireRegexpPieces fails unless got are the pattern's matches in s.
func requireRegexpPieces(t testing.TB, name, s string, got []string) {
	t.Helper()
	want := regexpPiecesRe(t, patterns()[name], s)
	if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
		t.Fatalf("%q with %s: got %q, want %q", s, name, got, want)
	}
}

// randomTexts are texts of up to 24 pieces of pool each, drawn by r.
func randomTexts(r *rand.Rand, pool []string) []string {
	texts := make([]string, sample(2000, 20000))
	for i := range texts {
		var b strings.Builder
		for range r.IntN(24) {
			b.WriteString(pool[r.IntN(len(pool))])
		}
		texts[i] = b.String()
	}
	return texts
}

func asciiPieces(next func(string, int) int, s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := next(s, i)
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// The hand-read patterns cut ASCII text exactly where the regular
// expressions do: the edge cases by name, then random texts drawn from
// every class the patterns tell apart (each control byte included).
func TestASCIIPreTokenizerMatchesRegexp(t *testing.T) {
	t.Parallel()
	cases := []string{
		"", "a", "A", "1", " ", "\n", "'", "hello world", "  two spaces", "trailing  ", "tab\tsep",
		"don't I'LL we've they'Re 'd 'x '", "ABCdef ABC DEF abcDEF", "x = y+1;\r\n\r\n  z", "12345 1 12 123 1234",
		" !!! ?.\n\n/ /// a/b//c", "line\n  \n\tnext", "\v\f\x1c\x1d\x1e\x1f\x00\x7f mixed", "  \n", " \r\n ", "a  \t b",
		"func (s *Store) Load(ctx context.Context) error {\n\treturn nil\n}\n", "CamelCaseHTTPServer's", "'S's'LL",
	}
	pool := []string{"a", "b", "Z", "Q", "e", "l", "r", "s", "t", "v", "m", "d", "0", "7", "'", " ", " ", "  ", "\t", "\n",
		"\r", "\r\n", "\v", "\f", "\x1c", "\x1f", "\x00", "\x7f", "/", "//", ".", "(", "_", "-", "\"", "'s", "'LL", "'re", "'Ve"}
	cases = append(cases, randomTexts(rand.New(rand.NewPCG(7, 11)), pool)...)
	for _, enc := range readings {
		for _, s := range cases {
			requireRegexpPieces(t, enc.name, s, asciiPieces(enc.ascii, s))
			// The rune reading reads the ASCII around other characters.
			requireRegexpPieces(t, enc.name, s, runePieces(enc.runes, s))
		}
	}
}

// FuzzASCIIPreTokenizer is the same check on any ASCII text:
// go test ./internal/tokens -run '^$' -fuzz FuzzASCIIPreTokenizer
func FuzzASCIIPreTokenizer(f *testing.F) {
	for _, s := range []string{"don't I'LL we've", "x = y+1;\r\n\r\n  z", " !!! ?.\n\n/ /// a/b//c", "\v\f\x1c mixed  \t b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i := range len(s) {
			if s[i] >= 0x80 {
				return // the ASCII pre-tokenizer's domain only
			}
		}
		for _, enc := range readings {
			requireRegexpPieces(t, enc.name, s, asciiPieces(enc.ascii, s))
		}
	})
}

func regexpPiecesRe(t testing.TB, re *regexp2.Regexp, s string) []string {
	runes := []rune(s)
	var out []string
	m, err := re.FindRunesMatch(runes)
	for m != nil && err == nil {
		out = append(out, string(runes[m.Index:m.Index+m.Length]))
		m, err = re.FindNextMatch(m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func runePieces(next func(*runeText, int) int, s string) []string {
	var t runeText
	t.reset(s)
	var out []string
	for i := 0; i < len(t.r); {
		j := next(&t, i)
		out = append(out, string(t.r[i:j]))
		i = j
	}
	return out
}

// The rune reading cuts any text exactly where the regular expressions
// do: the edge cases by name, then random texts drawn from every class
// the patterns tell apart, in and out of the ASCII range: each letter
// category (o200k's two letter classes overlap on Lm, Lo and M, and a
// mark, being no \p{L}, can also lead a word), the number categories,
// Unicode whitespace and line separators, format characters, symbols
// beyond the BMP, invalid UTF-8 (read as U+FFFD), and runes whose case
// is tricky: ſ folds to s in Unicode's tables but unicode.ToLower, which
// (?i:...) compares, leaves it as it is; the Kelvin sign lowers to k (no
// contraction's letter); İ lowers to i.
func TestPreTokenizerMatchesRegexp(t *testing.T) {
	t.Parallel()
	cases := []string{
		"", "é", "É", "日本語のテキスト", "Привет, мир! Это тест.", "naïve café — résumé…", "e\u0301 a\u0301b \u0301x",
		"\u0301\u0301A", "\u0301'S", "ʰA1", "ʰ\u0301ǅa", "ǅǅ ǅa Aǅ", "ーカー", "٣٤٥٦ ½ Ⅻ 1٣", "\u00a0word \u3000x\u2028\u2029y\u0085z",
		" \u00a0\n", "\u2003\u2003a", "😀😀 👩\u200d💻 x😀y", "\U0001D400\U0001D41A \U00010400x", "\xff\xfe a\xffb \xe2\x82", "\ufeffhello",
		"it\u2019s don'ſ I'\u212a we'İ", "'ſ '\u212a 'İ 'ß", "Straße ǈǉ ﬁnish", "x/é/y //日", "日'S 日's'll", "\r\n日\r\n \n\u0085",
	}
	pool := []string{"a", "Z", "s", "l", "e", "0", "7", "'", " ", "  ", "\t", "\n", "\r", "\r\n", "\v", "/", ".", "_", "'s", "'LL", "'re",
		"é", "É", "ǅ", "ʰ", "ー", "中", "あ", "ß", "\u0301", "\u0903", "\u20dd", "٣", "Ⅻ", "½", "\u00a0", "\u2003", "\u3000",
		"\u2028", "\u0085", "\u200b", "\ufeff", "—", "€", "😀", "\U0001D400", "\xff", "\xe2\x82", "ſ", "\u212a", "İ"}
	cases = append(cases, randomTexts(rand.New(rand.NewPCG(17, 19)), pool)...)
	for _, enc := range readings {
		for _, s := range cases {
			requireRegexpPieces(t, enc.name, s, runePieces(enc.runes, s))
		}
	}
}

// Every rune is read in the category the regular expression engine puts
// it in: the class bits against regexp2's own classes, rune by rune.
func TestRuneClassesAreTheEngines(t *testing.T) {
	t.Parallel()
	classes := []struct {
		bit uint8
		re  string
	}{
		{cLetter, `\p{L}`}, {cNumber, `\p{N}`}, {cSpace, `\s`},
		{cUpper, `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`}, {cLower, `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`},
	}
	// Each table's edges (a range's first and last runes and their
	// neighbours) and every 101st rune; every rune with
	// GENCODE_TOKENS_EXHAUSTIVE=1.
	seen := map[rune]bool{}
	var all []rune
	add := func(r rune) {
		if r >= 0 && r <= unicode.MaxRune && (r < 0xd800 || r > 0xdfff) && !seen[r] { // no surrogates in decoded text
			seen[r] = true
			all = append(all, r)
		}
	}
	for _, tab := range []*unicode.RangeTable{unicode.L, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Lm, unicode.Lo,
		unicode.M, unicode.N, unicode.White_Space} {
		for _, rg := range tab.R16 {
			for _, r := range []rune{rune(rg.Lo) - 1, rune(rg.Lo), rune(rg.Lo) + rune(rg.Stride), rune(rg.Hi), rune(rg.Hi) + 1} {
				add(r)
			}
		}
		for _, rg := range tab.R32 {
			for _, r := range []rune{rune(rg.Lo) - 1, rune(rg.Lo), rune(rg.Lo) + rune(rg.Stride), rune(rg.Hi), rune(rg.Hi) + 1} {
				add(r)
			}
		}
	}
	for r := rune(0); r <= unicode.MaxRune; r += rune(sample(101, 1)) {
		add(r)
	}
	for _, c := range classes {
		in := make([]bool, len(all))
		re := regexp2.MustCompile(c.re, regexp2.None)
		m, err := re.FindRunesMatch(all)
		for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
			in[m.Index] = true
		}
		require.NoError(t, err)
		for i, r := range all {
			if got := runeClass(r)&c.bit != 0; got != in[i] {
				t.Fatalf("%U in %s: %v, regexp2 says %v", r, c.re, got, in[i])
			}
		}
	}
}

// FuzzPreTokenizer is TestPreTokenizerMatchesRegexp's check on any text:
// go test ./internal/tokens -run '^$' -fuzz FuzzPreTokenizer
func FuzzPreTokenizer(f *testing.F) {
	for _, s := range []string{"naïve café — résumé…", "\u0301\u0301A ʰA1 ǅa", "日本語 😀 \xff\u00a0x", "x'ſ y'\u212a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, enc := range readings {
			requireRegexpPieces(t, enc.name, s, runePieces(enc.runes, s))
		}
	})
}
