package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/tui/input"
)

// maxQueueShown bounds the queued messages listed above the editor; the
// rest are counted.
const maxQueueShown = 3

// queued is a message sent while a turn ran, or a command that asks the
// model (/init, a user command) typed then.
type queued struct {
	input.SubmitMsg
	// prompt is what the command resolved to when it was typed (its
	// arguments read, its file loaded); nil for a message. The queue shows
	// the command line, Up gives it back to edit, and the turn sends this.
	prompt *agent.UserMessage
	// note is what the command says when its turn starts ("" none).
	note string
}

// enqueue keeps a message sent while a turn runs; it is sent when the
// turn ends well.
func (m *Model) enqueue(q queued) {
	m.queue = append(m.queue, q)
	m.syncEscHint()
}

// unqueue drops the last queued message (Esc). It stays in the editor's
// history: Up brings it back once the queue is empty.
func (m *Model) unqueue() tea.Cmd {
	m.queue = m.queue[:len(m.queue)-1]
	m.quitArm = false
	m.status.SetNotice("queued message removed")
	m.syncEscHint()
	return m.expireNotice() // it says what just happened, not a state
}

// editQueued takes the last queued message back into the editor (Up on
// an empty editor); Enter queues it again.
func (m *Model) editQueued() {
	last := m.queue[len(m.queue)-1]
	m.queue = m.queue[:len(m.queue)-1]
	m.input.Restore(last.SubmitMsg)
	m.syncEscHint()
}

// sendQueued starts the next queued message after a turn that ended
// well. After a failed or canceled turn the queue is not sent: its
// messages go back into the editor, to send again or change.
func (m *Model) sendQueued(ok bool) tea.Cmd {
	if len(m.queue) == 0 || m.turn != nil {
		return nil
	}
	if !ok {
		// Messages go back into the editor, joined; a command among them
		// would be sent as text, so it is named instead (alone it goes
		// back: Enter runs it).
		var dropped []string
		for _, q := range m.queue {
			if q.prompt != nil && len(m.queue) > 1 {
				dropped = append(dropped, q.Display)
				continue
			}
			m.input.Append(q.SubmitMsg)
		}
		m.queue = nil
		m.syncEscHint()
		notice := "the turn did not finish: the queued messages are back in the editor"
		if len(dropped) > 0 {
			notice += "; not run: " + strings.Join(dropped, ", ")
		}
		m.status.SetNotice(notice)
		return m.expireNotice()
	}
	next := m.queue[0]
	m.queue = m.queue[1:]
	m.syncEscHint()
	if next.prompt != nil {
		cmd := m.startTurn(*next.prompt, next.Display)
		if next.note != "" {
			m.chat.AddNote(next.note)
		}
		return cmd
	}
	m.lastSubmit = next.SubmitMsg
	return m.startTurn(m.userMessage(next.SubmitMsg), next.Display)
}

// syncEscHint tells the status bar what Esc does now: deny an open
// dialog, remove the last queued message, or (no hint) cancel the turn.
func (m *Model) syncEscHint() {
	switch {
	case m.mode == modeDialog:
		m.status.SetEscHint("esc denies")
	case len(m.queue) > 0:
		m.status.SetEscHint("esc unqueues")
	default:
		m.status.SetEscHint("")
	}
}

// queueHeight is the number of lines queueView draws.
func (m Model) queueHeight() int {
	if len(m.queue) == 0 {
		return 0
	}
	n := min(len(m.queue), maxQueueShown)
	if len(m.queue) > maxQueueShown {
		n++
	}
	return n + 1
}

// queueView lists the queued messages, oldest first, one line each, and
// what Up and Esc do to them.
func (m Model) queueView() string {
	if len(m.queue) == 0 {
		return ""
	}
	var lines []string
	for _, s := range m.queue[:min(len(m.queue), maxQueueShown)] {
		first, rest, multi := strings.Cut(strings.TrimSpace(s.Display), "\n")
		if multi {
			first += fmt.Sprintf(" (+%d lines)", strings.Count(rest, "\n")+1)
		}
		lines = append(lines, ansi.Truncate("queued ❯ "+first, m.width, "…"))
	}
	if more := len(m.queue) - maxQueueShown; more > 0 {
		lines = append(lines, fmt.Sprintf("… %d more queued", more))
	}
	lines = append(lines, ansi.Truncate("↑ edits the last · esc removes it · sent when the turn ends", m.width, "…"))
	return m.dst.Dim.Render(strings.Join(lines, "\n"))
}
