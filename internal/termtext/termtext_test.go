package termtext_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/termtext/termtexttest"
)

// TestSanitizeHostileCorpus: the one sanitizer on the corpus every
// surface is tested with; what it leaves is inert and sanitizing again
// changes nothing.
func TestSanitizeHostileCorpus(t *testing.T) {
	t.Parallel()
	for _, tt := range termtexttest.Corpus() {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			got := termtext.Sanitize(tt.In)
			if got != tt.Want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.In, got, tt.Want)
			}
			if raw := termtexttest.Raw(got); len(raw) > 0 {
				t.Errorf("Sanitize(%q) left %v", tt.In, raw)
			}
			if again := termtext.Sanitize(got); again != got {
				t.Errorf("Sanitize(%q) = %q, not idempotent", got, again)
			}
		})
	}
}

func TestSanitizeCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		removed        int
	}{
		{"clean", "## Goal\n- ship\tit", "## Goal\n- ship\tit", 0},
		{"line endings are not counted", "a\r\nb\rc", "a\nb\nc", 0},
		{"each sequence once", "\x1b[2J\x1b[31mred\x1b[0m \x1b]52;c;eA==\x07", "red ", 4},
		{"controls, C1, bidi, invalid", "a\x00\u009b2J\u202eb\xff", "ab\uFFFD", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, n := termtext.SanitizeCount(tt.in)
			if got != tt.want || n != tt.removed {
				t.Errorf("SanitizeCount(%q) = %q, %d, want %q, %d", tt.in, got, n, tt.want, tt.removed)
			}
		})
	}
}

