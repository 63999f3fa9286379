// Package dialog is the permission dialog shown when a tool asks before it
// runs: the tool, its key argument and path, the diff of a Write or Edit
// (or the arguments), and the keys to allow once, allow for the session or
// deny.
package dialog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/tui/theme"
)

// DecisionMsg is the user's answer.
type DecisionMsg struct {
	Decision tools.Decision
	// ID is the dialog's (WithID): the parent drops a decision meant for
	// a dialog that is no longer open, such as a repeated key press.
	ID int
}

// maxBodyLines bounds what is prepared of a diff or arguments.
const maxBodyLines = 2000

// Model is the permission dialog for one request.
type Model struct {
	req       tools.Request
	st        theme.Dialog
	width     int
	maxHeight int
	head      []string // plain lines above the body
	body      []string // plain diff or argument lines
	diff      bool
	scroll    int
	id        int
}

// WithID tags the dialog, and the decisions it sends, with id.
func (m Model) WithID(id int) Model {
	m.id = id
	return m
}

// New returns the dialog for r.
func New(r tools.Request, st theme.Dialog) Model {
	m := Model{req: r, st: st, width: 80, maxHeight: 20}
	summary := termtext.Label(r.Summary)
	m.head = append(m.head, strings.TrimSpace(termtext.Label(r.Tool)+" "+summary))
	if r.Path != "" && !strings.Contains(summary, r.Path) {
		m.head = append(m.head, "path: "+termtext.Label(r.Path))
	}
	switch {
	case r.Diff != "":
		m.diff = true
		m.body = lines(r.Diff)
	case r.Tool == tools.ToolBash:
		if cmd := tools.Describe(tools.Call{Name: r.Tool, Arguments: r.Args}).Command; cmd != "" {
			m.body = lines("$ " + cmd)
		}
	}
	if m.body == nil && r.Args != "" && r.Args != "{}" {
		var buf bytes.Buffer
		if json.Indent(&buf, []byte(r.Args), "", "  ") == nil {
			m.body = lines(buf.String())
		} else {
			m.body = lines(r.Args)
		}
	}
	return m
}

func lines(s string) []string {
	out := strings.Split(strings.TrimRight(termtext.Display(s), "\n"), "\n")
	if len(out) > maxBodyLines {
		more := len(out) - maxBodyLines
		out = append(out[:maxBodyLines], fmt.Sprintf("… %d more lines", more))
	}
	return out
}

// Request is the request the dialog asks about.
func (m Model) Request() tools.Request { return m.req }

// SetSize sets the dialog's width and the most lines it may take.
func (m *Model) SetSize(width, maxHeight int) {
	m.width, m.maxHeight = max(width, 24), max(maxHeight, 8)
	m.scroll = min(m.scroll, m.maxScroll())
}

// frame is what the border, head, gaps and key line take: border 2, head,
// a blank line before the body, a blank line and the keys after it.
func (m Model) frame() int {
	n := 2 + len(m.head) + 2
	if m.req.OutsideWorkDir {
		n++
	}
	if len(m.body) > 0 {
		n++
	}
	return n
}

func (m Model) bodyRows() int {
	rows := m.maxHeight - m.frame()
	if len(m.body) > rows {
		rows-- // the "more lines" line
	}
	return max(min(rows, len(m.body)), 0)
}

func (m Model) maxScroll() int { return max(len(m.body)-m.bodyRows(), 0) }

// Height is the number of lines View draws.
func (m Model) Height() int {
	h := m.frame() + m.bodyRows()
	if m.bodyRows() < len(m.body) {
		h++
	}
	return h
}

