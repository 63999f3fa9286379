package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"golang.org/x/term"

	"github.com/sashabaranov/go-openai"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/crash"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/mcp"
	"github.com/gencode/gencode/internal/models"
	"github.com/gencode/gencode/internal/pricing"
	"github.com/gencode/gencode/internal/recall"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/tui"
	"github.com/gencode/gencode/internal/tui/report"
	"github.com/gencode/gencode/internal/tui/theme"
)

// summarizer is the background compactor as the CLI owns it: started with
// the agent, waited for before a print-mode exit, closed at the end.
type summarizer interface {
	Wait()
	Close()
	SummarizeNow(ctx context.Context, sessionID, focus string) (summarize.Report, error)
}

// newSummarizer installs the summarizer on the agent of model; nil when
// disabled.
func (a *app) newSummarizer(model string, ag *agent.Agent, off bool, notify func(summarize.Report)) summarizer {
	if off || !a.cfg.Summarize.Enabled {
		return nil
	}
	s := a.buildSummarizer(model, ag, notify)
	ag.SetCompactor(s)
	return s
}

// buildSummarizer makes the summarizer for the agent of model (its window).
// notify receives every compaction report as it happens (nil: nobody
// listens); it is the one route from the summarizer to a front end. It
// talks to the endpoint through a client of its own that does not retry:
// the summarizer bounds its attempts itself and falls back to a
// deterministic summary, so a failing summarizer never holds a turn for
// the client's retry budget.
func (a *app) buildSummarizer(model string, ag *agent.Agent, notify func(summarize.Report)) *summarize.Summarizer {
	return a.buildSummarizerOn(a.store, model, ag, notify)
}

// buildSummarizerOn is buildSummarizer reading the log from store, which
// wraps a.store (see factsTap).
func (a *app) buildSummarizerOn(store summarize.LogStore, model string, ag *agent.Agent, notify func(summarize.Report)) *summarize.Summarizer {
	cfg := a.cfg // this agent's: the summary model follows the agent's when not set
	cfg.Model = model
	key := cfg.APIKey
	if key == "" {
		key = "none"
	}
	lc := a.llmConfig(key)
	lc.MaxRetries = -1
	// A summary is not streamed: the endpoint sends nothing until it is
	// complete, so all of that wait is silence, bounded by
	// request_idle_timeout too. A summarizer that stalls then falls back
	// within the idle timeout, and is not asked again in that compaction.
	if idle := lc.IdleTimeout; idle > 0 && (lc.HeaderTimeout < 0 || idle < lc.HeaderTimeout) {
		lc.HeaderTimeout = idle
	}
	client := llm.New(lc)
	sc := cfg.Summarize
	// The summarizer model's own table: a model other than the agent's
	// does not take the top-level context_window, which is the agent's.
	ss := cfg.SummarizerSettings()
	summaryModel := ss.Model
	summaryWindow := a.window(summaryModel)
	if summaryModel != model {
		summaryWindow = ss.ContextWindow
		if summaryWindow == 0 {
			summaryWindow, _ = models.Window(summaryModel)
		}
	}
	comp := completer{c: client, tools: ag.Tools, usage: a.store, model: requestsFor(ss), hook: a.env.PanicAt}
	return summarize.New(store, comp, a.tokens.Counter(model), ag.Policy(), summarize.Config{
		Enabled:              true,
		Window:               ag.Window(),
		SummaryWindow:        summaryWindow,
		Model:                summaryModel,
		CachedPrefix:         summaryModel == model,
		SoftRatio:            sc.SoftRatio,
		HardRatio:            sc.HardRatio,
		TriggerThreshold:     sc.TriggerThreshold,
		TargetCompression:    sc.TargetCompression,
		PreserveRecent:       sc.PreserveRecent,
		PreserveSystem:       sc.PreserveSystem,
		MaskToolOutputsAfter: sc.MaskToolOutputsAfter,
		RedactSecrets:        sc.RedactSecrets,
		DeleteOriginals:      sc.DeleteOriginals,
		SummaryBudgetRatio:   sc.SummaryBudgetRatio,
		Notify:               notify,
		Logger:               a.log,
	})
}

// completer adapts the LLM client to the summarizer's Completer: one
// non-streamed completion that calls no tools. A request that continues
// the conversation is sent as the agent sends it, with the agent's tools
// and tool_choice "none": the provider's cache of the conversation serves
// it. Any other request is a system prompt and one user message.
type completer struct {
	c     *llm.Client
	tools func() []openai.Tool // the agent's, as its next request carries them
	// usage, when set, records what each request used with its session
	// (the summarizer's share in /cost and gencode sessions).
	usage interface {
		AddUsage(ctx context.Context, sessionID string, u session.Usage) error
	}
	// model is what the summarizer model's table adds to each request:
	// its max_tokens caps the bound a summary asks for.
	model requestSettings
	// hook is the test hook (Env.PanicAt), called with "summary".
	hook func(where string)
}

