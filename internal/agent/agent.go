// Package agent runs the turn loop: it builds the context from the session
// log, streams the model's answer, runs the tools it calls, appends every
// message to the log and reports progress as plain Events. It knows nothing
// of terminals.
package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sashabaranov/go-openai"

	"github.com/gencode/gencode/internal/crash"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/pricing"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/tokens"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/view"
)

// ErrCanceled is returned when the user stopped the turn.
var ErrCanceled = errors.New("turn canceled")

// ErrMessageTooLarge is returned, before anything is stored, for a user
// message that cannot fit the model's window; the front end keeps the text.
var ErrMessageTooLarge = errors.New("message too large for the context window")

// ErrTooManyIterations is returned when the model kept calling tools past
// the iteration bound.
var ErrTooManyIterations = errors.New("too many tool rounds")

// streamer is the LLM as the agent uses it.
type streamer interface {
	Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error)
}

// logStore is the session log as the agent uses it.
type logStore interface {
	Append(ctx context.Context, sessionID string, msgs ...session.Message) ([]session.Message, error)
	// RequestView is LoadView for requests: summaries whose blocks are
	// stored come without their facts (see session.Store.RequestView).
	RequestView(ctx context.Context, sessionID string) (session.View, error)
	SetTitle(ctx context.Context, id, title string) error
	// AddUsage records what a request used (see session.Usage).
	AddUsage(ctx context.Context, sessionID string, u session.Usage) error
	// Lease makes the turn the session's one writer (see session.Lease).
	Lease(ctx context.Context, sessionID string, wait time.Duration) (*session.Lease, error)
}

// toolRunner runs the agent's tools.
type toolRunner interface {
	Definitions() []tools.Definition
	Run(ctx context.Context, c tools.Call) tools.Result
}

// counter counts a message's tokens once, when it is appended.
type counter interface {
	Count(text string) int
	CountContext(ctx context.Context, text string) (int, error)
}

// tokenCache keeps the counts of the texts every request repeats (the
// system prompt, the tool schemas) across processes, by view.TokenKey:
// the store (session.Store) does.
type tokenCache interface {
	CachedTokens(ctx context.Context, key string) (int, bool, error)
	CacheTokens(ctx context.Context, key string, n int) error
}

// Options configure an Agent.
type Options struct {
	Model string
	// SystemPrompt is the prompt every request starts with; "" means
	// DefaultSystemPrompt for WorkDir and the date the session started.
	SystemPrompt string
	// Instructions are the user's and the project's standing instructions
	// (instructions.Set.Render); they end the system prompt.
	Instructions  string
	WorkDir       string
	MaxIterations int // model round trips per user turn (default 50)
	// MaxToolCalls bounds the tool calls run for one assistant message
	// (default DefaultMaxToolCalls); the calls past it are answered, not run.
	MaxToolCalls int
	MaxTokens    int // answer bound per request; 0: provider default
	Window       int // the model's context window in tokens
	// WindowConfigured says Window is the user's context_window: a
	// server's window replaces the known-model table's figure but not a
	// smaller configured one.
	WindowConfigured bool
	// MaskToolOutputsAfter keeps this many recent tool outputs whole in
	// the view and masks older ones (0: no masking).
	MaskToolOutputsAfter int
	// ReasoningEffort is sent with every request when set; the caller
	// sets it only for models that take it.
	ReasoningEffort string
	// Extra request fields, sent as written with every request (see
	// llm.Request.Extra).
	Extra map[string]any
	// RaiseCommand is the front end's slash command that creates an
	// Ollama model with a larger window on the user's word
	// ("/ollama-window"): the raise hint offers it as the third way. "":
	// none (print mode), the hint gives the shell commands only.
	RaiseCommand string
	// LeaseWait is how long a turn waits for another process writing to
	// the session (default session.LeaseWait).
	LeaseWait time.Duration
	// LateTools, when set, are tools offered after the fixed ones, asked
	// for at each request: the user's MCP servers, which start in the
	// background. The list may only grow at its end (the request prefix a
	// provider caches stays byte-stable). Their schemas are in FixedCost
	// as of the last Tools (every request, /context, the status bar): when
	// they would take more than a small share of the window, package mcp
	// defers them behind one small tool.
	LateTools func() []tools.Definition
	// Logger receives failed turns, errors no caller sees (a title not
	// stored) and, at debug level, each request and tool call; never
	// message contents (nil: discard).
	Logger *slog.Logger
}

