// Package tui is gencode's terminal UI, a Bubble Tea program. The root
// Model owns the layout, focus, global keys and the running turn; it sends
// each message to the child that owns it: chat (the conversation), input
// (the editor), status (the status bar), dialog (permission requests) and
// picker (the list /resume and /model open without an argument).
// Every read and write of the session, every agent turn and every command
// runs in a tea.Cmd; Update and View never block.
package tui

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/tui/chat"
	"github.com/gencode/gencode/internal/tui/conflicts"
	"github.com/gencode/gencode/internal/tui/dialog"
	"github.com/gencode/gencode/internal/tui/input"
	"github.com/gencode/gencode/internal/tui/keys"
	"github.com/gencode/gencode/internal/tui/markdown"
	"github.com/gencode/gencode/internal/tui/picker"
	"github.com/gencode/gencode/internal/tui/status"
	"github.com/gencode/gencode/internal/tui/theme"
	"github.com/gencode/gencode/internal/view"
)

// agentRunner is the agent as the TUI drives it.
type agentRunner interface {
	StartMessage(ctx context.Context, sessionID string, m agent.UserMessage) <-chan agent.Event
	Model() string
	Window() int
	// MeasureContext measures the request session id makes now, as
	// /context does, from the store's sums (agent.MeasureContext).
	MeasureContext(ctx context.Context, st view.TallyStore, id string) (agent.Size, error)
	// Policy is the view policy its requests are built with (/context).
	Policy() *view.Policy
	// AwaitServerWindow waits (bounded) until the server has said its
	// window, for /context to measure against it.
	AwaitServerWindow(ctx context.Context)
	// Note appends a user message without a turn (agent.Agent.Note).
	Note(ctx context.Context, sessionID string, m agent.UserMessage) error
}

// Agent is the agent as the TUI drives it; SwitchModel returns one.
type Agent = agentRunner

// Summarizer runs /summarize; SwitchModel returns the new model's (nil:
// summarization is off).
type Summarizer = summarizer

// sessionStore is the session log as the TUI reads it.
type sessionStore interface {
	Session(ctx context.Context, id string) (session.Session, error)
	CreateSession(ctx context.Context, cwd, model string) (session.Session, error)
	Tail(ctx context.Context, sessionID string, n int) ([]session.Message, error)
	Messages(ctx context.Context, sessionID string, from, to int64) ([]session.Message, error)
	// TailShown and MessagesShown are Tail and Messages as the chat shows
	// them: no more of a long text than it draws.
	TailShown(ctx context.Context, sessionID string, n, limit int) ([]session.Message, error)
	MessagesShown(ctx context.Context, sessionID string, from, to int64, limit int) ([]session.Message, error)
	Summaries(ctx context.Context, sessionID string, all bool) ([]session.Summary, error)
	LoadView(ctx context.Context, sessionID string) (session.View, error)
	// Rewound says which messages a conversation rewind took out of the
	// view: the chat leaves them out as the model's view does.
	Rewound(ctx context.Context, sessionID string) (func(seq int64) bool, error)
	// Tally and SetMaskTokens are what the status bar's context figure
	// is added up from (view.Policy.Measure).
	Tally(ctx context.Context, sessionID string, r session.TallyRule) (session.Tally, error)
	SetMaskTokens(ctx context.Context, sessionID string, counts map[int64]int) error
	// Prompts are the last n messages sent in the project's sessions,
	// those longer than limit without pastes Clipped.
	Prompts(ctx context.Context, cwd string, n, limit int) ([]session.Message, error)
	// Lease makes this process the session's one writer (session.Lease).
	Lease(ctx context.Context, sessionID string, wait time.Duration) (*session.Lease, error)
}

// commandRunner runs slash commands (the commands registry).
type commandRunner interface {
	Complete(prefix string) []string
	Run(ctx context.Context, st commands.State, line string) (commands.Result, error)
}

// summarizer compacts a session now, for /summarize.
type summarizer interface {
	SummarizeNow(ctx context.Context, sessionID, focus string) (summarize.Report, error)
}