func (c completer) agentTools() []openai.Tool {
	if c.tools == nil {
		return nil
	}
	return c.tools()
}

func (c completer) Complete(ctx context.Context, req summarize.Request) (summarize.Completion, error) {
	if c.hook != nil {
		c.hook("summary")
	}
	lr := llm.Request{Model: req.Model, MaxTokens: req.MaxTokens, ReasoningEffort: c.model.effort, Extra: c.model.extra}
	if m := c.model.maxTokens; m > 0 && (lr.MaxTokens == 0 || lr.MaxTokens > m) {
		lr.MaxTokens = m
	}
	if len(req.Conversation) > 0 {
		for _, m := range req.Conversation {
			lr.Messages = append(lr.Messages, agent.ToOpenAI(m))
		}
		lr.Messages = append(lr.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: req.Prompt})
		if ts := c.agentTools(); len(ts) > 0 {
			lr.Tools, lr.ToolChoice = ts, "none"
		}
	} else {
		lr.Messages = []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: req.System},
			{Role: openai.ChatMessageRoleUser, Content: req.Prompt},
		}
	}
	resp, err := c.c.Complete(ctx, lr)
	if errors.Is(err, llm.ErrContextOverflow) {
		// The summarizer plans smaller requests from it, never the same again.
		return summarize.Completion{}, &summarize.OverflowError{Window: llm.WindowOf(err), Err: err}
	}
	if err != nil {
		return summarize.Completion{}, err
	}
	out := summarize.Completion{Text: resp.Content, Model: resp.Model}
	if u := resp.Usage; u != nil {
		out.PromptTokens, out.CompletionTokens = u.PromptTokens, u.CompletionTokens
		if c.usage != nil && req.SessionID != "" {
			cached := 0
			if u.PromptTokensDetails != nil {
				cached = u.PromptTokensDetails.CachedTokens
			}
			model := resp.Model
			if model == "" {
				model = req.Model
			}
			tk := pricing.Counted(u.PromptTokens, cached, u.CompletionTokens, u.TotalTokens)
			// Not stored is not the summary's failure: the count is lost, the summary stands.
			_ = c.usage.AddUsage(context.WithoutCancel(ctx), req.SessionID, session.Usage{Purpose: session.UsageSummary,
				Model: model, Input: tk.Input, Cached: tk.Cached, Output: tk.Output})
		}
	}
	return out, nil
}

// notify prints compaction reports as they come, those a turn waits for
// and background ones (print mode may be waiting for one before it exits).
func (a *app) notify(r summarize.Report) { a.reportCompaction(&r) }

// turnDrain is how long quitting waits for a canceled turn to write its
// partial answer and tool results to the log.
const turnDrain = 5 * time.Second

// interactive runs the TUI. Problems it can see before the screen is
// taken (no endpoint, no such session, no terminal) are reported like
// print mode's, on stderr. Its steps: the endpoint, the session shown
// first, the search indexer, the first model's agent and summarizer, the
// screen, and what is said once the screen is the shell's again.
func (a *app) interactive(ctx context.Context, o rootOptions) error {
	if a.env.IsTerminal != nil && !a.env.IsTerminal() {
		return &usageError{errors.New("the terminal UI needs a terminal; use print mode: gencode -p \"PROMPT\"")}
	}
	if _, err := a.permissions(o.allow); err != nil {
		return err
	}
	client, err := a.client(ctx)
	if err != nil {
		return err
	}
	sessionID, lease, err := a.firstSession(ctx, o)
	if err != nil {
		return err
	}
	var bg backgroundFailure
	defer bg.report(a)
	defer a.startIndexer(ctx, bg.indexerErr(a))()
	w := a.newTUIWiring(ctx, client, o)
	defer w.close()
	ag, sum, err := w.models.use(a.cfg.Model)
	if err != nil {
		return err
	}
	opts := a.tuiOptions(ctx, o, w, ag, sum, sessionID, lease)
	m := tui.New(opts)
	fp := tui.NewFramePacer() // idle, the screen is not redrawn 60 times a second
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(a.env.Stdin), tea.WithOutput(a.env.Stdout),
		tea.WithEnvironment(a.environ()), tea.WithColorProfile(opts.Profile), tea.WithFilter(fp.Filter))
	fp.Attach(p)
	final, err := p.Run()
	fp.Close()
	if fm, ok := final.(tui.Model); ok {
		a.afterTUI(ctx, fm)
	}
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}

