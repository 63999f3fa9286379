package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/hooks"
	"github.com/gencode/gencode/internal/recall"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tools"
)

// loadHooks gathers the run's hooks: config.toml's, ~/.claude/settings.json's,
// and the project's (which run only once approved).
func (a *app) loadHooks() ([]hooks.Hook, []string) {
	return hooks.Load(a.cfg.Hooks, a.cfg.File, hooks.Files{Home: a.env.Getenv("HOME"), Project: a.cwd})
}

// newHooks is the run's hook runner; report shows a hook's problem to
// the user (once per hook). Nil when no hook is configured anywhere.
func (a *app) newHooks(report func(string)) *hooks.Runner {
	hs, probs := a.loadHooks()
	for _, p := range probs {
		report("hooks: " + termtext.OneLine(p, 0))
	}
	if len(hs) == 0 {
		return nil
	}
	// Hooks run as the Bash tool runs commands: its scrubbed environment,
	// its sandbox, its process-group kill; a tool set of their own, which
	// never asks (the user configured or approved each hook).
	ts := tools.New(tools.Options{WorkDir: a.cwd, Secrets: []string{a.cfg.APIKey, a.cfg.BaseURLUserinfo},
		Private: a.privateDirs(), Sandbox: a.sandbox})
	return hooks.New(hooks.Options{Hooks: hs, Exec: hookExec{ts}, Approvals: a.perms, Report: report, Cwd: a.cwd, Logger: a.log})
}

// hookExec runs hooks with the Bash tool's runner.
type hookExec struct{ ts *tools.Set }

func (h hookExec) RunHook(ctx context.Context, command string, stdin []byte, timeout time.Duration) hooks.Outcome {
	r := h.ts.RunHook(ctx, command, stdin, timeout)
	return hooks.Outcome{Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode, TimedOut: r.TimedOut, Err: r.Err}
}

// hookedTools runs PreToolUse hooks before each tool call (one that
// blocks answers the model with the hook's reason, and the tool does not
// run) and PostToolUse hooks after it (a block or added context goes to
// the model after the result).
type hookedTools struct {
	inner *recall.Tools
	hooks *hooks.Runner
}

func (h hookedTools) Definitions() []tools.Definition { return h.inner.Definitions() }

func (h hookedTools) Run(ctx context.Context, c tools.Call) tools.Result {
	return h.RunInSession(ctx, "", c)
}

func (h hookedTools) RunInSession(ctx context.Context, sessionID string, c tools.Call) tools.Result {
	// A CallMcpTool call is the MCP tool it names to the hooks too: their
	// matchers and input are that tool's.
	hc, _ := tools.Unwrap(c)
	args := json.RawMessage(strings.TrimSpace(hc.Arguments))
	if !json.Valid(args) {
		raw, _ := json.Marshal(hc.Arguments) // a string always encodes
		args = raw
	}
	in := hooks.Input{SessionID: sessionID, ToolName: hc.Name, ToolInput: args}
	if pre := h.hooks.Run(ctx, hooks.PreToolUse, hc.Name, in); pre.Block {
		return tools.Result{Content: "blocked by a PreToolUse hook: " + pre.Reason, IsError: true,
			Meta: tools.Meta{Tool: hc.Name}}
	}
	r := h.inner.RunInSession(ctx, sessionID, c)
	in.ToolResponse = map[string]any{"content": r.Content, "is_error": r.IsError, "success": !r.IsError}
	post := h.hooks.Run(ctx, hooks.PostToolUse, hc.Name, in)
	var add []string
	if post.Block {
		add = append(add, "PostToolUse hook: "+post.Reason)
	}
	for _, c := range post.Context {
		add = append(add, "PostToolUse hook: "+c)
	}
	if len(add) > 0 {
		r.Content += "\n\n[" + strings.Join(add, "]\n[") + "]"
	}
	return r
}

// compactionHooks wraps a compaction notify with the PreCompact and
// PostCompact hooks, and SessionStart with source "compact" after a
// compaction; addContext is told what a SessionStart hook adds, for the
// next turn. The hooks run on the summarizer's goroutine.
func (a *app) compactionHooks(hr *hooks.Runner, notify func(summarize.Report), addContext func(sessionID, text string)) func(summarize.Report) {
	if hr == nil {
		return notify
	}
	return func(r summarize.Report) {
		ctx := context.Background()
		switch r.Phase {
		case summarize.Started:
			a.beforeCompact(ctx, hr, r.SessionID, "auto", "")
		case summarize.Finished:
			a.afterCompact(ctx, hr, r, "auto", addContext)
		}
		if notify != nil {
			notify(r)
		}
	}
}

// beforeCompact runs the PreCompact hooks.
func (a *app) beforeCompact(ctx context.Context, hr *hooks.Runner, sessionID, trigger, focus string) {
	if hr.Has(hooks.PreCompact) {
		hr.Run(ctx, hooks.PreCompact, trigger, hooks.Input{SessionID: sessionID, Trigger: trigger, CustomInstructions: focus})
	}
}

