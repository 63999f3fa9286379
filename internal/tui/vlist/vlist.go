// Package vlist is a virtual list for a terminal view: rows of rendered
// lines, of which only those in (or next to) the window are ever asked
// for, so a frame costs the same with ten rows or a hundred thousand. The
// window either follows the end (new rows scroll into view) or stays on a
// line of a row while the user scrolls and rows are added.
//
// The list owns the window, scrolling and layout; what a row draws, and
// any cache of it, belongs to its Rows.
package vlist

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Rows is what the list shows. Lines returns row i as lines of at most the
// list's width (wider ones are cut); it is called only for rows the layout
// or a scroll passes over.
type Rows interface {
	Len() int
	Lines(i int) []string
	// ID names row i for clicks (0: nothing to click).
	ID(i int) int
}

// Anchor is a line of a row: the window's first line when it does not
// follow the end.
type Anchor struct{ Row, Line int }

// Model is the list's window. Rows are separated by one blank line.
type Model struct {
	width, height int
	follow        bool   // pinned to the end: new output scrolls into view
	top           Anchor // first line of the window when !follow
	pinTop        bool   // ScrollTop: stay at the start as rows are prepended
	empty         string // the line shown when there is no row

	frame []string
	ids   []int // row ID of each frame line
	// fitted are the lines of the last frame as setFrame got them and as
	// it drew them, at fitWidth: a layout after a streamed chunk, a tick
	// or a key draws nearly the same lines again, and measuring each one
	// (grapheme by grapheme) again was most of what a layout cost. Built
	// anew by each setFrame, never changed: copies of the Model share it.
	fitted   map[string]string
	fitWidth int
}

// SetEmpty sets the line shown when the list has no row.
func (m *Model) SetEmpty(empty string) { m.empty = empty }

// New returns a list that follows the end; empty is shown when it has no
// row.
func New(empty string) Model {
	return Model{follow: true, empty: empty}
}

// SetSize sets the window's size.
func (m *Model) SetSize(width, height int) { m.width, m.height = width, height }

// Width and Height are the window's size.
func (m Model) Width() int  { return m.width }
func (m Model) Height() int { return m.height }

// Following reports whether the window is pinned to the end.
func (m Model) Following() bool { return m.follow }

// PinnedTop reports whether the window was sent to the start and stays
// there while older rows are prepended.
func (m Model) PinnedTop() bool { return m.pinTop }

// Reset follows the end again (new content).
func (m *Model) Reset() { m.follow, m.top, m.pinTop = true, Anchor{}, false }

// Top is the window's first line when it does not follow the end.
func (m Model) Top() Anchor { return m.top }

// SetTop moves the window's first line (rows were inserted above it).
func (m *Model) SetTop(a Anchor) { m.top = a }

// height is row i's height as laid out: a blank separator before every
// row but the first, then its lines.
func height(r Rows, i int) int {
	n := len(r.Lines(i))
	if i > 0 {
		n++
	}
	return n
}

// appendRow appends laid-out lines [from, to) of row i to frame, and i's
// ID once per line to ids. It copies only those lines: a row may be
// thousands of lines long (an answer streaming) while the window is 40.
func appendRow(frame []string, ids []int, r Rows, i, from, to int) ([]string, []int) {
	ls := r.Lines(i)
	id := r.ID(i)
	for k := from; k < to; k++ {
		if i > 0 {
			if k == 0 {
				frame = append(frame, "")
			} else {
				frame = append(frame, ls[k-1])
			}
		} else {
			frame = append(frame, ls[k])
		}
		ids = append(ids, id)
	}
	return frame, ids
}

// ScrollUp moves the window n lines toward the start.
func (m *Model) ScrollUp(r Rows, n int) {
	m.pinTop = false
	if m.follow {
		m.top = m.FirstLine(r)
		m.follow = false
	}
	a := m.top
	for n > 0 {
		if a.Line > 0 {
			d := min(n, a.Line)
			a.Line -= d
			n -= d
			continue
		}
		if a.Row == 0 {
			break
		}
		a.Row--
		a.Line = height(r, a.Row)
	}
	m.top = a
}