// Agent runs turns of one or more sessions. It is safe for concurrent use
// by turns of different sessions.
type Agent struct {
	store     logStore
	llm       streamer
	tools     toolRunner
	counter   counter
	compactor Compactor
	opts      Options
	toolDefs  []openai.Tool
	policy    *view.Policy
	// tmu guards measured, the length of the last tool list measured
	// (Tools): the late tools are only ever appended (mcp keeps the schema
	// a tool was first sent with), so the length names the list.
	tmu      sync.Mutex
	measured int
	// win is the server's word on its window (SetWindowProbe); nil: not asked.
	win *serverWindow
	// started dates the system prompt of a session not created yet.
	started time.Time
}

// New returns an Agent. tools may be nil (no tools offered).
func New(store logStore, client streamer, tr toolRunner, c counter, opts Options) *Agent {
	if opts.MaxIterations <= 0 {
		opts.MaxIterations = 50
	}
	if opts.MaxToolCalls <= 0 {
		opts.MaxToolCalls = DefaultMaxToolCalls
	}
	if opts.LeaseWait <= 0 {
		opts.LeaseWait = session.LeaseWait
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	a := &Agent{store: store, llm: client, tools: tr, counter: c, opts: opts, started: time.Now()}
	if tr != nil {
		for _, d := range tr.Definitions() {
			a.toolDefs = append(a.toolDefs, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
				Name: d.Name, Description: d.Description, Parameters: d.Parameters,
			}})
		}
	}
	var encoding string
	if e, ok := c.(interface{ Encoding() string }); ok {
		encoding = e.Encoding()
	}
	a.policy = view.NewPolicy(view.Config{
		Window: opts.Window, WindowConfigured: opts.WindowConfigured, SessionPrompt: a.sessionPrompt, Instructions: opts.Instructions, Overhead: a.overhead(),
		MaskAfter: opts.MaskToolOutputsAfter, Count: a.countMessage, Encoding: encoding,
		// The server counts a configured answer bound inside the window.
		AnswerReserve: opts.MaxTokens,
	})
	return a
}

// SetCompactor installs the summarizer (nil: none). Call before any turn.
func (a *Agent) SetCompactor(c Compactor) { a.compactor = c }

// Model is the model the agent talks to.
func (a *Agent) Model() string { return a.opts.Model }

// Window is the context window the agent budgets for.
func (a *Agent) Window() int { return a.policy.Window() }

// FixedCost is what the system prompt and tool schemas take of every request.
func (a *Agent) FixedCost() int {
	a.Tools()
	return a.policy.Fixed()
}

// Tools are the tool schemas the agent's next request carries: the fixed
// ones, then the late ones (Options.LateTools). A summary request that
// continues the conversation sends the same ones, so that the provider's
// cache of the conversation serves it. When the list differs from the
// last one, the view policy's overhead (its fixed cost) is recounted for
// it, so that /context, the status bar and the cut measure the request
// that is sent.
func (a *Agent) Tools() []openai.Tool {
	out := a.toolDefs
	if a.opts.LateTools != nil {
		if late := a.opts.LateTools(); len(late) > 0 {
			out = make([]openai.Tool, 0, len(a.toolDefs)+len(late))
			out = append(out, a.toolDefs...)
			for _, d := range late {
				out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
					Name: d.Name, Description: d.Description, Parameters: d.Parameters,
				}})
			}
		}
	}
	a.remeasure(out)
	return out
}

