package input_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/tui/input"
	"github.com/gencode/gencode/internal/tui/paste"
	"github.com/gencode/gencode/internal/tui/theme"
)

type completer []string

func (c completer) Complete(prefix string) []string {
	var out []string
	for _, n := range c {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

var names = completer{"/clear", "/config", "/context", "/exit", "/help", "/history", "/model", "/resume", "/sessions", "/summarize"}

func newInput() input.Model {
	m := input.New(theme.New(true, colorprofile.NoTTY), names)
	m.SetWidth(60)
	return m
}

func runes(s string) tea.KeyPressMsg {
	r, _ := utf8.DecodeRuneInString(s)
	return tea.KeyPressMsg{Code: r, Text: s}
}

var (
	enter    = tea.KeyPressMsg{Code: tea.KeyEnter}
	altEnter = tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt}
	ctrlJ    = tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl}
	up       = tea.KeyPressMsg{Code: tea.KeyUp}
	down     = tea.KeyPressMsg{Code: tea.KeyDown}
	tab      = tea.KeyPressMsg{Code: tea.KeyTab}
)

// typ sends each rune as its own key press.
func typ(m input.Model, s string) input.Model {
	for _, r := range s {
		m, _ = m.Update(runes(string(r)))
	}
	return m
}

// submit presses Enter and returns what was sent (nil: nothing).
func submit(t *testing.T, m input.Model) (input.Model, *input.SubmitMsg) {
	t.Helper()
	m, cmd := m.Update(enter)
	if cmd == nil {
		return m, nil
	}
	msg, ok := cmd().(input.SubmitMsg)
	if !ok {
		t.Fatalf("Enter returned %T, want SubmitMsg", cmd())
	}
	return m, &msg
}

func TestEnterSends(t *testing.T) {
	t.Parallel()
	m := typ(newInput(), "hello")
	m, got := submit(t, m)
	if got == nil || got.Text != "hello" {
		t.Fatalf("Enter sent %+v, want hello", got)
	}
	if m.Value() != "" {
		t.Errorf("editor not cleared: %q", m.Value())
	}
	if _, got := submit(t, typ(m, "  ")); got != nil {
		t.Errorf("blank message sent: %+v", got)
	}
}

func TestNewlineKeys(t *testing.T) {
	t.Parallel()
	for _, k := range []tea.KeyPressMsg{altEnter, ctrlJ} {
		t.Run(k.String(), func(t *testing.T) {
			t.Parallel()
			m := typ(newInput(), "a")
			m, cmd := m.Update(k)
			if cmd != nil {
				if _, ok := cmd().(input.SubmitMsg); ok {
					t.Fatalf("%s sent the message", k)
				}
			}
			m = typ(m, "b")
			if m.Value() != "a\nb" {
				t.Errorf("Value() = %q, want %q", m.Value(), "a\nb")
			}
			if m.Height() != 3 { // rule + 2 rows
				t.Errorf("Height() = %d, want 3", m.Height())
			}
		})
	}
}

func TestHistoryRecall(t *testing.T) {
	t.Parallel()
	m := newInput()
	for _, s := range []string{"first", "second\nline"} {
		m, _ = submit(t, typ(m, s))
	}
	m = typ(m, "draft")
	steps := []struct {
		key  tea.KeyPressMsg
		want string
	}{
		{up, "second\nline"},
		// The cursor is at the end, on the second line: Up moves it up.
		{up, "second\nline"},
		{up, "first"},
		{up, "first"}, // the oldest stays
		{down, "second\nline"},
		{down, "draft"},
	}
	for i, s := range steps {
		m, _ = m.Update(s.key)
		if m.Value() != s.want {
			t.Fatalf("step %d (%s): Value() = %q, want %q", i, s.key, m.Value(), s.want)
		}
	}
}

func TestTabCompletes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typed, want string
		hint        bool
	}{
		{"/he", "/help ", false},
		{"/co", "/con", true},
		{"/h", "/h", true},
		{"/zz", "/zz", false},
		{"plain", "plain", false},
	}
	for _, tt := range tests {
		t.Run(tt.typed, func(t *testing.T) {
			t.Parallel()
			m := typ(newInput(), tt.typed)
			m, _ = m.Update(tab)
			if m.Value() != tt.want {
				t.Errorf("Tab on %q: Value() = %q, want %q", tt.typed, m.Value(), tt.want)
			}
			if got := len(m.Matches()) > 0; got != tt.hint {
				t.Errorf("Tab on %q: hint shown = %v, want %v (%q)", tt.typed, got, tt.hint, m.Matches())
			}
		})
	}
}

