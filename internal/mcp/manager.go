package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tools"
)

// State is where a server is in its life.
type State int

// States.
const (
	StateStarting   State = iota // connecting, or waiting to restart
	StateReady                   // connected: its tools can be called
	StateFailed                  // the last start or the connection failed; a restart is due
	StateDisabled                // enabled = false
	StateUnapproved              // a project server the user has not approved
)

// String names the state as /mcp shows it.
func (s State) String() string {
	switch s {
	case StateReady:
		return "ready"
	case StateFailed:
		return "failed"
	case StateDisabled:
		return "disabled"
	case StateUnapproved:
		return "needs approval"
	default:
		return "starting"
	}
}

// Event is what a front end is told about a server: its first failure
// in a row (a failure repeated while restarting is not told again), its
// recovery after one, and the end of the start a user's approval began
// (the user was told "it is starting" and waits to hear it is ready).
type Event struct {
	Server string
	State  State
	Err    string // StateFailed: why
	// Approved: the first start since Approve, which the user asked for.
	Approved bool
	Tools    int // StateReady: how many tools the server has
}

// String is the event as one line for the user.
func (e Event) String() string {
	switch {
	case e.State == StateFailed:
		return fmt.Sprintf("MCP server %s failed: %s; gencode restarts it (see /mcp)", e.Server, oneLine(e.Err))
	case e.Approved:
		return fmt.Sprintf("MCP server %s is ready: %s", e.Server, termtext.Count(e.Tools, "tool", "tools"))
	}
	return fmt.Sprintf("MCP server %s is running again", e.Server)
}

// Options configure a Manager.
type Options struct {
	Servers []ServerConfig
	// Approved says whether a project server (from .mcp.json) may start;
	// nil: none may.
	Approved func(ServerConfig) bool
	// Window is the model's context window in tokens, DeferRatio the share
	// of it MCP schemas may take before they are deferred (0:
	// DefaultDeferRatio; negative: never defer).
	Window     int
	DeferRatio float64
	// Count measures text in tokens (nil: len/4).
	Count func(string) int
	// Notify is told of failures and recoveries (nil: nobody). It must not
	// block.
	Notify func(Event)
	// Changed is called, silently, when what a server offers changed (it
	// started, or was revoked): a front end measures its figures again
	// (nil: nobody). It must not block.
	Changed func()
	// Logger logs starts, failures and recovered panics (nil: discard).
	Logger *slog.Logger
	// Getenv expands ${VAR} in commands, env, URLs and headers (nil:
	// os.LookupEnv); Environ is the environment of stdio servers, without
	// provider keys (nil: os.Environ()).
	Getenv  func(string) (string, bool)
	Environ []string
	// Backoff is the first wait before a restart (0: 1s); it doubles up to
	// MaxBackoff (0: 30s).
	Backoff, MaxBackoff time.Duration
	// Connect makes a server's transport; nil: stdio, streamable HTTP or
	// SSE from its config. Tests connect in-process servers with it.
	Connect func(ctx context.Context, c ServerConfig) (sdk.Transport, error)
}

// Manager owns the servers of one gencode process: Start launches them,
// Close stops them and waits for every goroutine it started.
type Manager struct {
	opts    Options
	client  *sdk.Client
	servers []*server

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	exposed []exposedTool   // in the order the model got them; only grows
	isExp   map[string]bool // names in exposed
	// counted is ExposedTokens of the first countedN exposed tools.
	counted, countedN int
	deferred          bool // sticky: MCP tools are reached through SearchMcpTools
	// loaded are the tools whose schema the model was given in a message
	// (SearchMcpTools' load): CallMcpTool runs them.
	loaded map[string]bool
	// schemas are the input schemas proxied calls were checked against.
	schemas map[string]checkedSchema
}

// server is one configured server and its live connection.
type server struct {
	cfg ServerConfig

	mu        sync.Mutex
	state     State
	lastErr   string
	session   *sdk.ClientSession
	guard     *tools.ProcessGuard // the session's processes (stdio), ended with it
	tools     []toolEntry
	resources bool
	prompts   []*sdk.Prompt
	ready     chan struct{} // closed when a start attempt ends (ready or failed)
	changed   chan struct{} // the server said its tool list changed (buffered 1)
	reported  bool          // the current run of failures was told
	approved  bool          // started by Approve: its first start is told
	restarts  int
	since     time.Time
	ctx       context.Context    // the run's; ends at Close or Stop
	stop      context.CancelFunc // ends the run (nil: not running)
}