// firstSession is the session the TUI shows first, with its lease (Close
// releases it): -c's or -r's, or none ("": a new one at the first message).
func (a *app) firstSession(ctx context.Context, o rootOptions) (string, *session.Lease, error) {
	if !o.cont && o.resume == "" {
		return "", nil, nil
	}
	s, err := a.pickSession(ctx, o.cont, o.resume, a.cfg.Model)
	if err != nil {
		return "", nil, err
	}
	lease, err := a.store.Lease(ctx, s.ID, session.LeaseWait)
	if err != nil {
		return "", nil, err
	}
	return s.ID, lease, nil
}

// backgroundFailure keeps the failure of a goroutine the TUI does not
// hear from (the search indexer's recovered panic), to be said on stderr
// once the screen is the shell's again.
type backgroundFailure struct {
	mu  sync.Mutex
	err error
}

// indexerErr is the indexer's error handler: errors are logged (each
// search catches up on its own); a recovered panic is kept for the user.
func (b *backgroundFailure) indexerErr(a *app) func(error) {
	return func(err error) {
		a.log.Warn("keep the search index warm", "err", err)
		var ce *crash.Error
		if errors.As(err, &ce) {
			b.mu.Lock()
			b.err = err
			b.mu.Unlock()
		}
	}
}

func (b *backgroundFailure) report(a *app) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		fmt.Fprintln(a.env.Stderr, "gencode: "+a.redact(userMessage(b.err)))
	}
}

// tuiWiring is what the TUI's models share: the permission asker, the
// queue of background compaction reports, the hooks' state, the MCP
// servers, and the agent and summarizer of one model at a time (/model
// NAME switches them from a Cmd).
type tuiWiring struct {
	asker       *tui.Asker
	compactions chan summarize.Report
	models      *modelSet
	// userTools runs the user's "@file" and "!command": the first model's
	// tool set (every model's has the same directory and rules).
	userTools *tools.Set
	// noter is the first model's agent, which keeps a SessionStart hook's
	// context after a compaction (every agent appends to the same store).
	noter *agent.Agent

	// hookMu guards hookNotes while the hooks start.
	hookMu sync.Mutex
	// hookNotes are the problems known before the first frame (a project
	// hook waiting for approval, a settings file or a user command that
	// cannot be read): start notices.
	hookNotes []string
	// problems are the hooks' problems once started: shown in the next turn.
	problems *hookProblems
	hooked   *hookedState

	// notes carries the MCP servers' failures and recoveries to the chat.
	notes chan string
	// mcpCmds is /mcp's view of the MCP servers (nil: none configured).
	mcpCmds commands.MCPServers
	stopMCP func()
}

// newTUIWiring sets up the hooks and starts the MCP servers (a.hooks,
// a.mcp: every model's agent uses them), then prepares the model set.
func (a *app) newTUIWiring(ctx context.Context, client *llm.Client, o rootOptions) *tuiWiring {
	w := &tuiWiring{
		asker: tui.NewAsker(), compactions: make(chan summarize.Report, 16), notes: make(chan string, 16),
		problems: &hookProblems{}, hooked: &hookedState{started: map[string]bool{}},
	}
	// Hooks: the screen is the TUI's, so a hook's problem goes to the log,
	// and those known before the first frame are start notices.
	starting := true
	a.hooks = a.newHooks(func(msg string) {
		a.log.Warn("hook", "problem", msg)
		w.hookMu.Lock()
		defer w.hookMu.Unlock()
		if starting {
			w.hookNotes = append(w.hookNotes, termtext.OneLine(msg, 0))
			return
		}
		w.problems.add(msg) // shown in the next turn
	})
	a.hooks.TellUnapproved()
	w.hookMu.Lock()
	starting = false
	w.hookMu.Unlock()
	// MCP servers start in the background: the first frame never waits
	// for them. A failure (once per run of failures) and the recovery
	// after it are shown in the chat as they happen, as well as logged and
	// shown by /mcp; a full queue drops the note rather than block.
	a.mcp, w.stopMCP = a.newMCP(ctx, a.cfg.Model, func(e mcp.Event) {
		select {
		case w.notes <- termtext.OneLine(e.String(), 0):
		default:
			a.log.Debug("mcp note dropped: the UI's queue is full", "server", e.Server)
		}
	}, func() {
		// An empty note says nothing; the TUI measures the context again
		// (a server's tools are in the next request: the status bar says
		// what /context says).
		select {
		case w.notes <- "":
		default:
		}
	})
	if a.mcp != nil {
		w.mcpCmds = mcpControl{m: a.mcp, perms: a.perms, cfgs: a.mcp.Configs()}
	}
	// The raise hint offers /ollama-window, which the TUI has.
	a.raiseCommand = commands.OllamaCommand
	// Background compactions reach the TUI through a channel; a full
	// channel drops the notice rather than block the summarizer.
	notify := func(r summarize.Report) {
		select {
		case w.compactions <- r:
		default: // the summarizer logs failures itself
			a.log.Debug("compaction report dropped: the UI's queue is full", "session", r.SessionID, "phase", r.Phase)
		}
	}
	keepContext := w.keepContext(ctx, a)
	w.models = &modelSet{build: func(model string) (*agent.Agent, summarizer, error) {
		ag, ts, err := a.newAgent(model, client, w.asker, o.allow, o.yolo)
		if err != nil {
			return nil, nil, err
		}
		if w.userTools == nil {
			w.userTools, w.noter = ts, ag
		}
		return ag, a.newSummarizer(model, ag, o.noSummary, a.compactionHooks(a.hooks, notify, keepContext)), nil
	}}
	return w
}

