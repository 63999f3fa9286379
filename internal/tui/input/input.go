// Package input is the message editor: a multi-line textarea where Enter
// sends, Alt+Enter or Ctrl+J breaks the line, Up and Down walk the history
// of sent messages, and Tab completes slash commands with a hint line of the
// matches, and an "@path" mention to the files and directories of the
// working directory (listed in a tea.Cmd, never in Update).
//
// A large paste is kept out of the textarea, which redraws all its text on
// every keystroke (bubbles #1023): the editor shows a one-line placeholder
// and the whole text is sent in its place.
package input

import (
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tui/keys"
	"github.com/gencode/gencode/internal/tui/paste"
	"github.com/gencode/gencode/internal/tui/theme"
)

// A paste longer than either bound becomes an attachment placeholder.
const (
	pasteMaxRunes = 1000
	pasteMaxLines = 10
)

// maxRows bounds the editor's height; longer text scrolls inside it.
const maxRows = 8

// maxLines bounds the cursor moves of scrollToTop (the text fits maxRows).
const maxLines = 4 * maxRows

// SubmitMsg is sent when the user presses Enter on a non-empty message.
type SubmitMsg struct {
	// Text is what to send: placeholders replaced by the pasted text.
	Text string
	// Display is what the user saw in the editor (placeholders kept).
	Display string
	// Pastes maps each placeholder in Display to its text.
	Pastes map[string]string
	// Spans say where the pasted texts lie in Text, for the log.
	Spans []session.Paste
}

// Completer lists the slash commands a partial command line completes to
// ("/he" -> "/help", "/history").
type Completer interface {
	Complete(prefix string) []string
}

// Model is the editor.
type Model struct {
	ta       textarea.Model
	st       theme.Input
	complete Completer
	width    int

	history []string
	hist    int    // index into history while browsing; len(history) when not
	draft   string // what was typed before browsing

	pastes  map[string]string // placeholder -> pasted text
	npastes int

	dir       string   // where "@" mentions are completed; "" for none
	pathHints []string // the names the last Tab on a mention left to choose from

	fitted fitState // the editor as the last fitHeight left it
}

// fitState is what fitHeight's outcome depends on, as it left it: the
// same state again needs no fitting (the TUI lays the editor out after
// every message, a streamed chunk or a tick as well as a key).
type fitState struct {
	value                          string
	width, height, line, col, yoff int
	scrolled                       bool // scrollToTop moved the cursor
	ok                             bool
}

func (m *Model) fitNow(scrolled bool) fitState {
	return fitState{value: m.ta.Value(), width: m.ta.Width(), height: m.ta.Height(),
		line: m.ta.Line(), col: m.ta.Column(), yoff: m.ta.ScrollYOffset(), scrolled: scrolled, ok: true}
}

// New returns an editor drawn with th; complete may be nil (no
// completion).
func New(th *theme.Theme, complete Completer) Model {
	st := th.Input
	ta := textarea.New()
	ta.Placeholder = placeholder(80)
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.SetPromptFunc(2, func(pi textarea.PromptInfo) string {
		if pi.LineNumber == 0 {
			return "❯ "
		}
		return "  "
	})
	ta.KeyMap.InsertNewline = keys.Default().Editor.Newlines()
	ta.SetStyles(styles(th))
	ta.SetVirtualCursor(th.Profile != colorprofile.NoTTY)
	ta.Focus()
	ta.SetHeight(1)
	return Model{ta: ta, st: st, complete: complete, pastes: map[string]string{}}
}

// placeholder is the empty editor's hint for a width: as many of its
// phrases as fit whole, never one cut mid-word.
func placeholder(width int) string {
	parts := []string{"Message gencode", "/ for commands", "Alt+Enter for a new line"}
	room := width - 2 // the prompt
	for n := len(parts); n > 1; n-- {
		if s := strings.Join(parts[:n], " · "); ansi.StringWidth(s) <= room {
			return s
		}
	}
	return parts[0]
}

// styles are the textarea's styles from th: the same when focused or
// not, and a cursor in reverse video that does not blink.
func styles(th *theme.Theme) textarea.Styles {
	st := th.Input
	focused := textarea.StyleState{
		Base:        st.Text,
		CursorLine:  st.Text,
		EndOfBuffer: st.Text,
		Placeholder: st.Placeholder,
		Prompt:      st.Prompt,
		Text:        st.Text,
	}
	return textarea.Styles{
		Focused: focused,
		Blurred: focused,
		Cursor:  textarea.CursorStyle{Color: lipgloss.NoColor{}, Shape: tea.CursorBlock},
	}
}

// SetTheme draws the editor with th from now on (the terminal said its
// background).
func (m *Model) SetTheme(th *theme.Theme) {
	m.st = th.Input
	m.ta.SetStyles(styles(th))
}

