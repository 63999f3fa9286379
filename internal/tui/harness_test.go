package tui

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/view"
)

// fakeAgent replays scripted turns: each Start sends the next script's
// events and closes the channel. A script func may block (on ctx) to play
// a long turn.
type fakeAgent struct {
	mu      sync.Mutex
	scripts []func(ctx context.Context, ch chan<- agent.Event)
	started []string
	metas   []session.Meta
	model   string
	window  int
	fixed   int  // what MeasureContext adds to the view's stored counts
	learned bool // the window is one the server named
	notes   []note
	// probed, when set, is the window the server answers the probe with:
	// AwaitServerWindow applies it, as the agent's probe does.
	probed int
}

func (f *fakeAgent) StartMessage(ctx context.Context, _ string, m agent.UserMessage) <-chan agent.Event {
	f.mu.Lock()
	f.started = append(f.started, m.Text)
	f.metas = append(f.metas, m.Meta)
	var script func(context.Context, chan<- agent.Event)
	if len(f.scripts) > 0 {
		script, f.scripts = f.scripts[0], f.scripts[1:]
	}
	f.mu.Unlock()
	ch := make(chan agent.Event, 256)
	go func() {
		defer close(ch)
		if script != nil {
			script(ctx, ch)
		} else {
			ch <- agent.Event{Kind: agent.EventDone}
		}
	}()
	return ch
}

func (f *fakeAgent) Model() string {
	if f.model == "" {
		return "gpt-4o-mini"
	}
	return f.model
}

func (f *fakeAgent) Window() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.window == 0 {
		return 128000
	}
	return f.window
}

// MeasureContext adds fixed to the view's stored counts.
func (f *fakeAgent) MeasureContext(ctx context.Context, st view.TallyStore, id string) (agent.Size, error) {
	var v session.View
	if id != "" {
		var err error
		if v, err = st.LoadView(ctx, id); err != nil {
			return agent.Size{}, err
		}
	}
	f.mu.Lock()
	n, learned := f.fixed, f.learned
	f.mu.Unlock()
	for _, m := range v.Messages {
		n += m.Tokens
	}
	src := ""
	if learned {
		src = "server"
	}
	return agent.Size{Tokens: n, Window: f.Window(), Learned: learned, ConfiguredWindow: 128000, Source: src}, nil
}

// Policy is nil: the fake builds no requests (/context then says it has
// no policy to measure with).
func (f *fakeAgent) Policy() *view.Policy { return nil }

// AwaitServerWindow returns at once: the fake asks no server.
func (f *fakeAgent) AwaitServerWindow(context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.probed > 0 {
		f.window, f.learned = f.probed, true
	}
}

// Note records the note.
func (f *fakeAgent) Note(_ context.Context, sessionID string, m agent.UserMessage) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notes = append(f.notes, note{sessionID, m})
	return nil
}

type note struct {
	sessionID string
	msg       agent.UserMessage
}

// setFixed changes what MeasureContext measures from now on.
func (f *fakeAgent) setFixed(fixed, window int, learned bool) {
	f.mu.Lock()
	f.fixed, f.window, f.learned = fixed, window, learned
	f.mu.Unlock()
}

func (f *fakeAgent) Starts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.started...)
}

// events returns a script sending evs.
func events(evs ...agent.Event) func(context.Context, chan<- agent.Event) {
	return func(_ context.Context, ch chan<- agent.Event) {
		for _, e := range evs {
			ch <- e
		}
	}
}

// fakeCommands is a hand-written stand-in for the commands registry.
type fakeCommands struct {
	mu      sync.Mutex
	names   []string
	results map[string]commands.Result
	errs    map[string]error
	ran     []string
	states  []commands.State // each command's, in order
}

func (f *fakeCommands) Complete(prefix string) []string {
	var out []string
	for _, n := range f.names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

func (f *fakeCommands) Run(_ context.Context, st commands.State, line string) (commands.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ran = append(f.ran, line)
	f.states = append(f.states, st)
	name, _, _ := strings.Cut(line, " ")
	return f.results[name], f.errs[name]
}

type fakeSummarizer struct {
	rep   summarize.Report
	err   error
	mu    sync.Mutex
	calls []string
	gate  chan struct{} // when set, each call waits for it to close
}

func (f *fakeSummarizer) SummarizeNow(_ context.Context, sessionID, focus string) (summarize.Report, error) {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, sessionID+":"+focus)
	return f.rep, f.err
}

