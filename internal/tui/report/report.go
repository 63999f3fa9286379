// Package report draws a slash command's boxed report (commands.Report) as
// a rounded box that fits the terminal: the title sits in the top border,
// lines too long for the box wrap (a continuation indented under its
// line), and wide characters (CJK, emoji) are measured in cells so the
// right border stays aligned. Nothing is cut: a title too long for the
// border goes inside the box, wrapped too.
package report

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tui/theme"
)

// minInner is the narrowest content width a box is drawn with.
const minInner = 8

// minColumn is the narrowest a column continues under itself.
const minColumn = 20

// hang is how much further than its line a wrapped line's continuation is
// indented.
const hang = 2

// Render draws rep in a box at most width cells wide (as narrow as its
// content allows) and returns its lines.
func Render(rep commands.Report, width int, st theme.Report) []string {
	type line struct {
		text  string
		style lipgloss.Style
		table int // the section the line is a row of; -1: none
	}
	var body []line
	for i, s := range rep.Sections {
		if i > 0 {
			body = append(body, line{"", st.Text, -1})
		}
		if s.Title != "" {
			body = append(body, line{termtext.Label(s.Title), st.Section, -1})
		}
		indent := ""
		if s.Title != "" {
			indent = "  "
		}
		for _, l := range s.Lines {
			body = append(body, line{indent + termtext.Label(l), st.Text, i})
		}
		if len(s.Rows) > 0 {
			// Laid out for the box's width here: the rows fit it.
			for _, r := range table(s.Rows, len(indent), max(width-4, minInner)) {
				body = append(body, line{r, st.Text, -1})
			}
		}
		if s.More > 0 {
			body = append(body, line{fmt.Sprintf("%s+%d more", indent, s.More), st.Dim, -1})
		}
	}
	if rep.Footer != "" {
		if len(body) > 0 {
			body = append(body, line{"", st.Text, -1})
		}
		for _, l := range strings.Split(termtext.Display(rep.Footer), "\n") {
			body = append(body, line{l, st.Dim, -1})
		}
	}

	// Border (2) and padding (2) take 4 cells.
	maxInner := max(width-4, minInner)
	title := termtext.Label(rep.Title)
	if title != "" && ansi.StringWidth(title)+2 > maxInner {
		// Too long for the border: the title opens the box instead.
		head := []line{}
		for _, r := range Wrap(title, maxInner, hang) {
			head = append(head, line{r, st.Title, -1})
		}
		if len(body) > 0 {
			head = append(head, line{"", st.Text, -1})
		}
		body, title = append(head, body...), ""
	}
	// A table whose columns cannot all be kept loses its padding in
	// every row, so that its rows stay alike.
	flat := map[int]bool{}
	for _, l := range body {
		if l.table >= 0 && !keepsColumns(l.text, maxInner) {
			flat[l.table] = true
		}
	}
	var rows []line
	for _, l := range body {
		t := l.text
		if flat[l.table] {
			t = unpad(t)
		}
		for _, r := range wrapTable(t, maxInner) {
			rows = append(rows, line{r, l.style, -1})
		}
	}
	inner := minInner
	if title != "" {
		inner = max(inner, ansi.StringWidth(title)+2)
	}
	for _, r := range rows {
		inner = max(inner, ansi.StringWidth(r.text))
	}
	inner = min(inner, maxInner)

	b := lipgloss.RoundedBorder()
	out := make([]string, 0, len(rows)+2)
	// Top border with the title: ╭─ Title ─────╮
	if title != "" {
		fill := inner + 2 - 1 - ansi.StringWidth(title) - 2
		out = append(out, st.Border.Render(b.TopLeft+b.Top+" ")+st.Title.Render(title)+st.Border.Render(" "+strings.Repeat(b.Top, max(fill, 0))+b.TopRight))
	} else {
		out = append(out, st.Border.Render(b.TopLeft+strings.Repeat(b.Top, inner+2)+b.TopRight))
	}
	side := st.Border.Render(b.Left)
	rside := st.Border.Render(b.Right)
	for _, r := range rows {
		t := r.text
		if ansi.StringWidth(t) > inner { // only below minInner: a box never gets narrower
			t = ansi.Truncate(t, inner, "…")
		}
		pad := strings.Repeat(" ", inner-ansi.StringWidth(t))
		out = append(out, side+" "+r.style.Render(t)+pad+" "+rside)
	}
	out = append(out, st.Border.Render(b.BottomLeft+strings.Repeat(b.Bottom, inner+2)+b.BottomRight))
	return out
}

// minValue is the narrowest a table's wrapped column is kept beside its
// neighbours; narrower, the rows are stacked.
const minValue = 16