// Options are the TUI's dependencies and settings.
type Options struct {
	Agent agentRunner
	Store sessionStore
	// Commands runs slash commands; nil: none are available.
	Commands commandRunner
	// Summarizer runs /summarize; nil: not available.
	Summarizer summarizer
	// Compactions carries the reports of background compactions, which
	// may finish after the turn that started them (the summarizer's
	// Notify hook should send to it without blocking); nil: none.
	Compactions <-chan summarize.Report
	// Notes carries one-line notes from work that runs beside the turns
	// (an MCP server that failed, or came back after a failure), shown in
	// the chat as they come; the sender must not block on it. nil: none.
	Notes <-chan string
	// SwitchModel returns an agent for another model (/model NAME); nil:
	// switching is not available.
	SwitchModel func(model string) (agentRunner, Summarizer, error)
	// Asker is the Asker the tools were built with; nil: no dialogs.
	Asker *Asker
	// SessionID is the session to show; "" starts a new one with the first
	// message.
	SessionID string
	// Lease is SessionID's lease, taken by the caller (nil: none). The
	// model holds the lease of the session it shows, and gives it up when
	// it shows another (/resume, /clear).
	Lease *session.Lease
	// LeaseWait is how long /resume and a new session wait for another
	// process writing to the session (default session.LeaseWait).
	LeaseWait time.Duration
	// Cwd is the working directory new sessions are created for.
	Cwd string
	// SoftRatio is where background summarization starts (0: off).
	SoftRatio float64
	// Profile is the colour profile of the program's output
	// (colorprofile.NoTTY: plain text, as in tests). Bubble Tea brings
	// colours down to it when it draws.
	Profile colorprofile.Profile
	// Dark is the background the colours are for, until the terminal
	// says otherwise (see AskBackground).
	Dark bool
	// AskBackground: nothing said what the background is (the theme is
	// auto, no COLORFGBG); the model asks the terminal with
	// tea.RequestBackgroundColor and redraws in the colours of its answer,
	// a tea.BackgroundColorMsg. Nothing waits for it.
	AskBackground bool
	// ErrorText words an error for the user (nil: err.Error()).
	ErrorText func(error) string
	// HistoryTail is how many messages are loaded when a session opens
	// (default 30, more than a screen holds); older ones are paged in as
	// the view nears them.
	HistoryTail int
	// Context is the parent of every turn's context; nil: Background.
	Context context.Context
	// Now is the clock the permission dialog's guard and the timers of
	// running tool calls read (nil: time.Now); tests inject theirs.
	Now func() time.Time
	// Tools runs "@file" mentions (Read) and "!commands" (Bash) for the
	// user: the agent's tool set. nil: "@" and "!" are plain text.
	Tools userTools
	// Logger receives the failures of background loads the user is not
	// shown (nil: discard).
	Logger *slog.Logger
	// Spend, when set, says what a session's requests have used so far
	// (the registry's Spend); the status bar shows it, read again after
	// each turn and compaction.
	Spend func(ctx context.Context, sessionID string) (commands.Spend, error)
	// Notices, when set, is called once in a Cmd when the TUI opens; each
	// line it returns is shown in the chat (instruction files that could
	// not be read or are too large for the window).
	Notices func() []string
}

// modeState is what the root model is doing, which decides where keys go
// and what is drawn under the chat. Reports are drawn in the chat and are
// no mode of their own.
type modeState int

const (
	modeEditing   modeState = iota // the editor has the keys
	modeDialog                     // a permission dialog is open (over a picker, if one is open)
	modePicker                     // the /resume or /model list is open over the editor
	modeConflicts                  // a rewind asks about files changed outside gencode since
	modeQuitting                   // the program is ending: nothing is drawn
)

func (s modeState) String() string {
	switch s {
	case modeEditing:
		return "editing"
	case modeDialog:
		return "dialog"
	case modePicker:
		return "picker"
	case modeConflicts:
		return "conflicts"
	case modeQuitting:
		return "quitting"
	}
	return fmt.Sprintf("modeState(%d)", int(s))
}

// pickState is the open picker: the list, the command's choices (their
// Results) and the command line that opened it.
type pickState struct {
	list picker.Model
	pick commands.Pick
	line string
}

// conflictState is the open conflicts dialog and the rewind it asks for.
type conflictState struct {
	dlg conflicts.Model
	ask commands.ConflictAsk
}

// Model is the root model. Its state lives behind one pointer, so the
// value Bubble Tea passes through Update and View is a word, not the
// whole model copied on every message.
type Model struct{ *root }

