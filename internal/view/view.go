package view

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/tokens"
)

// Config configures a Policy.
type Config struct {
	// Window is the model's context window in tokens (config or the
	// known-model table).
	Window int
	// WindowConfigured says Window is the user's own context_window: a
	// server's window replaces the table's figure, but not a smaller
	// configured one (the smaller of the two wins).
	WindowConfigured bool
	// SystemPrompt starts every request. It stays byte-identical for the
	// whole session: it is the prefix providers cache.
	SystemPrompt string
	// SessionPrompt, when set, is the system prompt of a session in place
	// of SystemPrompt: it may depend on the session (the date it started),
	// never on the clock, so that it stays byte-identical for the session.
	SessionPrompt func(session.Session) string
	// Instructions are the user's and the project's standing instructions
	// (AGENTS.md); they end the system prompt. Counted in the fixed cost.
	Instructions string
	// Overhead is what a request costs besides its messages: the tool
	// schemas and the reply priming. SetOverhead changes it.
	Overhead int
	// AnswerReserve is what the server counts of the window for the
	// answer: the model's configured max_tokens (vLLM refuses a request
	// whose prompt and max_tokens pass the window). 0, when none is
	// configured: servers then give the answer what the prompt leaves.
	AnswerReserve int
	// MaskAfter keeps the most recent MaskAfter tool results verbatim and
	// replaces older ones with a one-line placeholder; 0 disables masking.
	MaskAfter int
	// MaskBatch is how many results are masked at a time (default
	// max(1, MaskAfter/2)). Masking in batches keeps the request's prefix
	// unchanged for several turns, so the provider's prompt cache holds.
	MaskBatch int
	// Count counts a message as the provider will: role, content, name and
	// tool calls. It counts what the policy writes (the system message,
	// placeholders, cut texts); the log's messages keep their stored counts.
	Count func(session.Message) int
	// Encoding is the tokenizer encoding Count uses ("": unknown). A
	// summary counted with it when it was made (session.Summary.TokenKey)
	// is not counted again.
	Encoding string
}

// Policy is the view policy: it turns a session's view (active summaries
// and the messages after them) into what one request sends, and says how
// many tokens that is. The agent builds every request with it, /context
// and the status bar show its figures, and the summarizer plans with them,
// so all of them agree. A Policy is safe for concurrent use.
type Policy struct {
	cfg Config
	// over is the overhead: Config.Overhead until SetOverhead.
	over atomic.Int64

	// wmu guards the windows the server told.
	wmu sync.Mutex
	// told is the window the server reports for the model (its own
	// endpoints: package window), with where it came from; 0: none.
	told       int
	toldSource string
	// seen is the smallest window the server showed by its answers: a
	// request it refused as too large, or a prompt it cut; 0: none.
	seen       int
	seenSource string
	// server is the endpoint's server, as package window names it
	// ("": not recognised): it chooses the cut tolerance.
	server string

	mu    sync.Mutex
	heads map[string]int // tokens of a head message, by content
	texts map[textKey]int
	// rendered holds stored summaries rendered (RenderSummary), by id and
	// limits: a round builds its view twice (its size for the compactor,
	// then the request), and a summary's block is most of its text.
	rendered map[renderKey]string
}

// renderKey names a stored summary rendered with its limits (the rest of
// a stored summary never changes).
type renderKey struct {
	id                     string
	renderChars, keepChars int
}

// textKey names a text the policy wrote in place of a logged message.
type textKey struct {
	session string
	seq     int64
	callID  string
	kind    byte // 'm' masked, 'c' cut, 'a' calls mended, 'r' result mended, 's' synthetic result, 'u' users joined, 'n' no answer
	limit   int  // the cap of a cut; the call's index of a synthetic result
}

// maxCached bounds each count cache; past it the cache starts over.
const maxCached = 4096

// maxHeads bounds the cache of head messages: the system prompt, the
// acknowledgement and the active summaries of a few sessions.
const maxHeads = 64

// DefaultWindow is the context window assumed when none is configured or
// learned.
const DefaultWindow = 8192

