package sanitize_test

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/gencode/gencode/internal/tui/sanitize"
)

func TestText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello\n\tworld", "hello\n\tworld"},
		{"window title", "a\x1b]0;pwned\x07b", "ab"},
		{"title with ST", "a\x1b]2;pwned\x1b\\b", "ab"},
		{"clear screen", "x\x1b[2Jy", "xy"},
		{"cursor moves and colours", "\x1b[H\x1b[31mred\x1b[0m", "red"},
		{"bell and backspace", "a\x07b\x08c", "abc"},
		{"carriage returns", "one\r\ntwo\rthree", "one\ntwothree"},
		{"C1 CSI", "a\u009b2Jb", "a2Jb"},
		{"DEL", "a\x7fb", "ab"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"hyperlink keeps text", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"wide runes untouched", "日本語 🎉", "日本語 🎉"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := sanitize.Text(tt.in); got != tt.want {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDisplayAndLine(t *testing.T) {
	t.Parallel()
	if got, want := sanitize.Display("a\tb"), "a    b"; got != want {
		t.Errorf("Display = %q, want %q", got, want)
	}
	if got, want := sanitize.Line("ls -la\n  && rm x\x1b[2J"), "ls -la && rm x"; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

func BenchmarkTextPlain(b *testing.B) {
	s := strings.Repeat("a plain line of model output with `code` and words\n", 1024)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = sanitize.Text(s)
	}
}

// TestGoldenHostileOutput records exactly what the terminal is given for
// output that tries to retitle the window, clear the screen, move the
// cursor, ring the bell and query the terminal.
func TestGoldenHostileOutput(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		"retitle: \x1b]0;pwned\x07 (OSC 0 with BEL)",
		"retitle: \x1b]2;pwned\x1b\\ (OSC 2 with ST)",
		"clear: \x1b[2J\x1b[3J\x1b[H (CSI 2J, 3J, H)",
		"colour: \x1b[31mred\x1b[0m (SGR)",
		"query: \x1b[6n \x1bP+q544e\x1b\\ (DSR, XTGETTCAP)",
		"C1: \u009b2J \u009d0;x\u009c (8-bit CSI, OSC, ST)",
		"controls: bell\x07 backspace\x08 cr\r del\x7f nul\x00",
		"tab:\tkept",
	}, "\n")
	golden.RequireEqual(t, sanitize.Text(in))
}