// remeasure sets the policy's overhead for a request carrying list,
// counting it once per distinct list: the late tools only grow, a few
// times a session, so a list as long as the last one measured is that
// one, and nothing is encoded or counted per request.
func (a *Agent) remeasure(list []openai.Tool) {
	if a.opts.LateTools == nil {
		return // the fixed tools: counted by New
	}
	a.tmu.Lock()
	defer a.tmu.Unlock()
	if len(list) == a.measured {
		return
	}
	b, err := json.Marshal(list)
	if err != nil {
		return
	}
	a.measured = len(list)
	a.policy.SetOverhead(a.overheadOf(list, b))
}

// SystemPrompt is the system message every request of session s starts
// with, the instructions included: byte-identical for the whole session.
func (a *Agent) SystemPrompt(s session.Session) string { return a.policy.SystemPrompt(s) }

// InstructionTokens is what the instructions (AGENTS.md) add to every
// request.
func (a *Agent) InstructionTokens() int { return a.policy.InstructionTokens() }

// sessionPrompt is the system prompt of session s before the
// instructions. It depends on the session alone (the date it started, not
// today's), so every request of the session starts with the same bytes.
func (a *Agent) sessionPrompt(s session.Session) string {
	if a.opts.SystemPrompt != "" {
		return a.opts.SystemPrompt
	}
	started := s.Created
	if started.IsZero() {
		started = a.started
	}
	return DefaultSystemPrompt(a.opts.WorkDir, started)
}

// overheadOf is what a request carrying list (marshaled: b) costs
// besides its messages: the reply priming and the tool schemas.
func (a *Agent) overheadOf(list []openai.Tool, b []byte) int {
	n := tokens.ReplyPriming
	if len(list) > 0 {
		// The schemas as they go on the wire; providers count about this.
		n += a.countFixed(string(b))
	}
	return n
}

// countFixed counts a text every request repeats (the tool schemas, the
// system prompt) once per distinct text, not once per process: the count
// is kept in the store by the encoding and a hash of the text. A counter
// whose vocabulary did not load estimates, and its counts are not kept.
func (a *Agent) countFixed(text string) int {
	cache, ok := a.store.(tokenCache)
	e, vocab := a.counter.(interface {
		Encoding() string
		Err() error
	})
	if !ok || !vocab || e.Err() != nil {
		return a.counter.Count(text)
	}
	key := view.TokenKey(e.Encoding(), text)
	if key == "" {
		return a.counter.Count(text)
	}
	ctx := context.Background() // a lookup of one row; New has no context
	if n, found, err := cache.CachedTokens(ctx, key); err == nil && found {
		return n
	} else if err != nil {
		a.opts.Logger.Debug("token count cache", "err", err)
	}
	n := a.counter.Count(text)
	if err := cache.CacheTokens(ctx, key, n); err != nil {
		a.opts.Logger.Debug("token count cache", "err", err)
	}
	return n
}

// fixedCounter counts through countFixed.
type fixedCounter struct{ a *Agent }

func (c fixedCounter) Count(text string) int { return c.a.countFixed(text) }

// overhead is overheadOf the fixed tools.
func (a *Agent) overhead() int {
	b, err := json.Marshal(a.toolDefs)
	if err != nil {
		return tokens.ReplyPriming
	}
	return a.overheadOf(a.toolDefs, b)
}

// Start runs one user turn in a goroutine that ends with the turn (or when
// ctx is canceled) and returns its events; the channel is closed after the
// final EventDone or EventError.
func (a *Agent) Start(ctx context.Context, sessionID, text string) <-chan Event {
	return a.StartMessage(ctx, sessionID, UserMessage{Text: text})
}

// UserMessage is what the user sends: the text the model sees, and what
// the log keeps beside it for the front ends (where the TUI's pastes lie).
type UserMessage struct {
	Text string
	Meta session.Meta
}

// StartMessage is Start for a message with its metadata.
func (a *Agent) StartMessage(ctx context.Context, sessionID string, m UserMessage) <-chan Event {
	ch := make(chan Event, 64)
	go func() {
		defer close(ch)
		// A panic ends the turn with an error the front end shows, its
		// stack in the log; not the process, with the terminal raw.
		defer crash.Recover(a.opts.Logger, "turn", sessionID, func(e *crash.Error) {
			select {
			case ch <- Event{Kind: EventError, Err: e}:
			case <-ctx.Done():
			}
		})
		_ = a.runMessage(ctx, sessionID, m, ch)
	}()
	return ch
}