func TestDisplayAndLabel(t *testing.T) {
	t.Parallel()
	if got, want := termtext.Display("a\tb\x1b[2J"), "a    b"; got != want {
		t.Errorf("Display = %q, want %q", got, want)
	}
	labels := map[string]string{
		"ls -la\n  && rm x\x1b[2J\r\n": "ls -la && rm x",
		"#1  messages 1-9   gist":      "#1  messages 1-9   gist",
		"a\tb\rc":                      "a    b c",
	}
	for in, want := range labels {
		if got := termtext.Label(in); got != want {
			t.Errorf("Label(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWriterSplits: a stream sanitized through a Writer, cut anywhere
// (inside an escape sequence, between CR and LF, inside a UTF-8
// character), gives what Sanitize gives for the whole text.
func TestWriterSplits(t *testing.T) {
	t.Parallel()
	in, _ := termtexttest.Joined()
	want := termtext.Sanitize(in)
	for _, step := range []int{1, 2, 3, 5, 7, 64, len(in)} {
		var out bytes.Buffer
		w := termtext.NewWriter(&out)
		for i := 0; i < len(in); i += step {
			n, err := w.Write([]byte(in[i:min(i+step, len(in))]))
			require.NoError(t, err)
			require.Equal(t, min(step, len(in)-i), n)
		}
		require.NoError(t, w.Flush())
		if out.String() != want {
			t.Errorf("written in pieces of %d bytes: %q, want %q", step, out.String(), want)
		}
	}
}

// TestWriterBoundsWhatItHolds: an escape string that never ends does not
// make the Writer hold the stream forever: past the bound the open
// sequence is dropped and what follows is shown, inert.
func TestWriterBoundsWhatItHolds(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := termtext.NewWriter(&out)
	_, err := w.Write([]byte("before\x1b]52;c;"))
	require.NoError(t, err)
	chunk := []byte(strings.Repeat("A", 4096))
	for range 40 {
		_, err = w.Write(chunk)
		require.NoError(t, err)
	}
	require.True(t, strings.HasPrefix(out.String(), "beforeAAAA"), "%.20q", out.String())
	require.Greater(t, out.Len(), 40*4096-(64<<10)-4096, "the Writer held the stream back")
	require.NoError(t, w.Flush())
	require.Empty(t, termtexttest.Raw(out.String()))
}

// TestJSONWriterKeepsTheData: JSON shown on a terminal through a JSON
// Writer is inert and still decodes to the exact strings, hostile ones
// included.
func TestJSONWriterKeepsTheData(t *testing.T) {
	t.Parallel()
	var values []string
	for _, c := range termtexttest.Corpus() {
		values = append(values, strings.ToValidUTF8(c.In, "\uFFFD"))
	}
	var out bytes.Buffer
	w := termtext.NewJSONWriter(&out)
	enc := json.NewEncoder(w)
	for _, v := range values {
		require.NoError(t, enc.Encode(map[string]string{"content": v}))
	}
	require.NoError(t, w.Flush())
	require.Empty(t, termtexttest.Raw(out.String()))
	dec := json.NewDecoder(&out)
	for _, v := range values {
		var got map[string]string
		require.NoError(t, dec.Decode(&got))
		require.Equal(t, v, got["content"])
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"  a\n\tb   c \n", 0, "a b c"},
		{"abcdef", 4, "abc…"},
		{"abcd", 4, "abcd"},
		{"日本語のテキスト", 4, "日本語…"},
		{"one\ntwo three", 7, "one tw…"},
		{"bidi \u202e gnp.exe \x1b[2J", 0, "bidi gnp.exe"},
	}
	for _, tt := range tests {
		if got := termtext.OneLine(tt.in, tt.max); got != tt.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

// TestOneLineCutIsTheWholeLineCut: OneLine with a limit reads only the
// start of a long text; what it returns is the whole text put on one line
// (OneLine(s, 0)) and then cut, for every limit, white space of every
// kind (U+0085, U+00A0, U+3000), bad UTF-8 and hostile sequences.
func TestOneLineCutIsTheWholeLineCut(t *testing.T) {
	t.Parallel()
	ins := []string{
		"", " ", "a", "  a  ", "a b", "a\u0085b\u00a0c\u3000d", "\xff\xfe x \xc3", "日本語 の テキスト",
		"one\ntwo three\n\n four  ", strings.Repeat("word ", 50) + "end", "x\x1b[2J y \u202e z\r\n",
	}
	for _, c := range termtexttest.Corpus() {
		ins = append(ins, c.In, strings.Repeat(c.In+" \n ", 3))
	}
	for _, in := range ins {
		whole := termtext.OneLine(in, 0)
		for max := 1; max <= utf8.RuneCountInString(whole)+2; max++ {
			want := whole
			if utf8.RuneCountInString(whole) > max {
				i := 0 // the bytes of the first max-1 characters
				for range max - 1 {
					_, size := utf8.DecodeRuneInString(whole[i:])
					i += size
				}
				want = whole[:i] + termtext.Ellipsis
			}
			if got := termtext.OneLine(in, max); got != want {
				t.Errorf("OneLine(%q, %d) = %q, want %q", in, max, got, want)
			}
		}
	}
}

func TestFirstLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"  go test ./...  ", 200, "go test ./..."},
		{"make\nmake install", 200, "make …"},
		{"echo 日本語です", 7, "echo 日本 …"},
		{strings.Repeat("x", 10), 10, strings.Repeat("x", 10)},
	}
	for _, tt := range tests {
		if got := termtext.FirstLine(tt.in, tt.max); got != tt.want {
			t.Errorf("FirstLine(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestSizeAndThousands(t *testing.T) {
	t.Parallel()
	sizes := map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1536: "1.5 KB", 5 << 20: "5.0 MB", 3 << 30: "3.0 GB"}
	for n, want := range sizes {
		if got := termtext.Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
	nums := map[int]string{0: "0", 999: "999", 1000: "1,000", 31204: "31,204", -1234567: "-1,234,567"}
	for n, want := range nums {
		if got := termtext.Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzSanitize: whatever comes in, nothing raw goes out, sanitizing is
// idempotent, and a Writer fed the text in two pieces agrees.
func FuzzSanitize(f *testing.F) {
	for _, c := range termtexttest.Corpus() {
		f.Add(c.In, len(c.In)/2)
	}
	f.Fuzz(func(t *testing.T, in string, cut int) {
		got := termtext.Sanitize(in)
		if raw := termtexttest.Raw(got); len(raw) > 0 {
			t.Fatalf("Sanitize(%q) = %q left %v", in, got, raw)
		}
		if !utf8.ValidString(got) || termtext.Sanitize(got) != got {
			t.Fatalf("Sanitize(%q) = %q: not valid or not idempotent", in, got)
		}
		cut = max(0, min(cut, len(in)))
		var out bytes.Buffer
		w := termtext.NewWriter(&out)
		_, _ = w.Write([]byte(in[:cut]))
		_, _ = w.Write([]byte(in[cut:]))
		_ = w.Flush()
		if out.String() != got {
			t.Fatalf("Writer(%q | %q) = %q, Sanitize = %q", in[:cut], in[cut:], out.String(), got)
		}
	})
}

func BenchmarkSanitizePlain(b *testing.B) {
	s := strings.Repeat("a plain line of model output with `code` and words\n", 1024)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = termtext.Sanitize(s)
	}
}

func TestCount(t *testing.T) {
	require.Equal(t, "0 files", termtext.Count(0, "file", "files"))
	require.Equal(t, "1 file", termtext.Count(1, "file", "files"))
	require.Equal(t, "2 messages match", termtext.Count(2, "message matches", "messages match"))
	require.Equal(t, "1 message matches", termtext.Count(1, "message matches", "messages match"))
}
