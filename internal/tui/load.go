package tui

import (
	"context"
	"maps"
	"slices"

	tea "charm.land/bubbletea/v2"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/tui/chat"
	"github.com/gencode/gencode/internal/tui/paste"
)

// olderPage is how many older messages one scroll to the top pages in.
const olderPage = 200

type historyMsg struct {
	sessionID string
	sess      session.Session
	msgs      []session.Message
	sums      []session.Summary
	err       error
}

type olderMsg struct {
	sessionID string
	msgs      []session.Message
	hasOlder  bool
	err       error
}

type contextMsg struct {
	sessionID string
	seq       int
	size      agent.Size
	err       error
}

type spendMsg struct {
	sessionID string
	spend     commands.Spend
	err       error
}

// loadSpend reads what the session's requests have used so far, for the
// status bar (nil without Options.Spend).
func (m *Model) loadSpend(id string) tea.Cmd {
	f, ctx := m.o.Spend, m.o.Context
	if f == nil || id == "" {
		return nil
	}
	return func() tea.Msg {
		s, err := f(ctx, id)
		return spendMsg{sessionID: id, spend: s, err: err}
	}
}

// loadHistory reads what a session shows first: its metadata, the tail of
// its log and its active summaries. It does not read the whole log, so
// opening a long session costs what opening a short one does.
func (m *Model) loadHistory(id string) tea.Cmd {
	store, n, ctx := m.o.Store, m.o.HistoryTail, m.o.Context
	return func() tea.Msg {
		out := historyMsg{sessionID: id}
		if out.sess, out.err = store.Session(ctx, id); out.err != nil {
			return out
		}
		if out.msgs, out.err = store.TailShown(ctx, id, n, chat.ShownBytes); out.err != nil {
			return out
		}
		if out.msgs, out.err = dropRewound(ctx, store, id, out.msgs); out.err != nil {
			return out
		}
		out.sums, out.err = store.Summaries(ctx, id, false)
		return out
	}
}

// loadContext measures how full the context window is now, as /context
// does; a figure asked for earlier and not yet shown is dropped.
func (m *Model) loadContext(id string) tea.Cmd {
	m.ctxSeq++
	return m.measure(id, m.ctxSeq)
}

// measure measures the request the session makes now (for a new
// session: the system prompt and tool schemas) from the store's sums of
// its stored counts, without reading its messages; it runs apart from
// loadHistory all the same, so the first frame does not wait for it.
func (m Model) measure(id string, seq int) tea.Cmd {
	store, ag, ctx := m.o.Store, m.agent, m.o.Context
	measure := func() tea.Msg {
		size, err := ag.MeasureContext(ctx, store, id)
		return contextMsg{sessionID: id, seq: seq, size: size, err: err}
	}
	if id == "" {
		return measure
	}
	return tea.Batch(measure, m.loadSpend(id))
}

// dropRewound leaves out of msgs what a conversation rewind took out of
// the session's view.
func dropRewound(ctx context.Context, store sessionStore, id string, msgs []session.Message) ([]session.Message, error) {
	hidden, err := store.Rewound(ctx, id)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(msgs, func(m session.Message) bool { return hidden(m.Seq) }), nil
}

func (m *Model) loadOlder(before int64) tea.Cmd {
	store, id, ctx := m.o.Store, m.sessionID, m.o.Context
	if id == "" || before <= 1 {
		m.chat.Prepend(nil, false)
		return nil
	}
	return func() tea.Msg {
		from := max(before-olderPage, 1)
		msgs, err := store.MessagesShown(ctx, id, from, before-1, chat.ShownBytes)
		if err == nil {
			msgs, err = dropRewound(ctx, store, id, msgs)
		}
		return olderMsg{sessionID: id, msgs: msgs, hasOlder: from > 1, err: err}
	}
}