// root is the root model's state; Update is the only code that writes it.
type root struct {
	o     Options
	agent agentRunner
	md    *markdown.Renderer
	th    *theme.Theme

	chat   chat.Model
	input  input.Model
	status status.Model
	dialog dialog.Model
	dst    theme.Dialog
	// mode is what the model is doing; the dialog and the picker are
	// its sub-models.
	mode   modeState
	askSeq int // the open dialog's id; decisions for older ones are dropped
	reply  chan<- tools.Decision
	why    chan<- string // the open dialog's channel for a denial's reason
	// pk is the open picker (nil: none); it stays open under a dialog.
	pk      *pickState
	pickSeq int // the open picker's id; choices from older ones are dropped
	// cf is the open conflicts dialog (nil: none; mode is modeConflicts).
	cf    *conflictState
	cfSeq int
	// askedAt is when the dialog opened, lastKey when the last key came:
	// the dialog takes keys only after a pause in both (answerGuard).
	askedAt, lastKey time.Time

	width, height int

	sessionID string
	title     string
	// titleGuess: title is the first message of a new session, which the
	// agent has not taken yet (a message too large is refused, and never
	// titles the session).
	titleGuess bool
	lease      *session.Lease // sessionID's, while it is shown
	// ctxSeq numbers the context figures asked for: a figure computed for
	// an older state (a load still running when the turn reported a newer
	// one) is dropped.
	ctxSeq int

	turn    *turn
	turnSeq int
	// switching: a /model switch is in flight (messages queue meanwhile);
	// summarizing: a /summarize is. Neither starts while the other runs,
	// so that the old model's summarizer is done before the new one works.
	switching, summarizing bool
	// queue holds the messages sent while a turn ran, oldest first; each
	// is sent when the turn before it ends well.
	queue       []queued
	lastPrompt  agent.UserMessage
	lastDisplay string          // lastPrompt as shown (pastes as placeholders)
	lastSubmit  input.SubmitMsg // as typed, to give back when it cannot be sent
	canRetry    bool            // the last turn failed: ctrl+r sends lastPrompt again
	// shellOut holds the output of the "!commands" run since the last
	// message sent, which takes it to the model.
	shellOut    []string
	shellCP     *session.Checkpoint // the files' states around them (joinCheckpoints)
	shellSeq    int
	shellCancel context.CancelFunc // the running "!command"'s, nil when none
	quitSeq     int
	quitArm     bool
	// holding: a command line was sent and its result is not shown yet;
	// held are the keys typed meanwhile, given to what it opens (the
	// picker of /model and /resume) when it is shown, never lost.
	holding bool
	held    []tea.KeyPressMsg
	// escAt is when a first Esc on an empty, idle editor came (zero:
	// none); a second within rewindWindow opens /rewind's picker.
	escAt time.Time
	// afterLoad are notes shown once the history being reloaded is
	// (what a rewind did: a note before the reload would be cleared).
	afterLoad []string
}

// turn is the running agent turn.
type turn struct {
	id        int
	ctx       context.Context
	cancel    context.CancelFunc
	events    <-chan agent.Event
	canceling bool
	partial   bool // an interrupted partial answer was logged
}

// quitWindow is how long a first Ctrl+C waits for the second.
const quitWindow = 2 * time.Second

// answerGuard is how long the permission dialog ignores keys after it
// opened and after the last key: keys typed ahead for the draft (the "a"
// of "about") go to the draft, and only a key pressed once the user has
// seen the dialog answers it.
const answerGuard = 500 * time.Millisecond

