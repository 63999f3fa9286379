package tokens

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dlclark/regexp2"
)

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
	r := rand.New(rand.NewPCG(7, 11))
	for range sample(2000, 20000) {
		var b strings.Builder
		for range r.IntN(24) {
			b.WriteString(pool[r.IntN(len(pool))])
		}
		cases = append(cases, b.String())
	}
	for _, enc := range []struct {
		pattern string
		next    func(string, int) int
	}{{cl100kPattern, cl100kNext}, {o200kPattern, o200kNext}} {
		re := regexp2.MustCompile(enc.pattern, regexp2.None)
		for _, s := range cases {
			want := regexpPiecesRe(t, re, s)
			got := asciiPieces(enc.next, s)
			if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
				t.Fatalf("%q with %.20s...: got %q, want %q", s, enc.pattern, got, want)
			}
		}
	}
}

// FuzzASCIIPreTokenizer is the same check on any ASCII text:
// go test ./internal/tokens -run '^$' -fuzz FuzzASCIIPreTokenizer
func FuzzASCIIPreTokenizer(f *testing.F) {
	for _, s := range []string{"don't I'LL we've", "x = y+1;\r\n\r\n  z", " !!! ?.\n\n/ /// a/b//c", "\v\f\x1c mixed  \t b"} {
		f.Add(s)
	}
	res := []*regexp2.Regexp{regexp2.MustCompile(cl100kPattern, regexp2.None), regexp2.MustCompile(o200kPattern, regexp2.None)}
	nexts := []func(string, int) int{cl100kNext, o200kNext}
	f.Fuzz(func(t *testing.T, s string) {
		for i := range len(s) {
			if s[i] >= 0x80 {
				return // the ASCII pre-tokenizer's domain only
			}
		}
		for i, re := range res {
			want, got := regexpPiecesRe(t, re, s), asciiPieces(nexts[i], s)
			if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
				t.Fatalf("%q: got %q, want %q", s, got, want)
			}
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
