// Package status is the status bar: the model, the session, how full the
// context window is and where automatic summarization starts, what the
// summarizer is doing, and whether a turn is running.
package status

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tui/theme"
)

// summarizerState is what the summarizer is doing.
type summarizerState int

const (
	summarizerIdle summarizerState = iota
	summarizerRunning
	summarizerDone
	summarizerFailed
)

func (s summarizerState) String() string {
	return [...]string{"idle", "summarizing", "done", "failed"}[s]
}

// Model is the status bar.
type Model struct {
	st        theme.Status
	spin      spinner.Model
	width     int
	model     string
	session   string // title or id
	sessionID string

	tokens    int // the next request's size, as /context measures it; -1 unknown
	window    int
	source    string // where window came from when it is the server's ("" configured)
	softRatio float64

	sum     summarizerState
	sumText string // last result

	spentTokens int    // what the session's requests used; 0: none yet
	spentCost   string // their cost ("" when unpriced)

	busy     bool
	busyText string
	escHint  string // what Esc does now; "": it cancels the turn
	notice   string // a transient hint (ctrl+c again to quit)
}

// New returns a status bar drawn with th; softRatio is where background
// summarization starts (0: disabled).
func New(th *theme.Theme, softRatio float64) Model {
	sp := spinner.New(spinner.WithSpinner(spinner.MiniDot))
	sp.Style = th.Status.Spinner
	return Model{st: th.Status, spin: sp, softRatio: softRatio, tokens: -1}
}

// SetTheme draws the bar with th from now on.
func (m *Model) SetTheme(th *theme.Theme) {
	m.st = th.Status
	m.spin.Style = th.Status.Spinner
}

// SetWidth sets the bar's width.
func (m *Model) SetWidth(w int) { m.width = w }

// SetModel shows the model and its context window.
func (m *Model) SetModel(name string, window int) { m.model, m.window = name, window }

// SetSession shows the session: its title, else its id.
func (m *Model) SetSession(id, title string) {
	if id != m.sessionID {
		m.sessionID = id
		m.spentTokens, m.spentCost = 0, "" // another session's
	}
	switch {
	case title != "":
		m.session = termtext.Label(title)
	case id != "":
		m.session = id
	default:
		m.session = "new session"
	}
}

// SetContext shows how many tokens the context holds (-1: unknown yet) of
// which window; source says where the window came from when it is the
// server's ("Ollama, loaded"; "server" when it named it refusing a larger
// request), "" when it is the configured one.
func (m *Model) SetContext(tokens, window int, source string) {
	m.tokens = tokens
	if window > 0 {
		m.window, m.source = window, source
	}
}

// shortSource is a window's source as the bar has room for: the server's
// name ("Ollama" of "Ollama, loaded").
func shortSource(source string) string {
	if i := strings.IndexByte(source, ','); i >= 0 {
		return source[:i]
	}
	return source
}

// SetSpend shows what the session's requests have used: tokens (input
// and output, as the provider counted them) and their cost ("" when no
// model is priced).
func (m *Model) SetSpend(tokens int, cost string) { m.spentTokens, m.spentCost = tokens, cost }

// ResetSummarizer shows the summarizer idle: its last report was about
// another session.
func (m *Model) ResetSummarizer() { m.sum, m.sumText = summarizerIdle, "" }

// SetEscHint says what Esc does while busy, such as "esc denies" while a
// dialog asks; "" restores "esc to cancel".
func (m *Model) SetEscHint(s string) { m.escHint = s }

// SetNotice shows a transient hint ("" clears it).
func (m *Model) SetNotice(s string) { m.notice = s }

// SetBusy shows that a turn runs (text: what it does) and starts the
// spinner; false stops it.
func (m *Model) SetBusy(busy bool, text string) tea.Cmd {
	was := m.busy || m.sum == summarizerRunning
	m.busy, m.busyText = busy, text
	if !was && busy {
		return m.spin.Tick
	}
	return nil
}

// Compaction shows a summarizer report.
func (m *Model) Compaction(r summarize.Report) tea.Cmd {
	was := m.busy || m.sum == summarizerRunning
	switch r.Phase {
	case summarize.Started:
		m.sum = summarizerRunning
		if r.Background {
			m.sumText = "summarizing in the background"
		} else {
			m.sumText = "summarizing"
		}
	case summarize.Finished:
		m.sum = summarizerDone
		m.sumText = "nothing to summarize"
		if s := r.Summary; s != nil {
			m.sumText = fmt.Sprintf("summarized %d msgs, %s→%s tokens", s.Messages(), tokens(s.TokensBefore), tokens(s.TokensAfter))
		}
		if r.Fallback {
			m.sumText += " (fallback)"
		}
	case summarize.Failed:
		m.sum = summarizerFailed
		m.sumText = "summary failed, originals kept"
	}
	if !was && m.sum == summarizerRunning {
		return m.spin.Tick
	}
	return nil
}

