package markdown_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/tui/markdown"
	"github.com/gencode/gencode/internal/tui/theme"
)

const sample = "# Title\n\nA paragraph with **bold**, *emphasis* and `code`, long enough to wrap at eighty columns when it is rendered.\n\n```go\nfunc main() {\n    fmt.Println(\"a very long line of code that does not wrap but is cut by the chat instead of the renderer\")\n}\n```\n\n1. first\n2. second\n\n> a quote\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"

func renderer(p colorprofile.Profile, dark bool) *markdown.Renderer {
	return markdown.New(theme.New(dark, p))
}

func TestGoldenRender(t *testing.T) {
	t.Parallel()
	md := renderer(colorprofile.NoTTY, true)
	for _, w := range []int{80, 120} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			t.Parallel()
			golden.RequireEqual(t, strings.Join(md.Render(sample, w), "\n"))
		})
	}
}

func TestRenderTidy(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		p    colorprofile.Profile
		dark bool
	}{{"dark", colorprofile.ANSI256, true}, {"light", colorprofile.ANSI256, false}, {"plain", colorprofile.NoTTY, true}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lines := renderer(tt.p, tt.dark).Render(sample, 60)
			if len(lines) == 0 || strings.TrimSpace(ansi.Strip(lines[0])) == "" || strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
				t.Fatalf("Render left blank lines at the ends: %q", lines)
			}
			for _, l := range lines {
				if s := ansi.Strip(l); strings.HasSuffix(s, " ") {
					t.Errorf("line keeps its padding: %q", s)
				}
				if tt.p == colorprofile.NoTTY && strings.ContainsRune(l, '\x1b') {
					t.Errorf("plain profile line has escapes: %q", l)
				}
			}
		})
	}
}

func TestPlainWraps(t *testing.T) {
	t.Parallel()
	got := markdown.Plain("one two three four\n\n日本語日本語日本語", 10)
	want := []string{"one two", "three four", "", "日本語日本", "語日本語"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Plain = %q, want %q", got, want)
	}
}

func TestConcurrentRenders(t *testing.T) {
	t.Parallel()
	md := renderer(colorprofile.ANSI256, true)
	done := make(chan []string)
	for range 4 {
		go func() { done <- md.Render(sample, 70) }()
	}
	first := <-done
	for range 3 {
		if got := <-done; strings.Join(got, "\n") != strings.Join(first, "\n") {
			t.Fatal("concurrent renders differ")
		}
	}
	if md.Renders() != 4 {
		t.Errorf("Renders() = %d, want 4", md.Renders())
	}
}

// TestBackgroundPicksTheStyle: a light terminal gets glamour's light
// style, a dark one the dark style.
func TestBackgroundPicksTheStyle(t *testing.T) {
	t.Parallel()
	dark := strings.Join(renderer(colorprofile.ANSI256, true).Render(sample, 80), "\n")
	light := strings.Join(renderer(colorprofile.ANSI256, false).Render(sample, 80), "\n")
	if dark == light {
		t.Fatal("light and dark backgrounds render the same")
	}
	if ansi.Strip(dark) != ansi.Strip(light) {
		t.Error("the styles changed the text, not just its colours")
	}
}

// TestCodeBlockHighlighted: a fenced block's language picks its lexer
// (third_party/chroma builds the lexers on this first use, not at start):
// a Go keyword is drawn in another colour than the name after it, and a
// block in no known language is still shown, as plain text.
func TestCodeBlockHighlighted(t *testing.T) {
	t.Parallel()
	md := renderer(colorprofile.ANSI256, true)
	sgrBefore := func(line, word string) string {
		i := strings.Index(line, word)
		require.GreaterOrEqual(t, i, 0, "%q not in %q", word, line)
		j := strings.LastIndex(line[:i], "\x1b[")
		require.GreaterOrEqual(t, j, 0, "no style before %q in %q", word, line)
		return line[j : j+strings.IndexByte(line[j:], 'm')+1]
	}
	lines := md.Render("```go\nfunc main() {}\n```\n", 80)
	line := lines[slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "func") })]
	if kw, name := sgrBefore(line, "func"), sgrBefore(line, "main"); kw == name {
		t.Errorf("Render(go block): func and main both styled %q, want the keyword highlighted", kw)
	}
	plain := ansi.Strip(strings.Join(md.Render("```nosuchlanguage\nfunc main() {}\n```\n", 80), "\n"))
	if !strings.Contains(plain, "func main() {}") {
		t.Errorf("Render(unknown language) = %q, want the code shown", plain)
	}
}
