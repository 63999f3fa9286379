package tokens_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/tokens"
)

type refLine struct {
	line   int
	text   string
	counts map[string]int // encoding name -> tiktoken's count
}

// readReference reads tokens/texts.jsonl and tokens/counts.tsv, the counts
// the official tiktoken gives each text with special tokens as plain text.
func readReference(t testing.TB) []refLine {
	t.Helper()
	dir := filepath.Join(openaitest.SharedTestdata(t), "tokens")

	tf, err := os.Open(filepath.Join(dir, "texts.jsonl"))
	require.NoError(t, err)
	defer tf.Close()
	var texts []string
	sc := bufio.NewScanner(tf)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v struct {
			Text *string `json:"text"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v), "texts.jsonl line %d", len(texts)+1)
		require.NotNil(t, v.Text, "texts.jsonl line %d has no text", len(texts)+1)
		texts = append(texts, *v.Text)
	}
	require.NoError(t, sc.Err())

	raw, err := os.ReadFile(filepath.Join(dir, "counts.tsv"))
	require.NoError(t, err)
	rows := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	require.Equal(t, "line\tchars\to200k_base\tcl100k_base", rows[0], "counts.tsv header")
	require.Len(t, rows[1:], len(texts), "counts.tsv rows vs texts.jsonl lines")
	require.Len(t, texts, 299)

	refs := make([]refLine, 0, len(texts))
	for i, row := range rows[1:] {
		f := strings.Split(row, "\t")
		require.Len(t, f, 4, "counts.tsv row %d", i+1)
		n := make([]int, 4)
		for j := range f {
			n[j], err = strconv.Atoi(f[j])
			require.NoError(t, err, "counts.tsv row %d", i+1)
		}
		require.Equal(t, i+1, n[0], "counts.tsv row %d line number", i+1)
		// chars is the JavaScript (UTF-16) length: a check that the text was
		// decoded as tiktoken saw it.
		require.Equal(t, n[1], len(utf16.Encode([]rune(texts[i]))), "texts.jsonl line %d length", i+1)
		refs = append(refs, refLine{
			line:   n[0],
			text:   texts[i],
			counts: map[string]int{tokens.O200KBase: n[2], tokens.CL100KBase: n[3]},
		})
	}
	return refs
}

// testCache lets the tests share one encoder of each encoding.
// TestCountConcurrent uses a fresh Cache on purpose.
var testCache tokens.Cache

func short(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "..."
	}
	return s
}

func TestCountMatchesTiktoken(t *testing.T) {
	t.Parallel()
	refs := readReference(t)
	for _, model := range []string{"gpt-4o", "gpt-4"} {
		c := testCache.Counter(model)
		enc := c.Encoding()
		require.NoError(t, c.Err())
		t.Run(enc, func(t *testing.T) {
			t.Parallel()
			for _, ref := range refs {
				t.Run(fmt.Sprintf("line%03d", ref.line), func(t *testing.T) {
					t.Parallel()
					if got, want := c.Count(ref.text), ref.counts[enc]; got != want {
						t.Errorf("Count(%q) = %d, want %d", short(ref.text), got, want)
					}
				})
			}
		})
	}
}

func TestCountSpecialTokensArePlainText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		model string
		text  string
		want  int
	}{
		// Seven plain-text tokens each, never the single special token.
		{name: "endoftext o200k", model: "gpt-4o", text: "<|endoftext|>", want: 7},
		{name: "endoftext cl100k", model: "gpt-4", text: "<|endoftext|>", want: 7},
		{name: "fim_prefix cl100k", model: "gpt-4", text: "<|fim_prefix|>", want: 7},
		{name: "endofprompt o200k", model: "gpt-4o", text: "<|endofprompt|>", want: 7},
		{name: "empty", model: "gpt-4o", text: "", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := testCache.Counter(tt.model)
			if got := c.Count(tt.text); got != tt.want {
				t.Errorf("Count(%q) = %d, want %d", tt.text, got, tt.want)
			}
		})
	}
}

func TestEncodingFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		model string
		want  string
	}{
		{"gpt-4", tokens.CL100KBase},
		{"gpt-4-0613", tokens.CL100KBase},
		{"gpt-4-32k", tokens.CL100KBase},
		{"gpt-4-turbo", tokens.CL100KBase},
		{"gpt-4-1106-preview", tokens.CL100KBase},
		{"GPT-4", tokens.CL100KBase},
		{"openai/gpt-4", tokens.CL100KBase},
		{"ft:gpt-4-0613:acme::8abc", tokens.CL100KBase},
		{"gpt-3.5-turbo", tokens.CL100KBase},
		{"gpt-3.5-turbo-0125", tokens.CL100KBase},
		{"gpt-35-turbo", tokens.CL100KBase},
		{"text-embedding-ada-002", tokens.CL100KBase},
		{"text-embedding-3-small", tokens.CL100KBase},
		{"text-embedding-3-large", tokens.CL100KBase},
		{"gpt-4o", tokens.O200KBase},
		{"gpt-4o-mini", tokens.O200KBase},
		{"gpt-4o-2024-08-06", tokens.O200KBase},
		{"openai/gpt-4o", tokens.O200KBase},
		{"gpt-4.1", tokens.O200KBase},
		{"gpt-4.1-mini", tokens.O200KBase},
		{"gpt-4.5-preview", tokens.O200KBase},
		{"gpt-5", tokens.O200KBase},
		{"gpt-5-mini", tokens.O200KBase},
		{"o1", tokens.O200KBase},
		{"o1-mini", tokens.O200KBase},
		{"o3", tokens.O200KBase},
		{"o4-mini", tokens.O200KBase},
		{"chatgpt-4o-latest", tokens.O200KBase},
		{"llama3", tokens.O200KBase},
		{"llama3:8b", tokens.O200KBase},
		{"qwen2.5-coder:7b", tokens.O200KBase},
		{"ollama/qwen3", tokens.O200KBase},
		{"", tokens.O200KBase},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			t.Parallel()
			if got := tokens.EncodingFor(tt.model); got != tt.want {
				t.Errorf("EncodingFor(%q) = %q, want %q", tt.model, got, tt.want)
			}
			if got := tokens.New(tt.model).Encoding(); got != tt.want {
				t.Errorf("New(%q).Encoding() = %q, want %q", tt.model, got, tt.want)
			}
		})
	}
}

// cookbookMessages is the example conversation from the OpenAI cookbook
// "How to count tokens with tiktoken" (MIT), section 6.
var cookbookMessages = []tokens.Message{
	{Role: "system", Content: "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
	{Role: "system", Name: "example_user", Content: "New synergies will help drive top-line growth."},
	{Role: "system", Name: "example_assistant", Content: "Things working well together will increase revenue."},
	{Role: "system", Name: "example_user", Content: "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
	{Role: "system", Name: "example_assistant", Content: "Let's talk later when we're less busy about how to do better."},
	{Role: "user", Content: "This late pivot means we don't have time to boil the ocean for the client deliverable."},
}

// TestCountMessageCookbook checks the whole request against the
// prompt_tokens the OpenAI API reported for the cookbook's example.
func TestCountMessageCookbook(t *testing.T) {
	t.Parallel()
	tests := []struct {
		model string
		want  int
	}{
		{"gpt-4", 129},
		{"gpt-3.5-turbo", 129},
		{"gpt-4o", 124},
		{"gpt-4o-mini", 124},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			t.Parallel()
			c := testCache.Counter(tt.model)
			got := tokens.ReplyPriming
			for _, m := range cookbookMessages {
				got += c.CountMessage(m)
			}
			if got != tt.want {
				t.Errorf("prompt tokens for %s = %d, want %d", tt.model, got, tt.want)
			}
		})
	}
}

func TestCountMessageOverhead(t *testing.T) {
	t.Parallel()
	c := testCache.Counter("gpt-4o")
	count := func(s string) int { return c.Count(s) }
	args := `{"file_path":"/tmp/a.go","offset":10}`
	tests := []struct {
		name string
		msg  tokens.Message
		want int
	}{
		{"empty", tokens.Message{}, 3},
		{"role only", tokens.Message{Role: "user"}, 3 + count("user")},
		{"content", tokens.Message{Role: "user", Content: "hello world"}, 3 + count("user") + count("hello world")},
		{"name", tokens.Message{Role: "system", Name: "example_user", Content: "hi"},
			3 + count("system") + count("hi") + count("example_user") + 1},
		{"one tool call", tokens.Message{Role: "assistant", ToolCalls: []tokens.ToolCall{{Name: "Read", Arguments: args}}},
			3 + count("assistant") + 3 + count("Read") + count(args)},
		{"two tool calls", tokens.Message{Role: "assistant", Content: "ok", ToolCalls: []tokens.ToolCall{{Name: "Read", Arguments: args}, {Name: "Bash", Arguments: `{"command":"ls"}`}}},
			3 + count("assistant") + count("ok") + 3 + count("Read") + count(args) + 3 + count("Bash") + count(`{"command":"ls"}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := c.CountMessage(tt.msg); got != tt.want {
				t.Errorf("CountMessage(%+v) = %d, want %d", tt.msg, got, tt.want)
			}
		})
	}
	// Spot-check the parts, so that the arithmetic above is not vacuous.
	require.Equal(t, 1, count("user"))
	require.Equal(t, 1, count("assistant"))
}