// SetWidth sets the editor's width.
func (m *Model) SetWidth(w int) {
	m.width = max(w, 10)
	m.ta.SetWidth(m.width)
	m.ta.Placeholder = placeholder(m.width)
	m.fitHeight()
}

// SetHistory seeds the history with earlier messages (oldest first), as
// the user saw them, before the messages sent since the editor started:
// pastes maps each placeholder in them to its text, so a recalled message
// is sent whole again. Its placeholders must not be in use already.
func (m *Model) SetHistory(h []string, pastes map[string]string) {
	m.history = append(append([]string(nil), h...), m.history...)
	m.hist += len(h) // still on the message being browsed, if any
	for ph, full := range pastes {
		m.pastes[ph] = full
		m.npastes = max(m.npastes, paste.Number(ph))
	}
}

// SetDir turns on the completion of "@" mentions to the paths under dir.
func (m *Model) SetDir(dir string) { m.dir = dir }

// Recallable is how many messages Up can recall.
func (m Model) Recallable() int { return len(m.history) }

// Value is the editor's text as shown (placeholders kept).
func (m Model) Value() string { return m.ta.Value() }

// Empty reports whether the editor holds no text.
func (m Model) Empty() bool { return m.ta.Length() == 0 }

// SetValue replaces the text (placeholders of kept pastes still expand).
func (m *Model) SetValue(s string) {
	m.ta.SetValue(s)
	m.ta.CursorEnd()
	m.fitHeight()
}

// Reset clears the editor and its pastes.
func (m *Model) Reset() {
	m.clear()
	m.pastes = map[string]string{}
}

// Clear empties the editor; Up brings the text back (Ctrl+C on a draft).
func (m *Model) Clear() {
	m.remember(m.ta.Value())
	m.clear()
}

// clear empties the editor and ends history browsing. The pastes stay:
// a recalled message's placeholders still stand for their text.
func (m *Model) clear() {
	m.ta.Reset()
	m.hist = len(m.history)
	m.draft = ""
	m.fitHeight()
}

// remember adds text to the history Up walks, unless it was the last.
func (m *Model) remember(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	if len(m.history) == 0 || m.history[len(m.history)-1] != text {
		m.history = append(m.history, text)
	}
}

// Height is the number of lines View draws.
func (m Model) Height() int { return m.ta.Height() + 1 + m.hintHeight() }

// Matches are the commands the current text completes to.
func (m Model) Matches() []string {
	v := m.ta.Value()
	if m.complete == nil || !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") {
		return nil
	}
	return m.complete.Complete(v)
}

func (m Model) hintHeight() int {
	if len(m.Matches()) > 0 || len(m.pathHints) > 0 {
		return 1
	}
	return 0
}

// Update handles keys and pastes.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if pm, ok := msg.(PathsMsg); ok {
		m.completePath(pm)
		return m, nil
	}
	if p, ok := msg.(tea.PasteMsg); ok {
		// A bracketed paste: one event, its line breaks text, never keys.
		m.paste(p.Content)
		return m, nil
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		var cmd tea.Cmd
		m.ta, cmd = m.ta.Update(msg)
		return m, cmd
	}
	km := keys.Default().Editor
	switch {
	case key.Matches(k, km.Send):
		return m.submit()
	case key.Matches(k, km.Complete):
		if len(m.Matches()) > 0 {
			m.completeLine()
			return m, nil
		}
		return m, m.listPaths()
	case key.Matches(k, km.Prev):
		if m.onFirstRow() && m.hist > 0 {
			if m.hist == len(m.history) {
				m.draft = m.ta.Value()
			}
			m.hist--
			m.SetValue(m.history[m.hist])
			return m, nil
		}
	case key.Matches(k, km.Next):
		if m.hist < len(m.history) && m.onLastRow() {
			m.hist++
			if m.hist == len(m.history) {
				m.SetValue(m.draft)
			} else {
				m.SetValue(m.history[m.hist])
			}
			return m, nil
		}
	case utf8.RuneCountInString(k.Text) > 1 && k.Mod == 0:
		// Text that came in one read without bracketed paste.
		m.paste(k.Text)
		return m, nil
	}
	m.pathHints = nil
	var cmd tea.Cmd
	m.ta, cmd = m.ta.Update(msg)
	m.fitHeight()
	return m, cmd
}

func (m Model) submit() (Model, tea.Cmd) {
	display := m.ta.Value()
	if strings.TrimSpace(display) == "" {
		return m, nil
	}
	text, spans, pastes := m.expand(display)
	m.remember(display)
	m.pathHints = nil
	m.clear()
	return m, func() tea.Msg {
		return SubmitMsg{Text: text, Display: display, Pastes: pastes, Spans: spans}
	}
}

