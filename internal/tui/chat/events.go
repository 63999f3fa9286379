package chat

import (
	tea "charm.land/bubbletea/v2"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/termtext"
)

// FlushMsg is the message the stream's throttle tick delivers; benchmarks
// send it to redraw the tail without waiting.
func (m Model) FlushMsg() tea.Msg {
	if m.stream == nil {
		return nil
	}
	return flushMsg{gen: m.stream.gen}
}

// TailRenders counts markdown renders of the streaming tail (for tests).
func (m Model) TailRenders() int64 {
	if m.stream == nil {
		return 0
	}
	return int64(m.stream.tailCount)
}

// Streaming reports whether an answer is streaming.
func (m Model) Streaming() bool { return m.stream != nil }

// HandleEvent shows one event of a running turn.
func (m *Model) HandleEvent(ev agent.Event) tea.Cmd {
	switch ev.Kind {
	case agent.EventTextDelta, agent.EventReasoningDelta, agent.EventToolCallStart:
		s := m.ensureStream()
		switch ev.Kind {
		case agent.EventTextDelta:
			s.text.WriteString(termtext.Display(ev.Text))
		case agent.EventReasoningDelta:
			s.reasoning += len(ev.Text)
		default:
			s.calls = append(s.calls, termtext.Label(ev.Text))
		}
		s.dirty = true
		if m.flushPending {
			return nil
		}
		m.flushPending = true
		return flushCmd(s.gen)
	case agent.EventMessage:
		if ev.Message != nil {
			m.message(*ev.Message)
		}
	case agent.EventToolRun:
		if ev.Call != nil {
			if it, ok := m.byCall[ev.Call.ID]; ok && it.state < toolDone {
				it.state, it.started = toolRunning, m.now()
				it.version++
				m.running[it.callID] = it
				m.dirty = true
				return m.tick()
			}
		}
	case agent.EventToolProgress:
		if p := ev.Progress; p != nil {
			if it, ok := m.running[p.CallID]; ok {
				if !it.progressed {
					// The tool started its work (any dialog is answered):
					// time it from here.
					it.started, it.progressed = m.now(), true
				}
				it.live = termtext.Display(p.Tail)
				m.dirty = true
			}
		}
	case agent.EventRetry:
		m.endStream()
		text := termtext.Display("↻ " + ev.Text)
		if n := len(m.items); n > 0 && m.items[n-1].retry {
			// The same request retried again: its one line says so.
			it := m.items[n-1]
			it.text = text
			it.version++
			m.dirty = true
			break
		}
		m.push(&item{kind: KindInfo, text: text, retry: true})
	case agent.EventNotice:
		m.endStream()
		m.AddNote(ev.Text)
	case agent.EventDone, agent.EventError:
		m.endStream()
		m.stopRunning()
	}
	return nil
}

// tick starts the running tools' spinner unless its tick is in flight.
func (m *Model) tick() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	return m.spin.Tick
}

// stopRunning forgets the running calls: the turn is over (their results
// came, or never will).
func (m *Model) stopRunning() {
	for id, it := range m.running {
		if !it.shell {
			delete(m.running, id)
			m.dirty = true
		}
	}
}

// StartShell shows the user's "!command" running, as a Bash call of the
// model's is shown: a spinner, the time, and the last lines of its output
// as its EventToolProgress events for callID arrive (HandleEvent).
func (m *Model) StartShell(callID, command string) tea.Cmd {
	it := m.push(&item{kind: KindTool, tool: "Bash", arg: termtext.Label(command), callID: callID,
		state: toolRunning, started: m.now(), shell: true})
	m.running[callID] = it
	m.list.ScrollBottom()
	return m.tick()
}

// EndShell replaces the live view of the "!command" callID with its
// output, text (markdown).
func (m *Model) EndShell(callID, text string) {
	it, ok := m.running[callID]
	if !ok || !it.shell {
		m.AddNote(text)
		return
	}
	delete(m.running, callID)
	it.kind, it.text, it.state, it.live = KindNote, termtext.Display(text), toolDone, ""
	it.version++
	m.dirty = true
}

// AddCompaction notes a finished or failed compaction in the chat.
func (m *Model) AddCompaction(r summarize.Report) {
	if s := compactionNote(r); s != "" {
		m.AddInfo(s)
	}
}

// compactionNote is the chat's line about a finished or failed compaction.
func compactionNote(r summarize.Report) string {
	switch r.Phase {
	case summarize.Finished:
		return commands.AutoNotice(r)
	case summarize.Failed:
		msg := "compaction failed; the originals are kept"
		if r.Err != nil {
			msg += ": " + r.Err.Error()
		}
		return msg
	}
	return ""
}

func (m *Model) ensureStream() *stream {
	if m.stream == nil {
		m.streamGen++
		m.stream = &stream{gen: m.streamGen}
	}
	m.dirty = true
	return m.stream
}

// endStream drops the streaming answer: its text arrived as a message, or
// the turn ended without one.
func (m *Model) endStream() {
	if m.stream != nil {
		m.stream = nil
		m.dirty = true
	}
}

// message shows a message the agent appended to the log.
func (m *Model) message(msg session.Message) {
	m.dirty = true
	switch msg.Role {
	case session.RoleUser:
		// Shown when sent; learn its place in the log.
		for i := len(m.items) - 1; i >= 0; i-- {
			if it := m.items[i]; it.unlogged {
				it.seq, it.unlogged = msg.Seq, false
				return
			}
		}
		m.items = append(m.items, m.build([]session.Message{msg}, nil)...)
	case session.RoleAssistant:
		s := m.stream
		m.stream = nil
		added := m.build([]session.Message{msg}, nil)
		if s != nil && len(added) > 0 && added[0].kind == KindAssistant && s.width == m.inner() && len(s.lines) > 0 {
			// Show the streamed rendering until the full one is ready.
			m.cache.put(cacheKey{added[0].id, added[0].version, m.width}, m.r.frame(added[0], s.body(), m.width), true)
		}
		m.items = append(m.items, added...)
	case session.RoleTool:
		m.items = append(m.items, m.build([]session.Message{msg}, nil)...)
		// Its result replaces the live view.
		delete(m.running, msg.ToolCallID)
	}
}
