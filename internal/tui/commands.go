package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/facts"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tui/conflicts"
	"github.com/gencode/gencode/internal/tui/input"
	"github.com/gencode/gencode/internal/tui/picker"
)

type commandMsg struct {
	line string
	res  commands.Result
	err  error
	// echo: the line is not shown yet (typed during a turn: shown with
	// its output, or not at all when it is queued, until its turn starts).
	echo bool
}

type summarizedMsg struct {
	sessionID string
	rep       summarize.Report
	err       error
	// facts are the whole session's, when there was nothing to summarize.
	facts    *session.Summary
	messages int
}

type compactionMsg struct{ rep summarize.Report }

// noteMsg is a note from the background (Options.Notes).
type noteMsg string

// waitNote receives the next background note.
func waitNote(ch <-chan string) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		n, ok := <-ch
		if !ok {
			return nil
		}
		return noteMsg(n)
	}
}

// waitCompaction receives the next background compaction report.
func waitCompaction(ch <-chan summarize.Report) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		rep, ok := <-ch
		if !ok {
			return nil
		}
		return compactionMsg{rep: rep}
	}
}

// compaction shows a compaction's progress, whether a turn waits for it or
// not (the summarizer's reports all come this way): the status bar always,
// the chat when it finished for the session shown.
func (m *Model) compaction(rep summarize.Report) tea.Cmd {
	cmds := []tea.Cmd{waitCompaction(m.o.Compactions)}
	if rep.SessionID != "" && rep.SessionID != m.sessionID {
		return cmds[0]
	}
	m.chat.AddCompaction(rep)
	cmds = append(cmds, m.status.Compaction(rep))
	if rep.Phase == summarize.Finished {
		// Also during a turn: the figure must not wait for the next request.
		cmds = append(cmds, m.loadContext(m.sessionID))
	}
	return tea.Batch(cmds...)
}

type modelSwitchedMsg struct {
	model      string
	agent      agentRunner
	summarizer summarizer
	err        error
}

// command runs a slash command in a Cmd.
func (m *Model) command(line string) tea.Cmd {
	if m.o.Commands == nil {
		m.chat.AddUser(line)
		m.chat.AddError("slash commands are not available in this build", "")
		return nil
	}
	if m.turn != nil && commandName(line) == "rewind" {
		// A rewind restores files at once: never under a running turn.
		m.chat.AddUser(line)
		m.chat.AddError("a turn is running: press esc to cancel it first", "")
		return nil
	}
	// During a turn the line is shown with the command's output, in the
	// order things happen; a command that asks the model is then queued,
	// and shown when its turn starts.
	echo := m.waits()
	if !echo {
		m.chat.AddUser(line)
	}
	// The command acts on the session and model shown now, whatever is
	// shown by the time it runs.
	run, ctx := m.o.Commands, m.o.Context
	st := commands.State{SessionID: m.sessionID, Model: m.agent.Model(), View: m.agent.Policy(), AwaitWindow: m.agent.AwaitServerWindow}
	return func() tea.Msg {
		res, err := run.Run(ctx, st, line)
		return commandMsg{line: line, res: res, err: err, echo: echo}
	}
}