// afterCompact runs the PostCompact hooks with the summary applied and
// the session's facts, then SessionStart with source "compact".
func (a *app) afterCompact(ctx context.Context, hr *hooks.Runner, r summarize.Report, trigger string, addContext func(sessionID, text string)) {
	if r.Summary == nil {
		return
	}
	if hr.Has(hooks.PostCompact) {
		facts, _ := a.sessionFacts(ctx, r.SessionID) // none said is better than no hook
		hr.Run(ctx, hooks.PostCompact, trigger, hooks.Input{SessionID: r.SessionID, Trigger: trigger,
			Summary: r.Summary, Facts: facts})
	}
	if hr.Has(hooks.SessionStart) && addContext != nil {
		res := hr.Run(ctx, hooks.SessionStart, "compact", hooks.Input{SessionID: r.SessionID, Source: "compact"})
		for _, c := range res.Context {
			addContext(r.SessionID, c)
		}
	}
}

// nowSummarizer compacts when asked (/summarize, gencode summarize).
type nowSummarizer interface {
	SummarizeNow(ctx context.Context, sessionID, focus string) (summarize.Report, error)
}

// hookedSummarizer runs the compaction hooks, trigger "manual", around a
// compaction the user asked for (which the summarizer does not Notify).
type hookedSummarizer struct {
	inner      nowSummarizer
	a          *app
	hooks      *hooks.Runner
	addContext func(sessionID, text string)
}

func (h hookedSummarizer) SummarizeNow(ctx context.Context, sessionID, focus string) (summarize.Report, error) {
	h.a.beforeCompact(ctx, h.hooks, sessionID, "manual", focus)
	rep, err := h.inner.SummarizeNow(ctx, sessionID, focus)
	if err == nil {
		rep.SessionID = sessionID
		h.a.afterCompact(ctx, h.hooks, rep, "manual", h.addContext)
	}
	return rep, err
}

// withManualHooks is s with the compaction hooks around SummarizeNow (s
// itself when no hook is configured).
func (a *app) withManualHooks(s nowSummarizer, addContext func(sessionID, text string)) nowSummarizer {
	if a.hooks == nil || (!a.hooks.Has(hooks.PreCompact) && !a.hooks.Has(hooks.PostCompact) && !a.hooks.Has(hooks.SessionStart)) {
		return s
	}
	return hookedSummarizer{inner: s, a: a, hooks: a.hooks, addContext: addContext}
}

// hookContextNote is how a hook's added context reaches the model: a note
// in the session before the next message.
func hookContextNote(event string, texts []string) string {
	return fmt.Sprintf("[context from the user's %s hook]\n%s", event, strings.Join(texts, "\n\n"))
}

// hookStates are the hooks a run here uses, for /hooks and gencode
// hooks (commands.Hooks).
type hookStates struct{ a *app }

func (h hookStates) HookStates() ([]commands.HookState, []string) {
	hs, probs := h.a.loadHooks()
	out := make([]commands.HookState, len(hs))
	for i, hk := range hs {
		out[i] = commands.HookState{Line: termtext.OneLine(hk.String(), 0), Project: hk.Project,
			Approved: hk.Project && h.a.perms.HookApproved(hk.ID())}
	}
	return out, probs
}