// Run runs one user turn to its end: the model answers, calls tools, sees
// their results, until it answers without tool calls. Every message is
// appended to the log as it is complete. The last event sent is EventDone
// or EventError. Run does not close events.
func (a *Agent) Run(ctx context.Context, sessionID, text string, events chan<- Event) error {
	return a.runMessage(ctx, sessionID, UserMessage{Text: text}, events)
}

func (a *Agent) runMessage(ctx context.Context, sessionID string, m UserMessage, events chan<- Event) error {
	t := &turn{a: a, ctx: ctx, sessionID: sessionID, events: events}
	final, err := t.run(m)
	if err != nil {
		if !errors.Is(err, ErrCanceled) {
			a.opts.Logger.Info("turn failed", "session", sessionID, "model", a.opts.Model, "err", err)
		}
		t.emit(Event{Kind: EventError, Err: err})
		return err
	}
	t.emit(Event{Kind: EventDone, Text: final})
	return nil
}

// turn is the state of one Run.
type turn struct {
	a         *Agent
	ctx       context.Context
	sessionID string
	events    chan<- Event
	view      session.View
	// userSeq is the seq of the user message the turn answers.
	userSeq int64
	// cut is set by request when the server cut the prompt it answered.
	cut *cutPrompt
}

// emit sends an event unless nobody listens any more.
func (t *turn) emit(e Event) {
	if t.events == nil {
		return
	}
	select {
	case t.events <- e:
	case <-t.ctx.Done():
		// The front end gave up; still try briefly so it sees the end.
		select {
		case t.events <- e:
		default:
		}
	}
}

// logCtx is for log writes: they must happen even after the user canceled,
// or a partial answer and the answers to its tool calls would be lost.
func (t *turn) logCtx() context.Context { return context.WithoutCancel(t.ctx) }

func (t *turn) append(msgs ...session.Message) error {
	for i := range msgs {
		msgs[i].Tokens = t.a.countMessageContext(t.ctx, msgs[i])
	}
	out, err := t.a.store.Append(t.logCtx(), t.sessionID, msgs...)
	if err != nil {
		return err
	}
	for i := range out {
		t.view.Messages = append(t.view.Messages, out[i])
		m := out[i]
		t.emit(Event{Kind: EventMessage, Message: &m})
	}
	return nil
}

// Note appends m to a session's log as a user message without starting a
// turn: something the user gave the model to read with the next message
// (the TUI keeps "!command" output this way when it ends before a message
// carried it). The next request joins it with that message.
func (a *Agent) Note(ctx context.Context, sessionID string, m UserMessage) error {
	lease, err := a.store.Lease(ctx, sessionID, a.opts.LeaseWait)
	if err != nil {
		return err
	}
	defer lease.Release()
	msg := session.Message{Role: session.RoleUser, Content: strings.ToValidUTF8(m.Text, "\uFFFD"), Meta: m.Meta}
	msg.Tokens = a.countMessageContext(ctx, msg)
	if _, err := a.store.Append(ctx, sessionID, msg); err != nil {
		return fmt.Errorf("keep a note in session %s: %w", sessionID, err)
	}
	return nil
}

func (a *Agent) countMessage(m session.Message) int {
	if m.Role == session.RoleSystem {
		// The system prompt: the same for every request of a session,
		// and of every session of a directory and day.
		return MessageTokens(fixedCounter{a}, m)
	}
	return MessageTokens(a.counter, m)
}

// countMessageContext counts m as countMessage does, but a cancel of ctx
// stops a long count (a huge paste or tool output) and estimates the rest:
// the message is still appended, with an overestimate.
func (a *Agent) countMessageContext(ctx context.Context, m session.Message) int {
	return MessageTokens(ctxCounter{ctx, a.counter}, m)
}

// ctxCounter counts with a context through MessageTokens.
type ctxCounter struct {
	ctx context.Context
	c   counter
}

func (c ctxCounter) Count(s string) int {
	n, _ := c.c.CountContext(c.ctx, s)
	return n
}