// commandDone shows a command's output and does what it asks.
func (m *Model) commandDone(c commandMsg) tea.Cmd {
	if c.err == nil && c.res.Action == commands.ActionPrompt && m.waits() {
		// Queued as a message typed now would be, resolved now; its line
		// and its note are shown when its turn starts (keys typed while a
		// command resolves are held, so only a command typed during the
		// turn gets here).
		m.enqueue(queued{SubmitMsg: input.SubmitMsg{Text: c.line, Display: c.line},
			prompt: &agent.UserMessage{Text: c.res.Prompt}, note: c.res.Text})
		return nil
	}
	if c.echo {
		m.chat.AddUser(c.line)
	}
	if c.err != nil {
		m.chat.AddError(m.o.ErrorText(c.err), "")
		return nil
	}
	r := c.res
	if r.Text != "" && r.Action != commands.ActionNewSession && r.Action != commands.ActionRewound {
		m.chat.AddNote(r.Text)
	}
	if r.Conflicts != nil && len(r.Conflicts.Files) > 0 {
		// Asked in a dialog (with each file's diff), not shown as the
		// card that tells a script to add --force.
		m.openConflicts(*r.Conflicts)
		return nil
	}
	if r.Report != nil {
		m.chat.AddReport(*r.Report)
	}
	if r.Pick != nil {
		m.openPicker(*r.Pick, c.line)
		return nil
	}
	switch r.Action {
	case commands.ActionExit:
		return m.quit()
	case commands.ActionNewSession, commands.ActionResumeSession:
		if m.turn != nil {
			m.chat.AddError("a turn is running: press esc to cancel it first", "")
			return nil
		}
		if r.Action == commands.ActionResumeSession {
			return m.resume(r.SessionID)
		}
		old, prev := m.lease, m.sessionID
		m.lease = nil
		cmd := tea.Batch(releaseLease(old), m.switchSession(""))
		// Said in the new, empty chat (a note before the switch would be
		// cleared with the old one).
		m.chat.AddNote(clearedNote(prev))
		return cmd
	case commands.ActionSetModel:
		if m.o.SwitchModel == nil {
			m.chat.AddError("switching the model is not available in this build", "")
			return nil
		}
		switch {
		case m.turn != nil:
			m.chat.AddError("a turn is running: press esc to cancel it first", "")
			return nil
		case m.switching:
			m.chat.AddError("a model switch is running: wait for it to end", "")
			return nil
		case m.summarizing:
			m.chat.AddError("/summarize is running: switch the model when it ends", "")
			return nil
		}
		m.switching = true
		sw, name, ctx := m.o.SwitchModel, r.Model, m.o.Context
		return func() tea.Msg {
			ag, sum, err := sw(name)
			if ctx == nil {
				ctx = context.Background()
			}
			if err == nil && ag != nil {
				// The switch says the window the server gives the new
				// model, not the table's (the probe bounds itself).
				ag.AwaitServerWindow(ctx)
			}
			return modelSwitchedMsg{model: name, agent: ag, summarizer: sum, err: err}
		}
	case commands.ActionSummarize:
		return m.summarize(r.Focus)
	case commands.ActionRun:
		return m.command(r.Line)
	case commands.ActionRewound:
		return m.rewound(r)
	case commands.ActionPrompt:
		return m.runTurn(agent.UserMessage{Text: r.Prompt}, c.line)
	}
	return nil
}

// commandName is a command line's name, lower case, without its slash.
func commandName(line string) string {
	f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "/"))
	if len(f) == 0 {
		return ""
	}
	return strings.ToLower(f[0])
}

// rewound reloads the view after a rewind changed it (as /resume loads
// a session), then says what the rewind did, under the reloaded history,
// and puts the rewound turn's text back in the editor; the status bar's
// figure is measured again.
func (m *Model) rewound(r commands.Result) tea.Cmd {
	if r.Draft != "" {
		m.input.SetValue(r.Draft)
	}
	if m.sessionID == "" {
		m.chat.AddNote(r.Text)
		return nil
	}
	m.afterLoad = append(m.afterLoad, r.Text)
	id := m.sessionID
	m.chat.Reset()
	m.status.ResetSummarizer()
	return tea.Batch(m.loadHistory(id), m.loadContext(id))
}

// clearedNote is /clear's one line: a new session started, and how to get
// back to the one it replaced (prev; "": there was none).
func clearedNote(prev string) string {
	if prev == "" {
		return "New session: its id comes with the first message."
	}
	return fmt.Sprintf("New session: its id comes with the first message. The last one is kept: /resume %s brings it back.", shortID(prev))
}

// shortID is a session id as /sessions and the status bar show it.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// openPicker opens the picker over the editor for p, which the command
// line typed asked for.
func (m *Model) openPicker(p commands.Pick, line string) {
	if len(p.Items) == 0 {
		return
	}
	items := make([]picker.Item, len(p.Items))
	for i, c := range p.Items {
		items[i] = picker.Item{Title: c.Title, Detail: c.Detail}
	}
	m.pickSeq++
	m.pk = &pickState{list: picker.New(m.th, m.pickSeq, p.Title, items, p.Selected), pick: p, line: line}
	if m.mode != modeDialog {
		m.mode = modePicker
	}
}

// openConflicts opens the dialog that asks, for each file a rewind would
// overwrite that was changed outside gencode since, keep it or overwrite.
func (m *Model) openConflicts(ask commands.ConflictAsk) {
	files := make([]conflicts.File, len(ask.Files))
	for i, f := range ask.Files {
		files[i] = conflicts.File{Path: f.Path, Diff: f.Diff, Deletes: f.Deletes}
	}
	m.closePicker()
	m.cfSeq++
	m.cf = &conflictState{dlg: conflicts.New(m.th, m.cfSeq, ask.Title, files), ask: ask}
	m.mode = modeConflicts
	m.chat.AddNote(fmt.Sprintf("The rewind stopped before changing anything: %s. Choose for each below.",
		termtext.Count(len(files), "file was changed outside gencode since gencode last wrote it", "files were changed outside gencode since gencode last wrote them")))
}

// closeConflicts closes the conflicts dialog, if one is open.
func (m *Model) closeConflicts() {
	m.cf = nil
	if m.mode == modeConflicts {
		m.mode = modeEditing
	}
}