// ScrollDown moves the window n lines toward the end; reaching it follows
// the end again (at the next Layout).
func (m *Model) ScrollDown(r Rows, n int) {
	m.pinTop = false
	if m.follow {
		return
	}
	a := m.top
	for n > 0 && a.Row < r.Len() {
		h := height(r, a.Row)
		if a.Line+n < h {
			a.Line += n
			break
		}
		n -= h - a.Line
		a.Row++
		a.Line = 0
	}
	m.top = a
}

// ScrollTop shows the start, and keeps showing it as rows are prepended.
func (m *Model) ScrollTop() { m.follow, m.top, m.pinTop = false, Anchor{}, true }

// ScrollBottom follows the end.
func (m *Model) ScrollBottom() { m.follow, m.pinTop = true, false }

// FirstLine is the window's first line: the anchor, or when following the
// end, the line height lines above it.
func (m *Model) FirstLine(r Rows) Anchor {
	if !m.follow {
		return m.top
	}
	need := m.height
	for i := r.Len() - 1; i >= 0; i-- {
		h := height(r, i)
		if h >= need {
			return Anchor{Row: i, Line: h - need}
		}
		need -= h
	}
	return Anchor{}
}

// Layout fills the window from r. Only the rows it shows are asked for.
func (m *Model) Layout(r Rows) {
	if !m.follow {
		m.layoutFrom(r, m.top)
	}
	if m.follow {
		m.layoutEnd(r)
	}
}

// layoutEnd fills the window from the end upward.
func (m *Model) layoutEnd(r Rows) {
	if r.Len() == 0 {
		m.setFrame([]string{m.empty}, []int{0})
		return
	}
	first, skip := r.Len(), 0
	for need := m.height; first > 0 && need > 0; {
		first--
		h := height(r, first)
		if h > need {
			skip = h - need
		}
		need -= h
	}
	frame := make([]string, 0, m.height)
	ids := make([]int, 0, m.height)
	for i := first; i < r.Len(); i++ {
		from := 0
		if i == first {
			from = skip
		}
		frame, ids = appendRow(frame, ids, r, i, from, height(r, i))
	}
	m.setFrame(frame, ids)
}

// layoutFrom fills the window downward from a; when the end comes into
// view it follows the end instead.
func (m *Model) layoutFrom(r Rows, a Anchor) {
	frame := make([]string, 0, m.height)
	ids := make([]int, 0, m.height)
	for i := a.Row; i < r.Len() && len(frame) < m.height; i++ {
		h := height(r, i)
		from := 0
		if i == a.Row {
			from = min(a.Line, h)
		}
		frame, ids = appendRow(frame, ids, r, i, from, min(h, from+m.height-len(frame)))
	}
	if len(frame) < m.height && !(a.Row == 0 && a.Line == 0) {
		m.follow = true
		return
	}
	m.setFrame(frame, ids)
}

func (m *Model) setFrame(frame []string, ids []int) {
	last := m.fitted
	if m.fitWidth != m.width {
		last = nil
	}
	fitted := make(map[string]string, len(frame))
	for i, l := range frame {
		// Lines drawn at another width (a row before its redraw).
		f, ok := last[l]
		if !ok {
			f = Fit(l, m.width)
		}
		fitted[l], frame[i] = f, f
	}
	m.fitted, m.fitWidth = fitted, m.width
	for len(frame) < m.height {
		frame = append(frame, "")
		ids = append(ids, 0)
	}
	m.frame, m.ids = frame, ids
}

// IDAt is the ID of the row drawn on line y of the window (0: none).
func (m Model) IDAt(y int) int {
	if y < 0 || y >= len(m.ids) {
		return 0
	}
	return m.ids[y]
}

// View is the window laid out by the last Layout: exactly height lines.
func (m Model) View() string { return strings.Join(m.frame, "\n") }

// Fit cuts a line wider than width cells (a long code line, a long path).
func Fit(l string, width int) string {
	if ansi.StringWidth(l) > width {
		return ansi.Truncate(l, width, "…")
	}
	return l
}