// New returns the root model.
func New(o Options) Model {
	if o.HistoryTail <= 0 {
		o.HistoryTail = 30
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	if o.LeaseWait <= 0 {
		o.LeaseWait = session.LeaseWait
	}
	if o.ErrorText == nil {
		o.ErrorText = func(err error) string { return err.Error() }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	th := theme.New(o.Dark, o.Profile)
	md := markdown.New(th)
	var comp input.Completer
	if o.Commands != nil {
		comp = o.Commands
	}
	m := Model{&root{
		o:         o,
		agent:     o.Agent,
		md:        md,
		th:        th,
		chat:      chat.New(th, md),
		input:     input.New(th, comp),
		status:    status.New(th, o.SoftRatio),
		dst:       th.Dialog,
		sessionID: o.SessionID,
		lease:     o.Lease,
	}}
	m.chat.SetClock(o.Now)
	if o.Tools != nil {
		m.input.SetDir(o.Tools.WorkDir())
	}
	m.status.SetModel(o.Agent.Model(), o.Agent.Window())
	m.status.SetSession(o.SessionID, "")
	return m
}

// Init loads the session's history and starts listening for permission
// requests.
func (m Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.o.Asker.wait(), m.o.Asker.waitSaved(), waitCompaction(m.o.Compactions), waitNote(m.o.Notes), m.loadPrompts(), m.measure(m.sessionID, m.ctxSeq)}
	if m.o.AskBackground {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	if f := m.o.Notices; f != nil {
		cmds = append(cmds, func() tea.Msg { return noticesMsg(f()) })
	}
	if m.sessionID != "" {
		cmds = append(cmds, m.loadHistory(m.sessionID))
	}
	return tea.Batch(cmds...)
}

// Running reports whether a turn is running.
func (m Model) Running() bool { return m.turn != nil }

// SessionID is the session shown ("" before the first message of a new one).
func (m Model) SessionID() string { return m.sessionID }

// Wait waits, at most d, for a turn that was canceled on quit to finish
// writing its partial answer and tool results to the log.
func (m Model) Wait(d time.Duration) {
	if m.turn == nil || m.turn.events == nil {
		return
	}
	m.turn.cancel()
	deadline := time.After(d)
	for {
		select {
		case _, ok := <-m.turn.events:
			if !ok {
				return
			}
		case <-deadline:
			return
		}
	}
}

// Update routes a message to the children and handles the global keys.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	cmds = append(cmds, m.update(msg))
	m.layout()
	cmds = append(cmds, m.chat.Sync())
	return m, tea.Batch(cmds...)
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return nil
	case tea.BackgroundColorMsg:
		if dark := msg.IsDark(); dark != m.th.Dark {
			m.setTheme(theme.New(dark, m.o.Profile))
		}
		return nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.MouseWheelMsg, tea.MouseClickMsg:
		var cmd tea.Cmd
		m.chat, cmd = m.chat.Update(msg)
		return cmd
	case input.SubmitMsg:
		return m.submit(msg)
	case attachedMsg:
		return m.attached(msg)
	case shellMsg:
		return m.shellDone(msg)
	case shellEventsMsg:
		return m.shellEvents(msg)
	case eventsMsg:
		return m.events(msg)
	case askMsg:
		return m.ask(msg)
	case savedMsg:
		m.saved(msg)
		return m.o.Asker.waitSaved()
	case dialog.DecisionMsg:
		if msg.ID != m.askSeq {
			return nil // a second key press on a dialog already answered
		}
		return m.answerWhy(msg.Decision, msg.Reason)
	case picker.ChosenMsg:
		return m.picked(msg)
	case picker.ClosedMsg:
		if msg.ID == m.pickSeq {
			m.closePicker()
		}
		return nil
	case conflicts.AppliedMsg:
		return m.conflictsApplied(msg)
	case conflicts.CanceledMsg:
		if m.cf != nil && msg.ID == m.cfSeq {
			m.closeConflicts()
			m.chat.AddNote("Rewind canceled: nothing was changed.")
		}
		return nil
	case historyMsg:
		return m.history(msg)
	case promptsMsg:
		return m.prompts(msg)
	case olderMsg:
		if msg.sessionID != m.sessionID {
			return nil
		}
		if msg.err != nil {
			m.chat.Prepend(nil, false)
			m.chat.AddError("could not load older messages: "+m.o.ErrorText(msg.err), "")
			return nil
		}
		m.chat.Prepend(msg.msgs, msg.hasOlder)
		return nil
	case chat.NeedOlderMsg:
		return m.loadOlder(msg.BeforeSeq)
	case contextMsg:
		if msg.err != nil {
			// The status bar keeps its last estimate.
			m.o.Logger.Warn("estimate the context", "session", msg.sessionID, "err", msg.err)
		} else if msg.seq == m.ctxSeq && msg.sessionID == m.sessionID {
			m.status.SetContext(msg.size.Tokens, msg.size.Window, msg.size.Source)
		}
		return nil
	case spendMsg:
		if msg.sessionID == m.sessionID && msg.err == nil {
			t := msg.spend.Total()
			m.status.SetSpend(t.Input+t.Output, msg.spend.CostText())
		}
		return nil
	case sessionCreatedMsg:
		return m.sessionCreated(msg)
	case sessionLeasedMsg:
		return m.sessionLeased(msg)
	case commandMsg:
		return tea.Batch(m.commandDone(msg), m.release())
	case summarizedMsg:
		return m.summarized(msg)
	case modelSwitchedMsg:
		return m.modelSwitched(msg)
	case compactionMsg:
		return m.compaction(msg.rep)
	case noticesMsg:
		for _, n := range msg {
			m.chat.AddInfo(n)
		}
		return nil
	case noteMsg:
		// A note, or an empty one that only says what the next request
		// carries changed (an MCP server started or stopped): the context
		// figure is measured again either way.
		if msg != "" {
			m.chat.AddInfo(string(msg))
		}
		return tea.Batch(waitNote(m.o.Notes), m.loadContext(m.sessionID))
	case quitExpiredMsg:
		if msg.seq == m.quitSeq {
			m.quitArm = false
			m.status.SetNotice("")
		}
		return nil
	}
	// Spinner ticks, stream flushes, finished renders, cursor blinks, the
	// picker's filter results.
	var c1, c2, c3, c4 tea.Cmd
	m.status, c1 = m.status.Update(msg)
	m.chat, c2 = m.chat.Update(msg)
	m.input, c3 = m.input.Update(msg)
	if m.pk != nil {
		m.pk.list, c4 = m.pk.list.Update(msg)
	}
	return tea.Batch(c1, c2, c3, c4)
}

