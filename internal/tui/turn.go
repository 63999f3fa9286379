package tui

import (
	"context"
	"errors"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/tui/dialog"
	"github.com/gencode/gencode/internal/tui/input"
	"github.com/gencode/gencode/internal/tui/keys"
)

// maxBatch bounds the events handled per message: a fast stream is drawn
// once per batch, not once per token.
const maxBatch = 256

// eventsMsg carries the events that were ready, in order.
type eventsMsg struct {
	turn   int
	events []agent.Event
	closed bool
}

// waitEvents waits for the turn's next event, then takes every event
// already queued behind it.
func waitEvents(id int, ch <-chan agent.Event) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return eventsMsg{turn: id, closed: true}
		}
		out := eventsMsg{turn: id, events: []agent.Event{ev}}
		for len(out.events) < maxBatch {
			select {
			case ev, ok := <-ch:
				if !ok {
					out.closed = true
					return out
				}
				out.events = append(out.events, ev)
			default:
				return out
			}
		}
		return out
	}
}

func isCommand(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "/") }

// submit sends a message, runs a slash command or a "!command", or
// reads the files a message mentions before it is sent.
func (m *Model) submit(s input.SubmitMsg) tea.Cmd {
	if isCommand(s.Text) {
		cmd := m.command(strings.TrimSpace(s.Text))
		if cmd == nil {
			return m.release() // nothing runs: nothing to wait for
		}
		return cmd
	}
	if m.o.Tools != nil {
		if isShell(s.Display) {
			return m.shell(s)
		}
		if paths := mentions(s.Display); len(paths) > 0 {
			return m.attach(s, paths)
		}
	}
	return m.send(s)
}

// waits reports whether what asks the model now is queued: a turn runs,
// or a /model switch is under way.
func (m *Model) waits() bool { return m.turn != nil || m.switching }

// send starts a turn on a message, or queues it while one runs.
func (m *Model) send(s input.SubmitMsg) tea.Cmd {
	if m.waits() {
		m.enqueue(queued{SubmitMsg: s})
		return nil
	}
	m.lastSubmit = s
	return m.startTurn(m.userMessage(s), s.Display)
}

// startTurn shows the message and starts the agent on it; a new session
// is created first.
func (m *Model) startTurn(msg agent.UserMessage, display string) tea.Cmd {
	m.chat.AddUser(display)
	return m.runTurn(msg, display)
}

// runTurn starts the agent on msg, shown already (a command such as /init
// shows its own line); display is how a resend (Ctrl+R) shows it again.
func (m *Model) runTurn(msg agent.UserMessage, display string) tea.Cmd {
	m.lastPrompt, m.lastDisplay, m.canRetry = msg, display, false
	m.turnSeq++
	ctx, cancel := context.WithCancel(m.o.Context)
	m.turn = &turn{id: m.turnSeq, ctx: ctx, cancel: cancel}
	spin := m.status.SetBusy(true, "working")
	if m.sessionID == "" {
		store, cwd, model, wait := m.o.Store, m.o.Cwd, m.agent.Model(), m.o.LeaseWait
		id := m.turnSeq
		return tea.Batch(spin, func() tea.Msg {
			s, err := store.CreateSession(ctx, cwd, model)
			var lease *session.Lease
			if err == nil {
				lease, err = store.Lease(ctx, s.ID, wait)
			}
			return sessionCreatedMsg{turn: id, sess: s, lease: lease, err: err, msg: msg}
		})
	}
	return tea.Batch(spin, m.begin(msg))
}

// begin starts the agent's goroutine in a Cmd; it ends with the turn, and
// its events are read by waitEvents.
func (m *Model) begin(msg agent.UserMessage) tea.Cmd {
	// Start does no IO: it starts the turn's goroutine and returns its
	// events. Holding them at once lets a quit wait for the turn's writes
	// (Wait) however early it comes.
	m.turn.events = m.agent.StartMessage(m.turn.ctx, m.sessionID, msg)
	return waitEvents(m.turn.id, m.turn.events)
}

type sessionCreatedMsg struct {
	turn  int
	sess  session.Session
	lease *session.Lease
	err   error
	msg   agent.UserMessage
}

func (m *Model) sessionCreated(msg sessionCreatedMsg) tea.Cmd {
	if m.turn == nil || m.turn.id != msg.turn {
		return releaseLease(msg.lease)
	}
	if msg.err != nil {
		cmd := m.endTurn()
		m.chat.AddError("could not create a session: "+m.o.ErrorText(msg.err), "")
		return cmd
	}
	// The agent titles a new session after its first message, once it
	// took it: until then the title shown is provisional.
	m.sessionID, m.title, m.lease = msg.sess.ID, agent.Title(msg.msg.Text), msg.lease
	m.titleGuess = true
	m.status.SetSession(m.sessionID, m.title)
	return m.begin(msg.msg)
}

// endTurn forgets the finished turn. A dialog still open belongs to it
// (its Ask returned when the turn's context ended): it is closed and the
// next request awaited.
func (m *Model) endTurn() tea.Cmd {
	if m.turn != nil {
		m.turn.cancel()
		m.turn = nil
	}
	m.status.SetBusy(false, "")
	// The turn's answer, or a summary applied meanwhile, changed the
	// context: measure it again.
	measure := m.loadContext(m.sessionID)
	if m.mode != modeDialog {
		return measure
	}
	m.mode, m.reply = m.resting(), nil
	m.syncEscHint()
	return tea.Batch(measure, m.o.Asker.wait())
}