func (h hookStates) ApproveProjectHooks() (int, error) {
	hs, _ := h.a.loadHooks()
	var ids []string
	for _, hk := range hs {
		if hk.Project && !h.a.perms.HookApproved(hk.ID()) {
			ids = append(ids, hk.ID())
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return len(ids), h.a.perms.ApproveHooks(ids...)
}

// hooksCmd lists the hooks a run here would use, and approves the
// project's: /hooks for the command line.
func hooksCmd(ctx context.Context, env Env, g *globalFlags) *cobra.Command {
	var approve bool
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "list the hooks of this directory; --approve lets the project's run",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := newApp(ctx, env, cmd, g)
			if err != nil {
				return err
			}
			defer a.Close()
			line := "/hooks"
			if approve {
				line = "/hooks approve"
			}
			reg := commands.New(commands.Deps{Hooks: hookStates{a}})
			res, err := reg.Run(ctx, commands.State{}, line)
			if err != nil {
				return err
			}
			if res.Text != "" {
				fmt.Fprintln(env.Stdout, res.Text)
			}
			if res.Report != nil {
				fmt.Fprint(env.Stdout, a.renderReport(res.Report))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&approve, "approve", false, "approve the project's hooks listed (a changed hook needs approving again)")
	return cmd
}

// hookedAgent is the TUI's agent with the hooks of a turn around it:
// SessionStart before a session's first turn of the run (source startup,
// resume or clear), UserPromptSubmit before each message (a block ends
// the turn with the hook's reason; added context is noted in the session
// first), Stop after it (a block makes the turn go on once, with the
// reason as the message). A hook's problem is shown in the turn as a
// notice, once.
type hookedAgent struct {
	*agent.Agent
	hooks *hooks.Runner
	store interface {
		Session(ctx context.Context, id string) (session.Session, error)
	}
	problems *hookProblems
	// state is shared by the agents of every model of the run.
	state *hookedState
	log   *slog.Logger
}

// hookedState is what the hooked agents of one run remember.
type hookedState struct {
	mu      sync.Mutex
	started map[string]bool // sessions whose SessionStart ran
	any     bool            // a SessionStart ran this run
}

// hookProblems are hook problems waiting to be shown.
type hookProblems struct {
	mu      sync.Mutex
	pending []string
}

func (p *hookProblems) add(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = append(p.pending, msg)
}

func (p *hookProblems) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.pending
	p.pending = nil
	return out
}

func (h *hookedAgent) StartMessage(ctx context.Context, sessionID string, m agent.UserMessage) <-chan agent.Event {
	out := make(chan agent.Event, 64)
	go func() {
		defer close(out)
		defer func() {
			if p := recover(); p != nil {
				h.log.Error("hooks: panic in a turn", "session", sessionID, "panic", p, "stack", string(debug.Stack()))
				select {
				case out <- agent.Event{Kind: agent.EventError, Err: fmt.Errorf("hooks: internal error: %v", p)}:
				default:
				}
			}
		}()
		// emit never blocks past the turn's end: once ctx is done an event
		// the front end has no room for is dropped (as the agent's own
		// emit does), and the inner turn is still drained to its end.
		emit := func(ev agent.Event) {
			select {
			case out <- ev:
			case <-ctx.Done():
				select {
				case out <- ev:
				default:
				}
			}
		}
		send := func(ev agent.Event) {
			for _, msg := range h.problems.take() {
				emit(agent.Event{Kind: agent.EventNotice, Text: termtext.OneLine(msg, 0)})
			}
			emit(ev)
		}
		note := func(event string, added []string) bool {
			if len(added) == 0 {
				return true
			}
			if err := h.Agent.Note(ctx, sessionID, agent.UserMessage{Text: hookContextNote(event, added)}); err != nil {
				send(agent.Event{Kind: agent.EventError, Err: err})
				return false
			}
			return true
		}
		if source := h.sessionStart(ctx, sessionID); source != "" {
			res := h.hooks.Run(ctx, hooks.SessionStart, source, hooks.Input{SessionID: sessionID, Source: source})
			if !note("SessionStart", res.Context) {
				return
			}
		}
		if h.hooks.Has(hooks.UserPromptSubmit) {
			res := h.hooks.Run(ctx, hooks.UserPromptSubmit, "", hooks.Input{SessionID: sessionID, Prompt: m.Text})
			if res.Block {
				send(agent.Event{Kind: agent.EventError, Err: fmt.Errorf("a UserPromptSubmit hook blocked the message: %s", res.Reason)})
				return
			}
			if !note("UserPromptSubmit", res.Context) {
				return
			}
		}
		done := h.forward(ctx, sessionID, m, send)
		if done == nil {
			return
		}
		if h.hooks.Has(hooks.Stop) {
			active := false
			res := h.hooks.Run(ctx, hooks.Stop, "", hooks.Input{SessionID: sessionID, StopHookActive: &active})
			if res.Block && ctx.Err() == nil {
				if done = h.forward(ctx, sessionID, agent.UserMessage{Text: res.Reason}, send); done == nil {
					return
				}
				active = true
				h.hooks.Run(ctx, hooks.Stop, "", hooks.Input{SessionID: sessionID, StopHookActive: &active})
			}
		}
		send(*done)
	}()
	return out
}

// forward passes one turn's events on, holding back its EventDone, which
// it returns (nil: the turn ended otherwise).
func (h *hookedAgent) forward(ctx context.Context, sessionID string, m agent.UserMessage, send func(agent.Event)) *agent.Event {
	var done *agent.Event
	for ev := range h.Agent.StartMessage(ctx, sessionID, m) {
		if ev.Kind == agent.EventDone {
			e := ev
			done = &e
			continue
		}
		send(ev)
	}
	return done
}

// sessionStart says which SessionStart a session's first turn of the run
// is (startup, resume, clear), or "" when it ran already or no hook
// wants it.
func (h *hookedAgent) sessionStart(ctx context.Context, sessionID string) string {
	if !h.hooks.Has(hooks.SessionStart) {
		return ""
	}
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	if h.state.started[sessionID] {
		return ""
	}
	h.state.started[sessionID] = true
	first := !h.state.any
	h.state.any = true
	if s, err := h.store.Session(ctx, sessionID); err == nil && s.MessageCount > 0 {
		return "resume"
	}
	if first {
		return "startup"
	}
	return "clear"
}