func TestGoldenHint(t *testing.T) {
	t.Parallel()
	golden.RequireEqual(t, typ(newInput(), "/s").View())
}

func TestLargePasteBecomesPlaceholder(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef\n", 10<<20/17)
	m := typ(newInput(), "see: ")
	m, _ = m.Update(tea.PasteMsg{Content: big + "\x1b]0;x\x07"})
	m = typ(m, " thanks")
	if len(m.Value()) > 200 {
		t.Fatalf("the editor holds %d bytes of the paste", len(m.Value()))
	}
	if !strings.Contains(m.Value(), "[pasted text #1: ") {
		t.Fatalf("no placeholder: %q", m.Value())
	}
	_, got := submit(t, m)
	if got == nil || got.Text != "see: "+big+" thanks" {
		t.Fatalf("the paste was not sent whole (got %d bytes)", len(got.Text))
	}
	if got.Display != m.Value() {
		t.Errorf("Display = %q, want the editor's text", got.Display)
	}
	small := typ(newInput(), "")
	small, _ = small.Update(tea.PasteMsg{Content: "two\nlines"})
	if small.Value() != "two\nlines" {
		t.Errorf("a small paste was not inserted as is: %q", small.Value())
	}
}

// BenchmarkKeystroke is one typed key (Update + View) in an editor that
// is empty and in one holding a 10 MB paste: the paste is a placeholder,
// so the cost is the same.
func BenchmarkKeystroke(b *testing.B) {
	big := strings.Repeat("0123456789abcdef\n", 10<<20/17)
	for _, bc := range []struct {
		name  string
		paste string
	}{{"empty", ""}, {"10MB-paste", big}} {
		b.Run(bc.name, func(b *testing.B) {
			m := newInput()
			if bc.paste != "" {
				m, _ = m.Update(tea.PasteMsg{Content: bc.paste})
			}
			k := runes("x")
			bs := tea.KeyPressMsg{Code: tea.KeyBackspace}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					m, _ = m.Update(k)
				} else {
					m, _ = m.Update(bs)
				}
				_ = m.View()
			}
		})
	}
}

// BenchmarkTextareaHolding is why the editor keeps pastes out of the
// textarea: bubbles' textarea redraws all its text on every key.
func BenchmarkTextareaHolding(b *testing.B) {
	for _, bc := range []struct {
		name string
		n    int
	}{{"empty", 0}, {"64KB", 64 << 10}, {"1MB", 1 << 20}} {
		n := bc.n
		b.Run(bc.name, func(b *testing.B) {
			ta := textarea.New()
			ta.MaxHeight, ta.CharLimit = 0, 0
			ta.SetWidth(80)
			ta.Focus()
			ta.InsertString(strings.Repeat("0123456789abcdef\n", n/17))
			k, bs := runes("x"), tea.KeyPressMsg{Code: tea.KeyBackspace}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					ta, _ = ta.Update(k)
				} else {
					ta, _ = ta.Update(bs)
				}
				_ = ta.View()
			}
		})
	}
}

// TestPasteKeepsLineBreaks: terminals send a paste's newlines as CR (xterm,
// VTE, tmux paste-buffer -p) or CRLF; each is one line break, in the
// editor and in what is sent, small paste or placeholder.
func TestPasteKeepsLineBreaks(t *testing.T) {
	t.Parallel()
	var big strings.Builder
	for i := range 500 {
		fmt.Fprintf(&big, "line %d\r", i)
	}
	tests := []struct {
		name, paste, want string
	}{
		{"CR", "func a() {\r    return 1\r}", "func a() {\n    return 1\n}"},
		{"CRLF", "one\r\ntwo\r\nthree", "one\ntwo\nthree"},
		{"LF", "one\ntwo", "one\ntwo"},
		{"mixed", "a\r\nb\rc\nd", "a\nb\nc\nd"},
		{"500 lines", big.String(), strings.ReplaceAll(big.String(), "\r", "\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, _ := newInput().Update(tea.PasteMsg{Content: tt.paste})
			if len(tt.want) < 100 && m.Value() != tt.want {
				t.Errorf("editor after paste = %q, want %q", m.Value(), tt.want)
			}
			_, got := submit(t, m)
			if got == nil || got.Text != tt.want {
				t.Fatalf("sent %q, want %q", got.Text, tt.want)
			}
		})
	}
}