// New returns a Manager for opts; nothing runs until Start.
func New(opts Options) *Manager {
	if opts.DeferRatio == 0 {
		opts.DeferRatio = DefaultDeferRatio
	}
	if opts.Count == nil {
		opts.Count = func(s string) int { return len(s) / 4 }
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Getenv == nil {
		opts.Getenv = os.LookupEnv
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	m := &Manager{opts: opts, isExp: map[string]bool{}, loaded: map[string]bool{}, schemas: map[string]checkedSchema{}}
	m.client = sdk.NewClient(&sdk.Implementation{Name: "gencode", Version: "1"}, &sdk.ClientOptions{
		Capabilities:           &sdk.ClientCapabilities{},
		ToolListChangedHandler: m.toolsChanged,
	})
	for _, c := range opts.Servers {
		s := &server{cfg: c, ready: make(chan struct{}), changed: make(chan struct{}, 1)}
		switch {
		case c.Disabled:
			s.state = StateDisabled
		case c.Project && (opts.Approved == nil || !opts.Approved(c)):
			s.state = StateUnapproved
		case c.Validate() != nil:
			s.state, s.lastErr = StateFailed, c.Validate().Error()
		}
		if s.state != StateStarting {
			close(s.ready)
		}
		m.servers = append(m.servers, s)
	}
	return m
}

// Start launches every enabled, approved server in the background and
// returns at once. Each server's goroutine ends when ctx ends or at Close.
func (m *Manager) Start(ctx context.Context) {
	m.ctx, m.cancel = context.WithCancel(ctx)
	for _, s := range m.servers {
		s.mu.Lock()
		if s.state == StateStarting {
			m.launch(s)
		}
		s.mu.Unlock()
	}
}

// launch starts s's goroutine. Call with s.mu held.
func (m *Manager) launch(s *server) {
	s.ctx, s.stop = context.WithCancel(m.ctx)
	m.wg.Add(1)
	go m.run(s)
}

// Approve starts a project server the user just approved (the caller
// stores the approval). It is an error for a server that is not waiting
// for approval.
func (m *Manager) Approve(name string) error {
	s := m.byName(name)
	if s == nil {
		return fmt.Errorf("no mcp server %s", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateUnapproved {
		return fmt.Errorf("mcp server %s does not wait for approval (it is %s)", name, s.state)
	}
	if m.ctx == nil {
		return fmt.Errorf("mcp server %s: the servers are not started", name)
	}
	s.state, s.ready, s.approved = StateStarting, make(chan struct{}), true
	m.launch(s)
	return nil
}

// Unapprove stops a project server whose approval was revoked.
func (m *Manager) Unapprove(name string) error {
	s := m.byName(name)
	if s == nil || !s.cfg.Project {
		return fmt.Errorf("no project mcp server %s", name)
	}
	s.mu.Lock()
	stop, cs := s.stop, s.session
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	if cs != nil {
		_ = cs.Close() // ends its process; the run loop sees its context ended
	}
	s.mu.Lock()
	s.state, s.session, s.tools, s.prompts, s.resources, s.approved = StateUnapproved, nil, nil, nil, false, false
	select {
	case <-s.ready:
	default:
		close(s.ready)
	}
	s.mu.Unlock()
	if m.opts.Changed != nil {
		m.opts.Changed()
	}
	return nil
}

// Close stops every server (closing its connection ends its process) and
// waits for the goroutines Start began.
func (m *Manager) Close() {
	if m.cancel != nil {
		m.cancel()
	}
	for _, s := range m.servers {
		s.mu.Lock()
		cs := s.session
		s.mu.Unlock()
		if cs != nil {
			_ = cs.Close() // ends the process or the HTTP session; nothing to tell
		}
	}
	m.wg.Wait()
}

// run keeps s connected until the Manager's context ends: connect, wait
// for the connection to end, then restart after a growing wait.
func (m *Manager) run(s *server) {
	defer m.wg.Done()
	defer func() {
		if r := recover(); r != nil {
			m.opts.Logger.Error("mcp server goroutine panicked", "server", s.cfg.Name, "panic", r, "stack", string(debug.Stack()))
			m.fail(s, fmt.Errorf("internal error: %v", r))
		}
	}()
	s.mu.Lock()
	ctx := s.ctx
	s.mu.Unlock()
	backoff := m.opts.Backoff
	for {
		cs, err := m.connect(ctx, s)
		if err == nil {
			backoff = m.opts.Backoff
			err = m.serve(ctx, s, cs)
			m.endProcesses(s, cs)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				err = errors.New("the server closed the connection")
			}
			err = fmt.Errorf("server exited: %w", err)
		}
		if ctx.Err() != nil {
			return
		}
		m.fail(s, err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, m.opts.MaxBackoff)
		s.mu.Lock()
		s.restarts++
		s.state = StateStarting
		s.mu.Unlock()
	}
}

// serve waits for s's connection to end, listing its tools again when
// the server says they changed. The goroutine it starts waits for the
// session and ends with it (every way out of run closes the session).
func (m *Manager) serve(ctx context.Context, s *server, cs *sdk.ClientSession) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				m.opts.Logger.Error("mcp session wait panicked", "server", s.cfg.Name, "panic", r, "stack", string(debug.Stack()))
				done <- fmt.Errorf("internal error: %v", r)
			}
		}()
		done <- cs.Wait()
	}()
	for {
		select {
		case err := <-done:
			return err
		case <-s.changed:
			lctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
			listed, err := m.listTools(lctx, s.cfg, cs)
			cancel()
			if err != nil {
				m.opts.Logger.Warn("mcp tools changed; listing them failed", "server", s.cfg.Name, "err", err)
				continue
			}
			s.mu.Lock()
			if s.session == cs {
				s.tools = listed
			}
			s.mu.Unlock()
			m.opts.Logger.Info("mcp tools changed", "server", s.cfg.Name, "tools", len(listed))
		}
	}
}

