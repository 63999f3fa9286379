package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/crash"
	"github.com/gencode/gencode/internal/hooks"
	"github.com/gencode/gencode/internal/instructions"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/logfile"
	"github.com/gencode/gencode/internal/mcp"
	"github.com/gencode/gencode/internal/models"
	"github.com/gencode/gencode/internal/permstore"
	"github.com/gencode/gencode/internal/pricing"
	"github.com/gencode/gencode/internal/redact"
	"github.com/gencode/gencode/internal/sandbox"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tokens"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/transcript"
	"github.com/gencode/gencode/internal/view"
	"github.com/gencode/gencode/internal/window"
)

// defaultLocalServers are the usual loopback ports of local
// OpenAI-compatible servers: Ollama, LM Studio, llama.cpp.
var defaultLocalServers = []string{
	"http://127.0.0.1:11434/v1",
	"http://127.0.0.1:1234/v1",
	"http://127.0.0.1:8080/v1",
}

// app is one run's wiring. It owns the store and closes it.
type app struct {
	env    Env
	cfg    config.Config
	store  *session.Store
	cwd    string
	tokens *tokens.Cache
	stderr io.Writer
	// log receives what the user is not shown (background failures) and,
	// with --debug, more; logFile is closed last.
	log     *slog.Logger
	logFile *logfile.File
	// stderrMu serializes what the turn and the summarizer's goroutine
	// write to stderr.
	stderrMu sync.Mutex
	// instrOnce guards instr: the instruction files are read once a run,
	// so every agent of the run (after /model too) sends the same prompt.
	instrOnce sync.Once
	instr     instructions.Set
	// perms are the permission rules saved for the project (the working
	// directory): every tool set of the run checks them.
	perms *permstore.Store
	// mcp are the user's MCP servers of this run (nil: none configured),
	// started by the TUI and print mode before their agents.
	mcp *mcp.Manager
	// sandbox confines the run's shell commands (or says why nothing does).
	sandbox *sandbox.Sandbox
	// windows asks the endpoint's server for each model's real window,
	// once a run per model.
	windows *window.Prober
	// raiseCommand is the slash command the raise hint offers (the TUI's
	// /ollama-window); "" in print mode, which has no slash commands.
	raiseCommand string
	// redact takes the key and the secrets the summarizer's rules find
	// out of a text: every error shown or logged goes through it.
	redact func(string) string
	// hooks runs the user's hooks (nil: none); set before the agents
	// are made, whose tool calls it wraps.
	hooks *hooks.Runner
}

// newSandbox is the sandbox of a run in cwd: the project, the temp dir
// and the configured dirs writable; gencode's config, data and state
// dirs (and a --config file elsewhere) never.
func newSandbox(env Env, cfg config.Config, cwd string) *sandbox.Sandbox {
	home := env.Getenv("HOME")
	var writable []string
	for _, w := range cfg.Sandbox.Writable {
		if w == "~" || strings.HasPrefix(w, "~/") {
			if home == "" {
				continue // no home to expand it against: not granted
			}
			w = filepath.Join(home, strings.TrimPrefix(w, "~"))
		}
		writable = append(writable, w)
	}
	tmp := env.Getenv("TMPDIR")
	if tmp == "" {
		tmp = os.TempDir()
	}
	protected := []string{filepath.Dir(config.DefaultPath(env.Getenv)), cfg.DataDir, config.StateDir(env.Getenv)}
	if cfg.File != "" {
		protected = append(protected, cfg.File)
	}
	exe := env.Executable
	if exe == "" {
		exe = sandbox.Self()
	}
	return sandbox.New(sandbox.Config{
		Enabled: cfg.Sandbox.Enabled, Writable: writable, Network: cfg.Sandbox.Network, AutoAllow: cfg.Sandbox.AutoAllow,
		WorkDir: cwd, TempDir: tmp, Protected: protected, Executable: exe,
	}, sandbox.Probe())
}

// sandboxNotices say which sandbox is in force, once at start (see
// sandbox.Notices).
func (a *app) sandboxNotices() []string {
	var out []string
	for _, n := range a.sandbox.Notices() {
		out = append(out, "sandbox: "+termtext.OneLine(n, 0))
	}
	return out
}

// notices are what the user should know before the first turn: the
// instruction files' problems and a permission rules file that cannot be
// read.
func (a *app) notices(ag *agent.Agent) []string {
	out := a.instructionNotices(ag)
	if err := a.perms.Problem(); err != nil {
		out = append(out, termtext.OneLine(err.Error(), 0))
	}
	return out
}

// instructionNotices are what the user should know of the instruction
// files: those that could not be read or were cut, and a warning when they
// take more than a quarter of the window. It counts tokens: call it off
// the first frame.
func (a *app) instructionNotices(ag *agent.Agent) []string {
	set := a.instructions()
	var out []string
	for _, p := range set.Problems {
		out = append(out, termtext.OneLine(p, 0))
	}
	if w := commands.InstructionsWarning(ag.InstructionTokens(), ag.Window(), a.instructionNames()); w != "" {
		out = append(out, termtext.OneLine(w, 0))
	}
	return out
}