// MessageTokens counts a logged message as the provider will: role,
// content, name and tool calls (view.MessageTokens, the one formula). Count
// it once, when it is appended.
func MessageTokens(c interface{ Count(string) int }, m session.Message) int {
	return view.MessageTokens(c.Count, m)
}

func (t *turn) run(m UserMessage) (string, error) {
	text, meta := m.Text, m.Meta
	if strings.TrimSpace(text) == "" {
		return "", errors.New("empty message")
	}
	if valid := strings.ToValidUTF8(text, "\uFFFD"); valid != text {
		text, meta.Pastes = valid, nil // the offsets no longer hold
	}
	// The window the server reports is the one the message must fit.
	_, notes := t.a.AwaitWindow(t.ctx)
	for _, n := range notes {
		t.emit(Event{Kind: EventNotice, Text: n, Standing: true})
	}
	if err := t.a.checkSize(t.ctx, text); err != nil {
		return "", err
	}
	// The turn is the session's one writer: no other process appends
	// meanwhile, and a call without a result is not another process's
	// call still running.
	// A free session is taken even after a cancel, so that the message is
	// stored; only the wait for another process stops at a cancel.
	lease, err := t.a.store.Lease(t.logCtx(), t.sessionID, 0)
	if errors.Is(err, session.ErrInUse) {
		lease, err = t.a.store.Lease(t.ctx, t.sessionID, t.a.opts.LeaseWait)
	}
	if err != nil {
		if t.ctx.Err() != nil {
			return "", ErrCanceled
		}
		return "", err
	}
	defer lease.Release()
	if t.a.compactor != nil {
		if err := t.a.compactor.CatchUp(t.ctx, t.sessionID); err != nil {
			if t.ctx.Err() != nil {
				return "", ErrCanceled
			}
			// The turn goes on: the view is loaded whole, as before.
			t.a.opts.Logger.Warn("compact a long unsummarized log", "session", t.sessionID, "err", err)
		}
	}
	v, err := t.a.store.RequestView(t.logCtx(), t.sessionID)
	if err != nil {
		return "", fmt.Errorf("load session %s: %w", t.sessionID, err)
	}
	t.view = v
	if err := t.answerDangling(); err != nil {
		return "", err
	}
	if v.Session.Title == "" {
		if err := t.a.store.SetTitle(t.logCtx(), t.sessionID, Title(text)); err != nil {
			t.a.opts.Logger.Warn("store the session title", "session", t.sessionID, "err", err)
		}
	}
	if err := t.append(session.Message{Role: session.RoleUser, Content: text, Meta: meta}); err != nil {
		return "", err
	}
	t.userSeq = t.view.Messages[len(t.view.Messages)-1].Seq
	overflowRetried, cutRetried := false, false
	for i := 0; i < t.a.opts.MaxIterations; i++ {
		if err := t.ctx.Err(); err != nil {
			return "", ErrCanceled
		}
		if err := t.beforeRequest(); err != nil {
			return "", err
		}
		resp, err := t.request()
		if err != nil {
			learned := errors.Is(err, llm.ErrContextOverflow) && t.a.policy.Learn(llm.WindowOf(err))
			if learned {
				t.a.keepWindow(t.a.policy.Window(), "server")
			}
			if errors.Is(err, llm.ErrContextOverflow) && !overflowRetried && (t.a.compactor != nil || learned) {
				// Retry once: compacted, and fitted to the window the
				// server named when it is smaller than the configured one
				// (a message too large for it is cut in the view; the log
				// keeps it whole).
				overflowRetried = true
				text := "context window exceeded; compacting and retrying"
				if learned {
					text = fmt.Sprintf("the server's context window is %d tokens, not %d; fitting the context to it and retrying",
						t.a.policy.Window(), t.a.policy.ConfiguredWindow())
				}
				t.emit(Event{Kind: EventRetry, Text: text})
				if t.a.compactor != nil {
					if cerr := t.compactNow("the provider reported the context window exceeded"); cerr != nil && !learned {
						return "", fmt.Errorf("%w (compaction: %v)", err, cerr)
					}
				}
				i--
				continue
			}
			return "", t.keepPartial(resp, err)
		}
		t.a.reprobe()
		if h := t.a.pendingHint(); h != "" {
			t.emit(Event{Kind: EventNotice, Text: h, Standing: true})
		}
		if cut := t.cut; cut != nil {
			t.cut = nil
			if !cutRetried {
				// The answer came from a prompt the server cut: it is not
				// kept. Compacted to the window the cut showed, the
				// request is sent once more.
				cutRetried = true
				t.emit(Event{Kind: EventNotice, Text: cut.notice(t.a.policy.Window(), true)})
				if t.a.compactor != nil {
					if cerr := t.compactNow("the server cut the prompt to fit its window"); cerr != nil {
						t.a.opts.Logger.Warn("compact after a cut prompt", "session", t.sessionID, "err", cerr)
					}
				}
				i--
				continue
			}
			t.emit(Event{Kind: EventNotice, Text: cut.notice(t.a.policy.Window(), false)})
		}
		msg := session.Message{Role: session.RoleAssistant, Content: resp.Content}
		for _, c := range resp.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, session.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		if err := t.append(msg); err != nil {
			return "", err
		}
		if len(msg.ToolCalls) == 0 {
			t.afterTurn()
			return resp.Content, nil
		}
		if err := t.runTools(msg.ToolCalls); err != nil {
			return "", err
		}
		t.afterTurn()
	}
	return "", fmt.Errorf("stopped after %d model requests: %w", t.a.opts.MaxIterations, ErrTooManyIterations)
}

