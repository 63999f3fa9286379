package report_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

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

// TestTableKeepsColumns: a table's rows (/config: key, value, source) stay
// in columns at any width. When a value is too long, it wraps within its
// column and every source starts at the same cell; too narrow for that,
// each row is stacked (the key, then value and source indented), no cell
// broken across another's column.
func TestTableKeepsColumns(t *testing.T) {
	t.Parallel()
	rows := [][]string{
		{"model", "gpt-4o-mini", "file:1"},
		{"base_url", "http://127.0.0.1:11434/v1/a/long/path/to/the/server", "env OPENAI_BASE_URL"},
		{"summarize.mask_tool_outputs_after", "30", "default"},
	}
	rep := commands.Report{Title: "Configuration", Sections: []commands.Section{{Rows: rows}}}
	st := styles(colorprofile.NoTTY)
	// inner is a body line's text without the borders ("" for a border).
	inner := func(l string) string {
		c, ok := strings.CutPrefix(l, "│ ")
		if !ok {
			return ""
		}
		return strings.TrimRight(strings.TrimSuffix(c, "│"), " ")
	}

	lines := report.Render(rep, 80, st)
	at := -1
	for _, row := range rows {
		found := false
		for _, l := range lines {
			l = inner(l)
			if !strings.HasPrefix(l, row[0]+" ") {
				continue
			}
			found = true
			i := strings.Index(l, row[2])
			require.Positive(t, i, "%q keeps its source on its first line:\n%s", row[0], strings.Join(lines, "\n"))
			if at < 0 {
				at = ansi.StringWidth(l[:i])
			}
			require.Equal(t, at, ansi.StringWidth(l[:i]), "the source column of %q:\n%s", row[0], strings.Join(lines, "\n"))
		}
		require.True(t, found, "a line starts with %q:\n%s", row[0], strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		require.LessOrEqual(t, ansi.StringWidth(inner(l)), at+len("env OPENAI_BASE_URL"))
		if c := inner(l); strings.HasPrefix(c, " ") && strings.TrimSpace(c) != "" {
			require.Less(t, ansi.StringWidth(c), at, "a value's continuation stays left of the sources: %q", c)
		}
	}

	lines = report.Render(rep, 40, st)
	text := strings.Join(lines, "\n")
	for _, row := range rows {
		require.Contains(t, text, "│ "+row[0]+" ", "the key on a line of its own:\n%s", text)
		require.Contains(t, text, row[2], "the source whole:\n%s", text)
	}
	for _, l := range lines {
		require.LessOrEqual(t, ansi.StringWidth(l), 40)
	}
}
