package tokens

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/stretchr/testify/require"
)

// testEncoders shares one load of each encoding between the tests.
var testEncoders = struct {
	sync.Mutex
	m map[string]*encoder
}{m: map[string]*encoder{}}

func testEncoder(t testing.TB, name string) *encoder {
	t.Helper()
	testEncoders.Lock()
	defer testEncoders.Unlock()
	if e := testEncoders.m[name]; e != nil {
		return e
	}
	e, err := newEncoder(name)
	require.NoError(t, err)
	testEncoders.m[name] = e
	return e
}

// TestVocabMatchesTiktokenGo checks the compact table against the ranks
// tiktoken-go loads from the same file: every token has its rank, and
// nothing else is a token.
func TestVocabMatchesTiktokenGo(t *testing.T) {
	t.Parallel()
	for _, name := range []string{O200KBase, CL100KBase} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(name + ".tiktoken")
			require.NoError(t, err)
			v := testEncoder(t, name).vocab
			require.Equal(t, len(ranks), v.size())
			for tok, r := range ranks {
				if got := v.rank([]byte(tok)); got != uint32(r) {
					t.Fatalf("rank(%q) = %d, want %d", tok, got, r)
				}
			}
			for _, s := range []string{"", "\x00\x00\x00\x00\x00\x00\x00\x00\x00", "not a token at all, surely"} {
				_, ok := ranks[s]
				require.Equal(t, ok, v.rank([]byte(s)) != noRank, "rank(%q)", s)
			}
		})
	}
}

// randomPiece returns n bytes drawn from alphabet.
func randomPiece(r *rand.Rand, alphabet string, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return b
}

// TestHeapMergeMatchesScan: the O(n log n) merge picks the same pairs as
// tiktoken's scan, so both give the same count for any piece.
func TestHeapMergeMatchesScan(t *testing.T) {
	t.Parallel()
	alphabets := []string{
		"a", "ab", "abc", "abcdefghijklmnopqrstuvwxyz", "0123456789", "ABCDEFabcdef0123456789+/",
		" ", " \t", "!-=", "aaaaaaab", "\xe6\x97\xa5\xe6\x9c\xac",
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, name := range []string{O200KBase, CL100KBase} {
		v := testEncoder(t, name).vocab
		for _, alpha := range alphabets {
			for _, n := range []int{shortPiece + 1, 100, 257, 1000, 3000} {
				p := randomPiece(r, alpha, n)
				if got, want := v.heapMerge(p), v.scanMerge(p); got != want {
					t.Errorf("%s: heapMerge(%q...) = %d, scanMerge = %d (%d bytes of %q)", name, p[:10], got, want, n, alpha)
				}
			}
		}
	}
}

// TestSafeCutExact checks safeCut's claim directly: at every safe cut of
// a text, the counts of the two sides add up to the count of the whole,
// each counted by the pattern itself (countPattern: countSegment relies on
// the claim).
func TestSafeCutExact(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	texts := []string{
		"Hello, world! It's 2024.\nNew line\r\nAnd 'quoted' text, x1y2z3 a/b/c\n/path\n\n  indented\n42 apples",
		"func main() {\n\tfmt.Println(\"hi\")\n}\n// comment\nx := []int{1,2,3}",
		"A1B2C3d4e5 ab'cd'S 'LL x'll 99'd\n\nZ\n9\n\t \n a",
		"{\"a\":1,\"b\":[true,null],\"c\":\"d\\ne\"}",
	}
	for range sample(5, 20) {
		var b strings.Builder
		for b.Len() < 150 {
			b.WriteString([]string{"a", "B", "7", " ", "\n", "'", "s", "ll", ",", "/", "\r", "\t", "é", "日", "e\u0301", "  ", "!"}[r.IntN(17)])
		}
		texts = append(texts, b.String())
	}
	for _, name := range []string{O200KBase, CL100KBase} {
		for _, text := range texts {
			whole := countPattern(t, name, text)
			cuts := 0
			for p := 1; p < len(text); p++ {
				if !safeCut(text, p) {
					continue
				}
				cuts++
				if got := countPattern(t, name, text[:p]) + countPattern(t, name, text[p:]); got != whole {
					t.Errorf("%s: cut at %d of %q: %d + ... = %d, whole text %d", name, p, text, countPattern(t, name, text[:p]), got, whole)
				}
			}
			require.Positive(t, cuts, "no safe cut in %q", text)
		}
	}
}

// mixedText is about n bytes of ASCII words, code and whitespace with
// other characters at random places, one in every `every` pieces on
// average: the texts where countSegment sends stretches to the pattern.
func mixedText(r *rand.Rand, n, every int) string {
	ascii := []string{"a", "Word", "HTTPServer", "x1", "42", "12345", " ", "  ", "\t", "\n", "\r\n", "\n\n", " \n",
		"'s", "'LL", "'", "\"", "/", ",", ".", "{", "}", "(", ")", "-", "_", "!?", "func main() {", "err != nil"}
	other := []string{"é", "日本語", "Привет", "e\u0301", "\u0300", "😀", "👩\u200d💻", "\u00a0", "\u2003", "\ufeff", "\xff", "\xe2\x82", "—", "…", "✓"}
	var b strings.Builder
	for b.Len() < n {
		if r.IntN(every) == 0 {
			b.WriteString(other[r.IntN(len(other))])
		} else {
			b.WriteString(ascii[r.IntN(len(ascii))])
		}
	}
	return b.String()
}

// TestStretchesCountAsThePattern: counting ASCII by hand and only the
// stretches around other characters with the pattern gives the pattern's
// count of the whole text, at any density of such characters.
func TestStretchesCountAsThePattern(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(13, 14))
	var st scratch
	for _, name := range []string{O200KBase, CL100KBase} {
		e := testEncoder(t, name)
		for i := range sample(60, 600) {
			text := mixedText(r, 64+r.IntN(600), 1+i%40)
			require.Equal(t, countPattern(t, name, text), e.countSegment(text, &st), "%s: %q", name, text)
		}
	}
}

