package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/tui/chat"
	"github.com/gencode/gencode/internal/tui/input"
)

// userTools runs the tools on the user's behalf: the Read of an "@file"
// mention and the Bash of a "!command" (tools.Set.RunByUser).
type userTools interface {
	RunByUser(ctx context.Context, c tools.Call) tools.Result
	WorkDir() string
}

// isShell reports whether a message is a "!command" to run directly.
func isShell(s string) bool {
	s = strings.TrimSpace(s)
	return len(s) > 1 && s[0] == '!'
}

// mentions are the paths of the "@path" words of text, in order, once
// each: an "@" that starts a word, with what follows up to the next
// space; punctuation that ends a sentence is not part of the path.
func mentions(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.Fields(text) {
		if !strings.HasPrefix(w, "@") {
			continue
		}
		p := strings.TrimRight(w[1:], ",;:!?)'\".")
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// attachedMsg is a message whose mentions were read: s.Text carries the
// files, or err says which could not be read.
type attachedMsg struct {
	s     input.SubmitMsg
	files []string
	plain []string // mentions that name no file: sent as written
	err   string
}

// attach reads the files a message mentions with the Read tool, in a Cmd,
// and attaches them after its text, as Read shows them (numbered lines,
// capped); then the message is sent as any other. The mentions are looked
// for in what the user typed, not in the pastes. An "@word" that names
// nothing on disk ("@Override", "@alice") is text, not a mention: it is
// sent as written, with a note, rather than holding the message back.
func (m *Model) attach(s input.SubmitMsg, paths []string) tea.Cmd {
	ts, ctx := m.o.Tools, m.o.Context
	return func() tea.Msg {
		var b strings.Builder
		var files, plain []string
		for _, p := range paths {
			abs := p
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(ts.WorkDir(), p)
			}
			if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
				plain = append(plain, p)
				continue
			}
			files = append(files, p)
			args, _ := json.Marshal(map[string]string{"file_path": p})
			r := ts.RunByUser(ctx, tools.Call{Name: tools.ToolRead, Arguments: string(args)})
			if r.IsError {
				return attachedMsg{s: s, err: fmt.Sprintf("@%s: %s", p, r.Content)}
			}
			fmt.Fprintf(&b, "\n\n<file path=%q>\n%s\n</file>", p, r.Content)
		}
		s.Text += b.String()
		return attachedMsg{s: s, files: files, plain: plain}
	}
}

// attached sends a message once its files are read; when one could not
// be, the message goes back into the editor and nothing is sent.
func (m *Model) attached(msg attachedMsg) tea.Cmd {
	if msg.err != "" {
		m.chat.AddError(msg.err, "the message is back in the editor")
		m.input.Append(msg.s)
		return nil
	}
	cmd := m.send(msg.s)
	if len(msg.files) > 0 {
		m.chat.AddInfo("attached " + strings.Join(msg.files, ", "))
	}
	if len(msg.plain) > 0 {
		m.chat.AddInfo("no such file, sent as written: @" + strings.Join(msg.plain, ", @"))
	}
	return cmd
}

// shellMsg is the end of a "!command".
type shellMsg struct {
	id      int
	command string
	res     tools.Result
}

// shellEventsMsg carries the progress events of a "!command", read from
// ch, as eventsMsg carries a turn's.
type shellEventsMsg struct {
	eventsMsg
	ch <-chan agent.Event
}

// shell runs a "!command" with the Bash tool, in a Cmd: in the project,
// with its environment, timeout and output cap, without asking (the user
// typed it). Esc stops it when no turn runs. Its output is shown while it
// runs as a model's Bash call's is: the tool reports progress as
// EventToolProgress events (agent.ProgressEvents), which the chat draws.
func (m *Model) shell(s input.SubmitMsg) tea.Cmd {
	command := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s.Text), "!"))
	m.chat.AddUser(s.Display)
	ctx, cancel := context.WithCancel(m.o.Context)
	m.shellSeq++
	m.shellCancel = cancel
	id, ts := m.shellSeq, m.o.Tools
	var spin tea.Cmd
	if m.turn == nil {
		spin = m.status.SetBusy(true, "running "+termtext.FirstLine(command, 40))
	}
	callID := shellCallID(id)
	progress := make(chan agent.Event, 1)
	run := func() tea.Msg {
		defer cancel()
		// The tool reports nothing after it returns: closing ends the wait.
		defer close(progress)
		args, _ := json.Marshal(map[string]string{"command": command})
		return shellMsg{id: id, command: command, res: ts.RunByUser(ctx, tools.Call{
			ID: callID, Name: tools.ToolBash, Arguments: string(args), Progress: agent.ProgressEvents(progress, callID)})}
	}
	return tea.Batch(spin, m.chat.StartShell(callID, command), run, waitShell(id, progress))
}

