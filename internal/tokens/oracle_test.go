package tokens_test

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/tokens"
)

// The oracle is tiktoken-go, the implementation gencode used before and
// whose counts match OpenAI's tiktoken on the shared reference texts. It is
// quadratic in the length of a pre-token, so it only sees texts whose
// pre-tokens are short.

var (
	oracleOnce sync.Once
	oracles    map[string]*tiktoken.Tiktoken
	oracleErr  error
)

func oracle(t testing.TB, name string) *tiktoken.Tiktoken {
	t.Helper()
	oracleOnce.Do(func() {
		// tiktoken-go's loader is a package global; tests set it once.
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		oracles = map[string]*tiktoken.Tiktoken{}
		for _, n := range []string{tokens.O200KBase, tokens.CL100KBase} {
			tk, err := tiktoken.GetEncoding(n)
			if err != nil {
				oracleErr = err
				return
			}
			oracles[n] = tk
		}
	})
	require.NoError(t, oracleErr)
	return oracles[name]
}

// fragments are the pieces random texts are made of: every character
// class the pre-tokenizers distinguish, the bytes safeCut looks at, and
// the strings where the patterns' alternatives compete.
var fragments = []string{
	"a", "Z", "hello", "World", "HTTPServer", "x1", "0", "42", "12345", "3.14",
	" ", "  ", "\t", "\n", "\r\n", "\n\n", " \n", "\u00a0", "\u2003", "\v\f",
	"'s", "'LL", "'d", "'", "\"", "/", "//", "\\", ",", ".", "{", "}", "(", ")", "-", "_", "=", "+", "!?", "...",
	"é", "日本語", "Привет", "e\u0301", "\u0300", "😀", "👩\u200d💻", "\ufeff", "\xff", "\xe2\x82",
	"<|endoftext|>", "func main() {", "if err != nil {\n\treturn err\n}", "https://example.com/a?b=c",
	"{\"key\":\"value\",\"n\":123}", "QUJDRA==", "deadbeef", "SELECT * FROM t;",
}

// randomText returns about n bytes of fragments chosen by r.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(fragments[r.IntN(len(fragments))])
	}
	return b.String()
}

func FuzzCountMatchesTiktokenGo(f *testing.F) {
	for _, s := range fragments {
		f.Add(s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		f.Add(randomText(r, 200))
	}
	f.Add(strings.Repeat("a", 3000))
	f.Add(strings.Repeat("ab1,", 500))
	f.Add(strings.Repeat(" ", 2000) + "x")
	var cache tokens.Cache
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 {
			t.Skip("the oracle is quadratic in a pre-token's length")
		}
		for _, model := range []string{"gpt-4o", "gpt-4"} {
			c := cache.Counter(model)
			want := len(oracle(t, c.Encoding()).EncodeOrdinary(text))
			if got := c.Count(text); got != want {
				t.Fatalf("%s: Count(%q) = %d, tiktoken-go says %d", c.Encoding(), text, got, want)
			}
		}
	})
}

// TestLongTextMatchesTiktokenGo counts texts long enough to be cut into
// segments: the cuts must not change the count.
func TestLongTextMatchesTiktokenGo(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	texts := map[string]string{
		"random fragments":  randomText(r, 40<<10),
		"minified json":     strings.Repeat(`{"id":12345,"name":"Widget","tags":["a","b"],"price":9.99},`, 700),
		"go source":         strings.Repeat("func (s *Store) Append(ctx context.Context, id string) error {\n\treturn nil\n}\n\n", 500),
		"base64 with lines": strings.Repeat(strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo+/w==", 2)+"\n", 500),
		"crlf prose":        strings.Repeat("The quick brown fox's 3 jumps over 12,345 lazy dogs.\r\n", 800),
	}
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var cache tokens.Cache
			for _, model := range []string{"gpt-4o", "gpt-4"} {
				c := cache.Counter(model)
				want := len(oracle(t, c.Encoding()).EncodeOrdinary(text))
				require.Equal(t, want, c.Count(text), "%s, %d bytes", c.Encoding(), len(text))
			}
		})
	}
}