// NewPolicy returns the view policy for cfg. A nil cfg.Count counts about
// a token per four bytes.
func NewPolicy(cfg Config) *Policy {
	if cfg.Count == nil {
		cfg.Count = roughCount
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	p := &Policy{cfg: cfg, heads: map[string]int{}, texts: map[textKey]int{}, rendered: map[renderKey]string{}}
	p.over.Store(int64(cfg.Overhead))
	return p
}

// SetOverhead replaces Config.Overhead: what a request costs besides its
// messages changes when its tool list does (an MCP server became ready, a
// deferred tool was loaded). The agent, which builds the tool list, sets it.
func (p *Policy) SetOverhead(n int) { p.over.Store(int64(n)) }

// overhead is what a request costs besides its messages (SetOverhead).
func (p *Policy) overhead() int { return int(p.over.Load()) }

// roughCount is a message's size without a tokenizer: the one formula
// over a token per four bytes.
func roughCount(m session.Message) int {
	return MessageTokens(func(s string) int { return (len(s) + 3) / 4 }, m)
}

// MessageTokens is what m takes in a chat request, its texts counted by
// count: tokens.MessageTokens, the one formula, over a logged message.
func MessageTokens(count func(string) int, m session.Message) int {
	tm := tokens.Message{Role: string(m.Role), Content: m.Content, Name: m.Name}
	for _, tc := range m.ToolCalls {
		tm.ToolCalls = append(tm.ToolCalls, tokens.ToolCall{Name: tc.Name, Arguments: tc.Arguments})
	}
	return tokens.MessageTokens(count, tm)
}

// Window is the context window the policy fits requests into: the
// configured one (config or the known-model table), replaced by the one the
// server reports (bounded by a configured context_window), or the smaller
// one the server showed by refusing or cutting a request.
func (p *Policy) Window() int {
	w, _ := p.window()
	return w
}

// WindowSource says where Window comes from: "" for the config or the
// known-model table, else the server's own words for it ("Ollama,
// loaded", "vLLM", "server" for a refusal, "server, cut" for a prompt it
// cut).
func (p *Policy) WindowSource() string {
	_, src := p.window()
	return src
}

func (p *Policy) window() (int, string) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	w, src := p.cfg.Window, ""
	if p.told > 0 && (!p.cfg.WindowConfigured || p.told < w) {
		w, src = p.told, p.toldSource
	}
	if p.seen > 0 && p.seen < w {
		w, src = p.seen, p.seenSource
	}
	return w, src
}

// Usable is what of the window a request's prompt may take: Window less
// the answer's reserve (Config.AnswerReserve; at least a quarter of
// the window is left to the prompt). This is the one place the reserve is
// taken: the request budget, the compaction thresholds, the hard limit
// and the status bar's percentage all plan with Usable.
func (p *Policy) Usable() int {
	w := p.Window()
	return max(w-p.cfg.AnswerReserve, w/4)
}

// AnswerReserve is what of the window is kept for the answer (0: none).
func (p *Policy) AnswerReserve() int { return p.Window() - p.Usable() }

// ConfiguredWindow is the window of the config or the known-model table.
func (p *Policy) ConfiguredWindow() int { return p.cfg.Window }

// Learned reports whether the window is one the server told or showed.
func (p *Policy) Learned() bool { return p.WindowSource() != "" }

// Learn keeps a window the server named when it refused a request as too
// large (local servers often hold far less than the model's known window),
// for every later request of this policy. It reports whether the window
// shrank; a window not smaller than the current one is ignored.
func (p *Policy) Learn(window int) bool { return p.LearnFrom(window, "server") }