// Busy reports whether the spinner should turn.
func (m Model) Busy() bool { return m.busy || m.sum == summarizerRunning }

// Update turns the spinner (its ticks are routed by the spinner's id).
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	t, ok := msg.(spinner.TickMsg)
	if !ok || t.ID != m.spin.ID() || !m.Busy() {
		return m, nil
	}
	var cmd tea.Cmd
	m.spin, cmd = m.spin.Update(msg)
	return m, cmd
}

func tokens(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// contextText is "ctx 12k/128k 9%", plus " · summary at 60%" when soft.
func (m Model) contextText(soft bool) string {
	if m.window <= 0 {
		return ""
	}
	var b strings.Builder
	if m.tokens < 0 {
		fmt.Fprintf(&b, "ctx ?/%s", tokens(m.window))
	} else {
		pct := float64(m.tokens) * 100 / float64(m.window) // the colour's thresholds
		s := fmt.Sprintf("ctx %s/%s %d%%", tokens(m.tokens), tokens(m.window), termtext.Percent(m.tokens, m.window))
		if m.source != "" {
			s += " (" + shortSource(m.source) + ")" // the server's window, not the configured one
		}
		switch {
		case m.softRatio > 0 && pct >= m.softRatio*100:
			s = m.st.Hot.Render(s)
		case m.softRatio > 0 && pct >= m.softRatio*80:
			s = m.st.Warn.Render(s)
		}
		b.WriteString(s)
	}
	if soft && m.softRatio > 0 {
		b.WriteString(m.st.Dim.Render(fmt.Sprintf(" · summary at %.0f%%", m.softRatio*100)))
	}
	return b.String()
}

// View draws the bar in one line: left the turn's state, the model and the
// session; right the context and the summarizer. When the line is too
// narrow, the parts that matter least go first: an idle summarizer, where
// summarization starts, the esc hint, then the session title.
func (m Model) View() string {
	for drop := 0; drop < 4; drop++ {
		if l, ok := m.line(drop); ok {
			return l
		}
	}
	l, _ := m.line(4)
	return ansi.Truncate(l, m.width, "…")
}

func (m Model) line(drop int) (string, bool) {
	sep := m.st.Dim.Render(" │ ")
	var left []string
	// A notice shows beside a running turn, not in its place: what Esc
	// does next stays in sight (the notice first: it is what just
	// happened, and a narrow line keeps it).
	if m.notice != "" {
		left = append(left, m.st.Warn.Render(m.notice))
	}
	if m.busy {
		t := m.st.Busy.Render(m.spin.View() + " " + m.busyText)
		if drop < 3 {
			hint := m.escHint
			if hint == "" {
				hint = "esc to cancel"
			}
			t += m.st.Dim.Render(" (" + hint + ")")
		}
		left = append(left, t)
	}
	left = append(left, m.st.Key.Render(m.model))
	var right []string
	if m.spentTokens > 0 && drop < 3 {
		sp := tokens(m.spentTokens) + " tok"
		if m.spentCost != "" {
			sp += " " + m.spentCost
		}
		right = append(right, m.st.Dim.Render(sp))
	}
	if c := m.contextText(drop < 2); c != "" {
		right = append(right, c)
	}
	switch m.sum {
	case summarizerRunning:
		right = append(right, m.spin.View()+" "+m.st.Busy.Render(m.sumText))
	case summarizerIdle:
		if drop < 1 {
			right = append(right, m.st.Dim.Render("summarizer idle"))
		}
	default:
		right = append(right, m.st.Dim.Render(m.sumText))
	}
	l := " " + strings.Join(left, sep)
	r := strings.Join(right, sep) + " "
	room := m.width - ansi.StringWidth(l) - ansi.StringWidth(r) - ansi.StringWidth(sep) - 2
	if title := m.session; room >= 8 && drop < 4 {
		if ansi.StringWidth(title) > room {
			title = ansi.Truncate(title, room, "…")
		}
		l += sep + m.st.Dim.Render(title)
	} else if drop < 3 {
		return "", false
	}
	gap := m.width - ansi.StringWidth(l) - ansi.StringWidth(r)
	if gap < 1 {
		return l + " " + r, false
	}
	return l + strings.Repeat(" ", gap) + r, true
}