// conflictsApplied runs the rewind again with the choices made for each
// file.
func (m *Model) conflictsApplied(a conflicts.AppliedMsg) tea.Cmd {
	if m.cf == nil || a.ID != m.cfSeq {
		return nil // a second Enter on a dialog already closed
	}
	line := m.cf.ask.Line(a.Keep)
	m.closeConflicts()
	return m.command(line)
}

// picked does what the chosen item does: its Result, as if its command
// had been typed with the item's argument.
func (m *Model) picked(c picker.ChosenMsg) tea.Cmd {
	if m.pk == nil || c.ID != m.pickSeq || c.Index < 0 || c.Index >= len(m.pk.pick.Items) {
		return nil // a second Enter on a picker already closed
	}
	pk := m.pk
	m.closePicker()
	return m.commandDone(commandMsg{line: pk.line, res: pk.pick.Items[c.Index].Result})
}

// modelSwitched says how a /model switch ended, once it has, and sends
// the messages queued meanwhile (to the old model when it failed).
func (m *Model) modelSwitched(s modelSwitchedMsg) tea.Cmd {
	m.switching = false
	if s.err != nil {
		m.chat.AddError(fmt.Sprintf("could not switch to %s: %s", s.model, m.o.ErrorText(s.err)), "")
		return m.sendQueued(true)
	}
	m.agent = s.agent
	m.o.Summarizer = s.summarizer // /summarize uses the new model's budgets
	m.status.SetModel(s.agent.Model(), s.agent.Window())
	m.chat.AddNote(commands.Switched(s.agent.Model(), s.agent.Window()))
	return tea.Batch(m.sendQueued(true), m.loadContext(m.sessionID))
}

// summarize compacts the session now and waits for the summarizer.
func (m *Model) summarize(focus string) tea.Cmd {
	if m.o.Summarizer == nil {
		m.chat.AddError("summarization is not available in this build", "")
		return nil
	}
	if m.sessionID == "" {
		m.chat.AddNote("Nothing to summarize yet.")
		return nil
	}
	if m.turn != nil {
		// A running turn compacts on its own when it must; a manual
		// compaction now would hold the summarizer the turn may need.
		m.chat.AddNote("A turn is running: /summarize when it ends (Esc stops it). The turn compacts by itself if the context fills.")
		return nil
	}
	if m.switching {
		m.chat.AddNote("A model switch is running: /summarize when it ends.")
		return nil
	}
	m.summarizing = true
	spin := m.status.Compaction(summarize.Report{SessionID: m.sessionID, Phase: summarize.Started})
	sum, id, ctx, store, log := m.o.Summarizer, m.sessionID, m.o.Context, m.o.Store, m.o.Logger
	return tea.Batch(spin, func() tea.Msg {
		rep, err := sum.SummarizeNow(ctx, id, focus)
		msg := summarizedMsg{sessionID: id, rep: rep, err: err}
		if nothingToSummarize(err) && store != nil {
			// Too short to compact: the session's facts all the same.
			if msgs, lerr := store.Messages(ctx, id, 1, 0); lerr != nil {
				log.Warn("read the messages for their facts", "session", id, "err", lerr)
			} else {
				f := facts.Of(msgs)
				msg.facts, msg.messages = &f, len(msgs)
			}
		}
		return msg
	})
}

func (m *Model) summarized(s summarizedMsg) tea.Cmd {
	m.summarizing = false
	rep := s.rep
	if nothingToSummarize(s.err) {
		// Not a failure: the history is short enough already.
		if s.sessionID == m.sessionID {
			m.status.Compaction(summarize.Report{Phase: summarize.Finished})
			m.chat.AddNote("Nothing to summarize: the history is short enough.")
			if s.facts != nil {
				m.chat.AddReport(commands.Report{Title: "Session facts", Sections: commands.SessionFacts(*s.facts, s.messages)})
			}
		}
		return nil
	}
	if s.err != nil {
		rep.Phase, rep.Err = summarize.Failed, s.err
	}
	if s.sessionID != m.sessionID {
		return nil // the user moved to another session meanwhile
	}
	cmd := m.status.Compaction(rep)
	switch {
	case rep.Phase == summarize.Failed:
		msg := "summarization failed; the originals are kept"
		if rep.Err != nil {
			msg += ": " + m.o.ErrorText(rep.Err)
		}
		m.chat.AddError(msg, "")
	case rep.Summary != nil:
		m.chat.AddReport(*commands.SummaryReport(rep))
	default:
		m.chat.AddNote("Nothing to summarize: the history is short enough.")
	}
	return tea.Batch(cmd, m.loadContext(s.sessionID))
}

// nothingToSummarize says whether a /summarize found nothing worth
// compacting (not a failure).
func nothingToSummarize(err error) bool {
	return errors.Is(err, summarize.ErrNothingToSummarize) || errors.Is(err, summarize.ErrNoReduction)
}