// table lays out a section's rows (commands.Section.Rows) within width
// cells, each line indented by indent. Each column is as wide as its widest
// cell, two spaces apart. When a row does not fit, its last-but-one cell
// (a value) wraps within its column and the last (its source) keeps its
// own column on the row's first line. When even that leaves the wrapped
// column less than minValue cells, each row is stacked: its first cells on
// a line, then the last two below, indented, the last on a line of its own
// when they do not fit together. A column is never broken across another.
func table(rows [][]string, indent, width int) []string {
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], ansi.StringWidth(termtext.Label(c)))
		}
	}
	const gap = 2
	n := len(widths)
	if n < 3 {
		// Nothing to keep beside the value: pad and wrap as a line.
		var out []string
		for _, l := range commands.PadRows(rows) {
			out = append(out, Wrap(strings.Repeat(" ", indent)+termtext.Label(l), width, hang)...)
		}
		return out
	}
	wrapCol := n - 2
	fixed := indent
	for i, w := range widths {
		if i != wrapCol {
			fixed += w + gap
		}
	}
	fixed -= gap // no gap after the last column
	valueW := min(widths[wrapCol], width-fixed-gap)
	pad := func(s string, w int) string { return s + strings.Repeat(" ", max(w-ansi.StringWidth(s), 0)) }
	lead := strings.Repeat(" ", indent)
	var out []string
	if valueW >= min(minValue, widths[wrapCol]) {
		valueAt := indent
		for i := range wrapCol {
			valueAt += widths[i] + gap
		}
		for _, row := range rows {
			cells := make([]string, n)
			for i := range row {
				cells[i] = termtext.Label(row[i])
			}
			head := lead
			for i := range wrapCol {
				head += pad(cells[i], widths[i]+gap)
			}
			parts := wrap(cells[wrapCol], valueW, 0)
			first := head + pad(parts[0], valueW+gap) + strings.Join(cells[wrapCol+1:], strings.Repeat(" ", gap))
			out = append(out, strings.TrimRight(first, " "))
			for _, p := range parts[1:] {
				out = append(out, strings.Repeat(" ", valueAt)+p)
			}
		}
		return out
	}
	for _, row := range rows {
		cells := make([]string, n)
		for i := range row {
			cells[i] = termtext.Label(row[i])
		}
		out = append(out, Wrap(lead+strings.Join(cells[:wrapCol], "  "), width, hang)...)
		sub := indent + hang
		rest := strings.Join(cells[wrapCol:], strings.Repeat(" ", gap))
		if sub+ansi.StringWidth(rest) <= width {
			out = append(out, strings.Repeat(" ", sub)+rest)
			continue
		}
		for _, c := range cells[wrapCol:] {
			if c != "" {
				out = append(out, Wrap(strings.Repeat(" ", sub)+c, width, hang)...)
			}
		}
	}
	return out
}

// wrapTable wraps a report line. A line laid out in columns (a run of two
// or more spaces before a column) continues under its last column when
// that column starts in the first two thirds of the box and leaves it
// minColumn cells: a command's summary, a setting's value. Else it wraps
// as Wrap does.
func wrapTable(s string, width int) []string {
	if width <= 0 || ansi.StringWidth(s) <= width {
		return []string{s}
	}
	if c := column(s, width*2/3); c > 0 && width-c >= minColumn {
		return wrap(s, width, c)
	}
	return Wrap(s, width, hang)
}

// keepsColumns reports whether s fits width, or wraps under its last
// column.
func keepsColumns(s string, width int) bool {
	if ansi.StringWidth(s) <= width {
		return true
	}
	c := column(s, width*2/3)
	return c > 0 && width-c >= minColumn
}

// unpad is s without its columns' padding: each run of spaces after its
// indentation becomes one.
func unpad(s string) string {
	body := strings.TrimLeft(s, " ")
	return s[:len(s)-len(body)] + padding().ReplaceAllString(body, " ")
}

// padding is a run of spaces that lays out columns.
var padding = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`  +`) })

// column is the cell where the last column of s that starts at or before
// limit begins (0: none). A column starts after a run of two or more
// spaces that follows text.
func column(s string, limit int) int {
	col, w, spaces, text := 0, 0, 0, false
	for _, r := range s {
		if r == ' ' {
			spaces++
		} else {
			if spaces >= 2 && text && w <= limit {
				col = w
			}
			spaces, text = 0, true
		}
		w += ansi.StringWidth(string(r))
	}
	return col
}

// Wrap breaks plain text s into lines of at most width cells: at spaces
// where it can (a run of spaces inside a line is kept), inside a word only
// when the word is wider than a line. Each continuation is indented as s
// is, plus hang cells (less when the width cannot spare them). Text that
// fits is returned as it is.
func Wrap(s string, width, hang int) []string {
	if width <= 0 || ansi.StringWidth(s) <= width {
		return []string{s}
	}
	lead := len(s) - len(strings.TrimLeft(s, " "))
	indent := lead + hang
	if indent > width/2 {
		indent = min(hang, width/2)
	}
	return wrap(s, width, indent)
}

// wrap breaks s as Wrap does, each continuation indented indent cells.
func wrap(s string, width, indent int) []string {
	body := strings.TrimLeft(s, " ")
	lead := len(s) - len(body)
	var rows []string
	row := s[:lead]
	rowW := lead
	fresh := true // the row holds no word yet
	spaces := 0   // spaces waiting between the row's last word and the next
	newRow := func() {
		rows = append(rows, strings.TrimRight(row, " "))
		row, rowW, fresh, spaces = strings.Repeat(" ", indent), indent, true, 0
	}
	for body != "" {
		if body[0] == ' ' {
			n := len(body) - len(strings.TrimLeft(body, " "))
			spaces, body = spaces+n, body[n:]
			continue
		}
		word, rest, _ := strings.Cut(body, " ")
		if rest != "" || strings.HasSuffix(body, " ") {
			rest = " " + rest
		}
		body = rest
		ww := ansi.StringWidth(word)
		if !fresh && rowW+spaces+ww > width {
			newRow()
		}
		if !fresh {
			row, rowW = row+strings.Repeat(" ", spaces), rowW+spaces
		}
		spaces = 0
		for rowW+ww > width { // wider than what is left of a line: break it
			part := ansi.Truncate(word, width-rowW, "")
			if part == "" { // not one character fits: take one anyway
				part = ansi.Truncate(word, 2, "")
				if part == "" {
					part = word
				}
			}
			row, rowW = row+part, rowW+ansi.StringWidth(part)
			word = word[len(part):]
			ww = ansi.StringWidth(word)
			if word == "" {
				break
			}
			newRow()
		}
		row, rowW, fresh = row+word, rowW+ww, false
	}
	if !fresh || len(rows) == 0 {
		rows = append(rows, strings.TrimRight(row, " "))
	}
	return rows
}