// instructionNames are the instruction files as /context names them.
func (a *app) instructionNames() []string {
	var out []string
	for _, f := range a.instructions().Files {
		out = append(out, f.Shown)
	}
	return out
}

// prices is the price table: the built-in list prices and the config's
// [pricing].
func (a *app) prices() pricing.Table {
	over := make(map[string]pricing.Price, len(a.cfg.Pricing))
	for model, p := range a.cfg.Pricing {
		in, cached, out := p.Values()
		over[model] = pricing.Price{Input: in, CachedInput: cached, Output: out}
	}
	return pricing.New(over)
}

// instructions are the user's and the project's AGENTS.md files, read
// once a run, with the summarizer's secret redaction run over them: they
// go into every request, and a repository's file may hold (or link to)
// anything.
func (a *app) instructions() instructions.Set {
	a.instrOnce.Do(func() {
		a.instr = instructions.Load(a.cwd, filepath.Dir(config.DefaultPath(a.env.Getenv))).Redact(a.redactInstructions)
	})
	return a.instr
}

// privateDirs are gencode's own config, data and state directories, and
// a config file named with --config: outside every project for the
// tools, also when the working directory holds them ($HOME, a dotfiles
// repository), so that a Write cannot become a permission rule.
func (a *app) privateDirs() []string {
	out := []string{filepath.Dir(config.DefaultPath(a.env.Getenv)), a.cfg.DataDir, config.StateDir(a.env.Getenv)}
	if a.cfg.File != "" {
		out = append(out, a.cfg.File)
	}
	return slices.DeleteFunc(out, func(d string) bool { return d == "" || d == "." })
}

// redactInstructions redacts instruction text: the configured API key
// literally (as the tools' results), then every secret the summarizer's
// rules find.
func (a *app) redactInstructions(s string) (string, int) {
	n := 0
	if key := a.cfg.APIKey; len(key) >= 8 { // shorter ones are placeholders ("none", "local")
		n = strings.Count(s, key)
		s = strings.ReplaceAll(s, key, redactedKey)
	}
	s, m := redact.Redact(s)
	return s, n + m
}

// newApp wires one run. Reading commands pass session.ForReading: a data
// directory that cannot be written is then read read-only.
func newApp(ctx context.Context, env Env, cmd *cobra.Command, g *globalFlags, opts ...session.Option) (*app, error) {
	cfg, err := loadConfig(env, cmd, g)
	if err != nil {
		return nil, err
	}
	cwd, err := env.Getwd()
	if err != nil {
		return nil, fmt.Errorf("find working directory: %w", err)
	}
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(env.Stderr, "gencode: warning: "+termtext.OneLine(w, 0))
	}
	// The meter adds the view up from what the store keeps at append,
	// classified by the view policy's rule.
	// A summary's block is stored rendered by the view's renderer.
	opts = append([]session.Option{session.WithClassifier(view.Classify), session.WithRenderer(view.Renderer)}, opts...)
	store, err := session.Open(ctx, cfg.DataDir, opts...)
	if err != nil {
		return nil, err
	}
	if n := store.Notice(); n != "" {
		fmt.Fprintln(env.Stderr, "gencode: warning: the data directory is read-only: "+n)
	}
	redact := secretRedactor(cfg.APIKey, cfg.BaseURLUserinfo)
	if env.screen != nil {
		env.screen.redact = redact
	}
	log, logFile := openLog(env, cfg, g.debug)
	log.Info("start", "command", cmd.CommandPath(), "cwd", cwd, "data_dir", cfg.DataDir, "model", cfg.Model)
	return &app{env: env, cfg: cfg, store: store, cwd: cwd, tokens: &tokens.Cache{}, stderr: env.Stderr,
		log: log, logFile: logFile, perms: permstore.Open(filepath.Dir(config.DefaultPath(env.Getenv)), cwd), redact: redact,
		sandbox: newSandbox(env, cfg, cwd), windows: window.New(&http.Client{Transport: llm.Transport()}, env.WindowProbeTimeout)}, nil
}

// Close reports damage, closes the store, then the log.
func (a *app) Close() {
	a.reportDamage()
	if err := a.store.Close(); err != nil {
		a.log.Warn("close the session store", "err", err)
	}
	a.log.Debug("exit")
	if a.logFile != nil {
		_ = a.logFile.Close() // nowhere left to say it
	}
}

// window is the context window for a model: its [models."NAME"] table's,
// else the top-level context_window, else the known table.
func (a *app) window(model string) int {
	if w := a.cfg.ModelSettings(model).ContextWindow; w > 0 {
		return w
	}
	w, _ := models.Window(model)
	return w
}

