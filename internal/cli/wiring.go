package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"
	"golang.org/x/term"

	"github.com/sashabaranov/go-openai"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/llm"
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

// newSummarizer installs the summarizer on the agent; nil when disabled.
// It talks to the endpoint through a client of its own that does not retry:
// the summarizer bounds its attempts itself and falls back to a
// deterministic summary, so a failing summarizer never holds a turn for the
// client's retry budget.
func (a *app) newSummarizer(_ *llm.Client, ag *agent.Agent, off bool, notify func(summarize.Report)) summarizer {
	if off || !a.cfg.Summarize.Enabled {
		return nil
	}
	s := a.buildSummarizer(ag, notify)
	ag.SetCompactor(s)
	return s
}

// buildSummarizer makes the summarizer for the agent's model and window.
// notify receives every compaction report as it happens (nil: nobody
// listens); it is the one route from the summarizer to a front end.
func (a *app) buildSummarizer(ag *agent.Agent, notify func(summarize.Report)) *summarize.Summarizer {
	key := a.cfg.APIKey
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
	sc := a.cfg.Summarize
	// The summarizer model's own table: a model other than the agent's
	// does not take the top-level context_window, which is the agent's.
	ss := a.cfg.SummarizerSettings()
	model := ss.Model
	summaryWindow := a.window(model)
	if model != a.cfg.Model {
		summaryWindow = ss.ContextWindow
		if summaryWindow == 0 {
			summaryWindow, _ = models.Window(model)
		}
	}
	comp := completer{c: client, tools: ag.Tools, usage: a.store, model: requestsFor(ss)}
	return summarize.New(a.store, comp, a.tokens.Counter(a.cfg.Model), summarize.Config{
		Enabled:              true,
		Window:               ag.Window(),
		SummaryWindow:        summaryWindow,
		Model:                model,
		View:                 ag.Policy(),
		CachedPrefix:         model == a.cfg.Model,
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
}

func (c completer) agentTools() []openai.Tool {
	if c.tools == nil {
		return nil
	}
	return c.tools()
}

func (c completer) Complete(ctx context.Context, req summarize.Request) (summarize.Completion, error) {
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
// print mode's, on stderr.
func (a *app) interactive(ctx context.Context, o rootOptions) error {
	if a.env.IsTerminal != nil && !a.env.IsTerminal() {
		return &usageError{errors.New("the terminal UI needs a terminal; use print mode: gencode -p \"PROMPT\"")}
	}
	client, err := a.client(ctx)
	if err != nil {
		return err
	}
	sessionID := ""
	var lease *session.Lease // the shown session's; Close releases it
	if o.cont || o.resume != "" {
		s, err := a.pickSession(ctx, o.cont, o.resume, a.cfg.Model)
		if err != nil {
			return err
		}
		if lease, err = a.store.Lease(ctx, s.ID, session.LeaseWait); err != nil {
			return err
		}
		sessionID = s.ID
	}
	// Keep the search index warm: the first search of a long or old
	// session then does not wait for indexing. Index errors are not the
	// user's concern here (each search catches up on its own): logged.
	defer a.startIndexer(ctx, func(err error) { a.log.Warn("keep the search index warm", "err", err) })()
	asker := tui.NewAsker()
	// Hooks: the screen is the TUI's, so a hook's problem goes to the log,
	// and those known before the first frame (a project hook waiting for
	// approval, a settings file that cannot be read) are start notices.
	var hookNotes []string
	starting := true
	var hookMu sync.Mutex
	problems := &hookProblems{}
	a.hooks = a.newHooks(func(msg string) {
		a.log.Warn("hook", "problem", msg)
		hookMu.Lock()
		defer hookMu.Unlock()
		if starting {
			hookNotes = append(hookNotes, termtext.OneLine(msg, 0))
			return
		}
		problems.add(msg) // shown in the next turn
	})
	a.hooks.TellUnapproved()
	hookMu.Lock()
	starting = false
	hookMu.Unlock()
	hooked := &hookedState{started: map[string]bool{}}
	// withHooks gives the TUI the agent with its turn's hooks around it.
	withHooks := func(ag *agent.Agent) tui.Agent {
		if ag == nil {
			return nil
		}
		if a.hooks == nil {
			return ag
		}
		return &hookedAgent{Agent: ag, hooks: a.hooks, store: a.store, problems: problems, state: hooked, log: a.log}
	}
	// Background compactions reach the TUI through a channel; a full
	// channel drops the notice rather than block the summarizer.
	compactions := make(chan summarize.Report, 16)
	notify := func(r summarize.Report) {
		select {
		case compactions <- r:
		default: // the summarizer logs failures itself
			a.log.Debug("compaction report dropped: the UI's queue is full", "session", r.SessionID, "phase", r.Phase)
		}
	}
	// MCP servers start in the background: the first frame never waits
	// for them. Failures are logged and shown by /mcp.
	var stopMCP func()
	a.mcp, stopMCP = a.newMCP(ctx, nil)
	defer stopMCP()
	var mcpCmds commands.MCPServers
	if a.mcp != nil {
		mcpCmds = mcpControl{m: a.mcp, perms: a.perms, cfgs: a.mcp.Configs()}
	}
	// The agent and summarizer of one model at a time: /model NAME
	// switches them from a Cmd.
	// userTools runs the user's "@file" and "!command": the first model's
	// tool set (every model's has the same directory and rules).
	var userTools *tools.Set
	// keepContext keeps, after a compaction, a SessionStart hook's context
	// in the session for the next turn (noter: the first model's agent;
	// every agent appends to the same store).
	var noter *agent.Agent
	keepContext := func(sessionID, text string) {
		if err := noter.Note(ctx, sessionID, agent.UserMessage{Text: hookContextNote("SessionStart", []string{text})}); err != nil {
			a.log.Warn("keep a hook's context", "err", err)
		}
	}
	takesEffort := models.TakesReasoningEffort // before the name is the model set's
	// The raise hint offers /ollama-window, which the TUI has.
	a.raiseCommand = commands.OllamaCommand
	models := &modelSet{build: func(model string) (*agent.Agent, summarizer, error) {
		prev := a.cfg.Model
		a.cfg.Model = model
		ag, ts, err := a.newAgent(client, asker, o.allow, o.yolo)
		if err != nil {
			a.cfg.Model = prev
			return nil, nil, err
		}
		if userTools == nil {
			userTools, noter = ts, ag
		}
		return ag, a.newSummarizer(client, ag, o.noSummary, a.compactionHooks(a.hooks, notify, keepContext)), nil
	}}
	defer models.close()
	ag, sum, err := models.use(a.cfg.Model)
	if err != nil {
		return err
	}
	r := a.renderer()
	// /model lists the endpoint's models and checks names against them
	// with one attempt, which the registry's timeout bounds: no retries.
	key := a.cfg.APIKey
	if key == "" {
		key = "none"
	}
	lc := a.llmConfig(key)
	lc.MaxRetries = -1
	ucmds, cmdProbs := a.userCommands()
	hookNotes = append(hookNotes, cmdProbs...)
	reg := commands.New(commands.Deps{
		UserCommands: ucmds, Expander: expander(userTools), Hooks: hookStates{a},
		Store: a.store, Search: a.searchFunc(), Config: a.cfg, Window: a.window, Keys: tui.KeyHelp(),
		Instructions: a.instructionNames(),
		Prices:       a.prices(),
		Permissions:  a.perms,
		Models:       llm.New(lc).Models,
		Ollama:       a.ollamaAPI(),
		Cwd:          a.cwd,

		TakesReasoningEffort: takesEffort,
		Sandbox:              a.sandbox.Lines(),
		MCP:                  mcpCmds,
		Rewinder:             a.rewinderOf, // rewind.go
	})
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
	m := tui.New(tui.Options{
		Summarizer:  summ,
		Agent:       withHooks(ag),
		Store:       a.store,
		Asker:       asker,
		Commands:    reg,
		Compactions: compactions,
		SwitchModel: func(model string) (tui.Agent, tui.Summarizer, error) {
			next, sum, err := models.use(model)
			if err != nil || sum == nil {
				return withHooks(next), nil, err // a nil interface, not a typed nil: summarization off
			}
			return withHooks(next), a.withManualHooks(sum, keepContext), nil
		},
		SessionID: sessionID,
		Lease:     lease,
		Cwd:       a.cwd,
		SoftRatio: soft,
		Renderer:  r,
		ErrorText: func(err error) string { return a.redact(userMessage(err)) },
		Context:   ctx,
		Logger:    a.log,
		Notices: func() []string {
			return append(append(append(a.sandboxNotices(), hookNotes...), a.notices(ag)...), unapprovedNotice(a.mcp)...)
		},
		Spend: reg.Spend,
		Tools: userTools,
	})
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithMouseCellMotion(), tea.WithContext(ctx),
		tea.WithInput(a.env.Stdin), tea.WithOutput(a.env.Stdout))
	final, err := p.Run()
	if fm, ok := final.(tui.Model); ok {
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
			fmt.Fprintf(a.env.Stdout, "resume with: gencode -r %s\n", id)
		}
	}
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}

// environ gives termenv the injected environment (NO_COLOR, TERM ...).
type environ func(string) string

func (e environ) Getenv(k string) string { return e(k) }

// Environ is not used by termenv's colour detection.
func (e environ) Environ() []string { return nil }

// renderReport draws a report for the terminal: boxed on a terminal,
// plain when piped or with NO_COLOR.
func (a *app) renderReport(r *commands.Report) string {
	if a.env.IsTerminal == nil || !a.env.IsTerminal() {
		return r.Plain()
	}
	lr := a.renderer()
	if lr.ColorProfile() == termenv.Ascii {
		// Plain, but on a terminal: made inert like the boxed lines.
		return termtext.Sanitize(r.Plain())
	}
	width := 80
	if f, ok := a.env.Stdout.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			width = w
		}
	}
	return strings.Join(report.Render(*r, width, theme.New(lr).Report), "\n") + "\n"
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