// key handles the global keys and routes the rest.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	now := m.o.Now()
	last := m.lastKey
	m.lastKey = now
	km := keys.Default()
	if key.Matches(k, km.Editor.Interrupt) {
		return m.ctrlC()
	}
	var diverted tea.Cmd
	if m.holding && m.mode != modeDialog {
		m.held = append(m.held, k)
		return nil
	}
	if m.mode == modeDialog {
		// Esc only denies, which is always safe; any other key answers
		// only once the user has had time to see the dialog. Before
		// that it is typing meant for the draft, and goes there. Once
		// the user chose to say why they deny, every key is the reason.
		if key.Matches(k, km.Editor.Cancel) || m.dialog.Typing() || m.answerable(now, last) {
			var cmd tea.Cmd
			m.dialog, cmd = m.dialog.Update(k)
			return cmd
		}
		m.quitArm = false
		m.status.SetNotice("typed into your draft, not the dialog")
		diverted = m.expireNotice()
	} else if m.mode == modePicker {
		// The picker has every key but Ctrl+C while it is open.
		var cmd tea.Cmd
		m.pk.list, cmd = m.pk.list.Update(k)
		return cmd
	} else if m.mode == modeConflicts {
		// So has the conflicts dialog.
		var cmd tea.Cmd
		m.cf.dlg, cmd = m.cf.dlg.Update(k)
		return cmd
	}
	return tea.Batch(diverted, m.draftKey(k))
}

// release ends the hold a command line put on the keys and gives each
// key typed meanwhile, in order, to what is shown now: the picker the
// command opened, else the editor.
func (m *Model) release() tea.Cmd {
	if !m.holding {
		return nil
	}
	held := m.held
	m.holding, m.held = false, nil
	cmds := make([]tea.Cmd, 0, len(held))
	for _, k := range held {
		cmds = append(cmds, m.key(k))
	}
	return tea.Batch(cmds...)
}

// answerable reports whether the dialog may take a key pressed at now,
// the key before it having come at last.
func (m *Model) answerable(now, last time.Time) bool {
	return now.Sub(m.askedAt) >= answerGuard && now.Sub(last) >= answerGuard
}