// Calls lists the calls so far ("session:focus"); SummarizeNow runs in a
// Cmd's goroutine.
func (f *fakeSummarizer) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// newStore opens a real session store in a temporary directory.
func newStore(t testing.TB) *session.Store {
	t.Helper()
	return sessiontest.Open(t, session.WithClassifier(view.Classify), session.WithClock(func() time.Time {
		return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	}))
}

// seed creates a session holding msgs.
func seed(t testing.TB, st *session.Store, title string, msgs ...session.Message) string {
	t.Helper()
	ctx := context.Background()
	s, err := st.CreateSession(ctx, "/work", "gpt-4o-mini")
	require.NoError(t, err)
	if title != "" {
		require.NoError(t, st.SetTitle(ctx, s.ID, title))
	}
	for len(msgs) > 0 {
		n := min(len(msgs), 500)
		_, err := st.Append(ctx, s.ID, msgs[:n]...)
		require.NoError(t, err)
		msgs = msgs[n:]
	}
	return s.ID
}

// fakeClock is the clock a harness's Model reads: time moves only when a
// test says so.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// harness drives a Model as the Bubble Tea runtime does: every Cmd runs in
// its own goroutine and the messages they return are delivered in order of
// arrival. send returns when no Cmd is left running, or when the running
// ones have been quiet for h.quiet (a turn waiting on its agent, a timer).
// A Cmd that computes (a store write under -race) must not look quiet: at
// 150 ms, TUI tests run 8 at a time beside the cli package's binaries
// returned before a session was created (TestEnterSendsAndShowsTheReply,
// TestGoldenErrorLine); at 400 ms they passed twice over in that load.
type harness struct {
	t     testing.TB
	m     Model
	agent *fakeAgent
	cmds  *fakeCommands
	store *session.Store
	clock *fakeClock
	quiet time.Duration

	msgs     chan tea.Msg
	inflight atomic.Int64
	quit     bool
	seen     []tea.Msg
}

// harnessSetup is what options change: the model's Options, and whether
// newHarness waits for the history to load.
type harnessSetup struct {
	Options
	noSettle bool
}

type harnessOpt func(*harnessSetup)

// noSettle returns from newHarness without waiting for the history.
func noSettle(o *harnessSetup) { o.noSettle = true }

func newHarness(t testing.TB, width, height int, opts ...harnessOpt) *harness {
	t.Helper()
	h := &harness{t: t, agent: &fakeAgent{}, cmds: &fakeCommands{
		names:   []string{"/clear", "/config", "/context", "/exit", "/help", "/history", "/model", "/resume", "/sessions", "/summarize"},
		results: map[string]commands.Result{}, errs: map[string]error{},
	}, quiet: 400 * time.Millisecond, msgs: make(chan tea.Msg, 1024)}
	h.clock = &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	o := harnessSetup{Options: Options{Agent: h.agent, Commands: h.cmds, Cwd: "/work", SoftRatio: 0.6, Profile: colorprofile.NoTTY, Dark: true,
		Now: h.clock.Now}}
	for _, f := range opts {
		f(&o)
	}
	if o.Store == nil {
		h.store = newStore(t)
		o.Store = h.store
	} else if st, ok := o.Store.(*session.Store); ok {
		h.store = st
	}
	h.m = New(o.Options)
	h.start(h.m.Init())
	h.send(tea.WindowSizeMsg{Width: width, Height: height})
	if !o.noSettle {
		h.settle(o.SessionID != "")
	}
	return h
}

// settle waits until the history (when a session was given) and the
// context figure have loaded and no render is in flight: a slow machine
// must not see a half-drawn screen.
func (h *harness) settle(history bool) {
	h.t.Helper()
	loaded := func() bool {
		hist, measured := !history, false
		for _, m := range h.seen {
			switch m.(type) {
			case historyMsg:
				hist = true
			case contextMsg:
				measured = true
			}
		}
		return hist && measured
	}
	h.untilModel("the history and its renders", func(m Model) bool { return loaded() && m.chat.Idle() })
}