// TestCountConcurrent races many goroutines on the first, lazy load of a
// fresh Cache and on the counting after it; run it with -race.
func TestCountConcurrent(t *testing.T) {
	t.Parallel()
	var refs []refLine
	for _, ref := range readReference(t) {
		if len(ref.text) < 1024 { // keep it quick under -race
			refs = append(refs, ref)
		}
	}
	var cache tokens.Cache
	counters := []*tokens.Counter{cache.Counter("gpt-4o"), cache.Counter("openai/gpt-4o-mini"), cache.Counter("gpt-4")}
	const workers = 32
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := counters[w%len(counters)]
			for i := range 25 {
				ref := refs[(i+w*25)%len(refs)]
				if got, want := c.Count(ref.text), ref.counts[c.Encoding()]; got != want {
					errs <- fmt.Sprintf("worker %d: %s Count(line %d) = %d, want %d", w, c.Encoding(), ref.line, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// benchText returns about 4 KB of mixed reference texts.
func benchText(b *testing.B) string {
	var sb strings.Builder
	for _, ref := range readReference(b) {
		if sb.Len() >= 4096 {
			break
		}
		if len(ref.text) < 2048 {
			sb.WriteString(ref.text)
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

func BenchmarkCount(b *testing.B) {
	text := benchText(b)
	for _, model := range []string{"gpt-4o", "gpt-4"} {
		b.Run(tokens.EncodingFor(model), func(b *testing.B) {
			c := tokens.New(model)
			require.NoError(b, c.Err()) // load outside the timer
			n := c.Count(text)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				c.Count(text)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkCountSparseUnicode counts 16 KB of Go source with one
// non-ASCII character (an em dash in a comment) every `every` bytes: what
// code, logs and prose written in English hold. "none" is the ASCII
// baseline; "cjk" is text of other characters only.
func BenchmarkCountSparseUnicode(b *testing.B) {
	line := "\tif err := s.Append(ctx, id, msg); err != nil { // keep the order\n"
	src := strings.Repeat(line, 16<<10/len(line))
	withDashes := func(every int) string {
		var sb strings.Builder
		for i := 0; i < len(src); i += every {
			sb.WriteString(src[i:min(len(src), i+every)])
			sb.WriteString(" — ")
		}
		return sb.String()
	}
	texts := []struct{ name, text string }{
		{"none", src},
		{"every-4KB", withDashes(4 << 10)},
		{"every-1KB", withDashes(1 << 10)},
		{"every-100B", withDashes(100)},
		{"cjk", strings.Repeat("日本語のテキストと中文文本。", 16<<10/39)},
	}
	c := tokens.New("gpt-4o")
	require.NoError(b, c.Err())
	for _, tt := range texts {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.text)))
			for b.Loop() {
				c.Count(tt.text)
			}
		})
	}
}

// noSpaceText returns n bytes drawn from alphabet, without spaces or
// newlines: the texts that made counting quadratic.
func noSpaceText(alphabet string, n int) string {
	r := rand.New(rand.NewPCG(11, 12))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// BenchmarkCountNoSpace counts 100, 200 and 400 KB of text without spaces
// in each iteration and reports the cost ratios, which are 2 and 4 when
// counting is linear (tiktoken-go's were about 5 and over 12).
// "letters" is one pre-token per 64 KiB segment; "base64" is many short
// pre-tokens.
func BenchmarkCountNoSpace(b *testing.B) {
	kinds := []struct{ name, alphabet string }{
		{"letters", "abcdefghijklmnopqrstuvwxyz"},
		{"base64", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			c := tokens.New("gpt-4o")
			require.NoError(b, c.Err())
			sizes := []int{100 << 10, 200 << 10, 400 << 10}
			texts := make([]string, len(sizes))
			for i, n := range sizes {
				texts[i] = noSpaceText(k.alphabet, n)
			}
			took := make([]time.Duration, len(sizes))
			for b.Loop() {
				for i, text := range texts {
					start := time.Now()
					c.Count(text)
					took[i] += time.Since(start)
				}
			}
			b.ReportMetric(float64(took[0].Milliseconds())/float64(b.N), "ms/100KB")
			b.ReportMetric(float64(took[1])/float64(took[0]), "x200KB/100KB")
			b.ReportMetric(float64(took[2])/float64(took[0]), "x400KB/100KB")
		})
	}
}

// BenchmarkLoad measures the first Count of a fresh Counter: loading the
// vocabulary (what a print-mode turn pays once).
func BenchmarkLoad(b *testing.B) {
	for _, model := range []string{"gpt-4o", "gpt-4"} {
		b.Run(tokens.EncodingFor(model), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				require.NoError(b, tokens.New(model).Err())
			}
		})
	}
}