// draftKey handles a key meant for the editor, the chat or the turn.
func (m *Model) draftKey(k tea.KeyPressMsg) tea.Cmd {
	e, c := keys.Default().Editor, keys.Default().Chat
	switch {
	case key.Matches(k, e.Cancel):
		if len(m.queue) > 0 {
			return m.unqueue()
		}
		if m.turn == nil && m.shellCancel != nil {
			m.shellCancel()
			return nil
		}
		if m.cancelTurn() || m.turn != nil {
			return nil
		}
		return m.escIdle()
	case key.Matches(k, e.Prev):
		if len(m.queue) > 0 && m.input.Empty() {
			m.editQueued()
			return nil
		}
	case key.Matches(k, c.PageUp, c.PageDown, c.Top, c.Bottom, c.LineUp, c.LineDown, c.Expand):
		var cmd tea.Cmd
		m.chat, cmd = m.chat.Update(k)
		return cmd
	case key.Matches(k, c.Home, c.End):
		if m.input.Empty() {
			var cmd tea.Cmd
			m.chat, cmd = m.chat.Update(k)
			return cmd
		}
	case key.Matches(k, e.Retry):
		if m.turn == nil && m.canRetry {
			return m.startTurn(m.lastPrompt, m.lastDisplay)
		}
		return nil
	case key.Matches(k, e.Send):
		if m.mode == modeDialog && !isCommand(m.input.Value()) {
			return nil // the dialog's notice says where the typing went
		}
		if isCommand(m.input.Value()) && m.o.Commands != nil {
			var cmd tea.Cmd
			m.input, cmd = m.input.Update(k)
			if m.input.Empty() {
				// Sent: the keys typed from now until its result is
				// shown are meant for what it opens (/model's list).
				m.holding = true
			}
			return cmd
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	if m.quitArm && !m.input.Empty() && m.turn == nil {
		// The draft is back (Up) or typed anew: the next Ctrl+C clears
		// it, and the notice saying it would quit is no longer true.
		m.quitArm = false
		m.status.SetNotice("")
	}
	return cmd
}

// rewindWindow is how long a first Esc on an empty, idle editor waits for
// the second, which opens /rewind's picker.
const rewindWindow = time.Second

// escIdle is Esc with nothing to cancel: on an empty editor, a second Esc
// within rewindWindow opens /rewind's picker (as Claude Code's Esc Esc).
func (m *Model) escIdle() tea.Cmd {
	now := m.o.Now()
	if !m.input.Empty() || m.mode != modeEditing || m.o.Commands == nil || m.sessionID == "" {
		m.escAt = time.Time{}
		return nil
	}
	if !m.escAt.IsZero() && now.Sub(m.escAt) <= rewindWindow {
		m.escAt = time.Time{}
		m.status.SetNotice("")
		return m.command("/rewind")
	}
	m.escAt = now
	m.quitArm = false
	m.status.SetNotice("esc again to rewind")
	return m.expireNotice()
}

// cancelTurn stops the running turn, as Esc does; the partial answer is
// kept. It reports whether there was a turn to stop.
func (m *Model) cancelTurn() bool {
	if m.turn == nil || m.turn.canceling {
		return false
	}
	m.turn.canceling = true
	m.turn.cancel()
	m.status.SetBusy(true, "canceling")
	return true
}

// ctrlC does the first of: cancel the running turn, clear the draft, quit
// when a Ctrl+C just before armed it. Each step arms the next press and the
// notice says what it will do.
func (m *Model) ctrlC() tea.Cmd {
	switch {
	case m.cancelTurn():
		if m.input.Empty() {
			m.quitArm = true
			m.status.SetNotice("canceling the turn · ctrl+c again to quit")
		} else {
			m.quitArm = false
			m.status.SetNotice("canceling the turn · ctrl+c again clears the draft")
		}
	case !m.input.Empty():
		m.input.Clear()
		m.quitArm = true
		m.status.SetNotice("draft cleared (↑ brings it back) · ctrl+c again to quit")
	case m.quitArm:
		return m.quit()
	default:
		m.quitArm = true
		m.status.SetNotice("press ctrl+c again to quit")
	}
	return m.expireNotice()
}

// KeepUnsent stores the output of the "!commands" no message carried yet
// in the session's log (in a new session when none was started), where
// the next message, in this run or a later one, is sent with it: quitting
// loses none of it. Call it after the program ended. It returns the
// session and how many outputs it kept.
func (m Model) KeepUnsent(ctx context.Context) (string, int, error) {
	if len(m.shellOut) == 0 {
		return m.sessionID, 0, nil
	}
	id := m.sessionID
	if id == "" {
		s, err := m.o.Store.CreateSession(ctx, m.o.Cwd, m.agent.Model())
		if err != nil {
			return "", 0, fmt.Errorf("keep the shell output: %w", err)
		}
		id = s.ID
	}
	msg := agent.UserMessage{Text: chat.ShellBlocks(m.shellOut), Meta: session.Meta{Shell: true, Checkpoint: m.shellCP}}
	if err := m.agent.Note(ctx, id, msg); err != nil {
		return id, 0, fmt.Errorf("keep the shell output: %w", err)
	}
	return id, len(m.shellOut), nil
}

// expireNotice clears the notice (and a first Ctrl+C) after quitWindow.
func (m *Model) expireNotice() tea.Cmd {
	m.quitSeq++
	seq := m.quitSeq
	return tea.Tick(quitWindow, func(time.Time) tea.Msg { return quitExpiredMsg{seq: seq} })
}

type quitExpiredMsg struct{ seq int }

// noticesMsg carries the notices shown when the TUI opens.
type noticesMsg []string

func (m *Model) quit() tea.Cmd {
	if m.turn != nil {
		m.turn.cancel()
	}
	if m.mode == modeDialog {
		m.answer(tools.Deny)
	}
	m.mode = modeQuitting
	return tea.Quit
}

// resting is the mode once a dialog is answered: the picker it covered,
// else the editor.
func (m *Model) resting() modeState {
	if m.pk != nil {
		return modePicker
	}
	return modeEditing
}

// closePicker closes the picker, if one is open.
func (m *Model) closePicker() {
	m.pk = nil
	if m.mode == modePicker {
		m.mode = modeEditing
	}
}

// layout gives each child its size: the status bar takes the last line,
// the editor (or the dialog) the lines above it, the chat the rest.
func (m *Model) layout() {
	if m.width == 0 {
		return
	}
	m.status.SetWidth(m.width)
	m.input.SetWidth(m.width)
	bottom := m.input.Height() + m.queueHeight()
	if m.mode == modeDialog {
		draft := 0
		if m.showDraft() {
			draft = bottom
		}
		// Two thirds of the screen, more when the first change needs it:
		// the change is what the user answers about.
		avail := m.height - draft - m.queueHeight() - 2
		m.dialog.SetSize(m.width, avail)
		m.dialog.SetSize(m.width, max(min(m.height*2/3, avail), min(m.dialog.MinHeight(), avail), 8))
		bottom = m.dialog.Height() + draft + m.queueHeight()
	} else if m.mode == modePicker {
		// Two thirds of the screen at most: the chat stays in view.
		m.pk.list.SetSize(m.width, max(min(m.height*2/3, m.height-m.queueHeight()-2), 6))
		bottom = m.pk.list.Height() + m.queueHeight()
	} else if m.mode == modeConflicts {
		m.cf.dlg.SetSize(m.width, max(min(m.height*2/3, m.height-m.queueHeight()-2), 6))
		bottom = m.cf.dlg.Height() + m.queueHeight()
	}
	m.chat.SetSize(m.width, max(m.height-bottom-1, 1))
}

// showDraft reports whether the editor shows under the dialog: when it
// holds text, such as keys typed while the dialog opened.
func (m Model) showDraft() bool { return m.mode == modeDialog && !m.input.Empty() }

// setTheme draws every part with th from now on.
func (m *Model) setTheme(th *theme.Theme) {
	m.th, m.md, m.dst = th, markdown.New(th), th.Dialog
	m.chat.SetTheme(th, m.md)
	m.input.SetTheme(th)
	m.status.SetTheme(th)
	// A dialog or a picker open now keeps its colours; the next one
	// opens in th's (the answer comes within milliseconds of the start).
}

// View is the screen: the alternate screen, with the mouse's clicks and
// wheel, drawing what Screen draws.
func (m Model) View() tea.View {
	v := tea.NewView(m.Screen())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	return v
}

// Screen draws the chat, the editor or the dialog (with the draft under it
// when there is one), and the status bar.
func (m Model) Screen() string {
	if m.width == 0 || m.mode == modeQuitting {
		return ""
	}
	bottom := m.input.View()
	if m.mode == modeDialog {
		bottom = m.dialog.View()
		if m.showDraft() {
			bottom += "\n" + m.input.View()
		}
	} else if m.mode == modePicker {
		bottom = m.pk.list.View()
	} else if m.mode == modeConflicts {
		bottom = m.cf.dlg.View()
	}
	if q := m.queueView(); q != "" {
		bottom = q + "\n" + bottom
	}
	return m.chat.View() + "\n" + bottom + "\n" + m.status.View()
}
