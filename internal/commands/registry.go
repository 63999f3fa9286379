package commands

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/pricing"
	"github.com/gencode/gencode/internal/rewind"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/view"
)

// Store is the session store as the commands read it.
type Store interface {
	Session(ctx context.Context, id string) (session.Session, error)
	Sessions(ctx context.Context, limit int) ([]session.Session, error)
	LoadView(ctx context.Context, id string) (session.View, error)
	Messages(ctx context.Context, id string, from, to int64) ([]session.Message, error)
	// Each reads the log a page at a time (what may be long: the whole
	// unsummarized log of /history --full).
	Each(ctx context.Context, id string, from, to int64) iter.Seq2[session.Message, error]
	TailAfter(ctx context.Context, id string, after int64, n int) ([]session.Message, error)
	Summaries(ctx context.Context, id string, all bool) ([]session.Summary, error)
	UsageBySession(ctx context.Context, ids ...string) (map[string][]session.UsageTotal, error)
	LastTurnUsage(ctx context.Context, id string) ([]session.UsageTotal, error)
	// Tally and SetMaskTokens are what /context adds the view up from
	// (view.Policy.Measure).
	Tally(ctx context.Context, sessionID string, r session.TallyRule) (session.Tally, error)
	SetMaskTokens(ctx context.Context, sessionID string, counts map[int64]int) error
}

// SearchHit is one match of a history search.
type SearchHit struct {
	Seq     int64
	Role    string
	Tool    string
	Time    time.Time
	Snippet string
}

// SearchFunc finds messages in a session's whole log (the recall index);
// it returns the best hits and how many matched in all.
type SearchFunc func(ctx context.Context, sessionID, query string, limit int) ([]SearchHit, int, error)

// Deps is what the commands need from the rest of gencode.
type Deps struct {
	// Version is the binary's version line (gencode --version); /config
	// shows it first ("": not shown).
	Version string
	Store   Store
	Search  SearchFunc // nil: --search is not available
	Config  config.Config
	// Window returns a model's context window.
	Window func(model string) int
	// Keys is what /help lists after the commands: the front end's keys,
	// from its key map (nil: none).
	Keys []Section
	// Instructions names the instruction files (AGENTS.md) the system
	// prompt carries, as /context shows them.
	Instructions []string
	// Prices prices the tokens /cost shows (the zero Table: the built-in
	// list prices).
	Prices pricing.Table
	// Permissions are the rules saved for the project, which /config and
	// /permissions list (nil: none can be saved).
	Permissions ProjectPermissions
	// Models lists the model ids the endpoint serves (GET /v1/models),
	// which /model lists and checks names against; nil: not known.
	Models func(ctx context.Context) ([]string, error)
	// Ollama is the endpoint's Ollama native API, which /ollama-window
	// asks and creates models with (nil: the endpoint is OpenAI's own; any
	// other server is found not to be Ollama when asked).
	Ollama OllamaAPI
	// ModelsTimeout bounds the wait for Models (default 5 s): an endpoint
	// that does not answer never holds /model longer.
	ModelsTimeout time.Duration
	// Cwd is the working directory: /resume lists its sessions first.
	Cwd string
	// TakesReasoningEffort says whether a model is sent its table's
	// reasoning_effort, for /config to say so (nil: not said).
	TakesReasoningEffort func(model string) bool
	// UserCommands are the user's own commands (LoadUserCommands): after
	// the built-ins in /help, Tab completion and suggestions; a built-in
	// of the same name wins, and /help says so.
	UserCommands []UserCommand
	// Expander runs a user command's "!`cmd`" and "@path".
	Expander Expander
	// Hooks lists the directory's hooks and approves the project's for
	// /hooks (nil: none).
	Hooks Hooks
	// Sandbox says which sandbox holds the shell commands, or that none
	// does, and what follows (auto-allow, the network, limits), a line
	// each: /config and /permissions show it (nil: not shown).
	Sandbox []string
	// MCP are the user's MCP servers, for /mcp and the prompt commands
	// (nil: none configured).
	MCP MCPServers
	// Rewinder gives /rewind its session's rewinder (nil: /rewind is not
	// available).
	Rewinder func(ctx context.Context, sessionID string) (rewind.Rewinder, error)
}