// close closes the models' agents and summarizers, then the MCP servers.
func (w *tuiWiring) close() {
	w.models.close()
	w.stopMCP()
}

// keepContext keeps, after a compaction, a SessionStart hook's context in
// the session for the next turn.
func (w *tuiWiring) keepContext(ctx context.Context, a *app) func(sessionID, text string) {
	return func(sessionID, text string) {
		if err := w.noter.Note(ctx, sessionID, agent.UserMessage{Text: hookContextNote("SessionStart", []string{text})}); err != nil {
			a.log.Warn("keep a hook's context", "err", err)
		}
	}
}

// withHooks gives the TUI the agent with its turn's hooks around it.
func (w *tuiWiring) withHooks(a *app, ag *agent.Agent) tui.Agent {
	if ag == nil {
		return nil
	}
	if a.hooks == nil {
		return ag
	}
	return &hookedAgent{Agent: ag, hooks: a.hooks, store: a.store, problems: w.problems, state: w.hooked, log: a.log}
}

// tuiOptions wires the TUI to the first model's agent and summarizer and
// to the slash commands.
func (a *app) tuiOptions(ctx context.Context, o rootOptions, w *tuiWiring, ag *agent.Agent, sum summarizer, sessionID string, lease *session.Lease) tui.Options {
	reg, cmdProbs := a.commandRegistry(w)
	w.hookNotes = append(w.hookNotes, cmdProbs...)
	keepContext := w.keepContext(ctx, a)
	dark, knownBG := a.background()
	prof := a.profile()
	soft := 0.0
	if a.cfg.Summarize.Enabled && !o.noSummary {
		soft = a.cfg.Summarize.SoftRatio
	}
	var summ interface {
		SummarizeNow(ctx context.Context, sessionID, focus string) (summarize.Report, error)
	}
	if sum != nil {
		summ = a.withManualHooks(sum, keepContext)
	}
	return tui.Options{
		Summarizer:  summ,
		Agent:       w.withHooks(a, ag),
		Store:       a.store,
		Asker:       w.asker,
		Commands:    reg,
		Compactions: w.compactions,
		Notes:       w.notes,
		SwitchModel: func(model string) (tui.Agent, tui.Summarizer, error) {
			next, sum, err := w.models.use(model)
			if err != nil || sum == nil {
				return w.withHooks(a, next), nil, err // a nil interface, not a typed nil: summarization off
			}
			return w.withHooks(a, next), a.withManualHooks(sum, keepContext), nil
		},
		SessionID: sessionID,
		Lease:     lease,
		Cwd:       a.cwd,
		SoftRatio: soft,
		Profile:   prof,
		Dark:      dark,
		// Nothing said what the background is: the TUI asks the
		// terminal through Bubble Tea, and redraws in its colours when
		// the answer comes (never waiting for it).
		AskBackground: !knownBG,
		ErrorText:     func(err error) string { return a.redact(userMessage(a.locate(err))) },
		Context:       ctx,
		Logger:        a.log,
		Notices: func() []string {
			return append(append(append(a.sandboxNotices(), w.hookNotes...), a.notices(ag)...), unapprovedNotice(a.mcp)...)
		},
		Spend: reg.Spend,
		Tools: w.userTools,
	}
}