// requestSettings is what a model's table adds to each request to it.
type requestSettings struct {
	maxTokens int
	effort    string // "" for a model not known to take it
	extra     map[string]any
}

// requestsFor turns a model's settings into what its requests carry:
// reasoning_effort only for the models known to take it (others refuse
// it or ignore it; extra.reasoning_effort sends it anyway).
func requestsFor(ms config.ModelSettings) requestSettings {
	rs := requestSettings{maxTokens: ms.MaxTokens, extra: ms.Extra}
	if models.TakesReasoningEffort(ms.Model) {
		rs.effort = ms.ReasoningEffort
	}
	return rs
}

// client resolves the endpoint and returns an LLM client. With neither an
// API key nor a base URL it looks for a local server and says so.
func (a *app) client(ctx context.Context) (*llm.Client, error) {
	if a.cfg.BaseURL == "" && a.cfg.APIKey == "" {
		url, model, ok := a.detectLocal(ctx)
		if !ok {
			return nil, errNoEndpoint
		}
		a.cfg.BaseURL = url
		a.cfg.APIKey = "local"
		msg := "no OPENAI_API_KEY set; using the local server at " + url
		if model != "" && a.cfg.Sources["model"] == "" {
			a.cfg.Model = model
			msg += " with model " + model
		}
		fmt.Fprintln(a.stderr, "gencode: "+msg)
	}
	key := a.cfg.APIKey
	if key == "" {
		key = "none" // local servers ignore it; go-openai wants one
	}
	return llm.New(a.llmConfig(key)), nil
}

// llmConfig is the client configuration for the endpoint: its timeouts and
// answer cap come from the config, where 0 means none (llm's negative).
func (a *app) llmConfig(key string) llm.Config {
	orNone := func(n int64) int64 {
		if n == 0 {
			return -1
		}
		return n
	}
	return llm.Config{
		BaseURL: a.cfg.BaseURL, APIKey: key,
		HeaderTimeout:  time.Duration(orNone(int64(a.cfg.RequestHeaderTimeout.Duration))),
		IdleTimeout:    time.Duration(orNone(int64(a.cfg.RequestIdleTimeout.Duration))),
		MaxAnswerBytes: int(orNone(int64(a.cfg.MaxAnswerBytes))),
		// A provider's error may echo the key or the request's secrets:
		// the client redacts them where it builds the error.
		Redact: a.redact,
		OnRetry: func(attempt int, wait time.Duration, err error) {
			a.log.Info("model request failed; retrying", "attempt", attempt, "wait", wait, "err", err)
		},
	}
}

var errNoEndpoint = errors.New("no model endpoint: set OPENAI_API_KEY (or api_key in the config file), " +
	"or OPENAI_BASE_URL / --base-url for a local OpenAI-compatible server")

// localProbeTimeout bounds the whole search for a local server: the
// candidates are asked at once, so a port that accepts and never answers
// costs this once, not once per candidate.
const localProbeTimeout = 400 * time.Millisecond

