// Package dialog is the permission dialog shown when a tool asks before it
// runs: the tool, its key argument and path, the change itself (the diff
// of a Write or Edit, the command of a Bash call, else the arguments), and
// the keys to allow once, allow for the session, allow always for the
// project (saving the rule it names) or deny. Long lines wrap,
// never cut: what is approved is what is shown. When the change does not
// fit, the dialog opens on the first changed line (the context before it
// is a scroll away) and says which lines it shows.
package dialog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/tui/keys"
	"github.com/gencode/gencode/internal/tui/report"
	"github.com/gencode/gencode/internal/tui/theme"
)

// DecisionMsg is the user's answer.
type DecisionMsg struct {
	Decision tools.Decision
	// ID is the dialog's (WithID): the parent drops a decision meant for
	// a dialog that is no longer open, such as a repeated key press.
	ID int
	// Reason is what the user wants the model told with a denial ("":
	// none).
	Reason string
}

// maxReason bounds the reason typed with a denial.
const maxReason = 2000

// maxBodyLines bounds what is prepared of a diff or arguments.
const maxBodyLines = 2000

// minBodyRows is the fewest rows of the change shown, even when the
// head takes more than its share of a short terminal.
const minBodyRows = 3

// row is one drawn line of the dialog's body: part of body line line.
type row struct {
	text  string
	style lipgloss.Style
	line  int
}

// Model is the permission dialog for one request.
type Model struct {
	req       tools.Request
	st        theme.Dialog
	width     int
	maxHeight int
	head      []string // plain lines above the body: the tool, the path
	body      []string // plain diff, command or argument lines
	diff      bool
	first     int // the body line of the first change (-1: none)

	// Laid out by SetSize for the width.
	headRows []row
	rows     []row // the body, wrapped
	keyRows  []string

	scroll   int  // first body row shown
	scrolled bool // the user scrolled: a resize keeps the place
	id       int

	// typing is set by the DenyWhy key: the keys type the reason sent
	// with the denial, shown in place of the key line.
	typing bool
	reason []rune
}

// Typing reports whether the user is typing a reason: every key is
// meant for the dialog.
func (m Model) Typing() bool { return m.typing }

// WithID tags the dialog, and the decisions it sends, with id.
func (m Model) WithID(id int) Model {
	m.id = id
	return m
}