// commandRegistry is the slash commands, with the user's own (their
// problems are returned, for the start notices). /model lists the
// endpoint's models and checks names against them with one attempt, which
// the registry's timeout bounds: no retries.
func (a *app) commandRegistry(w *tuiWiring) (*commands.Registry, []string) {
	key := a.cfg.APIKey
	if key == "" {
		key = "none"
	}
	lc := a.llmConfig(key)
	lc.MaxRetries = -1
	ucmds, cmdProbs := a.userCommands()
	return commands.New(commands.Deps{
		Version:      buildInfo().String(),
		UserCommands: ucmds, Expander: expander(w.userTools), Hooks: hookStates{a},
		Store: a.store, Search: a.searchFunc(), Config: a.cfg, Window: a.window, Keys: tui.KeyHelp(),
		Instructions: a.instructionNames(),
		Prices:       a.prices(),
		Permissions:  a.perms,
		Models:       llm.New(lc).Models,
		Ollama:       a.ollamaAPI(),
		Cwd:          a.cwd,

		TakesReasoningEffort: models.TakesReasoningEffort,
		Sandbox:              a.sandbox.Lines(),
		Rewinder:             a.rewinderOf, // rewind.go
		MCP:                  w.mcpCmds,
	}), cmdProbs
}

// afterTUI waits for a canceled turn to be written, keeps the shell
// output not yet sent, and says how to come back to the session.
func (a *app) afterTUI(ctx context.Context, fm tui.Model) {
	fm.Wait(turnDrain)
	id := fm.SessionID()
	// A quit (or a SIGTERM) ends the context; the output is kept all the same.
	keepCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	kept, n, kerr := fm.KeepUnsent(keepCtx)
	cancel()
	switch {
	case kerr != nil:
		a.log.Error("keep unsent shell output", "session", id, "err", kerr)
		fmt.Fprintf(a.env.Stderr, "gencode: %v\n", kerr)
	case n > 0:
		id = kept
		fmt.Fprintf(a.env.Stdout, "kept %d shell output(s) in the session: they go with your next message\n", n)
	}
	if id != "" {
		// The screen is the shell's again: say how to come back.
		fmt.Fprintf(a.env.Stdout, "resume with: %s -r %s\n", commandName(a.env.Name), id)
	}
}

// renderReport draws a report for the terminal: boxed on a terminal,
// plain when piped or with NO_COLOR.
func (a *app) renderReport(r *commands.Report) string {
	if a.env.IsTerminal == nil || !a.env.IsTerminal() {
		return r.Plain()
	}
	prof := a.profile()
	if prof <= colorprofile.Ascii {
		// Plain, but on a terminal: made inert like the boxed lines.
		return termtext.Sanitize(r.Plain())
	}
	width := 80
	if f, ok := a.env.Stdout.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			width = w
		}
	}
	// The theme setting or COLORFGBG says the background; nothing is
	// asked of the terminal (unknown: dark).
	dark, _ := a.background()
	out := strings.Join(report.Render(*r, width, theme.New(dark, prof).Report), "\n") + "\n"
	return downsample(out, prof)
}

// commandName is how to run this binary again from the same directory:
// the path it was called by when that was a path (bin/gencode after `make
// run`), else its name, found on PATH (gencode when installed).
func commandName(arg0 string) string {
	if arg0 == "" {
		return "gencode"
	}
	if !strings.ContainsRune(arg0, filepath.Separator) {
		return filepath.Base(arg0)
	}
	if filepath.IsAbs(arg0) {
		return arg0
	}
	return filepath.Clean(arg0)
}

// downsample brings the colours of s down to what profile shows (the
// theme's 256 colours on a 16-colour terminal).
func downsample(s string, profile colorprofile.Profile) string {
	if profile >= colorprofile.ANSI256 {
		return s
	}
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: profile}
	if _, err := w.WriteString(s); err != nil {
		return termtext.Sanitize(ansi.Strip(s))
	}
	return b.String()
}

// searchFunc is the history search over the recall index: the same
// search the model's SearchHistory tool uses.
func (a *app) searchFunc() commands.SearchFunc {
	return func(ctx context.Context, sessionID, query string, limit int) ([]commands.SearchHit, int, error) {
		// The model's own searches and rereads would only echo the query.
		hits, total, err := a.store.SearchWith(ctx, session.SearchQuery{SessionID: sessionID, Text: query, Limit: limit,
			SkipTools: []string{recall.ToolSearchHistory, recall.ToolReadHistory}})
		if err != nil {
			return nil, 0, err
		}
		out := make([]commands.SearchHit, len(hits))
		for i, h := range hits {
			out[i] = commands.SearchHit{Seq: h.Seq, Role: string(h.Role), Tool: h.ToolName, Time: h.Time, Snippet: h.Snippet}
		}
		return out, total, nil
	}
}