// shellCallID names the "!command" id's live view in the chat.
func shellCallID(id int) string { return fmt.Sprintf("shell-%d", id) }

// waitShell waits for the "!command" id's next progress events.
func waitShell(id int, ch <-chan agent.Event) tea.Cmd {
	wait := waitEvents(id, ch)
	return func() tea.Msg { return shellEventsMsg{eventsMsg: wait().(eventsMsg), ch: ch} }
}

// shellEvents shows a "!command"'s progress and waits for more until the
// command ends.
func (m *Model) shellEvents(msg shellEventsMsg) tea.Cmd {
	var cmds []tea.Cmd
	for _, ev := range msg.events {
		cmds = append(cmds, m.chat.HandleEvent(ev))
	}
	if msg.closed {
		return tea.Batch(cmds...)
	}
	return tea.Batch(append(cmds, waitShell(msg.turn, msg.ch))...)
}

// shellDone shows a command's output and keeps it for the next message
// sent: that is how it reaches the conversation.
func (m *Model) shellDone(msg shellMsg) tea.Cmd {
	if msg.id == m.shellSeq {
		m.shellCancel = nil
		if m.turn == nil {
			m.status.SetBusy(false, "")
		}
	}
	out := "$ " + msg.command + "\n" + msg.res.Content
	m.chat.EndShell(shellCallID(msg.id), chat.Fence(out))
	if msg.res.Denied {
		return nil
	}
	m.shellOut = append(m.shellOut, out)
	m.shellCP = joinCheckpoints(m.shellCP, msg.res.Meta.Checkpoint)
	m.status.SetNotice("the output goes with your next message")
	return m.expireNotice()
}

// userMessage is what the agent is given for s: its text, then the output
// of the "!commands" run since the last message, which it takes.
func (m *Model) userMessage(s input.SubmitMsg) agent.UserMessage {
	text := s.Text
	if len(m.shellOut) > 0 {
		text += "\n\n" + chat.ShellBlocks(m.shellOut)
	}
	cp := m.shellCP
	m.shellOut, m.shellCP = nil, nil
	return agent.UserMessage{Text: text, Meta: session.Meta{Pastes: s.Spans, Checkpoint: cp}}
}

// joinCheckpoints adds a "!command"'s checkpoint to those of the commands
// run before it since the last message: the state before the first and
// after the last, which a rewind restores as a turn's own calls'. A
// command that kept none (an error) leaves the whole span unkept. What
// the span changed is known when one side changed nothing and the two
// follow each other (then it is the other side's); otherwise it is not
// the union of the two (a file changed and changed back is in neither
// state), so it is left to the rewind to compare.
func joinCheckpoints(acc *session.Checkpoint, c *tools.Checkpoint) *session.Checkpoint {
	switch {
	case c == nil:
		return acc
	case acc == nil:
		return &session.Checkpoint{Before: c.Before, After: c.After, Err: c.Err, Changed: c.Changed, ChangedKnown: c.ChangedKnown}
	case acc.Err != "":
		return acc
	case c.Err != "":
		return &session.Checkpoint{Before: acc.Before, After: acc.After, Err: c.Err}
	}
	j := &session.Checkpoint{Before: acc.Before, After: c.After}
	switch {
	case acc.After != c.Before:
	case acc.Before == acc.After && c.ChangedKnown:
		j.Changed, j.ChangedKnown = c.Changed, true
	case c.Before == c.After && acc.ChangedKnown:
		j.Changed, j.ChangedKnown = acc.Changed, true
	}
	return j
}