// expand replaces each placeholder in display with the text it stands
// for; spans say where those texts lie in the result.
func (m Model) expand(display string) (text string, spans []session.Paste, used map[string]string) {
	used = map[string]string{}
	if len(m.pastes) == 0 {
		return display, nil, used
	}
	var b strings.Builder
	rest := display
	for {
		i := strings.Index(rest, pastePrefix)
		if i < 0 {
			break
		}
		end := strings.IndexByte(rest[i:], ']')
		full, ok := "", false
		if end >= 0 {
			full, ok = m.pastes[rest[i:i+end+1]]
		}
		if !ok {
			b.WriteString(rest[:i+len(pastePrefix)])
			rest = rest[i+len(pastePrefix):]
			continue
		}
		ph := rest[i : i+end+1]
		b.WriteString(rest[:i])
		spans = append(spans, session.Paste{Start: b.Len(), End: b.Len() + len(full), N: paste.Number(ph)})
		b.WriteString(full)
		used[ph] = full
		rest = rest[i+end+1:]
	}
	b.WriteString(rest)
	return b.String(), spans, used
}

// pastePrefix starts every placeholder.
const pastePrefix = "[pasted text #"

// Restore puts a sent message back in the editor in place of its text,
// its pastes as placeholders again: the message could not be sent, or is
// taken back from the queue to edit. Other pastes stay known, for Up.
func (m *Model) Restore(s SubmitMsg) {
	m.clear()
	m.Append(s)
}

// Append adds a sent message at the end of the editor's text, on a line
// of its own, its pastes as placeholders again.
func (m *Model) Append(s SubmitMsg) {
	for ph, full := range s.Pastes {
		m.pastes[ph] = full
		m.npastes = max(m.npastes, paste.Number(ph))
	}
	v := m.ta.Value()
	if strings.TrimSpace(v) != "" {
		v += "\n"
	}
	m.SetValue(v + s.Display)
}

// paste inserts pasted text, or a placeholder standing for it when it is
// large: the textarea stays small whatever is pasted.
func (m *Model) paste(s string) {
	s = termtext.Sanitize(newlines(s))
	if utf8.RuneCountInString(s) <= pasteMaxRunes && paste.Lines(s) <= pasteMaxLines {
		m.ta.InsertString(s)
		m.fitHeight()
		return
	}
	m.npastes++
	ph := paste.Placeholder(m.npastes, s)
	m.pastes[ph] = s
	m.ta.InsertString(ph)
	m.fitHeight()
}

// newlines turns the line breaks of a paste into \n: terminals send a
// pasted newline as CR (xterm, VTE, tmux), some as CRLF.
func newlines(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// completeLine completes a slash command: a single match in full, several
// to their longest common prefix.
func (m *Model) completeLine() {
	matches := m.Matches()
	switch len(matches) {
	case 0:
		return
	case 1:
		m.SetValue(matches[0] + " ")
	default:
		if p := commonPrefix(matches); len(p) > len(m.ta.Value()) {
			m.SetValue(p)
		}
	}
}

// PathsMsg carries the paths an "@" mention typed in Value completes to.
type PathsMsg struct {
	Value string   // the editor's text when Tab was pressed
	Dir   string   // the mention's directory part, "" or ending in "/"
	Names []string // entries of Dir starting with the typed name; directories end in "/"
}

// mention returns the "@" mention the cursor ends, without the "@".
func (m Model) mention() (string, bool) {
	v := m.ta.Value()
	lines := strings.Split(v, "\n")
	li := m.ta.LineInfo()
	if m.ta.Line() != len(lines)-1 || li.StartColumn+li.ColumnOffset != len([]rune(lines[len(lines)-1])) {
		return "", false // only at the end of the text
	}
	word := v[strings.LastIndexAny(v, " \t\n")+1:]
	if !strings.HasPrefix(word, "@") {
		return "", false
	}
	return word[1:], true
}

// listPaths lists, in a Cmd, the entries the mention at the cursor
// completes to. Only relative paths inside the directory are listed: an
// absolute path or one through ".." is not completed.
func (m Model) listPaths() tea.Cmd {
	rel, ok := m.mention()
	if !ok || m.dir == "" {
		return nil
	}
	i := strings.LastIndexByte(rel, '/')
	sub, base := rel[:i+1], rel[i+1:]
	if sub != "" && !filepath.IsLocal(strings.TrimSuffix(sub, "/")) {
		return nil
	}
	value, dir := m.ta.Value(), filepath.Join(m.dir, filepath.FromSlash(sub))
	return func() tea.Msg {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil
		}
		msg := PathsMsg{Value: value, Dir: sub}
		for _, e := range entries {
			name := e.Name()
			if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
				continue
			}
			if isDir(dir, e) {
				name += "/"
			}
			msg.Names = append(msg.Names, name)
		}
		return msg
	}
}

