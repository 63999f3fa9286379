package chat

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/tui/paste"
	"github.com/gencode/gencode/internal/view"
)

// Kind is what an item of the chat shows.
type Kind int

// Item kinds.
const (
	KindUser      Kind = iota // the user's message
	KindAssistant             // an answer (markdown)
	KindTool                  // one tool call and its result
	KindNote                  // a command's text output (markdown)
	KindError                 // a failed turn or command
	KindInfo                  // a one-line notice (interrupted, compacted ...)
	KindReport                // a command's boxed report
	KindSummary               // a stored summary of older history (markdown)
)

var kindNames = [...]string{"user", "assistant", "tool", "note", "error", "info", "report", "summary"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// markdown reports whether the kind is rendered with glamour (in the
// background; a plain draft is shown meanwhile).
func (k Kind) markdown() bool {
	return k == KindAssistant || k == KindNote || k == KindSummary
}

// toolState is where a tool call is.
type toolState int

// Tool call states.
const (
	toolPending     toolState = iota // the model asked for it
	toolRunning                      // running (or waiting for permission)
	toolDone                         // answered without error
	toolFailed                       // answered with an error
	toolDenied                       // permission refused
	toolInterrupted                  // canceled before or while running
)

func (s toolState) String() string {
	return [...]string{"pending", "running", "done", "failed", "denied", "interrupted"}[s]
}

// item is one entry of the chat. Its text is sanitized when the item is
// made, once; renders are cached by (id, version, width).
type item struct {
	id      int
	kind    Kind
	seq     int64 // log position; summaries sort after the last message they cover
	text    string
	version int
	// clipped: text is the head of the message, as it was read for the
	// screen (session.Store.TailShown); it is drawn cut.
	clipped bool

	interrupted bool
	retry       bool   // a request's retries: one line, updated on each
	unlogged    bool   // a user message shown before the log has it
	hint        string // errors: what the user can do

	// tools
	callID   string
	tool     string
	arg      string
	state    toolState
	output   string // what the model saw (capped)
	full     string // the whole output when capped
	diff     string // Write, Edit: the change made (unified diff)
	expanded bool

	// A running call: when it started (its first progress report, after
	// any permission dialog; until then when it was sent to run), and the
	// tail of its output so far (Bash), sanitized.
	started    time.Time
	progressed bool
	live       string
	// shell: the user's "!command", run by the TUI, not a turn: a turn's
	// end does not stop its live view, its own end does (EndShell).
	shell bool

	report *commands.Report
}

// stateOf reads a tool result's outcome from its meta.
func stateOf(m session.Message) toolState {
	switch {
	case m.Meta.Interrupted:
		return toolInterrupted
	case m.Meta.Denied:
		return toolDenied
	case m.Meta.Failed:
		return toolFailed
	}
	return toolDone
}

// builder turns log messages into items, pairing tool results with their
// calls.
type builder struct {
	next  *int
	calls map[string]*item
}

func (b *builder) newItem(k Kind) *item {
	*b.next++
	return &item{id: *b.next, kind: k}
}

// add converts one message; a tool result is attached to its call when the
// call is known, so it returns no new item.
func (b *builder) add(m session.Message) []*item {
	switch m.Role {
	case session.RoleUser:
		if m.Meta.Shell { // a "!command"'s output, shown as when it ran
			it := b.newItem(KindNote)
			it.seq, it.text, it.clipped = m.Seq, termtext.Display(Fence(shellOutput(m.Content))), m.Clipped
			return []*item{it}
		}
		it := b.newItem(KindUser)
		// A paste shows as its placeholder, as when it was sent.
		it.seq, it.text, it.clipped = m.Seq, termtext.Display(paste.Collapse(m.Content, m.Meta.Pastes)), m.Clipped
		return []*item{it}
	case session.RoleAssistant:
		var out []*item
		if strings.TrimSpace(m.Content) != "" {
			it := b.newItem(KindAssistant)
			it.seq, it.text, it.interrupted, it.clipped = m.Seq, termtext.Display(m.Content), m.Meta.Interrupted, m.Clipped
			out = append(out, it)
		}
		for _, c := range m.ToolCalls {
			it := b.newItem(KindTool)
			// A CallMcpTool call shows as the MCP tool it calls.
			d := tools.Describe(tools.Call{Name: c.Name, Arguments: c.Arguments})
			it.seq, it.callID, it.tool, it.arg = m.Seq, c.ID, termtext.Label(cmp.Or(d.Name, c.Name)), termtext.Label(d.Summary)
			b.calls[c.ID] = it
			out = append(out, it)
		}
		return out
	case session.RoleTool:
		it, ok := b.calls[m.ToolCallID]
		if !ok {
			// The call is older than what is loaded.
			it = b.newItem(KindTool)
			name := m.Name
			if name == tools.ToolCallMcp && m.Meta.Tool != "" {
				name = m.Meta.Tool // the MCP tool it called
			}
			it.seq, it.callID, it.tool = m.Seq, m.ToolCallID, termtext.Label(name)
			it.arg = termtext.Label(firstNonEmpty(m.Meta.FilePath, m.Meta.Command, m.Meta.Pattern))
			b.attach(it, m)
			return []*item{it}
		}
		b.attach(it, m)
		return nil
	}
	return nil
}

func (b *builder) attach(it *item, m session.Message) {
	it.state = stateOf(m)
	it.live, it.progressed = "", false
	it.output = termtext.Display(m.Content)
	if m.Full != "" {
		it.full = termtext.Display(m.Full)
	}
	if it.state == toolDone {
		it.diff = termtext.Display(m.Meta.Diff)
	}
	it.version++
}

func summaryItem(b *builder, s session.Summary) *item {
	it := b.newItem(KindSummary)
	it.seq = s.ToSeq
	head := fmt.Sprintf("Summary of messages %d–%d", s.FromSeq, s.ToSeq)
	if s.Fallback {
		head += " (deterministic)"
	}
	it.arg = head
	body := s.Content
	if strings.TrimSpace(body) == "" {
		body = view.RenderSummary(s)
	}
	it.text = termtext.Display(body)
	return it
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