// detectLocal asks every local server for its models at once (the client's
// own GET /models), and returns the first candidate, in order, that answers
// with a model list, and the model to use there when the configured one is
// not offered.
func (a *app) detectLocal(ctx context.Context) (url, model string, ok bool) {
	cands := a.env.LocalServers
	if cands == nil {
		cands = defaultLocalServers
	}
	timeout := a.env.LocalProbeTimeout
	if timeout <= 0 {
		timeout = localProbeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel() // the slower candidates are not waited for
	type answer struct {
		i   int
		ids []string
	}
	answers := make(chan answer, len(cands))
	for i, base := range cands {
		go func() {
			var ids []string
			defer func() { answers <- answer{i, ids} }() // a panic too: the others are waited for
			defer crash.Recover(a.log, "local server probe", "", nil)
			c := llm.New(llm.Config{BaseURL: base, APIKey: "local", MaxRetries: -1})
			if got, err := c.Models(ctx); err == nil {
				ids = got
			}
		}()
	}
	got := make([][]string, len(cands))
	done := make([]bool, len(cands))
	for range cands {
		r := <-answers
		got[r.i], done[r.i] = r.ids, true
		// The first candidate in order wins once every one before it failed.
		for i := range cands {
			if !done[i] {
				break
			}
			if len(got[i]) == 0 {
				continue
			}
			if slices.Contains(got[i], a.cfg.Model) {
				return cands[i], "", true
			}
			return cands[i], got[i][0], true
		}
	}
	return "", "", false
}

// pickSession returns the session to use: -r ID, -c (latest here), or new.
func (a *app) pickSession(ctx context.Context, cont bool, resume, model string) (session.Session, error) {
	switch {
	case resume != "":
		return a.store.Session(ctx, resume)
	case cont:
		s, err := a.store.LatestSession(ctx, a.cwd)
		if errors.Is(err, session.ErrNotFound) {
			return session.Session{}, &noSessionError{"no session to continue in " + a.cwd}
		}
		return s, err
	default:
		return a.store.CreateSession(ctx, a.cwd, model)
	}
}

// permissions are the tool modes of this run: the defaults, then [tools]
// allow and --allow. A name that is no tool is a usage error, which print
// mode and the TUI find before they start or store anything (a typo must
// not leave an empty session that -c would then take as the latest).
func (a *app) permissions(allow []string) (tools.Permissions, error) {
	perms := tools.DefaultPermissions()
	if err := perms.Allow(append(append([]string{}, a.cfg.Tools.Allow...), allow...)...); err != nil {
		return nil, &usageError{err}
	}
	return perms, nil
}

// newAgent wires an agent of model for a session's working directory.
func (a *app) newAgent(model string, client *llm.Client, asker tools.Asker, allow []string, yolo bool) (*agent.Agent, *tools.Set, error) {
	perms, err := a.permissions(allow)
	if err != nil {
		return nil, nil, err
	}
	counter := a.tokens.Counter(model)
	topts := tools.Options{
		WorkDir: a.cwd, Permissions: perms, Asker: asker, Yolo: yolo, Project: a.perms,
		OutputCapTokens: a.cfg.Tools.OutputCapTokens, CountTokens: counter.Count,
		// Never stored or sent back, whatever prints them (a config file, a script).
		Secrets: []string{a.cfg.APIKey, a.cfg.BaseURLUserinfo},
		Private: a.privateDirs(),
		Sandbox: a.sandbox,
	}
	if cp := a.checkpoints(context.Background()); cp != nil { // rewind.go
		topts.Checkpoints = cp
	}
	if a.mcp != nil {
		topts.Extension = a.mcp
	}
	ts := tools.New(topts)
	var late func() []tools.Definition
	if a.mcp != nil {
		late = ts.LateDefinitions
	}
	rs := requestsFor(a.cfg.ModelSettings(model))
	var runner interface {
		Definitions() []tools.Definition
		Run(ctx context.Context, c tools.Call) tools.Result
	} = a.withRecall(ts, counter.Count, a.window(model))
	if a.hooks.Has(hooks.PreToolUse) || a.hooks.Has(hooks.PostToolUse) {
		runner = hookedTools{inner: a.withRecall(ts, counter.Count, a.window(model)), hooks: a.hooks}
	}
	ag := agent.New(a.store, a.hooked(client), runner, counter, agent.Options{
		Model: model, WorkDir: a.cwd, MaxIterations: a.cfg.MaxIterations, Window: a.window(model),
		MaxTokens: rs.maxTokens, ReasoningEffort: rs.effort, Extra: rs.extra,
		WindowConfigured:     a.cfg.ContextWindow > 0,
		RaiseCommand:         a.raiseCommand,
		Instructions:         a.instructions().Render(),
		MaxToolCalls:         a.cfg.Tools.MaxCallsPerMessage,
		MaskToolOutputsAfter: a.cfg.Summarize.MaskToolOutputsAfter,
		LateTools:            late,
		Logger:               a.log,
	})
	if probe := a.windowProbe(model); probe != nil {
		ag.SetWindowProbe(probe, boundMemory{window.OpenMemory(filepath.Join(a.cfg.DataDir, "windows.json"), nil), a.cfg.BaseURL, model})
	}
	return ag, ts, nil
}

// boundMemory is the window memory of one endpoint and model.
type boundMemory struct {
	m           *window.Memory
	base, model string
}

func (b boundMemory) Recall(told int) (window.Remembered, bool) {
	return b.m.Recall(b.base, b.model, told)
}
func (b boundMemory) Keep(r window.Remembered) error { return b.m.Keep(b.base, b.model, r) }

// ollamaAPI is the endpoint's Ollama native API for /ollama-window; nil
// for OpenAI's own endpoint (any other server is found not to be Ollama
// when the command asks).
func (a *app) ollamaAPI() commands.OllamaAPI {
	if a.cfg.BaseURL == "" {
		return nil
	}
	return window.NewOllama(nil, a.cfg.BaseURL, a.cfg.APIKey)
}

// windowProbe asks the endpoint's server for model's window (package
// window); nil for OpenAI's own endpoint, which has nothing to tell.
func (a *app) windowProbe(model string) agent.WindowProbe {
	base := a.cfg.BaseURL
	if base == "" {
		return nil
	}
	key := a.cfg.APIKey
	return func(ctx context.Context) window.Result {
		a.panicAt("window")
		return a.windows.Probe(ctx, base, model, key)
	}
}

// printMode runs one user turn and prints the final answer; with
// --output-format json or stream-json it prints the run as JSON (see
// jsonout.go), and with --input-format stream-json it runs a turn for each
// user message read from stdin.
func (a *app) printMode(ctx context.Context, o rootOptions) error {
	if err := checkFormats(o); err != nil {
		return err
	}
	if _, err := a.permissions(o.allow); err != nil {
		return err
	}
	streamIn := o.inputFormat == formatStreamJSON
	prompt := o.prompt
	if prompt == "-" && !streamIn {
		b, err := io.ReadAll(io.LimitReader(a.env.Stdin, 64<<20))
		if err != nil {
			return fmt.Errorf("read prompt from stdin: %w", err)
		}
		prompt = string(b)
	}
	if prompt == "-" {
		prompt = ""
	}
	if strings.TrimSpace(prompt) == "" && !streamIn {
		return &usageError{errors.New("print mode needs a prompt: gencode -p \"PROMPT\"")}
	}
	// The user's own commands: "/review src/main.go" runs review.md.
	ucmds, probs := a.userCommands()
	for _, p := range probs {
		fmt.Fprintln(a.stderr, "gencode: warning: "+termtext.OneLine(p, 0))
	}
	reg := commands.New(commands.Deps{UserCommands: ucmds})
	if src := reg.ShadowedBy(prompt); src != "" {
		fmt.Fprintf(a.stderr, "gencode: warning: %s is a built-in command, which wins over %s: that file is not run (rename it); the line is sent as written\n",
			termtext.Label(strings.Fields(prompt)[0]), termtext.Label(src))
	}
	var cmdModel string // the model the user's command asks for ("": the config's)
	if uc, _, ok := reg.UserCommand(prompt); ok && uc.Model != "" {
		cmdModel = uc.Model
	}
	sess, err := a.pickSession(ctx, o.cont, o.resume, cmp.Or(cmdModel, a.cfg.Model))
	if err != nil {
		return err
	}
	// One writer per session: another gencode on it is waited for a few
	// seconds, then named in the error.
	lease, err := a.store.Lease(ctx, sess.ID, session.LeaseWait)
	if err != nil {
		return err
	}
	defer lease.Release()
	client, err := a.client(ctx)
	if err != nil {
		return err
	}
	// The model of this run: the command's, else the config's (which a
	// local server found by client may have named).
	model := cmp.Or(cmdModel, a.cfg.Model)
	// MCP servers start in the background: a turn that calls none of
	// their tools never waits for them. An unapproved project server
	// never starts here, and the user is told.
	var stopMCP func()
	a.mcp, stopMCP = a.newMCP(ctx, model, func(e mcp.Event) {
		a.stderrMu.Lock()
		fmt.Fprintln(a.stderr, "gencode: "+termtext.OneLine(e.String(), 0))
		a.stderrMu.Unlock()
	}, nil)
	defer stopMCP()
	for _, n := range unapprovedNotice(a.mcp) {
		fmt.Fprintln(a.stderr, "gencode: "+n)
	}
	var out *jsonRun
	if o.outputFormat != "" && o.outputFormat != formatText {
		out = newJSONRun(a.env.jsonOut(), o.outputFormat == formatStreamJSON, sess.ID, model)
	}
	a.hooks = a.newHooks(func(msg string) {
		a.stderrMu.Lock()
		fmt.Fprintln(a.stderr, "gencode: "+a.redact(termtext.OneLine(msg, maxMessageChars)))
		a.stderrMu.Unlock()
		if out != nil {
			out.hookProblemOnce(msg)
		}
	})
	// Print mode cannot ask: a project hook not approved yet never runs.
	a.hooks.TellUnapproved()
	ag, ts, err := a.newAgent(model, client, nil, o.allow, o.yolo)
	if err != nil {
		return err
	}
	pt := &printTurn{a: a, ag: ag, sessionID: sess.ID, out: out, continued: o.cont || o.resume != "", reg: reg, exp: expander(ts)}
	notify := a.notify
	if out != nil {
		notify = func(r summarize.Report) {
			a.notify(r)
			var facts transcript.Facts
			if r.Phase != summarize.Started {
				facts, _ = a.sessionFacts(context.WithoutCancel(ctx), r.SessionID) // none said is better than none at all
			}
			out.compaction(r, facts)
		}
	}
	sum := a.newSummarizer(model, ag, o.noSummary, a.compactionHooks(a.hooks, notify, func(_, text string) { pt.addContext(text) }))
	if sum != nil {
		defer sum.Close()
	}
	if notes := a.notices(ag); len(notes) > 0 {
		a.stderrMu.Lock()
		for _, n := range notes {
			fmt.Fprintln(a.stderr, "gencode: warning: "+n)
		}
		a.stderrMu.Unlock()
	}
	if a.bashMayRun(o) {
		a.stderrMu.Lock()
		for _, n := range a.sandboxNotices() {
			fmt.Fprintln(a.stderr, "gencode: "+n)
		}
		a.stderrMu.Unlock()
	}
	if out != nil {
		var names []string
		for _, t := range ag.Tools() {
			names = append(names, t.Function.Name)
		}
		out.emit(initEvent{Type: "init", SessionID: sess.ID, Model: model, Cwd: a.cwd, Window: ag.Window(), Tools: names})
	}
	source := "startup"
	if pt.continued {
		source = "resume"
	}
	if a.hooks.Has(hooks.SessionStart) {
		res := a.hooks.Run(ctx, hooks.SessionStart, source, hooks.Input{SessionID: sess.ID, Source: source})
		for _, c := range res.Context {
			pt.addContext(c)
		}
	}
	var final string
	var runErr error
	if prompt != "" {
		final, runErr = pt.run(ctx, prompt)
	}
	if streamIn && runErr == nil {
		final, runErr = pt.runStream(ctx, a.env.Stdin)
	}
	// The turn is over: the session is free for the next writer while a
	// background summary (which appends nothing) may still finish.
	lease.Release()
	if runErr == nil {
		if out == nil {
			fmt.Fprintln(a.env.textOut(), strings.TrimRight(final, "\n"))
		}
		if pt.denials.calls > 0 {
			runErr = &pt.denials
		}
	}
	if sum != nil {
		// The answer is out; a background summary in flight is waited for
		// (its summary serves the next run), a few seconds. Past that it
		// is canceled by Close: a summary is applied in one transaction,
		// so nothing is left half done, and the next run starts it again.
		a.waitSummary(ctx, sum, printModeSummaryWait)
	}
	if out != nil {
		if runErr != nil && !errors.As(runErr, new(*deniedError)) {
			out.failed(userMessage(runErr))
		}
		out.finish(a.spend(context.WithoutCancel(ctx), sess.ID), runErr, exitCode(runErr))
	}
	return runErr
}

// checkFormats refuses formats print mode does not write or read.
func checkFormats(o rootOptions) error {
	switch o.outputFormat {
	case "", formatText, formatJSON, formatStreamJSON:
	default:
		return &usageError{fmt.Errorf("--output-format %q: use text, json or stream-json", o.outputFormat)}
	}
	switch o.inputFormat {
	case "", formatText:
	case formatStreamJSON:
		if o.outputFormat != formatStreamJSON {
			return &usageError{errors.New("--input-format stream-json needs --output-format stream-json")}
		}
	default:
		return &usageError{fmt.Errorf("--input-format %q: use text or stream-json", o.inputFormat)}
	}
	return nil
}

// printTurn runs print mode's turns on one session.
type printTurn struct {
	a         *app
	ag        *agent.Agent
	sessionID string
	out       *jsonRun // nil: text output
	continued bool
	denials   deniedError
	// reg knows the user's commands, which exp expands.
	reg *commands.Registry
	exp commands.Expander

	mu      sync.Mutex
	context []string // hooks' added context, for the next turn
}

// addContext keeps text a SessionStart hook added, for the model before
// the next message (the summarizer's goroutine adds it after a
// compaction).
func (p *printTurn) addContext(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.context = append(p.context, text)
}

// run runs one turn, with the UserPromptSubmit and Stop hooks, and
// returns its final answer. A Stop hook that blocks makes the turn go on
// once, with its reason as the next message.
func (p *printTurn) run(ctx context.Context, prompt string) (string, error) {
	if uc, args, ok := p.reg.UserCommand(prompt); ok {
		expanded, err := uc.Expand(ctx, args, p.exp)
		if err != nil {
			return "", err
		}
		prompt = expanded
	}
	h := p.a.hooks
	if h.Has(hooks.UserPromptSubmit) {
		res := h.Run(ctx, hooks.UserPromptSubmit, "", hooks.Input{SessionID: p.sessionID, Prompt: prompt})
		if res.Block {
			return "", fmt.Errorf("a UserPromptSubmit hook blocked the prompt: %s", res.Reason)
		}
		for _, c := range res.Context {
			p.addContext(c)
		}
	}
	final, err := p.turn(ctx, prompt)
	if err != nil || !h.Has(hooks.Stop) {
		return final, err
	}
	active := false
	res := h.Run(ctx, hooks.Stop, "", hooks.Input{SessionID: p.sessionID, StopHookActive: &active})
	if !res.Block {
		return final, nil
	}
	final, err = p.turn(ctx, res.Reason)
	if err == nil {
		active = true
		h.Run(ctx, hooks.Stop, "", hooks.Input{SessionID: p.sessionID, StopHookActive: &active})
	}
	return final, err
}

// turn runs one turn of the agent on prompt.
func (p *printTurn) turn(ctx context.Context, prompt string) (string, error) {
	a := p.a
	p.mu.Lock()
	added := p.context
	p.context = nil
	p.mu.Unlock()
	if len(added) > 0 {
		if err := p.ag.Note(ctx, p.sessionID, agent.UserMessage{Text: hookContextNote("SessionStart/UserPromptSubmit", added)}); err != nil {
			return "", err
		}
	}
	if p.out != nil {
		p.out.turnStarted(prompt)
	}
	var final string
	// partial is the answer a broken stream left (the agent logs it as an
	// interrupted message): printed before the error, as the TUI keeps it.
	var partial string
	var runErr error
	for ev := range p.ag.Start(ctx, p.sessionID, prompt) {
		if p.out != nil {
			p.out.event(ev)
		}
		switch ev.Kind {
		case agent.EventNotice:
			// The server's window and how to raise it are said on a
			// session's first turn; a cut prompt on every turn it happens.
			if !ev.Standing || !p.continued {
				a.stderrMu.Lock()
				fmt.Fprintln(a.stderr, "gencode: "+termtext.OneLine(ev.Text, 0))
				a.stderrMu.Unlock()
			}
		case agent.EventDone:
			final = ev.Text
		case agent.EventError:
			runErr = a.locate(ev.Err)
		case agent.EventMessage:
			if m := ev.Message; m != nil && m.Role == session.RoleTool && m.Meta.Denied {
				p.denials.add(*m)
				a.reportDenied(*m)
			}
			if m := ev.Message; m != nil && m.Role == session.RoleAssistant {
				partial = ""
				if m.Meta.Interrupted {
					partial = m.Content
				}
			}
		}
	}
	if runErr != nil && p.out == nil && strings.TrimSpace(partial) != "" {
		// What arrived is printed; the error follows on stderr, exit 1
		// (JSON runs carried it as text events already).
		fmt.Fprintln(a.env.textOut(), strings.TrimRight(partial, "\n"))
	}
	p.continued = true
	return final, runErr
}

// runStream runs a turn for each user message of --input-format
// stream-json, until stdin ends or a turn fails.
func (p *printTurn) runStream(ctx context.Context, r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var final string
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		text, err := streamInput(line)
		if err != nil {
			return final, &usageError{err}
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		if final, err = p.run(ctx, text); err != nil {
			return final, err
		}
	}
	if err := sc.Err(); err != nil {
		return final, fmt.Errorf("read stream-json input: %w", err)
	}
	return final, nil
}

// exitCode is the exit code Run gives err.
func exitCode(err error) int {
	var ue *usageError
	var de *deniedError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue):
		return ExitUsage
	case errors.As(err, &de):
		return ExitDenied
	}
	return ExitError
}