func FuzzStretchesCountAsThePattern(f *testing.F) {
	r := rand.New(rand.NewPCG(15, 16))
	for i := range 20 {
		f.Add(mixedText(r, 200, 1+i))
	}
	f.Fuzz(func(t *testing.T, text string) {
		var st scratch
		for _, name := range []string{O200KBase, CL100KBase} {
			e := testEncoder(t, name)
			if want, got := countPattern(t, name, text), e.countSegment(text, &st); got != want {
				t.Fatalf("%s: countSegment(%q) = %d, the pattern says %d", name, text, got, want)
			}
		}
	})
}

// TestHardCutError measures the one approximation: a run longer than
// maxSegment with no safe cut is cut at maxSegment. The exact count of
// such a run is one heapMerge over all of it (it is a single pre-token).
func TestHardCutError(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 10))
	// One cut by default, each kind of run with one encoding; two cuts and
	// every pair with GENCODE_TOKENS_EXHAUSTIVE=1.
	n := sample(maxSegment+123, 2*maxSegment+123)
	kinds := []struct{ what, alphabet string }{
		{"random letters", "abcdefghijklmnopqrstuvwxyz"}, {"hex letters", "abcdef"}, {"punctuation", "!#$%&*+-=<>?@^|~"},
	}
	for i, name := range []string{O200KBase, CL100KBase} {
		e := testEncoder(t, name)
		for j, k := range kinds {
			if (i+j)%2 == 1 && !exhaustive() {
				continue
			}
			what, run := k.what, string(randomPiece(r, k.alphabet, n))
			cuts := len(run) / maxSegment
			got, err := e.count(context.Background(), run)
			require.NoError(t, err)
			exact := e.vocab.heapMerge([]byte(run))
			diff := got - exact
			t.Logf("%s, %s: %d bytes, %d cuts: %d tokens, exact %d (%+d)", name, what, len(run), cuts, got, exact, diff)
			// The bound documented in encoder.go: a few tokens per cut.
			require.LessOrEqual(t, max(diff, -diff), 3*cuts, "%s, %s", name, what)
		}
	}
}

// errAfter is a context whose Err turns to Canceled after n calls: it
// cancels a count at a known segment without timing.
type errAfter struct {
	context.Context
	n atomic.Int32
}

func (c *errAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestCountStopsWhenCanceled(t *testing.T) {
	t.Parallel()
	e := testEncoder(t, O200KBase)
	text := strings.Repeat("word ", segmentTarget) // 5 segments
	full, err := e.count(context.Background(), text)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := e.count(ctx, text)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, estimate(text), got, "canceled before the first segment: all estimated")

	// Canceled after two segments: those are counted, the rest estimated.
	var st scratch
	first := text[:segmentEnd(text)]
	second := text[len(first):][:segmentEnd(text[len(first):])]
	counted := e.countSegment(first, &st) + e.countSegment(second, &st)
	ec := &errAfter{Context: context.Background()}
	ec.n.Store(2)
	got, err = e.count(ec, text)
	require.True(t, errors.Is(err, context.Canceled), "err = %v", err)
	require.Equal(t, counted+estimate(text[len(first)+len(second):]), got)
	require.Greater(t, got, full, "the estimate overcounts this text")
}

// exhaustive reports whether the tokenizer's long checks run whole
// (GENCODE_TOKENS_EXHAUSTIVE=1): make test runs a sample of each, with a
// fixed seed; the whole run is
//
//	GENCODE_TOKENS_EXHAUSTIVE=1 go test ./internal/tokens -run 'PreTokenizer|RuneClasses|HardCutError|SafeCutExact'
func exhaustive() bool { return os.Getenv("GENCODE_TOKENS_EXHAUSTIVE") == "1" }

// sample is n, or all when the run is exhaustive.
func sample(n, all int) int {
	if exhaustive() {
		return all
	}
	return n
}
