package report_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/tui/report"
	"github.com/gencode/gencode/internal/tui/theme"
)

func styles(p colorprofile.Profile) theme.Report {
	return theme.New(true, p).Report
}

var sample = commands.Report{
	Title: "Summary 📋",
	Sections: []commands.Section{
		{Lines: []string{"messages 240 → 31 (87% fewer)", "tokens 61,204 → 7,950 (53,254 saved)", "took 12.4s with gpt-4o-mini"}},
		{Title: "Key topics", Lines: []string{"SQLite 永続化", "résumé of the 🚀 launch plan", "a very long topic line that goes on and on past the edge of any reasonable terminal window"}, More: 3},
		{Title: "Files modified", Lines: []string{"internal/session/store.go", "internal/tui/chat/chat.go\x1b]0;pwned\x07"}},
	},
	Footer: "originals kept · /history --full shows them",
}

func TestGoldenReport(t *testing.T) {
	t.Parallel()
	st := styles(colorprofile.NoTTY)
	for _, w := range []int{40, 80, 120} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			t.Parallel()
			golden.RequireEqual(t, strings.Join(report.Render(sample, w, st), "\n"))
		})
	}
}

// TestAligned checks every line of the box has the same width, never more
// than the terminal's, with colours on and wide characters inside.
func TestAligned(t *testing.T) {
	t.Parallel()
	st := styles(colorprofile.TrueColor)
	tests := []struct {
		name  string
		rep   commands.Report
		width int
	}{
		{"sample wide", sample, 120},
		{"sample narrow", sample, 30},
		{"tiny terminal", sample, 6},
		{"CJK title cut", commands.Report{Title: strings.Repeat("長い題名", 20), Sections: []commands.Section{{Lines: []string{"x"}}}}, 50},
		{"emoji lines", commands.Report{Title: "✓", Sections: []commands.Section{{Lines: []string{"👩‍💻 pair", "🇯🇵 flag", "e\u0301 combining"}}}}, 40},
		{"empty", commands.Report{}, 80},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lines := report.Render(tt.rep, tt.width, st)
			w0 := ansi.StringWidth(lines[0])
			for i, l := range lines {
				if w := ansi.StringWidth(l); w != w0 {
					t.Errorf("line %d is %d cells wide, the top border %d: %q", i, w, w0, ansi.Strip(l))
				}
			}
			if tt.width >= 12 && w0 > tt.width {
				t.Errorf("box is %d cells wide, terminal %d", w0, tt.width)
			}
			if strings.Contains(strings.Join(lines, ""), "\x1b]") {
				t.Error("an OSC sequence reached the box")
			}
		})
	}
}