// bashMayRun reports whether print mode may run a Bash command without a
// rule saved for the project: --allow, [tools] allow, --yolo or
// [sandbox] auto_allow. Then it says which sandbox holds the commands.
func (a *app) bashMayRun(o rootOptions) bool {
	if o.yolo || a.cfg.Sandbox.AutoAllow {
		return true
	}
	perms, err := a.permissions(o.allow)
	return err == nil && perms[tools.ToolBash] == tools.ModeAllow
}

// printModeSummaryWait bounds how long print mode waits, after printing
// the answer, for a background summary to be applied: a few seconds, so
// that a summarizer that never answers cannot hold every turn.
const printModeSummaryWait = 3 * time.Second

func (a *app) waitSummary(ctx context.Context, sum summarizer, limit time.Duration) {
	done := make(chan struct{})
	go func() {
		sum.Wait()
		close(done)
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-done:
	case <-ctx.Done():
	case <-t.C:
		a.stderrMu.Lock()
		fmt.Fprintf(a.stderr, "gencode: stopped a background summary still running after %s; the originals are kept (the next run starts it again)\n", limit)
		a.stderrMu.Unlock()
	}
}

// reportDenied tells a print-mode user on stderr that a tool call was
// denied: which call, and why (the reason the model was given).
func (a *app) reportDenied(m session.Message) {
	call := termtext.Label(m.Name)
	if arg := firstNonEmpty(m.Meta.Command, m.Meta.FilePath, m.Meta.Pattern); arg != "" {
		call += " (" + termtext.Label(arg) + ")"
	}
	why := termtext.Label(strings.TrimPrefix(m.Content, "permission denied: "))
	a.stderrMu.Lock()
	defer a.stderrMu.Unlock()
	fmt.Fprintf(a.stderr, "gencode: denied %s: %s\n", call, why)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// reportCompaction tells a print-mode user on stderr that history was
// compacted (stdout stays the answer alone).
func (a *app) reportCompaction(c *summarize.Report) {
	a.stderrMu.Lock()
	defer a.stderrMu.Unlock()
	switch c.Phase {
	case summarize.Finished:
		if s := c.Summary; s != nil {
			how := "summary"
			if c.Fallback {
				how = "deterministic summary (the summarizer failed)"
			}
			fmt.Fprintf(a.stderr, "gencode: compacted messages %d-%d into a %s: %d -> %d tokens\n",
				s.FromSeq, s.ToSeq, how, s.TokensBefore, s.TokensAfter)
		}
	case summarize.Failed:
		if c.Err != nil {
			fmt.Fprintf(a.stderr, "gencode: compaction failed, originals kept: %s\n", termtext.OneLine(a.locate(c.Err).Error(), maxMessageChars))
		}
	}
}

// userMessage is how an error is shown to the user: one line, saying what
// to do where that is known.
func userMessage(err error) string {
	var apiErr *llm.APIError
	var respErr *llm.ResponseError
	var amb *session.AmbiguousError
	switch {
	case errors.As(err, &amb):
		return ambiguousMessage(amb)
	case errors.As(err, &respErr):
		return "the endpoint did not answer like an OpenAI-compatible API; it sent " + sent(respErr) +
			" (check OPENAI_BASE_URL or base_url; redirects are not followed)"
	case errors.Is(err, llm.ErrAnswerTooLarge):
		return "the answer was cut: " + detail(err) +
			"; the part received is kept in the session (max_answer_bytes in the config sets the limit)"
	case errors.Is(err, llm.ErrTimeout):
		return "the model endpoint stopped answering: " + detail(err) +
			" (a slow model may need a larger request_header_timeout or request_idle_timeout in the config)"
	case errors.Is(err, llm.ErrContextOverflow):
		return "the conversation does not fit the model's context window, even after compaction: " + detail(err) +
			" (try /summarize, a model with a larger window, or context_window in the config)"
	case errors.Is(err, llm.ErrQuota):
		return "the provider says the account's quota is used up: " + detail(err)
	case errors.Is(err, llm.ErrRateLimited):
		return "rate limited by the provider, still after retrying: " + detail(err)
	case errors.Is(err, llm.ErrAuth):
		return "the endpoint refused the credentials: " + detail(err) + " (check OPENAI_API_KEY)"
	case errors.Is(err, llm.ErrUnreachable):
		return "cannot reach the model endpoint: " + detail(err) + " (check OPENAI_BASE_URL or base_url)"
	case errors.Is(err, agent.ErrMessageTooLarge):
		return detail(err)
	case errors.Is(err, session.ErrInUse):
		return detail(err) + "; wait for it, or use a new session"
	case errors.Is(err, session.ErrDiskFull):
		return diskFullMessage(err)
	case errors.Is(err, session.ErrCorrupt):
		return corruptMessage(err)
	case errors.Is(err, session.ErrReadOnly):
		return "cannot write the session store: " + detail(err) +
			" (sessions, history and export still read it; make the data directory writable, or use --data-dir)"
	case errors.Is(err, agent.ErrCanceled), errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &apiErr):
		return detail(err)
	}
	return termtext.OneLine(err.Error(), maxMessageChars)
}