// toolsChanged is the SDK's notice that a server's tool list changed: its
// run loop lists them again (never here, on the connection's goroutine).
func (m *Manager) toolsChanged(_ context.Context, req *sdk.ToolListChangedRequest) {
	for _, s := range m.servers {
		s.mu.Lock()
		mine := s.session != nil && s.session == req.Session
		s.mu.Unlock()
		if mine {
			select {
			case s.changed <- struct{}{}:
			default: // a listing is due already
			}
			return
		}
	}
}

// connect starts s and lists what it offers; s is ready when it returns nil.
func (m *Manager) connect(runCtx context.Context, s *server) (*sdk.ClientSession, error) {
	t, guard, err := m.transport(runCtx, s.cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(runCtx, s.cfg.timeout())
	defer cancel()
	cs, err := m.client.Connect(ctx, t, nil)
	if ct, ok := t.(*sdk.CommandTransport); ok && ct.Command.Process != nil {
		guard.Started(ct.Command.Process.Pid)
	}
	if err != nil {
		guard.End()
		return nil, fmt.Errorf("start: %w", err)
	}
	listed, err := m.listTools(ctx, s.cfg, cs)
	if err != nil {
		_ = cs.Close()
		guard.End()
		return nil, fmt.Errorf("list tools: %w", err)
	}
	var prompts []*sdk.Prompt
	caps := cs.InitializeResult().Capabilities
	if caps != nil && caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				break // prompts are a convenience: a server that fails to list them still runs
			}
			prompts = append(prompts, p)
		}
	}
	s.mu.Lock()
	if runCtx.Err() != nil { // stopped while starting
		s.mu.Unlock()
		_ = cs.Close()
		guard.End()
		return nil, runCtx.Err()
	}
	s.session, s.tools, s.prompts, s.guard = cs, listed, prompts, guard
	s.resources = caps != nil && caps.Resources != nil
	recovered, approved := s.reported, s.approved
	s.state, s.lastErr, s.reported, s.approved, s.since = StateReady, "", false, false, time.Now()
	close(s.ready)
	s.mu.Unlock()
	m.opts.Logger.Info("mcp server ready", "server", s.cfg.Name, "tools", len(listed))
	if (recovered || approved) && m.opts.Notify != nil {
		m.opts.Notify(Event{Server: s.cfg.Name, State: StateReady, Approved: approved, Tools: len(listed)})
	}
	if m.opts.Changed != nil {
		m.opts.Changed()
	}
	return cs, nil
}