// checkSize refuses a user message that cannot fit the window next to the
// system prompt and tool schemas. A cheap byte bound goes first, so a huge
// paste is refused without tokenizing all of it.
func (a *Agent) checkSize(ctx context.Context, text string) error {
	room := a.policy.MessageRoom()
	n := len(text) / 6 // no tokenizer gives fewer than ~1 token per 6 bytes of text
	if n <= room {
		// A cancel stops the count and estimates the rest (an overcount).
		// If the message still fits, the turn stops at its next check with
		// the message stored; if not, nothing is stored.
		var err error
		if n, err = a.counter.CountContext(ctx, text); err != nil && n > room {
			return fmt.Errorf("count your message: %w", ErrCanceled)
		}
	}
	if n > room {
		return fmt.Errorf("your message is about %d tokens and the model's context window is %d (%d usable): %w; attach less, or use a model with a larger window",
			n, a.policy.Window(), room, ErrMessageTooLarge)
	}
	return nil
}

// request streams one completion of the current view.
func (t *turn) request() (llm.Response, error) {
	toolList := t.a.Tools() // first: the size counts these schemas
	msgs, size := t.a.build(t.view)
	est := size.Tokens
	t.emit(Event{Kind: EventContext, Context: &size})
	start := time.Now()
	resp, err := t.a.llm.Stream(t.ctx, llm.Request{
		Model: t.a.opts.Model, Messages: msgs, Tools: toolList, MaxTokens: t.a.opts.MaxTokens,
		ReasoningEffort: t.a.opts.ReasoningEffort, Extra: t.a.opts.Extra,
		// The user sees the wait: "rate limited, retrying in 3 s (2/5)".
		OnRetry: func(r llm.Retry) { t.emit(Event{Kind: EventRetry, Text: r.String()}) },
	}, func(d llm.Delta) {
		switch {
		case d.Content != "":
			t.emit(Event{Kind: EventTextDelta, Text: d.Content})
		case d.Reasoning != "":
			t.emit(Event{Kind: EventReasoningDelta, Text: d.Reasoning})
		case d.ToolCall != "":
			t.emit(Event{Kind: EventToolCallStart, Text: d.ToolCall})
		}
	})
	t.a.opts.Logger.Debug("model request", "session", t.sessionID, "model", t.a.opts.Model, "messages", len(msgs),
		"context_tokens", est, "took", time.Since(start), "err", err)
	if resp.Usage != nil {
		u := &Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
			TotalTokens: resp.Usage.TotalTokens, ContextTokens: est, Window: t.a.policy.Usable()}
		if d := resp.Usage.PromptTokensDetails; d != nil {
			u.CachedTokens = d.CachedTokens
		}
		t.record(resp.Model, *resp.Usage)
		t.emit(Event{Kind: EventUsage, Usage: u})
		switch {
		case err == nil && t.a.cutTolerance().IsCut(est, resp.Usage.PromptTokens):
			// A silent cut: the server kept about its window's worth. Its
			// count is not a calibration of gencode's.
			t.cut = &cutPrompt{sent: est, kept: resp.Usage.PromptTokens}
			if t.a.policy.LearnFrom(max(resp.Usage.PromptTokens, minLearnedWindow), "server, cut") {
				t.a.keepWindow(t.a.policy.Window(), "server, cut")
			}
			t.a.opts.Logger.Warn("the server cut the prompt", "session", t.sessionID, "sent", est,
				"prompt_tokens", resp.Usage.PromptTokens, "window", t.a.policy.Window())
		case t.a.compactor != nil:
			t.a.compactor.ObserveUsage(t.sessionID, est, resp.Usage.PromptTokens)
		}
	}
	return resp, err
}