// New returns the dialog for r, laid out for 80 columns and 20 rows until
// SetSize says otherwise.
func New(r tools.Request, st theme.Dialog) Model {
	m := Model{req: r, st: st, first: -1}
	summary := termtext.Label(r.Summary)
	m.head = append(m.head, strings.TrimSpace(termtext.Label(r.Tool)+" "+summary))
	if r.Path != "" && !strings.Contains(summary, r.Path) {
		m.head = append(m.head, "path: "+termtext.Label(r.Path))
	}
	if r.Note != "" {
		m.head = append(m.head, "note: "+termtext.Label(r.Note))
	}
	switch {
	case r.Diff != "":
		m.diff = true
		m.body = diffLines(r.Diff)
		for i, l := range m.body {
			if changed(l) {
				m.first = i
				break
			}
		}
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
	m.SetSize(80, 20)
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

// diffLines is a unified diff's lines without its file header (--- and
// +++): the head already names the file.
func diffLines(d string) []string {
	out := lines(d)
	for len(out) > 0 && (strings.HasPrefix(out[0], "--- ") || strings.HasPrefix(out[0], "+++ ")) {
		out = out[1:]
	}
	return out
}

// changed reports whether diff line l adds or removes a line.
func changed(l string) bool {
	return (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) &&
		!strings.HasPrefix(l, "+++ ") && !strings.HasPrefix(l, "--- ")
}

// Request is the request the dialog asks about.
func (m Model) Request() tools.Request { return m.req }

// SetSize sets the dialog's width and the most lines it may take. The
// text is wrapped again only when the width changes.
func (m *Model) SetSize(width, maxHeight int) {
	width, maxHeight = max(width, 24), max(maxHeight, 8)
	if width != m.width {
		m.width = width
		m.wrap()
	}
	m.maxHeight = maxHeight
	if !m.scrolled {
		m.scroll = m.start()
	}
	m.scroll = min(m.scroll, m.maxScroll())
}

// wrap lays the head, the body and the keys out for the width.
func (m *Model) wrap() {
	inner := m.inner()
	m.headRows = nil
	for i, h := range m.head {
		st := m.st.Dim
		if i == 0 {
			st = m.st.Text
		}
		for _, t := range report.Wrap(h, inner, 2) {
			m.headRows = append(m.headRows, row{text: t, style: st})
		}
	}
	if m.req.OutsideWorkDir {
		why := "outside the working directory"
		if m.req.Guard != "" {
			why = termtext.Label(m.req.Guard)
		}
		for _, t := range report.Wrap(why, inner, 2) {
			m.headRows = append(m.headRows, row{text: t, style: m.st.Warn})
		}
	}
	m.rows = nil
	for i, l := range m.body {
		st := m.lineStyle(l)
		for _, t := range m.wrapLine(l, inner) {
			m.rows = append(m.rows, row{text: t, style: st, line: i})
		}
	}
	m.layoutKeys()
}

// layoutKeys lays out the key line, or the reason being typed.
func (m *Model) layoutKeys() {
	inner := m.inner()
	if !m.typing {
		m.keyRows = nil
		if m.offersProject() {
			// What the project's rule allows, said before it is chosen.
			k := keys.Default().Dialog.AllowProject.Help().Key
			what := "every " + termtext.Label(m.req.Tool)
			if m.req.Tool == tools.ToolBash {
				what = termtext.Label(m.req.Project)
			}
			for _, t := range report.Wrap(k+" saves the rule: "+what, inner, 2) {
				m.keyRows = append(m.keyRows, m.st.Dim.Render(t))
			}
		}
		m.keyRows = append(m.keyRows, strings.Split(ansi.Wrap(m.keys(inner), inner, ""), "\n")...)
		return
	}
	k := m.st.Key.Render
	m.keyRows = strings.Split(ansi.Hardwrap("why not? "+string(m.reason)+"█", inner, true), "\n")
	m.keyRows = append(m.keyRows, strings.Split(ansi.Wrap(k("enter")+" denies and tells the model · "+k("esc")+" denies", inner, ""), "\n")...)
}

// wrapLine wraps a body line. A diff line's first column (+, - or a
// space) is its own: the code wraps right of it, each continuation
// indented under the code's own indentation, so that it does not read as
// a line of its own.
func (m Model) wrapLine(l string, inner int) []string {
	if !m.diff || l == "" || strings.HasPrefix(l, "@@") || (l[0] != '+' && l[0] != '-' && l[0] != ' ') {
		return report.Wrap(l, inner, 2)
	}
	rows := report.Wrap(l[1:], inner-1, 2)
	for i := range rows {
		if i == 0 {
			rows[i] = l[:1] + rows[i]
		} else {
			rows[i] = " " + rows[i]
		}
	}
	return rows
}

// MinHeight is the height that shows the first change whole (the removed
// and added lines of the first hunk), or all of the body when it has no
// change: the parent gives the dialog at least this much when the
// terminal has it.
func (m Model) MinHeight() int {
	n := len(m.rows)
	if m.first >= 0 {
		n = 0
		for _, r := range m.rows {
			if r.line < m.first {
				continue
			}
			if r.line > m.first && !changed(m.body[r.line]) {
				break
			}
			n++
		}
		if n < len(m.rows) {
			n++ // the "lines a-b of n" line
		}
	}
	return m.frame() + n
}

// inner is the width of the text inside the border and padding.
func (m Model) inner() int { return m.width - 4 }

// start is where the body opens: at the top when it fits, else at the
// first change.
func (m Model) start() int {
	if m.first < 0 || len(m.rows) <= m.bodyRows() {
		return 0
	}
	for i, r := range m.rows {
		if r.line == m.first {
			return min(i, m.maxScroll())
		}
	}
	return 0
}

// frame is what the border, head, gaps and keys take: border 2, the head,
// a blank line before the body, a blank line and the keys after it.
func (m Model) frame() int {
	n := 2 + len(m.headRows) + 1 + len(m.keyRows)
	if len(m.rows) > 0 {
		n++
	}
	return n
}

func (m Model) bodyRows() int {
	rows := m.maxHeight - m.frame()
	if len(m.rows) > rows {
		rows-- // the "lines a-b of n" line
	}
	rows = max(rows, min(minBodyRows, len(m.rows)))
	return max(min(rows, len(m.rows)), 0)
}

func (m Model) maxScroll() int { return max(len(m.rows)-m.bodyRows(), 0) }

// Height is the number of lines View draws.
func (m Model) Height() int {
	h := m.frame() + m.bodyRows()
	if m.bodyRows() < len(m.rows) {
		h++
	}
	return h
}

// Update answers on y, a, p, n or Esc and scrolls a long change.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	id := m.id
	answer := func(d tools.Decision) tea.Cmd { return func() tea.Msg { return DecisionMsg{Decision: d, ID: id} } }
	if m.typing {
		return m.typeReason(k)
	}
	km := keys.Default().Dialog
	switch {
	case key.Matches(k, km.Allow):
		return m, answer(tools.AllowOnce)
	case key.Matches(k, km.AllowSession):
		if m.onceOnly() {
			return m, nil
		}
		return m, answer(tools.AllowSession)
	case key.Matches(k, km.AllowProject):
		if !m.offersProject() {
			return m, nil
		}
		return m, answer(tools.AllowProject)
	case key.Matches(k, km.Deny):
		return m, answer(tools.Deny)
	case key.Matches(k, km.DenyWhy):
		m.typing = true
		m.layoutKeys()
		m.scroll = min(m.scroll, m.maxScroll())
	case key.Matches(k, km.Up):
		m.scroll, m.scrolled = max(m.scroll-1, 0), true
	case key.Matches(k, km.Down):
		m.scroll, m.scrolled = min(m.scroll+1, m.maxScroll()), true
	case key.Matches(k, km.PageUp):
		m.scroll, m.scrolled = max(m.scroll-m.bodyRows(), 0), true
	case key.Matches(k, km.PageDown):
		m.scroll, m.scrolled = min(m.scroll+m.bodyRows(), m.maxScroll()), true
	}
	return m, nil
}

// typeReason edits the reason; Enter denies with it, Esc without it.
func (m Model) typeReason(k tea.KeyPressMsg) (Model, tea.Cmd) {
	id := m.id
	switch {
	case k.Code == tea.KeyEnter:
		reason := strings.TrimSpace(string(m.reason))
		return m, func() tea.Msg { return DecisionMsg{Decision: tools.Deny, ID: id, Reason: reason} }
	case k.Code == tea.KeyEscape:
		return m, func() tea.Msg { return DecisionMsg{Decision: tools.Deny, ID: id} }
	case k.Code == tea.KeyBackspace:
		if len(m.reason) > 0 {
			m.reason = m.reason[:len(m.reason)-1]
		}
	case k.Code == tea.KeySpace && k.Mod == 0:
		m.reason = append(m.reason, ' ')
	case k.Text != "" && k.Mod&^tea.ModShift == 0:
		for _, r := range termtext.Label(k.Text) {
			if len(m.reason) < maxReason {
				m.reason = append(m.reason, r)
			}
		}
	default:
		return m, nil
	}
	m.layoutKeys()
	m.scroll = min(m.scroll, m.maxScroll())
	return m, nil
}

// View draws the dialog as a box of the dialog's width.
func (m Model) View() string {
	inner := m.inner()
	b := lipgloss.RoundedBorder()
	bs := m.st.Border
	var out []string
	title := ansi.Truncate(fmt.Sprintf("Allow %s?", termtext.Label(m.req.Tool)), inner-1, "…")
	fill := max(inner-ansi.StringWidth(title)-1, 0)
	out = append(out, bs.Render(b.TopLeft+b.Top+" ")+m.st.Title.Render(title)+bs.Render(" "+strings.Repeat(b.Top, fill)+b.TopRight))
	line := func(s string) {
		pad := strings.Repeat(" ", max(inner-ansi.StringWidth(s), 0))
		out = append(out, bs.Render(b.Left)+" "+s+pad+" "+bs.Render(b.Right))
	}
	draw := func(r row) { line(r.style.Render(r.text)) }
	for _, r := range m.headRows {
		draw(r)
	}
	if len(m.rows) > 0 {
		line("")
		n := m.bodyRows()
		shown := m.rows[m.scroll : m.scroll+n]
		for _, r := range shown {
			draw(r)
		}
		if n < len(m.rows) {
			more := fmt.Sprintf("… lines %d-%d of %d (↑/↓ scroll)", shown[0].line+1, shown[len(shown)-1].line+1, len(m.body))
			line(m.st.Dim.Render(ansi.Truncate(more, inner, "…")))
		}
	}
	line("")
	for _, k := range m.keyRows {
		line(k)
	}
	out = append(out, bs.Render(b.BottomLeft+strings.Repeat(b.Bottom, inner+2)+b.BottomRight))
	return strings.Join(out, "\n")
}

// keys is the key line, drawn by bubbles/help from the key map: in its
// brief form when the full one does not fit.
func (m Model) keys(inner int) string {
	h := help.New()
	h.ShortSeparator = " · "
	h.Styles = help.Styles{ShortKey: m.st.Key, ShortDesc: m.st.Text, ShortSeparator: m.st.Text}
	km := keys.Default().Dialog
	full, brief := km.Answers(), km.Brief()
	// Keys for answers the request does not offer are left out (by
	// their place in Answers: once, session, project, deny, why).
	if m.onceOnly() {
		full[1].SetEnabled(false)
		brief[1].SetEnabled(false)
	}
	if !m.offersProject() {
		full[2].SetEnabled(false)
		brief[2].SetEnabled(false)
	}
	if l := h.ShortHelpView(full); ansi.StringWidth(l) <= inner {
		return l
	}
	return h.ShortHelpView(brief)
}

// onceOnly is set when the request cannot be granted for the session
// (writes outside the working directory), so the dialog does not offer it.
func (m Model) onceOnly() bool { return !m.req.Allows(tools.AllowSession) }

// offersProject is set when the request can be allowed for the project:
// the tools name the rule that would be saved (Request.Project).
func (m Model) offersProject() bool { return m.req.Allows(tools.AllowProject) }

func (m Model) lineStyle(l string) lipgloss.Style {
	if !m.diff {
		return m.st.Text
	}
	switch {
	case strings.HasPrefix(l, "+"):
		return m.st.Add
	case strings.HasPrefix(l, "-"):
		return m.st.Del
	case strings.HasPrefix(l, "@@"):
		return m.st.Hunk
	}
	return m.st.Text
}