// endProcesses ends what is left of the processes of s's session cs
// once the session is over (the server's group and what it tagged): the
// server itself has had its stdin closed and its signals.
func (m *Manager) endProcesses(s *server, cs *sdk.ClientSession) {
	_ = cs.Close() // ended already, or ends the process now; nothing to tell
	s.mu.Lock()
	g := s.guard // this session's: the next is made after this, by the same goroutine
	s.guard = nil
	s.mu.Unlock()
	g.End()
}

// fail records s's failure; the first of a run of failures is told.
func (m *Manager) fail(s *server, err error) {
	s.mu.Lock()
	if s.session != nil {
		_ = s.session.Close() // already gone; closing frees the transport
	}
	s.session, s.state, s.lastErr = nil, StateFailed, oneLine(err.Error())
	tell := !s.reported
	s.reported = true
	select {
	case <-s.ready:
	default:
		close(s.ready)
	}
	// The next attempt's: a call may wait a moment for the restart.
	s.ready = make(chan struct{})
	msg := s.lastErr
	s.mu.Unlock()
	m.opts.Logger.Warn("mcp server failed", "server", s.cfg.Name, "err", msg)
	if tell && m.opts.Notify != nil {
		m.opts.Notify(Event{Server: s.cfg.Name, State: StateFailed, Err: msg})
	}
}

// transport makes the transport for c; for a stdio server, with the
// guard that ends its processes (nil for the others).
func (m *Manager) transport(ctx context.Context, c ServerConfig) (sdk.Transport, *tools.ProcessGuard, error) {
	if m.opts.Connect != nil {
		t, err := m.opts.Connect(ctx, c)
		return t, nil, err
	}
	ex := func(s string) string { return expandVars(s, m.opts.Getenv) }
	headers := map[string]string{}
	for k, v := range c.Headers {
		headers[k] = ex(v)
	}
	hc := &http.Client{Transport: headerTransport{headers}}
	switch c.transport() {
	case "http":
		return &sdk.StreamableClientTransport{Endpoint: ex(c.URL), HTTPClient: hc, MaxRetries: -1}, nil, nil
	case "sse":
		return &sdk.SSEClientTransport{Endpoint: ex(c.URL), HTTPClient: hc}, nil, nil
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = ex(a)
	}
	cmd := exec.Command(ex(c.Command), args...)
	cmd.Env = append([]string{}, m.opts.Environ...)
	for k, v := range c.Env {
		cmd.Env = append(cmd.Env, k+"="+ex(v))
	}
	cmd.Stderr = nil // a server's log is not ours to show
	// Its own process group, which dies with gencode however gencode
	// dies, the children a wrapper (npx, uvx) starts included.
	guard := tools.Guard(cmd)
	return &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, guard, nil
}

// headerTransport adds the configured headers to every request.
type headerTransport struct{ h map[string]string }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.h {
			r.Header.Set(k, v)
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// byName is the configured server called name.
func (m *Manager) byName(name string) *server {
	for _, s := range m.servers {
		if s.cfg.Name == name {
			return s
		}
	}
	return nil
}

// awaitReady waits within ctx for s's start attempt to end, and returns
// its session, or why there is none.
func (s *server) awaitReady(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	ready, state := s.ready, s.state
	s.mu.Unlock()
	if state == StateFailed {
		// A restart is due: wait for it a little, never a whole timeout.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, restartWait)
		defer cancel()
	}
	select {
	case <-ready:
	case <-ctx.Done():
		if state == StateFailed {
			break // said below, with the reason
		}
		return nil, fmt.Errorf("mcp server %s is still starting", s.cfg.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case StateReady:
		return s.session, nil
	case StateDisabled, StateUnapproved:
		return nil, errors.New(s.refusal(s.state))
	default:
		return nil, fmt.Errorf("mcp server %s is not running (%s); gencode restarts it", s.cfg.Name, s.lastErr)
	}
}

// refusal says why s's tools do not run in state (disabled or
// unapproved), and what would make them.
func (s *server) refusal(state State) string {
	if state == StateDisabled {
		return fmt.Sprintf("mcp server %s is disabled in the config", s.cfg.Name)
	}
	return fmt.Sprintf("mcp server %s comes from the project's %s and is not approved; the user can approve it in the TUI with /mcp approve %s", s.cfg.Name, ProjectFile, s.cfg.Name)
}

// restartWait is how long a call to a failed server waits for its
// restart before it is answered with the failure.
const restartWait = 3 * time.Second

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