// record stores what a request used with the session, for /cost and
// gencode sessions. A failure to store it is not the turn's: the answer
// stands.
func (t *turn) record(model string, u openai.Usage) {
	if model == "" {
		model = t.a.opts.Model
	}
	cached := 0
	if u.PromptTokensDetails != nil {
		cached = u.PromptTokensDetails.CachedTokens
	}
	tk := pricing.Counted(u.PromptTokens, cached, u.CompletionTokens, u.TotalTokens)
	if err := t.a.store.AddUsage(t.logCtx(), t.sessionID, session.Usage{Purpose: session.UsageTurn, Model: model,
		TurnSeq: t.userSeq, Input: tk.Input, Cached: tk.Cached, Output: tk.Output}); err != nil {
		t.a.opts.Logger.Warn("store a request's usage", "session", t.sessionID, "err", err)
	}
}

// keepPartial records what the model had said before a cancel or a broken
// stream, marked interrupted, and maps the error for the caller.
func (t *turn) keepPartial(resp llm.Response, err error) error {
	canceled := errors.Is(err, context.Canceled) || t.ctx.Err() != nil
	if strings.TrimSpace(resp.Content) != "" {
		// Tool calls of a cut answer are dropped: they never ran and have
		// no results, and a request holding them would be refused.
		if aerr := t.append(session.Message{Role: session.RoleAssistant, Content: resp.Content,
			Meta: session.Meta{Interrupted: true}}); aerr != nil {
			return errors.Join(err, aerr)
		}
	}
	if canceled {
		return ErrCanceled
	}
	return err
}

// DefaultMaxToolCalls is how many tool calls of one assistant message run
// unless configured otherwise.
const DefaultMaxToolCalls = 25

// runTools runs the calls of one assistant message in order and appends
// each result. After a cancel, the remaining calls are answered as
// interrupted so that no call is left without its result. Calls past
// MaxToolCalls are answered as not run, so that one answer cannot run a
// thousand commands before the user sees anything.
func (t *turn) runTools(calls []session.ToolCall) error {
	run := calls
	if n := t.a.opts.MaxToolCalls; len(calls) > n {
		run = calls[:n]
	}
	for i, c := range run {
		if t.ctx.Err() != nil {
			return t.interruptRest(calls[i:])
		}
		call := c
		t.emit(Event{Kind: EventToolRun, Call: &call})
		var res tools.Result
		if t.a.tools == nil {
			res = tools.Result{Content: fmt.Sprintf("error: no tool named %q is available", c.Name), IsError: true}
		} else {
			start := time.Now()
			res = t.a.runTool(t.ctx, t.sessionID, tools.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Progress: t.progress(c.ID)})
			t.a.opts.Logger.Debug("tool call", "session", t.sessionID, "tool", c.Name, "failed", res.IsError,
				"denied", res.Denied, "took", time.Since(start))
		}
		if err := t.append(toolMessage(c, res)); err != nil {
			return err
		}
		if t.ctx.Err() != nil {
			return t.interruptRest(calls[i+1:])
		}
	}
	if rest := calls[len(run):]; len(rest) > 0 {
		text := fmt.Sprintf("[not run: this answer asked for %d tool calls and at most %d run per answer (tools.max_calls_per_message); the first %d ran. Call the rest again, fewer at a time, if they are still needed]",
			len(calls), len(run), len(run))
		msgs := make([]session.Message, 0, len(rest))
		for _, c := range rest {
			msgs = append(msgs, session.Message{Role: session.RoleTool, ToolCallID: c.ID, Name: c.Name,
				Content: text, Meta: session.Meta{Tool: c.Name, Failed: true}})
		}
		return t.append(msgs...)
	}
	return nil
}