// isDir reports whether e, an entry of dir, is a directory or a symlink
// to one.
func isDir(dir string, e os.DirEntry) bool {
	if e.Type()&os.ModeSymlink == 0 {
		return e.IsDir()
	}
	fi, err := os.Stat(filepath.Join(dir, e.Name()))
	return err == nil && fi.IsDir()
}

// completePath completes the mention with msg's names, if the text is
// still the one they were listed for: a single name in full (a file with
// a space after it), several to their longest common prefix, shown under
// the editor.
func (m *Model) completePath(msg PathsMsg) {
	if msg.Value != m.ta.Value() || len(msg.Names) == 0 {
		return
	}
	rel, _ := m.mention()
	head := strings.TrimSuffix(msg.Value, rel)
	switch len(msg.Names) {
	case 1:
		name := msg.Names[0]
		if !strings.HasSuffix(name, "/") {
			name += " "
		}
		m.SetValue(head + msg.Dir + name)
		m.pathHints = nil
	default:
		if p := msg.Dir + commonPrefix(msg.Names); len(p) > len(rel) {
			m.SetValue(head + p)
		}
		m.pathHints = msg.Names
	}
}

func commonPrefix(s []string) string {
	p := s[0]
	for _, x := range s[1:] {
		for !strings.HasPrefix(x, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

func (m Model) onFirstRow() bool {
	return m.ta.Line() == 0 && m.ta.LineInfo().RowOffset == 0
}

func (m Model) onLastRow() bool {
	li := m.ta.LineInfo()
	return m.ta.Line() == m.ta.LineCount()-1 && li.RowOffset == li.Height-1
}

// fitHeight grows the editor with its text, up to maxRows. While the text
// fits, it is shown from its first line: the textarea scrolls when a line
// is added at the old height, and growing it does not scroll it back.
func (m *Model) fitHeight() {
	if now := m.fitNow(m.fitted.scrolled); now == m.fitted {
		// Fitting it again would give the same editor (scrolling to the
		// top and back is idempotent); only its reset of the column kept
		// for Up and Down is redone.
		if now.scrolled {
			m.ta.SetCursorColumn(now.col)
		}
		return
	}
	w := max(m.width-2, 1)
	rows := 0
	for _, l := range strings.Split(m.ta.Value(), "\n") {
		rows += max(1, (ansi.StringWidth(l)+w)/w)
		if rows > maxRows {
			break
		}
	}
	m.ta.SetHeight(min(max(rows, 1), maxRows))
	scrolled := false
	if rows <= maxRows {
		scrolled = m.scrollToTop()
	}
	m.fitted = m.fitNow(scrolled)
}

// scrollToTop scrolls the textarea to its first line and puts the cursor
// back where it was. The textarea has no call for it: its view follows
// the cursor, so the cursor goes to the top and comes back.
func (m *Model) scrollToTop() (moved bool) {
	line, li := m.ta.Line(), m.ta.LineInfo()
	col := li.StartColumn + li.ColumnOffset
	if line == 0 && li.RowOffset == 0 {
		// On the first row the view already shows it.
		return false
	}
	if line == 0 && m.ta.LineCount() == 1 && m.ta.ScrollYOffset() == 0 && li.RowOffset < m.ta.Height() {
		// One line, shown from its first row with the cursor in view:
		// the moves below would end where they start, but for the column
		// kept for Up and Down, which SetCursorColumn resets. (A key typed
		// in a long line: two renders of the editor fewer.)
		m.ta.SetCursorColumn(col)
		return true
	}
	for i := 0; i < maxLines && (m.ta.Line() > 0 || m.ta.LineInfo().RowOffset > 0); i++ {
		m.ta.CursorUp()
	}
	m.ta, _ = m.ta.Update(nil) // follow the cursor up
	for i := 0; i < maxLines && m.ta.Line() < line; i++ {
		m.ta.CursorDown()
	}
	m.ta.SetCursorColumn(col)
	m.ta, _ = m.ta.Update(nil)
	return true
}

// View draws a rule, the editor and, while a slash command is typed, the
// commands it completes to; after a Tab on an "@" mention with several
// candidates, those.
func (m Model) View() string {
	var b strings.Builder
	b.WriteString(m.st.Border.Render(strings.Repeat("─", m.width)))
	b.WriteString("\n")
	b.WriteString(m.ta.View())
	matches := m.Matches()
	if len(matches) == 0 {
		matches = m.pathHints
	}
	if len(matches) > 0 {
		hint := strings.Join(matches, "  ")
		if len(matches) > 1 {
			hint += "   (tab completes)"
		}
		b.WriteString("\n")
		b.WriteString(m.st.Hint.Render(ansi.Truncate(hint, m.width, "…")))
	}
	return b.String()
}