func detail(err error) string { return termtext.OneLine(err.Error(), maxMessageChars) }

// maxMessageChars bounds an error said on stderr: it may carry what a
// server sent.
const maxMessageChars = 4000

// diskFullMessage says that the disk is full, where, and what the
// database said (SQLite calls a full disk "disk I/O error" when the WAL's
// shared memory cannot grow).
func diskFullMessage(err error) string {
	var se *session.StorageError
	if !errors.As(err, &se) {
		return "no space left on device: " + detail(err)
	}
	free := ""
	if se.Free >= 0 {
		free = fmt.Sprintf(" (%s free)", byteSize(se.Free))
	}
	return fmt.Sprintf("no space left on device: the disk holding %s is full%s; free some space and try again (%s)",
		se.Path, free, detail(err))
}

// byteSize is n bytes for a person: 0 B, 12 KB, 3.4 MB.
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%d KB", n>>10)
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
}

// sent says what an endpoint sent instead of an OpenAI answer: status,
// redirect target, content type and the first bytes, made printable.
func sent(e *llm.ResponseError) string {
	s := fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
	if e.Location != "" {
		s += ", redirect to " + termtext.OneLine(e.Location, 200)
	}
	if e.ContentType != "" {
		s += ", " + termtext.OneLine(e.ContentType, 100)
	}
	if h := termtext.OneLine(string(e.Head), 160); h != "" {
		s += fmt.Sprintf(", starting %q", h)
	}
	return s
}

// ambiguousMessage lists the sessions an id prefix matches, one a line,
// as `gencode sessions` does.
func ambiguousMessage(e *session.AmbiguousError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "session id %q is the start of more than one session; give more of it:", termtext.Label(e.Prefix))
	for _, s := range e.Matches {
		fmt.Fprintf(&b, "\n  %s  %s  %4d msgs  %s", s.ID, s.Updated.Format("2006-01-02 15:04"), s.MessageCount,
			termtext.OneLine(s.Title, 0))
	}
	if e.More {
		b.WriteString("\n  ... (gencode sessions lists them all)")
	}
	return b.String()
}