// progress forwards a running tool's progress without ever making it
// wait: an update the front end has no room for is refused (the tool
// offers a newer one). Print mode ignores these events.
func (t *turn) progress(callID string) func(tools.Progress) bool {
	if t.events == nil {
		return nil
	}
	return ProgressEvents(t.events, callID)
}

func (t *turn) interruptRest(calls []session.ToolCall) error {
	var msgs []session.Message
	for _, c := range calls {
		msgs = append(msgs, session.Message{Role: session.RoleTool, ToolCallID: c.ID, Name: c.Name,
			Content: "[not run: the user interrupted the turn]", Meta: session.Meta{Tool: c.Name, Interrupted: true, Failed: true}})
	}
	if err := t.append(msgs...); err != nil {
		return errors.Join(ErrCanceled, err)
	}
	return ErrCanceled
}

// answerDangling answers tool calls left without results by a crash, so the
// next request obeys the message rules. The answers go into the log. It
// runs under the session's lease, so the calls' owner is gone: no other
// process writes to the session meanwhile.
func (t *turn) answerDangling() error {
	msgs := t.view.Messages
	answered := map[string]bool{}
	for _, m := range msgs {
		if m.Role == session.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	var missing []session.ToolCall
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if !answered[c.ID] {
				missing = append(missing, c)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var fix []session.Message
	for _, c := range missing {
		fix = append(fix, session.Message{Role: session.RoleTool, ToolCallID: c.ID, Name: c.Name,
			Content: "[no result: gencode stopped before this call finished]", Meta: session.Meta{Tool: c.Name, Interrupted: true, Failed: true}})
	}
	return t.append(fix...)
}

func toolMessage(c session.ToolCall, r tools.Result) session.Message {
	content := r.Content
	if content == "" {
		content = "(no output)"
	}
	return session.Message{
		Role: session.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: content, Full: r.Full,
		Meta: session.Meta{
			Tool: cmp.Or(r.Meta.Tool, c.Name), FilePath: r.Meta.FilePath, Command: r.Meta.Command, Pattern: r.Meta.Pattern,
			Failed: r.IsError, Denied: r.Denied, DeniedUnless: r.Lift.String(), ExitCode: r.ExitCode, Capped: r.Full != "",
			Changes: fileChanges(r.Meta.Changes), Diff: r.Meta.Diff, Checkpoint: checkpoint(r.Meta.Checkpoint),
		},
	}
}

// fileChanges records what a Bash command did to files, as the tool saw it.
func fileChanges(c *tools.FileChanges) *session.FileChanges {
	if c == nil {
		return nil
	}
	return &session.FileChanges{Observed: c.Observed, Reason: c.Reason,
		Created: c.Created, Modified: c.Modified, Deleted: c.Deleted, Reverted: c.Reverted}
}

// checkpoint records the kept states around a call, as the tool saw them.
func checkpoint(c *tools.Checkpoint) *session.Checkpoint {
	if c == nil {
		return nil
	}
	return &session.Checkpoint{Before: c.Before, After: c.After, Err: c.Err, Changed: c.Changed, ChangedKnown: c.ChangedKnown}
}

// Title makes a session title from the first request.
func Title(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= 60 {
		return text
	}
	r := []rune(text)
	return string(r[:57]) + "..."
}