// TestNewLineKeepsTheFirstLineInView: the editor grows with a new line;
// the textarea must not stay scrolled past the first line (it scrolled
// when the line was added at the old height).
func TestNewLineKeepsTheFirstLineInView(t *testing.T) {
	t.Parallel()
	for _, k := range []tea.KeyPressMsg{altEnter, ctrlJ} {
		t.Run(k.String(), func(t *testing.T) {
			t.Parallel()
			m := typ(newInput(), "first")
			for i, next := range []string{"second", "third"} {
				m, _ = m.Update(k)
				m = typ(m, next)
				view := m.View()
				if !strings.Contains(view, "❯ first") {
					t.Fatalf("after %d new lines the first line is hidden:\n%s", i+1, view)
				}
				if !strings.Contains(view, next) {
					t.Fatalf("the line typed is not shown:\n%s", view)
				}
			}
		})
	}
	// Grown past maxRows and shrunk back: every line shows again.
	m := typ(newInput(), "l0")
	for i := 1; i < 12; i++ {
		m, _ = m.Update(ctrlJ)
		m = typ(m, fmt.Sprintf("l%d", i))
	}
	for strings.Count(m.Value(), "\n") > 5 {
		m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	m = typ(m, "!")
	if m.Value() != "l0\nl1\nl2\nl3\nl4\nl5!" {
		t.Fatalf("Value() = %q", m.Value())
	}
	if view := m.View(); !strings.Contains(view, "❯ l0") || !strings.Contains(view, "l5") {
		t.Errorf("after shrinking, not every line shows:\n%s", view)
	}
}

// TestLongLineKeepsItsFirstRowInView: a line typed past the editor's
// width wraps; every row shows, the first one included, while it is
// typed, and Up and Down move between its rows.
func TestLongLineKeepsItsFirstRowInView(t *testing.T) {
	t.Parallel()
	m := newInput()
	words := strings.Fields(strings.Repeat("a long line of a draft that wraps ", 5))
	for i, w := range words {
		m = typ(m, w+" ")
		if view := m.View(); !strings.Contains(view, "❯ a") || !strings.Contains(view, w) {
			t.Fatalf("after %d words the first row or the last word is hidden:\n%s", i+1, view)
		}
	}
	if rows := strings.Count(m.View(), "\n"); rows < 3 {
		t.Fatalf("the line does not wrap (%d rows):\n%s", rows, m.View())
	}
	end := m.Value()
	m, _ = m.Update(up)
	m = typ(m, "X")
	i := strings.Index(m.Value(), "X")
	if i <= 0 || i >= len(end)-10 {
		t.Fatalf("Up then X: X at %d of %q", i, m.Value())
	}
	m, _ = m.Update(down)
	m = typ(m, "Y")
	if j := strings.Index(m.Value(), "Y"); j <= i {
		t.Fatalf("Down then Y: Y at %d, before X at %d: %q", j, i, m.Value())
	}
	if view := m.View(); !strings.Contains(view, "❯ a long line") || !strings.Contains(view, "X") || !strings.Contains(view, "Y") {
		t.Fatalf("after Up and Down a row is hidden:\n%s", view)
	}
}

// TestSubmitSaysWhereThePastesLie: the message sent carries, beside the
// whole text, where each placeholder's text lies in it, so the log can
// show the placeholder again later.
func TestSubmitSaysWhereThePastesLie(t *testing.T) {
	t.Parallel()
	big1 := strings.Repeat("first paste\n", 20)
	big2 := strings.Repeat("second paste\n", 30)
	m := typ(newInput(), "a ")
	m, _ = m.Update(tea.PasteMsg{Content: big1})
	m = typ(m, " b [pasted text #9: not one] ")
	m, _ = m.Update(tea.PasteMsg{Content: big2})
	_, got := submit(t, m)
	require.NotNil(t, got)
	require.Equal(t, "a "+big1+" b [pasted text #9: not one] "+big2, got.Text)
	require.Len(t, got.Spans, 2)
	require.Equal(t, big1, got.Text[got.Spans[0].Start:got.Spans[0].End])
	require.Equal(t, big2, got.Text[got.Spans[1].Start:got.Spans[1].End])
	require.Equal(t, []int{1, 2}, []int{got.Spans[0].N, got.Spans[1].N})
	require.Equal(t, got.Display, paste.Collapse(got.Text, got.Spans))
}

// TestRecalledHistoryKeepsItsPastes: a message loaded from the log is
// recalled with its placeholder, and sent whole again; a new paste gets
// the next number.
func TestRecalledHistoryKeepsItsPastes(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("pasted line\n", 50)
	ph := paste.Placeholder(3, big)
	m := newInput()
	m.SetHistory([]string{"look: " + ph}, map[string]string{ph: big})
	m, _ = m.Update(up)
	require.Equal(t, "look: "+ph, m.Value())
	m, got := submit(t, m)
	require.Equal(t, "look: "+big, got.Text)
	m, _ = m.Update(tea.PasteMsg{Content: big + "more\n"})
	require.Contains(t, m.Value(), "[pasted text #4: ")
}

// mentionTree is a working directory: internal/ (with tui/ and tools.go),
// intro/ is absent so "@int" is unique, two README files and a hidden one.
func mentionTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range []string{"internal/tui/view.go", "internal/tools.go", "README.md", "READING.txt", ".env"} {
		p = filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte("x\n"), 0o600))
	}
	return dir
}