func withSession(id string) harnessOpt { return func(o *harnessSetup) { o.SessionID = id } }

func withStore(st sessionStore) harnessOpt { return func(o *harnessSetup) { o.Store = st } }

// send delivers msgs, then pumps until things settle.
func (h *harness) send(msgs ...tea.Msg) {
	h.t.Helper()
	for _, msg := range msgs {
		h.update(msg)
	}
	h.pump()
}

// deliver handles a message a Cmd returned.
func (h *harness) deliver(msg tea.Msg) {
	h.t.Helper()
	switch msg := msg.(type) {
	case tea.QuitMsg:
		h.quit = true
		return
	case tea.BatchMsg:
		for _, c := range msg {
			h.start(c)
		}
		return
	case spinner.TickMsg, quitExpiredMsg:
		// Timers: tests deliver them by hand when they matter.
		return
	}
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().ConvertibleTo(cmdSlice) {
		// Bubble Tea's unexported sequence message: run in order.
		cmds := v.Convert(cmdSlice).Interface().([]tea.Cmd)
		h.start(func() tea.Msg {
			for _, c := range cmds {
				if c == nil {
					continue
				}
				if m := c(); m != nil {
					h.msgs <- m
				}
			}
			return nil
		})
		return
	}
	h.update(msg)
}

func (h *harness) update(msg tea.Msg) {
	h.seen = append(h.seen, msg)
	nm, cmd := h.m.Update(msg)
	h.m = nm.(Model)
	h.start(cmd)
}

var cmdSlice = reflect.TypeOf([]tea.Cmd(nil))

func (h *harness) start(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	h.inflight.Add(1)
	go func() {
		defer h.inflight.Add(-1)
		if msg := cmd(); msg != nil {
			h.msgs <- msg
		}
	}()
}

// pump delivers messages until no Cmd runs, or the running ones have
// been quiet for h.quiet.
func (h *harness) pump() {
	h.t.Helper()
	for {
		select {
		case msg := <-h.msgs:
			h.deliver(msg)
			continue
		default:
		}
		if h.inflight.Load() == 0 && len(h.msgs) == 0 {
			return
		}
		select {
		case msg := <-h.msgs:
			h.deliver(msg)
		case <-time.After(h.quiet):
			return
		}
	}
}

// until pumps until cond holds on the view, or fails after 10 s.
func (h *harness) until(what string, cond func(view string) bool) {
	h.t.Helper()
	h.untilModel(what, func(m Model) bool { return cond(m.Screen()) })
}

// untilModel pumps until cond holds on the model, or fails after 10 s.
func (h *harness) untilModel(what string, cond func(Model) bool) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond(h.m) {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s; view:\n%s", what, h.view())
		}
		select {
		case msg := <-h.msgs:
			h.deliver(msg)
		case <-time.After(20 * time.Millisecond):
		}
	}
	h.pump()
}

// sawEvent reports whether the model was handed an agent event of kind k.
func (h *harness) sawEvent(k agent.EventKind) bool {
	for _, m := range h.seen {
		if e, ok := m.(eventsMsg); ok {
			for _, ev := range e.events {
				if ev.Kind == k {
					return true
				}
			}
		}
	}
	return false
}

func (h *harness) view() string { return h.m.Screen() }

// key sends one key press.
func (h *harness) key(s string) {
	h.t.Helper()
	h.send(keyMsg(s))
}

// pause lets time pass without a key, as a person reading the screen.
func (h *harness) pause(d time.Duration) { h.clock.Advance(d) }

// typ types text, one key per rune.
func (h *harness) typ(s string) {
	h.t.Helper()
	for _, r := range s {
		h.update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	h.pump()
}

// textKey is the key press that types s (several runes: text that came in
// one read, as a terminal without bracketed paste sends a paste).
func textKey(s string) tea.KeyPressMsg {
	r, _ := utf8.DecodeRuneInString(s)
	return tea.KeyPressMsg{Code: r, Text: s}
}

func keyMsg(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "alt+enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt}
	case "ctrl+j":
		return tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+r":
		return tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}
	case "ctrl+o":
		return tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "home":
		return tea.KeyPressMsg{Code: tea.KeyHome}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	return textKey(s)
}