// Update answers on y, a, n or Esc and scrolls a long diff.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return m, nil
	}
	id := m.id
	answer := func(d tools.Decision) tea.Cmd { return func() tea.Msg { return DecisionMsg{Decision: d, ID: id} } }
	switch k.String() {
	case "y", "Y", "enter":
		return m, answer(tools.AllowOnce)
	case "a", "A":
		if m.onceOnly() {
			return m, nil
		}
		return m, answer(tools.AllowSession)
	case "n", "N", "esc":
		return m, answer(tools.Deny)
	case "up", "k":
		m.scroll = max(m.scroll-1, 0)
	case "down", "j":
		m.scroll = min(m.scroll+1, m.maxScroll())
	case "pgup":
		m.scroll = max(m.scroll-m.bodyRows(), 0)
	case "pgdown", " ":
		m.scroll = min(m.scroll+m.bodyRows(), m.maxScroll())
	}
	return m, nil
}

// View draws the dialog as a box of the dialog's width.
func (m Model) View() string {
	inner := m.width - 4
	b := lipgloss.RoundedBorder()
	bs := m.st.Border
	var out []string
	title := fmt.Sprintf("Allow %s?", termtext.Label(m.req.Tool))
	fill := max(inner-ansi.StringWidth(title)-1, 0)
	out = append(out, bs.Render(b.TopLeft+b.Top+" ")+m.st.Title.Render(title)+bs.Render(" "+strings.Repeat(b.Top, fill)+b.TopRight))
	row := func(s string, st lipgloss.Style) {
		if ansi.StringWidth(s) > inner {
			s = ansi.Truncate(s, inner, "…")
		}
		pad := strings.Repeat(" ", inner-ansi.StringWidth(s))
		out = append(out, bs.Render(b.Left)+" "+st.Render(s)+pad+" "+bs.Render(b.Right))
	}
	for i, h := range m.head {
		st := m.st.Dim
		if i == 0 {
			st = m.st.Text
		}
		row(h, st)
	}
	if m.req.OutsideWorkDir {
		row("outside the working directory", m.st.Warn)
	}
	if len(m.body) > 0 {
		row("", m.st.Text)
		n := m.bodyRows()
		for _, l := range m.body[m.scroll : m.scroll+n] {
			row(l, m.lineStyle(l))
		}
		if n < len(m.body) {
			row(fmt.Sprintf("… lines %d-%d of %d (↑/↓ scroll)", m.scroll+1, m.scroll+n, len(m.body)), m.st.Dim)
		}
	}
	row("", m.st.Text)
	keys := m.st.Key.Render("y") + " allow once · " + m.st.Key.Render("a") + " allow for this session · " +
		m.st.Key.Render("n") + "/" + m.st.Key.Render("esc") + " deny"
	if m.onceOnly() {
		keys = m.st.Key.Render("y") + " allow once · " + m.st.Key.Render("n") + "/" + m.st.Key.Render("esc") + " deny"
	}
	if ansi.StringWidth(keys) > inner {
		keys = m.st.Key.Render("y") + " once · " + m.st.Key.Render("a") + " session · " + m.st.Key.Render("n") + " deny"
		if m.onceOnly() {
			keys = m.st.Key.Render("y") + " once · " + m.st.Key.Render("n") + " deny"
		}
	}
	out = append(out, bs.Render(b.Left)+" "+keys+strings.Repeat(" ", max(inner-ansi.StringWidth(keys), 0))+" "+bs.Render(b.Right))
	out = append(out, bs.Render(b.BottomLeft+strings.Repeat(b.Bottom, inner+2)+b.BottomRight))
	return strings.Join(out, "\n")
}

// onceOnly is set when the request cannot be granted for the session
// (writes outside the working directory), so the dialog does not offer it.
func (m Model) onceOnly() bool { return !m.req.Allows(tools.AllowSession) }

func (m Model) lineStyle(l string) lipgloss.Style {
	if !m.diff {
		return m.st.Text
	}
	switch {
	case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		return m.st.Dim
	case strings.HasPrefix(l, "+"):
		return m.st.Add
	case strings.HasPrefix(l, "-"):
		return m.st.Del
	case strings.HasPrefix(l, "@@"):
		return m.st.Hunk
	}
	return m.st.Text
}