// LearnFrom is Learn for a window the server showed some other way, named
// by source: "server, cut" for the size of a prompt it cut to fit.
func (p *Policy) LearnFrom(window int, source string) bool {
	if window <= 0 || window >= p.Window() {
		return false
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.seen, p.seenSource = window, source
	return true
}

// Tell sets the window the server reports for the model on its own
// endpoints (package window), and where it came from. It replaces the
// known-model table's figure, larger or smaller, and an earlier report (a
// model loaded since); a configured context_window that is smaller still
// wins, and so does a smaller window the server showed by refusing or
// cutting a request. It reports whether Window changed.
func (p *Policy) Tell(window int, source string) bool {
	if window <= 0 {
		return false
	}
	before := p.Window()
	p.wmu.Lock()
	p.told, p.toldSource = window, source
	p.wmu.Unlock()
	return p.Window() != before
}

// Fixed is what every request costs before any message of the log: the
// system prompt (the instructions included), the tool schemas and the
// reply priming.
func (p *Policy) Fixed() int {
	return p.overhead() + p.headTokens(p.head(p.SystemPrompt(session.Session{}), nil, nil, ""))
}

// InstructionTokens is what the instructions add to every request.
func (p *Policy) InstructionTokens() int {
	if p.cfg.Instructions == "" {
		return 0
	}
	return p.Fixed() - p.overhead() - p.headTokens(p.head(p.basePrompt(session.Session{}), nil, nil, ""))
}

// basePrompt is a session's system prompt without the instructions.
func (p *Policy) basePrompt(s session.Session) string {
	if p.cfg.SessionPrompt != nil {
		return p.cfg.SessionPrompt(s)
	}
	return p.cfg.SystemPrompt
}

// SystemPrompt is the system message of session s's requests: the
// prompt, then the instructions.
func (p *Policy) SystemPrompt(s session.Session) string {
	sys := p.basePrompt(s)
	if p.cfg.Instructions != "" {
		if sys != "" {
			sys += "\n\n"
		}
		sys += p.cfg.Instructions
	}
	return sys
}

// MessageRoom is the most one message may take: what is left of nine
// tenths of the window after the fixed part (at least 256 tokens). A user
// message larger than this is refused before it is stored; one already in
// the log (the window shrank since) is cut to it in the view.
func (p *Policy) MessageRoom() int { return max(256, p.Usable()*9/10-p.Fixed()) }

// CapTokens is the most one tool output takes in a request: an eighth of
// the window, so that one output cannot fill a small one. Tools cap their
// outputs when they are recorded; this second cap follows the window.
func (p *Policy) CapTokens() int { return max(256, p.Usable()/8) }

// Prompt is what one request sends, and its size: the prompt tokens a
// provider counts.
type Prompt struct {
	// Messages are sent in this order; the first is the system message.
	Messages []session.Message
	// Tokens is the whole request: Fixed + Summaries + the messages.
	Tokens int
	// Window is the context window the request must fit (Usable: the
	// answer's reserve left out); Learned says the server named it
	// (smaller than ConfiguredWindow).
	Window int
	// Reserve is what of the server's window is kept for the answer
	// (Window + Reserve is the whole window; 0: none kept).
	Reserve          int
	Learned          bool
	ConfiguredWindow int
	// Source says where Window comes from (Policy.WindowSource).
	Source string

	// Fixed is the system prompt, tool schemas and reply priming;
	// Instructions is the part of it the instructions (AGENTS.md) take.
	Fixed, Instructions int
	// Summaries is what the summary block adds.
	Summaries int
	// User, Assistant and ToolOutputs are the tokens of those messages;
	// Masked is the placeholders of masked tool outputs.
	User, Assistant, ToolOutputs, Masked int

	// LogMessages is how many messages of the log the view holds.
	LogMessages int
	// SummaryCount is how many summaries are active.
	SummaryCount int
	// MaskedCount is how many tool outputs were replaced by placeholders.
	MaskedCount int
	// CutCount is how many tool outputs were shortened to CapTokens, and
	// other messages to MessageRoom.
	CutCount int
	// Repaired is how many things the view mended that the log keeps as
	// received (see normalize).
	Repaired int
}

// Build makes the prompt a view sends. It reads the messages' stored
// token counts and counts only the texts it writes itself (placeholders,
// cut outputs, the system message), each once.
func (p *Policy) Build(v session.View) Prompt {
	_, src := p.window()
	usable := p.Usable()
	r := Prompt{Window: usable, Reserve: p.Window() - usable, Learned: src != "", Source: src, ConfiguredWindow: p.cfg.Window,
		LogMessages: len(v.Messages), SummaryCount: len(v.Summaries)}
	msgs, fixes := p.normalize(v.Session.ID, v.Messages)
	r.Repaired = fixes
	toMask := maskCount(msgs, p.cfg.MaskAfter, p.cfg.MaskBatch)
	capTokens, room := p.CapTokens(), p.MessageRoom()
	for i, m := range msgs {
		if m.Role == session.RoleTool && !m.Meta.Deleted && toMask > 0 {
			toMask--
			m.Content, m.Full, m.Tokens = placeholder(m), "", p.maskedTokens(v.Session.ID, m)
			r.MaskedCount++
			r.Masked += m.Tokens
			msgs[i] = m
			continue
		}
		if m.Role == session.RoleTool && m.Meta.Deleted {
			toMask = max(0, toMask-1)
		}
		var cut bool
		if m, cut = p.fit(v.Session.ID, m, room, capTokens); cut {
			r.CutCount++
		}
		switch m.Role {
		case session.RoleUser:
			r.User += m.Tokens
		case session.RoleAssistant:
			r.Assistant += m.Tokens
		default:
			r.ToolOutputs += m.Tokens
		}
		msgs[i] = m
	}
	var mended, userDelta, written int
	msgs, mended, userDelta, written = p.alternate(v.Session.ID, msgs)
	r.Repaired += mended
	r.User += userDelta
	r.Assistant += written
	var next session.Role
	if len(msgs) > 0 {
		next = msgs[0].Role
	}
	sys := p.SystemPrompt(v.Session)
	head := p.head(sys, v.Summaries, v.Blocks, next)
	r.Fixed = p.overhead() + p.headTokens(p.head(sys, nil, nil, ""))
	r.Instructions = p.InstructionTokens()
	r.Summaries = p.overhead() + p.headTokens(head) - r.Fixed
	r.Messages = append(head, msgs...)
	r.Tokens = r.Fixed + r.Summaries + r.User + r.Assistant + r.ToolOutputs + r.Masked
	return r
}

// fit cuts a message that is larger than a request may carry: one other
// than a tool result to room (the window is smaller than when it was
// stored; the log keeps it whole), a tool result that is not masked to
// capTokens. It reports whether it cut.
func (p *Policy) fit(sessionID string, m session.Message, room, capTokens int) (session.Message, bool) {
	switch {
	case m.Role != session.RoleTool && m.Tokens > room && m.Content != "":
		m = cutMessage(m, room)
		m.Tokens = p.textTokens(sessionID, m, 'c', room)
		return m, true
	case m.Role == session.RoleTool && !m.Meta.Deleted && m.Tokens > capTokens:
		m = cutMessage(m, capTokens)
		m.Tokens = p.textTokens(sessionID, m, 'c', capTokens)
		return m, true
	}
	return m, false
}

// maskedTokens is the size of the placeholder of a masked tool result:
// the one stored with it (session.Store.SetMaskTokens) or counted now.
func (p *Policy) maskedTokens(sessionID string, m session.Message) int {
	if m.MaskTokens > 0 {
		return m.MaskTokens
	}
	m.Content, m.Full = placeholder(m), ""
	return p.textTokens(sessionID, m, 'm', 0)
}

// Tokens is Build(v).Tokens: what a compaction policy checks before every
// request.
func (p *Policy) Tokens(v session.View) int { return p.Build(v).Tokens }

// head is what a request sends before the log's messages. This is the one
// place that decides where the summaries go:
//   - the system prompt sys alone first (SystemPrompt: the instructions
//     included), byte-identical for the whole session:
//     the start of every request, the part a provider's prompt cache reuses;
//   - then each active summary as a user message of its own, oldest first,
//     each answered by a short assistant acknowledgement: applying a new
//     summary leaves the messages before it, and their cache, untouched.
//
// Roles stay valid for strict local chat templates (one leading system
// message; user and assistant in turn): the last acknowledgement is left
// out when the log's messages start with an assistant message (next).
func (p *Policy) head(sys string, sums []session.Summary, blocks map[string]string, next session.Role) []session.Message {
	var out []session.Message
	if sys != "" {
		out = append(out, session.Message{Role: session.RoleSystem, Content: sys})
	}
	for i, s := range sums {
		out = append(out, session.Message{Role: session.RoleUser, Content: p.summaryMessage(s, blocks)})
		if i < len(sums)-1 || next != session.RoleAssistant {
			out = append(out, session.Message{Role: session.RoleAssistant, Content: summaryAck})
		}
	}
	return out
}

// summaryMessage is s's message in a request. When s was counted by this
// policy's tokenizer for the text it renders to now, the message's count is
// known without tokenizing it: its heading's plus s.TokenCount. That is a
// long text, counted again by every print-mode run otherwise.
func (p *Policy) summaryMessage(s session.Summary, blocks map[string]string) string {
	heading, body := summaryHeading(s), p.render(s, blocks)
	text := heading + body
	if p.cfg.Encoding == "" || s.TokenKey == "" || !additive(body) {
		return text
	}
	p.mu.Lock()
	_, ok := p.heads[text]
	p.mu.Unlock()
	if ok || s.TokenKey != TokenKey(p.cfg.Encoding, body) {
		return text
	}
	n := p.cfg.Count(session.Message{Role: session.RoleUser, Content: heading}) + s.TokenCount
	p.remember(text, n)
	return text
}

// render is RenderSummary(s): the block the store keeps with it (blocks,
// session.View.Blocks), or rendered once per stored summary (see
// Policy.rendered); one not stored yet (no id) is rendered each time.
func (p *Policy) render(s session.Summary, blocks map[string]string) string {
	if s.ID == "" {
		return RenderSummary(s)
	}
	if text, ok := blocks[s.ID]; ok {
		return text
	}
	k := renderKey{id: s.ID, renderChars: s.RenderChars, keepChars: s.KeepChars}
	p.mu.Lock()
	text, ok := p.rendered[k]
	p.mu.Unlock()
	if ok {
		return text
	}
	text = RenderSummary(s)
	p.mu.Lock()
	if len(p.rendered) >= maxHeads {
		clear(p.rendered)
	}
	p.rendered[k] = text
	p.mu.Unlock()
	return text
}

// headTokens counts head messages, each text once.
func (p *Policy) headTokens(head []session.Message) int {
	n := 0
	for _, m := range head {
		p.mu.Lock()
		c, ok := p.heads[m.Content]
		p.mu.Unlock()
		if !ok {
			c = p.cfg.Count(m)
			p.remember(m.Content, c)
		}
		n += c
	}
	return n
}

// remember keeps a head message's count.
func (p *Policy) remember(text string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.heads) >= maxHeads {
		clear(p.heads)
	}
	p.heads[text] = n
}