// events shows a batch of the turn's events.
func (m *Model) events(msg eventsMsg) tea.Cmd {
	if m.turn == nil || m.turn.id != msg.turn {
		return nil
	}
	var cmds []tea.Cmd
	ended, ok := false, false
	for _, ev := range msg.events {
		cmds = append(cmds, m.chat.HandleEvent(ev))
		switch ev.Kind {
		case agent.EventContext:
			// The request being sent: what /context would show.
			if s := ev.Context; s != nil {
				m.ctxSeq++
				m.status.SetContext(s.Tokens, s.Window, s.Source)
			}
		case agent.EventToolRun:
			// The dialog may have opened before this event was read.
			if ev.Call != nil && !m.turn.canceling && m.mode != modeDialog {
				c, _ := tools.Unwrap(tools.Call{Name: ev.Call.Name, Arguments: ev.Call.Arguments})
				m.status.SetBusy(true, "running "+c.Name)
			}
		case agent.EventMessage:
			if ev.Message != nil && ev.Message.Role == session.RoleUser && (m.title == "" || m.titleGuess) {
				m.title, m.titleGuess = agent.Title(ev.Message.Content), false
				m.status.SetSession(m.sessionID, m.title)
			}
			if ev.Message != nil && ev.Message.Meta.Interrupted && ev.Message.Role == session.RoleAssistant {
				m.turn.partial = true
			}
			if !m.turn.canceling && m.mode != modeDialog {
				m.status.SetBusy(true, "working")
			}
		case agent.EventDone:
			ended, ok = true, !m.turn.canceling
		case agent.EventError:
			ended, ok = true, false
			m.turnError(ev.Err)
		}
	}
	if ended || msg.closed {
		cmds = append(cmds, m.endTurn(), m.loadSpend(m.sessionID))
		return tea.Batch(append(cmds, m.sendQueued(ok))...)
	}
	return tea.Batch(append(cmds, waitEvents(msg.turn, m.turn.events))...)
}

func (m *Model) turnError(err error) {
	if err == nil {
		return
	}
	if errors.Is(err, agent.ErrCanceled) || errors.Is(err, context.Canceled) {
		if !m.turn.partial {
			// A partial answer is marked on its own item.
			m.chat.AddInfo("interrupted")
		}
		return
	}
	if errors.Is(err, agent.ErrMessageTooLarge) {
		if m.titleGuess {
			// The refused message is not the session's: no title yet.
			m.title, m.titleGuess = "", false
			m.status.SetSession(m.sessionID, "")
		}
		// Nothing was stored: give the text back to edit.
		m.chat.AddError(m.o.ErrorText(err), "the message is back in the editor")
		if m.input.Empty() && m.lastSubmit.Text == m.lastPrompt.Text {
			m.input.Restore(m.lastSubmit)
		}
		return
	}
	m.canRetry = m.lastPrompt.Text != ""
	hint := ""
	if m.canRetry {
		hint = keys.Default().Editor.Retry.Help().Key + " sends the message again"
	}
	m.chat.AddError(m.o.ErrorText(err), hint)
}

// ask opens the permission dialog for a tool's request.
func (m *Model) ask(a askMsg) tea.Cmd {
	if a.ctx.Err() != nil {
		// The turn was canceled before the request was seen.
		return m.o.Asker.wait()
	}
	m.askSeq++
	m.dialog = dialog.New(a.req, m.dst).WithID(m.askSeq)
	m.mode = modeDialog
	m.askedAt = m.o.Now()
	m.reply, m.why = a.reply, a.why
	m.status.SetBusy(true, "waiting for permission")
	m.status.SetNotice("") // an older note must not hide what the dialog waits for
	m.syncEscHint()
	return nil
}

// saved tells the user what became of an "always for this project"
// answer: the rule now allows such calls, or it could not be saved.
func (m *Model) saved(s savedMsg) {
	what := s.tool + " " + s.rule
	if s.tool != tools.ToolBash {
		what = "every " + s.tool
	}
	what = termtext.OneLine(what, 0)
	if s.err != nil {
		m.chat.AddError("could not save the rule ("+what+"): "+termtext.OneLine(s.err.Error(), 0),
			"the call ran; later ones ask again (/permissions shows the problem)")
		return
	}
	m.chat.AddInfo("Always allowed in this project: " + what + " (/permissions lists or revokes it)")
}

// answer sends the user's decision to the waiting tool.
func (m *Model) answer(d tools.Decision) tea.Cmd { return m.answerWhy(d, "") }

// answerWhy sends the user's decision, and the reason given with a
// denial, to the waiting tool.
func (m *Model) answerWhy(d tools.Decision, reason string) tea.Cmd {
	if m.mode != modeDialog {
		return nil
	}
	m.mode = m.resting()
	if reason != "" && m.why != nil {
		m.why <- reason // buffered, sent before the decision: never blocks
	}
	m.reply <- d // buffered: never blocks
	m.reply, m.why = nil, nil
	m.syncEscHint()
	if m.turn != nil {
		m.status.SetBusy(true, "working")
	}
	return m.o.Asker.wait()
}