// State is what one command acts on: the front end's session and model
// when the command was typed. It is passed to each Run, so commands in
// flight at once never see each other's.
type State struct {
	SessionID string
	Model     string
	// View is the view policy the session's agent builds its requests
	// with; /context measures with it and needs it.
	View *view.Policy
	// AwaitWindow, when set, waits until the server has said its window
	// (bounded), so that /context measures against it (nil: no wait).
	AwaitWindow func(context.Context)
}

// Command is one slash command.
type Command struct {
	Name       string
	Aliases    []string
	Usage      string // arguments, e.g. "[--full] [--search TEXT]"
	Summary    string
	ValueFlags map[string]bool
	run        func(ctx context.Context, r *Registry, st State, in Invocation) (Result, error)

	// helpHidden keeps a command out of /help's list (still run and
	// completed): /rewind until the TUI's picker and Esc Esc come.
	helpHidden bool
}

// Registry holds the slash commands. It does not change once made, so it
// is safe for concurrent use: front ends run commands in the background,
// each with its own State.
type Registry struct {
	deps Deps
	cmds []*Command
	user []UserCommand
}

// New returns the registry of gencode's slash commands.
func New(deps Deps) *Registry {
	if deps.Window == nil {
		deps.Window = func(string) int { return 8192 }
	}
	if deps.ModelsTimeout <= 0 {
		deps.ModelsTimeout = 5 * time.Second
	}
	r := &Registry{deps: deps}
	r.cmds = []*Command{
		{Name: "help", Aliases: []string{"?"}, Summary: "list the commands", run: runHelp},
		{Name: "summarize", Aliases: []string{"compact"}, Usage: "[focus text]", Summary: "compact the history now, optionally focused on a topic", run: runSummarize},
		{Name: "history", Usage: "[--full] [--expand N] [--search TEXT]", Summary: "summaries and recent messages; --expand N shows the originals behind summary N",
			ValueFlags: map[string]bool{"expand": true, "search": true, "limit": true}, run: runHistory},
		{Name: "context", Summary: "what fills the context window, in tokens", run: runContext},
		{Name: "cost", Summary: "tokens and cost of the last turn and of the session", run: runCost},
		{Name: "config", Summary: "effective settings and where each came from", run: runConfig},
		{Name: "permissions", Usage: "[revoke N]", Summary: "rules saved with \"always for this project\"; revoke N removes one", run: runPermissions},
		{Name: "hooks", Usage: "[approve]", Summary: "the hooks of this directory; approve lets the project's run", run: runHooks},
		{Name: "mcp", Usage: "[approve NAME | revoke NAME]", Summary: "MCP servers: state, tools, schema tokens; approve or revoke a project's server", run: runMCP},
		{Name: "init", Summary: "ask the model to write an AGENTS.md for this project", run: runInit},
		{Name: "sessions", Summary: "list sessions", run: runSessions},
		{Name: "resume", Usage: "[ID]", Summary: "switch to another session (no ID: pick one from a list)", run: runResume},
		{Name: "model", Usage: "[NAME]", Summary: "switch the model (no NAME: pick one of the endpoint's)", run: runModel},
		{Name: "ollama-window", Usage: "[TOKENS]", Summary: "Ollama: the model's window; TOKENS makes a copy with that window and switches to it", run: runOllamaWindow},
		{Name: "clear", Aliases: []string{"new"}, Summary: "start a new session (the current one is kept)", run: func(context.Context, *Registry, State, Invocation) (Result, error) {
			return Result{Action: ActionNewSession, Text: "Started a new session."}, nil
		}},
		{Name: "exit", Aliases: []string{"quit"}, Summary: "quit gencode", run: func(context.Context, *Registry, State, Invocation) (Result, error) {
			return Result{Action: ActionExit}, nil
		}},
	}
	r.cmds = append(r.cmds, rewindCommand()) // rewind.go
	r.user = append([]UserCommand(nil), deps.UserCommands...)
	r.markHidden()
	return r
}

// Commands lists the commands in help order.
func (r *Registry) Commands() []*Command { return r.cmds }