// alternate makes user and assistant turns alternate, as strict local chat
// templates need; the log keeps every message as it was:
//   - each run of user messages is one message: a turn that failed leaves
//     its message unanswered, and the next message follows it, or Ctrl+R's
//     resend of the same one, which is sent once;
//   - a user message right after tool results (a turn canceled or failed
//     before its answer) follows a short assistant message saying so.
//
// It returns the messages, how many things it mended, what that changed of
// the user messages' tokens and the tokens of the assistant messages it
// wrote.
func (p *Policy) alternate(sessionID string, msgs []session.Message) ([]session.Message, int, int, int) {
	odd := false
	for i := 1; i < len(msgs) && !odd; i++ {
		odd = msgs[i].Role == session.RoleUser && (msgs[i-1].Role == session.RoleUser || msgs[i-1].Role == session.RoleTool)
	}
	if !odd { // the usual request: nothing to mend, nothing copied
		return msgs, 0, 0, 0
	}
	out := make([]session.Message, 0, len(msgs)+1)
	fixes, userDelta, written := 0, 0, 0
	first := int64(0) // the seq of the first message of the current run of user messages
	last := ""        // the text of the run's last message
	for _, m := range msgs {
		n := len(out)
		switch {
		case m.Role != session.RoleUser || n == 0:
		case out[n-1].Role == session.RoleTool:
			fixes++
			a := session.Message{Seq: m.Seq, Role: session.RoleAssistant, Content: noAnswer}
			a.Tokens = p.textTokens(sessionID, a, 'n', 0)
			written += a.Tokens
			out = append(out, a)
		case out[n-1].Role == session.RoleUser:
			fixes++
			prev := out[n-1]
			userDelta -= m.Tokens
			if m.Content == last {
				continue
			}
			last = m.Content
			userDelta -= prev.Tokens
			prev.Content, prev.Full = prev.Content+"\n\n"+m.Content, ""
			prev.Tokens = p.countOnce(textKey{session: sessionID, seq: m.Seq, kind: 'u',
				callID: fmt.Sprintf("%d:%d", first, len(prev.Content))}, prev)
			userDelta += prev.Tokens
			out[n-1] = prev
			continue
		}
		if m.Role == session.RoleUser {
			first, last = m.Seq, m.Content
		}
		out = append(out, m)
	}
	return out, fixes, userDelta, written
}

// noAnswer is what a request says in place of the answer a turn ended
// without (alternate).
const noAnswer = "(No answer: this turn ended without one.)"

// textTokens counts a text the policy wrote in place of message m, once
// per session, message (and call) and kind.
func (p *Policy) textTokens(session string, m session.Message, kind byte, limit int) int {
	return p.countOnce(textKey{session: session, seq: m.Seq, callID: m.ToolCallID, kind: kind, limit: limit}, m)
}

// countOnce counts m, a text the policy wrote, once per key.
func (p *Policy) countOnce(k textKey, m session.Message) int {
	p.mu.Lock()
	n, ok := p.texts[k]
	p.mu.Unlock()
	if ok {
		return n
	}
	n = p.cfg.Count(m)
	p.mu.Lock()
	if len(p.texts) >= maxCached {
		clear(p.texts)
	}
	p.texts[k] = n
	p.mu.Unlock()
	return n
}