func (m *Model) history(h historyMsg) tea.Cmd {
	if h.sessionID != m.sessionID {
		return nil
	}
	if h.err != nil {
		m.chat.AddError("could not load the session: "+m.o.ErrorText(h.err), "")
		for _, n := range m.afterLoad {
			m.chat.AddNote(n)
		}
		m.afterLoad = nil
		return nil
	}
	m.title = h.sess.Title
	m.status.SetSession(h.sess.ID, h.sess.Title)
	hasOlder := len(h.msgs) > 0 && h.msgs[0].Seq > 1
	m.chat.SetHistory(h.msgs, h.sums, hasOlder)
	for _, n := range m.afterLoad {
		m.chat.AddNote(n)
	}
	m.afterLoad = nil
	return nil
}

// promptHistory is how many of the project's earlier messages Up walks;
// promptBytes is the longest one it recalls (as shown: pastes collapsed).
const (
	promptHistory = 200
	promptBytes   = 4096
)

type promptsMsg struct {
	msgs []session.Message
	err  error
}

// loadPrompts reads the messages sent in the project's sessions, for Up:
// the history outlives the session.
func (m *Model) loadPrompts() tea.Cmd {
	store, cwd, ctx := m.o.Store, m.o.Cwd, m.o.Context
	return func() tea.Msg {
		msgs, err := store.Prompts(ctx, cwd, promptHistory, promptBytes)
		return promptsMsg{msgs: msgs, err: err}
	}
}

// prompts seeds the editor's history with the project's earlier messages,
// as they were typed: pastes as placeholders that still stand for their
// text. The pastes are numbered anew: two sessions' "#1" are two pastes.
func (m *Model) prompts(p promptsMsg) tea.Cmd {
	if p.err != nil {
		return nil // Up walks this session's messages only; nothing else depends on it
	}
	var prompts []string
	pastes := map[string]string{}
	n := 0
	for _, msg := range p.msgs {
		if msg.Meta.Shell || msg.Clipped {
			continue // a "!command"'s output, kept: not something typed; or too long to recall
		}
		spans := slices.Clone(msg.Meta.Pastes)
		for i := range spans {
			n++
			spans[i].N = n
		}
		if shown := paste.Collapse(msg.Content, spans); len(shown) < promptBytes {
			prompts = append(prompts, shown)
			maps.Copy(pastes, paste.Texts(msg.Content, spans))
		}
	}
	m.input.SetHistory(prompts, pastes)
	return nil
}

// sessionLeasedMsg is the lease of a session to resume, or why not.
type sessionLeasedMsg struct {
	id    string
	lease *session.Lease
	err   error
}

// resume takes the session's lease (waiting a little for another process
// writing to it), then shows it.
func (m *Model) resume(id string) tea.Cmd {
	store, ctx, wait := m.o.Store, m.o.Context, m.o.LeaseWait
	return func() tea.Msg {
		lease, err := store.Lease(ctx, id, wait)
		return sessionLeasedMsg{id: id, lease: lease, err: err}
	}
}

func (m *Model) sessionLeased(msg sessionLeasedMsg) tea.Cmd {
	if msg.err != nil {
		m.chat.AddError("could not resume "+msg.id+": "+m.o.ErrorText(msg.err), "")
		return nil
	}
	if m.turn != nil { // started while the lease was awaited
		m.chat.AddError("a turn is running: press esc to cancel it first", "")
		return releaseLease(msg.lease)
	}
	old := m.lease
	m.lease = msg.lease
	return tea.Batch(releaseLease(old), m.switchSession(msg.lease.SessionID()))
}

// releaseLease gives a lease up in a Cmd (it removes a file).
func releaseLease(l *session.Lease) tea.Cmd {
	if l == nil {
		return nil
	}
	return func() tea.Msg {
		l.Release()
		return nil
	}
}

// switchSession shows another session (/resume, /clear: id "").
func (m *Model) switchSession(id string) tea.Cmd {
	m.sessionID, m.title, m.titleGuess = id, "", false
	m.afterLoad = nil
	m.chat.Reset()
	m.status.SetSession(id, "")
	m.status.ResetSummarizer() // its last report was about the other session
	m.status.SetContext(-1, 0, "")
	if id == "" {
		return m.loadContext(id)
	}
	return tea.Batch(m.loadHistory(id), m.loadContext(id))
}