// tabPath presses Tab and runs the listing it starts, as the program would.
func tabPath(t *testing.T, m input.Model) input.Model {
	t.Helper()
	m, cmd := m.Update(tab)
	if cmd == nil {
		return m
	}
	m, _ = m.Update(cmd())
	return m
}

func TestTabCompletesMentions(t *testing.T) {
	t.Parallel()
	dir := mentionTree(t)
	tests := []struct {
		typed, want string
		hints       string // the hint line, "" for none
	}{
		{"look at @int", "look at @internal/", ""},
		{"@internal/tu", "@internal/tui/", ""},
		{"@internal/tui/v", "@internal/tui/view.go ", ""},
		{"@internal/to", "@internal/tools.go ", ""},
		{"see @REA", "see @READ", "READING.txt  README.md   (tab completes)"},
		{"@", "@", "READING.txt  README.md  internal/   (tab completes)"},
		{"@.e", "@.env ", ""},
		{"@../", "@../", ""},
		{"@/etc/pas", "@/etc/pas", ""},
		{"@nothing", "@nothing", ""},
		{"mail me@int", "mail me@int", ""},
	}
	for _, tt := range tests {
		t.Run(tt.typed, func(t *testing.T) {
			t.Parallel()
			m := newInput()
			m.SetDir(dir)
			m = tabPath(t, typ(m, tt.typed))
			require.Equal(t, tt.want, m.Value())
			lines := strings.Split(m.View(), "\n")
			hint := ""
			if len(lines) == 3 {
				hint = strings.TrimSpace(lines[2])
			}
			require.Equal(t, tt.hints, hint)
			require.Equal(t, len(lines), m.Height(), "Height counts the hint line")
		})
	}
	// The hint goes as soon as the user types on.
	m := newInput()
	m.SetDir(dir)
	m = typ(tabPath(t, typ(m, "@REA")), "D")
	require.Equal(t, 2, m.Height())
}

// Without a directory (no project), "@" is text.
func TestMentionsNeedADir(t *testing.T) {
	t.Parallel()
	m := tabPath(t, typ(newInput(), "@int"))
	require.Equal(t, "@int", m.Value())
}

// A listing that comes back after the text changed is dropped.
func TestStaleMentionListing(t *testing.T) {
	t.Parallel()
	m := newInput()
	m.SetDir(mentionTree(t))
	m = typ(m, "@int")
	m, cmd := m.Update(tab)
	require.NotNil(t, cmd)
	m = typ(m, "x")
	m, _ = m.Update(cmd())
	require.Equal(t, "@intx", m.Value())
}

func TestGoldenMentionHint(t *testing.T) {
	t.Parallel()
	m := newInput()
	m.SetDir(mentionTree(t))
	golden.RequireEqual(t, tabPath(t, typ(m, "explain @internal/")).View())
}

// TestPlaceholderShortenedByWholePhrases: the empty editor's hint drops
// whole phrases to fit, never cut mid-word (at 60 columns it read
// "... · Alt+Enter for a new l").
func TestPlaceholderShortenedByWholePhrases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		width int
		want  string
	}{
		{120, "Message gencode · / for commands · Alt+Enter for a new line"},
		{61, "Message gencode · / for commands · Alt+Enter for a new line"},
		{60, "Message gencode · / for commands"},
		{40, "Message gencode · / for commands"},
		{30, "Message gencode"},
	}
	for _, tt := range tests {
		m := newInput()
		m.SetWidth(tt.width)
		lines := strings.Split(ansi.Strip(m.View()), "\n")
		got := strings.TrimSpace(strings.TrimPrefix(lines[1], "❯"))
		if got != tt.want {
			t.Errorf("width %d: placeholder %q, want %q", tt.width, got, tt.want)
		}
	}
}