func (r *Registry) lookup(name string) *Command {
	for _, c := range r.cmds {
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

func (r *Registry) names() []string {
	out := make([]string, 0, len(r.cmds)+len(r.user))
	for _, c := range r.cmds {
		out = append(out, c.Name)
	}
	for _, c := range r.user {
		if c.Hidden == "" {
			out = append(out, c.Name)
		}
	}
	return out
}

// Complete returns the "/name" completions of a partial command line, for
// Tab completion and the hint line. A line past the name completes nothing.
func (r *Registry) Complete(prefix string) []string {
	if !strings.HasPrefix(prefix, "/") || strings.ContainsAny(prefix, " \t") {
		return nil
	}
	p := strings.ToLower(prefix[1:])
	var out []string
	for _, c := range r.cmds {
		if strings.HasPrefix(c.Name, p) {
			out = append(out, "/"+c.Name)
		}
	}
	for _, c := range r.user {
		if c.Hidden == "" && strings.HasPrefix(strings.ToLower(c.Name), p) {
			out = append(out, "/"+c.Name)
		}
	}
	if r.deps.MCP != nil && len(p) >= len("mcp_") {
		for _, c := range r.deps.MCP.PromptCommands() {
			if strings.HasPrefix(strings.ToLower(c), p) {
				out = append(out, "/"+c)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ErrUnknown is returned for a command that does not exist; the message
// suggests the closest one.
var ErrUnknown = errors.New("unknown command")

// Run parses and runs a command line for st: the session and model it
// acts on.
func (r *Registry) Run(ctx context.Context, st State, line string) (Result, error) {
	name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "/"), " ")
	cmd := r.lookup(strings.ToLower(name))
	if cmd == nil {
		if uc, args, ok := r.UserCommand(line); ok {
			return r.runUser(ctx, uc, args)
		}
		if res, ok, err := r.runMCPPrompt(ctx, name, line); ok || err != nil {
			return res, err
		}
		msg := fmt.Sprintf("/%s", name)
		if s, ok := closest(strings.ToLower(name), r.names()); ok {
			return Result{}, fmt.Errorf("%w %s: did you mean /%s? (/help lists them)", ErrUnknown, msg, s)
		}
		return Result{}, fmt.Errorf("%w %s (/help lists them)", ErrUnknown, msg)
	}
	in, err := Parse(line, cmd.ValueFlags)
	if err != nil {
		return Result{}, fmt.Errorf("/%s: %w", cmd.Name, err)
	}
	return cmd.run(ctx, r, st, in)
}

func runHelp(_ context.Context, r *Registry, _ State, _ Invocation) (Result, error) {
	rep := &Report{Title: "Commands"}
	sec := Section{}
	for _, c := range r.cmds {
		if c.helpHidden {
			continue
		}
		use := "/" + c.Name
		if c.Usage != "" {
			use += " " + c.Usage
		}
		sum := c.Summary
		if len(c.Aliases) > 0 {
			sum += " (also /" + strings.Join(c.Aliases, ", /") + ")"
		}
		sec.Lines = append(sec.Lines, fmt.Sprintf("%-44s %s", use, sum))
	}
	msg := Section{Title: "In a message", Lines: []string{
		fmt.Sprintf("%-18s %s", "!COMMAND", "run a shell command; its output goes with your next message"),
		fmt.Sprintf("%-18s %s", "@PATH", "attach a file after your text (tab completes the path)"),
	}}
	rep.Sections = append(append(append(rep.Sections, sec, msg), r.userHelp()...), r.deps.Keys...)
	return Result{Report: rep}, nil
}

func runSummarize(_ context.Context, _ *Registry, st State, in Invocation) (Result, error) {
	if st.SessionID == "" {
		return Result{Text: "Nothing to summarize: no session yet."}, nil
	}
	return Result{Action: ActionSummarize, Focus: in.Raw, SessionID: st.SessionID}, nil
}

func runResume(ctx context.Context, r *Registry, st State, in Invocation) (Result, error) {
	switch len(in.Args) {
	case 0:
		return r.pickSession(ctx, st)
	case 1:
	default:
		return Result{}, errors.New("usage: /resume [ID] (see /sessions)")
	}
	s, err := r.deps.Store.Session(ctx, in.Args[0])
	if err != nil {
		return Result{}, err
	}
	return resumed(s), nil
}

// resumed is what resuming s does, typed or picked.
func resumed(s session.Session) Result {
	return Result{Action: ActionResumeSession, SessionID: s.ID,
		Text: fmt.Sprintf("Resumed session %s (%d messages): %s", s.ID, s.MessageCount, s.Title)}
}

// pickLimit is how many sessions /resume lists.
const pickLimit = 50

// pickSession lists the latest sessions to resume one: those of the
// working directory first, each group latest first.
func (r *Registry) pickSession(ctx context.Context, st State) (Result, error) {
	list, err := r.deps.Store.Sessions(ctx, pickLimit)
	if err != nil {
		return Result{}, fmt.Errorf("list the sessions: %w", err)
	}
	if len(list) == 0 {
		return Result{Text: "No sessions yet."}, nil
	}
	here := func(s session.Session) bool { return r.deps.Cwd != "" && s.Cwd == r.deps.Cwd }
	sort.SliceStable(list, func(i, j int) bool { return here(list[i]) && !here(list[j]) })
	p := &Pick{Title: "Resume a session", Selected: -1}
	for i, s := range list {
		title := termtext.OneLine(s.Title, 80)
		if title == "" {
			title = "(untitled)"
		}
		detail := fmt.Sprintf("%s · %d msgs · %s", s.Updated.Local().Format("2006-01-02 15:04"), s.MessageCount, s.ID)
		switch {
		case s.ID == st.SessionID:
			detail += " · shown now"
		case p.Selected < 0:
			p.Selected = i
		}
		if !here(s) && s.Cwd != "" {
			detail += " · " + s.Cwd
		}
		p.Items = append(p.Items, Choice{Title: title, Detail: detail, Result: resumed(s)})
	}
	p.Selected = max(p.Selected, 0)
	return Result{Pick: p}, nil
}

// modelList asks the endpoint for its models, for at most ModelsTimeout.
func (r *Registry) modelList(ctx context.Context) ([]string, error) {
	if r.deps.Models == nil {
		return nil, errors.New("the endpoint's models are not known here")
	}
	ctx, cancel := context.WithTimeout(ctx, r.deps.ModelsTimeout)
	defer cancel()
	ids, err := r.deps.Models(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("no answer in %s", r.deps.ModelsTimeout)
	case err != nil:
		return nil, err
	case len(ids) == 0:
		return nil, errors.New("the endpoint lists no models")
	}
	return ids, nil
}

func runModel(ctx context.Context, r *Registry, st State, in Invocation) (Result, error) {
	switch len(in.Args) {
	case 0:
		return r.pickModel(ctx, st), nil
	case 1:
	default:
		return Result{}, errors.New("usage: /model [NAME]")
	}
	name := in.Args[0]
	ids, err := r.modelList(ctx)
	if err != nil {
		// Not known is not wrong: the switch goes ahead, said once.
		return Result{Action: ActionSetModel, Model: name,
			Text: fmt.Sprintf("Could not check %s against the endpoint's models (%s).", name, err)}, nil
	}
	if !slices.Contains(ids, name) {
		return Result{}, unknownModel(name, ids)
	}
	// Nothing is said yet: the front end says Switched once it has.
	return Result{Action: ActionSetModel, Model: name}, nil
}

// ErrUnknownModel is returned by /model NAME for a name the endpoint does
// not list.
var ErrUnknownModel = errors.New("unknown model")

// unknownModel refuses name, with the listed ids closest to it.
func unknownModel(name string, ids []string) error {
	near := closeMatches(name, ids, 5)
	if len(near) == 0 {
		return fmt.Errorf("%w %s: the endpoint does not list it (/model lists its %d models)", ErrUnknownModel, name, len(ids))
	}
	return fmt.Errorf("%w %s: the endpoint does not list it; close matches: %s (/model lists them all)",
		ErrUnknownModel, name, strings.Join(near, ", "))
}

// pickModel lists the endpoint's models with the one in use marked and
// selected; when the endpoint does not answer, the configured ones, and
// a line that says so.
func (r *Registry) pickModel(ctx context.Context, st State) Result {
	current := st.Model
	if current == "" {
		current = r.deps.Config.Model
	}
	res := Result{Pick: &Pick{Title: "Switch the model"}}
	ids, err := r.modelList(ctx)
	if err != nil {
		res.Text = fmt.Sprintf("Could not list the endpoint's models (%s): showing the configured ones.", err)
		ids = nil
		for _, m := range []string{current, r.deps.Config.Model} {
			if m != "" && !slices.Contains(ids, m) {
				ids = append(ids, m)
			}
		}
	} else {
		ids = slices.Clone(ids)
		slices.Sort(ids)
		if current != "" && !slices.Contains(ids, current) {
			ids = append([]string{current}, ids...)
		}
	}
	for i, id := range ids {
		title := id
		if id == current {
			title += "  (current)"
			res.Pick.Selected = i
		}
		res.Pick.Items = append(res.Pick.Items, Choice{Title: title, Result: Result{Action: ActionSetModel, Model: id}})
	}
	return res
}

// windowInForce is /config's row for the window the session's requests
// are planned with when the server gave or showed it: context_window
// above says what was configured (0: the table's), which is not what a
// server's 4,096 makes it.
func windowInForce(ctx context.Context, st State) ([]string, bool) {
	if st.View == nil {
		return nil, false
	}
	if st.AwaitWindow != nil {
		st.AwaitWindow(ctx)
	}
	src := st.View.WindowSource()
	if src == "" {
		return nil, false
	}
	return []string{"(in force) context window", termtext.Thousands(st.View.Window()), src}, true
}

// Switched is what a front end says once it switched to model.
func Switched(model string, window int) string {
	return fmt.Sprintf("Switched to %s (context window %s tokens).", model, termtext.Thousands(window))
}

func runSessions(ctx context.Context, r *Registry, st State, _ Invocation) (Result, error) {
	list, err := r.deps.Store.Sessions(ctx, 20)
	if err != nil {
		return Result{}, err
	}
	rep := &Report{Title: "Sessions", Footer: "/resume ID switches to one"}
	sec := Section{}
	for _, s := range list {
		mark := " "
		if s.ID == st.SessionID {
			mark = "*"
		}
		sec.Lines = append(sec.Lines, fmt.Sprintf("%s %s  %s  %4d msgs  %s", mark, s.ID, s.Updated.Format("01-02 15:04"), s.MessageCount, termtext.OneLine(s.Title, 60)))
	}
	if len(sec.Lines) == 0 {
		sec.Lines = []string{"no sessions yet"}
	}
	rep.Sections = []Section{sec}
	return Result{Report: rep}, nil
}

func runConfig(ctx context.Context, r *Registry, st State, _ Invocation) (Result, error) {
	rep := &Report{Title: "Configuration"}
	sec := Section{}
	if v := r.deps.Version; v != "" {
		sec.Rows = append(sec.Rows, []string{"version", v, "build"})
	}
	file := r.deps.Config.File
	for _, s := range r.deps.Config.Settings() {
		v := s.Value
		if v == "" {
			v = `""`
		}
		src := s.Source
		if line, ok := strings.CutPrefix(src, file+":"); ok && file != "" {
			// The footer names the file: the source says its line.
			src = "file:" + line
		}
		sec.Rows = append(sec.Rows, []string{s.Key, v, src})
	}
	if row, ok := windowInForce(ctx, st); ok {
		sec.Rows = append(sec.Rows, row)
	}
	rep.Sections = []Section{sec}
	if ms, ok := modelsSection(r, st); ok {
		rep.Sections = append(rep.Sections, ms)
	}
	if len(r.deps.Sandbox) > 0 {
		rep.Sections = append(rep.Sections, sandboxSection(r.deps.Sandbox))
	}
	if r.deps.Permissions != nil {
		rep.Sections = append(rep.Sections, permissionsSection(r.deps.Permissions))
	}
	if r.deps.Config.File != "" {
		rep.Footer = "file: " + r.deps.Config.File
	} else {
		rep.Footer = "no config file (defaults, env and flags only)"
	}
	return Result{Report: rep}, nil
}
