// Package report draws a slash command's boxed report (commands.Report) as
// a rounded box that fits the terminal: the title sits in the top border,
// lines too long are cut with an ellipsis, and wide characters (CJK,
// emoji) are measured in cells so the right border stays aligned.
package report

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tui/theme"
)

// minInner is the narrowest content width a box is drawn with.
const minInner = 8

// Render draws rep in a box at most width cells wide (as narrow as its
// content allows) and returns its lines.
func Render(rep commands.Report, width int, st theme.Report) []string {
	type line struct {
		text  string
		style lipgloss.Style
	}
	var body []line
	for i, s := range rep.Sections {
		if i > 0 {
			body = append(body, line{"", st.Text})
		}
		if s.Title != "" {
			body = append(body, line{termtext.Label(s.Title), st.Section})
		}
		indent := ""
		if s.Title != "" {
			indent = "  "
		}
		for _, l := range s.Lines {
			body = append(body, line{indent + termtext.Label(l), st.Text})
		}
		if s.More > 0 {
			body = append(body, line{fmt.Sprintf("%s+%d more", indent, s.More), st.Dim})
		}
	}
	if rep.Footer != "" {
		if len(body) > 0 {
			body = append(body, line{"", st.Text})
		}
		for _, l := range strings.Split(termtext.Display(rep.Footer), "\n") {
			body = append(body, line{l, st.Dim})
		}
	}
	title := termtext.Label(rep.Title)

	// Border (2) and padding (2) take 4 cells.
	maxInner := max(width-4, minInner)
	inner := ansi.StringWidth(title) + 2
	for _, l := range body {
		inner = max(inner, ansi.StringWidth(l.text))
	}
	inner = min(max(inner, minInner), maxInner)

	b := lipgloss.RoundedBorder()
	var out []string
	// Top border with the title: ╭─ Title ─────╮
	top := b.TopLeft + b.Top
	if title != "" {
		t := ansi.Truncate(title, inner-1, "…")
		fill := inner + 2 - 1 - ansi.StringWidth(t) - 2
		out = append(out, st.Border.Render(top+" ")+st.Title.Render(t)+st.Border.Render(" "+strings.Repeat(b.Top, max(fill, 0))+b.TopRight))
	} else {
		out = append(out, st.Border.Render(b.TopLeft+strings.Repeat(b.Top, inner+2)+b.TopRight))
	}
	side := st.Border.Render(b.Left)
	rside := st.Border.Render(b.Right)
	for _, l := range body {
		t := l.text
		if ansi.StringWidth(t) > inner {
			t = ansi.Truncate(t, inner, "…")
		}
		pad := strings.Repeat(" ", inner-ansi.StringWidth(t))
		out = append(out, side+" "+l.style.Render(t)+pad+" "+rside)
	}
	out = append(out, st.Border.Render(b.BottomLeft+strings.Repeat(b.Bottom, inner+2)+b.BottomRight))
	return out
}
