package tui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/tui/input"
)

func assistant(text string) agent.Event {
	return agent.Event{Kind: agent.EventMessage, Message: &session.Message{Role: session.RoleAssistant, Content: text}}
}

func TestEnterSendsAndShowsTheReply(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 20)
	h.agent.fixed = 1200 // what the agent measures after the turn
	h.agent.scripts = append(h.agent.scripts, events(
		agent.Event{Kind: agent.EventTextDelta, Text: "Hi "},
		agent.Event{Kind: agent.EventTextDelta, Text: "there"},
		agent.Event{Kind: agent.EventContext, Context: &agent.Size{Tokens: 1200, Window: 128000}},
		assistant("Hi there, **friend**."),
		agent.Event{Kind: agent.EventDone, Text: "Hi there, **friend**."},
	))
	h.typ("hello")
	h.key("enter")
	require.Equal(t, []string{"hello"}, h.agent.Starts())
	require.NotEmpty(t, h.m.SessionID(), "the first message created a session")
	require.False(t, h.m.Running())
	view := h.view()
	require.Contains(t, view, "❯ hello")
	require.Contains(t, view, "Hi there, **friend**.")
	require.Contains(t, view, "ctx 1.2k/128k 1%")
	require.Contains(t, view, "│ hello", "the session is titled after the first message")
	// The session exists in the store.
	s, err := h.store.Session(context.Background(), h.m.SessionID())
	require.NoError(t, err)
	require.Equal(t, "/work", s.Cwd)
}

func TestNewlineKeysDoNotSend(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 20)
	h.typ("one")
	h.key("alt+enter")
	h.typ("two")
	h.key("ctrl+j")
	h.typ("three")
	require.Empty(t, h.agent.Starts())
	h.agent.scripts = append(h.agent.scripts, events(agent.Event{Kind: agent.EventDone}))
	h.key("enter")
	require.Equal(t, []string{"one\ntwo\nthree"}, h.agent.Starts())
}

func TestEscCancelsTheTurnAndKeepsThePartialAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 20)
	canceled := make(chan struct{})
	h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) {
		ch <- agent.Event{Kind: agent.EventTextDelta, Text: "Working on it, step one"}
		<-ctx.Done()
		close(canceled)
		ch <- agent.Event{Kind: agent.EventMessage, Message: &session.Message{Role: session.RoleAssistant,
			Content: "Working on it, step one", Meta: session.Meta{Interrupted: true}}}
		ch <- agent.Event{Kind: agent.EventError, Err: agent.ErrCanceled}
	})
	h.typ("long task")
	h.key("enter")
	h.until("the streamed text", func(v string) bool { return strings.Contains(v, "step one") })
	require.True(t, h.m.Running())
	require.Contains(t, h.view(), "esc to cancel")
	h.key("esc")
	select {
	case <-canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("esc did not cancel the turn's context")
	}
	h.until("the turn's end", func(string) bool { return !h.m.Running() })
	view := h.view()
	require.Contains(t, view, "Working on it, step one")
	require.Contains(t, view, "⎿ interrupted")
	require.NotContains(t, view, "✗", "a cancel is not an error")
}

// waitCancel is a turn script that runs until it is canceled.
func waitCancel(ctx context.Context, ch chan<- agent.Event) {
	<-ctx.Done()
	ch <- agent.Event{Kind: agent.EventError, Err: agent.ErrCanceled}
}

// gated is a turn script that ends well when release is closed.
func gated(release <-chan struct{}, answer string) func(context.Context, chan<- agent.Event) {
	return func(ctx context.Context, ch chan<- agent.Event) {
		select {
		case <-release:
			ch <- assistant(answer)
			ch <- agent.Event{Kind: agent.EventDone}
		case <-ctx.Done():
			ch <- agent.Event{Kind: agent.EventError, Err: agent.ErrCanceled}
		}
	}
}

// TestEnterWhileRunningQueues: Enter during a turn queues the message,
// shown as queued; each queued message is sent when the turn before it
// ends, in order.
func TestEnterWhileRunningQueues(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	first, second := make(chan struct{}), make(chan struct{})
	h.agent.scripts = append(h.agent.scripts, gated(first, "answer one"), gated(second, "answer two"),
		events(assistant("answer three"), agent.Event{Kind: agent.EventDone}))
	h.typ("first")
	h.key("enter")
	h.typ("second")
	h.key("enter")
	h.typ("third")
	h.key("ctrl+j")
	h.typ("more")
	h.key("enter")
	require.Equal(t, []string{"first"}, h.agent.Starts())
	require.True(t, h.m.input.Empty(), "a queued message leaves the editor")
	view := h.view()
	require.Contains(t, view, "queued ❯ second")
	require.Contains(t, view, "queued ❯ third (+1 lines)")
	require.Contains(t, view, "(esc unqueues)")

	close(first)
	h.until("the second message to start", func(string) bool { return len(h.agent.Starts()) == 2 })
	require.Equal(t, []string{"first", "second"}, h.agent.Starts())
	view = h.view()
	require.NotContains(t, view, "queued ❯ second")
	require.Contains(t, view, "queued ❯ third")
	close(second)
	h.until("the queue to empty", func(v string) bool { return strings.Contains(v, "answer three") && !h.m.Running() })
	require.Equal(t, []string{"first", "second", "third\nmore"}, h.agent.Starts())
	view = h.view()
	require.NotContains(t, view, "queued")
	// The chat shows each message before its answer.
	requireInOrder(t, view, "❯ first", "answer one", "❯ second", "answer two", "❯ third", "answer three")
}

// requireInOrder fails unless view holds parts in this order.
func requireInOrder(t *testing.T, view string, parts ...string) {
	t.Helper()
	at := 0
	for _, s := range parts {
		i := strings.Index(view[at:], s)
		require.GreaterOrEqual(t, i, 0, "%q out of order in:\n%s", s, view)
		at += i
	}
}

// TestQueuedMessageCanBeEditedOrRemoved: Up on an empty editor takes the
// last queued message back to edit; Esc removes the last queued message
// before it cancels anything.
func TestQueuedMessageCanBeEditedOrRemoved(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	release := make(chan struct{})
	h.agent.scripts = append(h.agent.scripts, gated(release, "answer one"))
	h.typ("first")
	h.key("enter")
	h.typ("secnd")
	h.key("enter")
	h.typ("third")
	h.key("enter")

	h.key("esc")
	require.True(t, h.m.Running(), "esc removed a queued message, not the turn")
	require.Contains(t, h.view(), "queued message removed")
	require.Regexp(t, `queued message removed │ \S+ working`, h.view(), "the notice shows beside the running turn, not in its place")
	require.NotContains(t, h.view(), "queued ❯ third")
	require.Contains(t, h.view(), "queued ❯ secnd")

	h.send(quitExpiredMsg{seq: h.m.quitSeq}) // the notice expires
	require.Contains(t, h.view(), "(esc unqueues)")
	h.key("up")
	require.Equal(t, "secnd", h.m.input.Value())
	require.NotContains(t, h.view(), "queued ❯")
	require.Contains(t, h.view(), "esc to cancel", "with the queue empty, esc cancels the turn again")
	h.key("backspace")
	h.key("backspace")
	h.typ("ond")
	h.key("enter")
	require.Contains(t, h.view(), "queued ❯ second")

	close(release)
	h.until("the edited message to be sent", func(string) bool { return len(h.agent.Starts()) == 2 })
	require.Equal(t, []string{"first", "second"}, h.agent.Starts())
}

// TestQueueAfterAFailedTurnGoesBackToTheEditor: a canceled or failed
// turn does not send the queue; its messages return to the editor, and
// nothing typed is lost.
func TestQueueAfterAFailedTurnGoesBackToTheEditor(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.agent.scripts = append(h.agent.scripts, waitCancel)
	h.typ("first")
	h.key("enter")
	h.typ("second")
	h.key("enter")
	h.typ("third")
	h.key("enter")
	h.key("ctrl+c") // cancels the turn
	h.until("the turn's end", func(string) bool { return !h.m.Running() })
	require.Equal(t, []string{"first"}, h.agent.Starts())
	require.Equal(t, "second\nthird", h.m.input.Value())
	require.Contains(t, h.view(), "queued messages are back in the editor")
	require.NotContains(t, h.view(), "queued ❯")
}

func TestCtrlCTwiceQuits(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 20)
	h.key("ctrl+c")
	require.False(t, h.quit)
	require.Contains(t, h.view(), "press ctrl+c again to quit")
	// The hint expires; the next Ctrl+C only shows it again.
	h.send(quitExpiredMsg{seq: h.m.quitSeq})
	require.NotContains(t, h.view(), "ctrl+c again")
	h.key("ctrl+c")
	require.False(t, h.quit)
	h.key("ctrl+c")
	require.True(t, h.quit)
}

func TestCtrlCQuitsDuringATurnAndCancelsIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 20)
	canceled := make(chan struct{})
	h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) {
		<-ctx.Done()
		close(canceled)
	})
	h.typ("go")
	h.key("enter")
	h.key("ctrl+c")
	h.key("ctrl+c")
	require.True(t, h.quit)
	h.m.Wait(5 * time.Second)
	select {
	case <-canceled:
	default:
		t.Fatal("quitting left the turn running")
	}
}

// askingAgent plays a turn that asks permission once and reports the
// decision.
func askingAgent(asker *Asker, got chan<- tools.Decision) func(context.Context, chan<- agent.Event) {
	return func(ctx context.Context, ch chan<- agent.Event) {
		ch <- agent.Event{Kind: agent.EventToolRun, Call: &session.ToolCall{ID: "w", Name: "Write"}}
		d, err := asker.Ask(ctx, tools.Request{Tool: tools.ToolWrite, Summary: "a.txt (1 line)",
			Diff: "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,1 @@\n+hi\n"})
		if err != nil {
			d = tools.Deny
		}
		got <- d
		ch <- agent.Event{Kind: agent.EventDone}
	}
}

func TestPermissionDialogKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key  string
		want tools.Decision
	}{
		{"y", tools.AllowOnce},
		{"a", tools.AllowSession},
		{"n", tools.Deny},
		{"esc", tools.Deny},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			t.Parallel()
			asker := NewAsker()
			h := newHarness(t, 80, 24, func(o *harnessSetup) { o.Asker = asker })
			got := make(chan tools.Decision, 1)
			h.agent.scripts = append(h.agent.scripts, askingAgent(asker, got))
			h.typ("write a.txt")
			h.key("enter")
			h.until("the dialog", func(v string) bool { return strings.Contains(v, "Allow Write?") })
			require.Contains(t, h.view(), "+hi")
			h.pause(time.Second) // the user reads it
			h.typ("x")           // not an answer, and not typed into the editor
			require.Contains(t, h.view(), "Allow Write?")
			h.pause(time.Second)
			h.key(tt.key)
			select {
			case d := <-got:
				require.Equal(t, tt.want, d)
			case <-time.After(5 * time.Second):
				t.Fatal("the tool got no answer")
			}
			h.until("the turn's end", func(string) bool { return !h.m.Running() })
			require.NotContains(t, h.view(), "Allow Write?")
			require.Empty(t, h.m.input.Value())
		})
	}
}

func TestCancelWhileAskingClosesTheDialog(t *testing.T) {
	t.Parallel()
	asker := NewAsker()
	h := newHarness(t, 80, 24, func(o *harnessSetup) { o.Asker = asker })
	got := make(chan tools.Decision, 2)
	h.agent.scripts = append(h.agent.scripts, askingAgent(asker, got), askingAgent(asker, got))
	h.typ("one")
	h.key("enter")
	h.until("the dialog", func(v string) bool { return strings.Contains(v, "Allow Write?") })
	h.m.turn.cancel() // as a canceled context would
	require.Equal(t, tools.Deny, <-got)
	h.until("the turn's end", func(string) bool { return !h.m.Running() })
	require.NotContains(t, h.view(), "Allow Write?")
	// The next request still gets a dialog.
	h.send(quitExpiredMsg{seq: h.m.quitSeq})
	h.typ("two")
	h.key("enter")
	h.until("the second dialog", func(v string) bool { return strings.Contains(v, "Allow Write?") })
	h.pause(time.Second)
	h.key("y")
	require.Equal(t, tools.AllowOnce, <-got)
}

func TestErrorLineAndRetry(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 20, func(o *harnessSetup) {
		o.ErrorText = func(err error) string { return "worded: " + err.Error() }
	})
	h.agent.scripts = append(h.agent.scripts,
		events(agent.Event{Kind: agent.EventError, Err: errors.New("429 rate limited")}),
		events(assistant("second time lucky"), agent.Event{Kind: agent.EventDone}))
	h.typ("try")
	h.key("enter")
	require.Contains(t, h.view(), "✗ worded: 429 rate limited")
	h.key("ctrl+r")
	require.Equal(t, []string{"try", "try"}, h.agent.Starts())
	require.Contains(t, h.view(), "second time lucky")
	h.key("ctrl+r")
	require.Len(t, h.agent.Starts(), 2, "ctrl+r after a success does nothing")
}

func TestSlashCommands(t *testing.T) {
	t.Parallel()
	rep := commands.Report{Title: "Context", Sections: []commands.Section{{Lines: []string{"system prompt  812"}}}}
	t.Run("text and report", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, 80, 24)
		h.cmds.results["/context"] = commands.Result{Text: "The window holds:", Report: &rep}
		h.typ("/context")
		h.key("enter")
		require.Equal(t, []string{"/context"}, h.cmds.ran)
		require.Empty(t, h.agent.Starts(), "a command is not sent to the model")
		require.Contains(t, h.view(), "The window holds:")
		require.Contains(t, h.view(), "╭─ Context")
	})
	t.Run("error", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, 80, 24)
		h.cmds.errs["/nope"] = errors.New("unknown command /nope: did you mean /help?")
		h.typ("/nope")
		h.key("enter")
		require.Contains(t, h.view(), "✗ unknown command /nope")
	})
	t.Run("exit", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, 80, 24)
		h.cmds.results["/exit"] = commands.Result{Action: commands.ActionExit}
		h.typ("/exit")
		h.key("enter")
		require.True(t, h.quit)
	})
	t.Run("tab completes and hints", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, 80, 24)
		h.typ("/su")
		require.Contains(t, h.view(), "/summarize")
		h.key("tab")
		require.Equal(t, "/summarize ", h.m.input.Value())
	})
	t.Run("clear and resume", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		old := seed(t, st, "the old one", session.Message{Role: session.RoleUser, Content: "an old question"})
		h := newHarness(t, 80, 24, withStore(st))
		h.agent.scripts = append(h.agent.scripts, events(assistant("fresh answer"), agent.Event{Kind: agent.EventDone}))
		h.typ("new question")
		h.key("enter")
		first := h.m.SessionID()
		h.cmds.results["/resume"] = commands.Result{Action: commands.ActionResumeSession, SessionID: old}
		h.typ("/resume " + old)
		h.key("enter")
		h.until("the resumed session", func(v string) bool { return strings.Contains(v, "an old question") })
		require.Equal(t, old, h.m.SessionID())
		require.NotContains(t, h.view(), "fresh answer")
		require.Contains(t, h.view(), "the old one")
		// Up walks the project's history, which a /resume keeps: what was
		// typed here, then what the earlier session holds.
		for _, want := range []string{"/resume " + old, "new question", "an old question"} {
			h.key("up")
			require.Equal(t, want, h.m.input.Value())
		}
		h.m.input.Reset()
		h.cmds.results["/clear"] = commands.Result{Action: commands.ActionNewSession, Text: "Started a new session."}
		h.typ("/clear")
		h.key("enter")
		h.untilModel("the new session", func(m Model) bool {
			return m.SessionID() == "" && !strings.Contains(m.Screen(), "an old question")
		})
		require.NotEqual(t, first, old)
		// One line says so, and how to get back (the newcomer's list).
		require.Contains(t, h.view(), "New session")
		require.Contains(t, strings.Join(strings.Fields(h.view()), " "), "/resume "+old[:12]+" brings it back")
	})
	t.Run("one writer per session", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		st := newStore(t)
		busy := seed(t, st, "busy", session.Message{Role: session.RoleUser, Content: "busy question"})
		free := seed(t, st, "free", session.Message{Role: session.RoleUser, Content: "free question"})
		other, err := session.Open(ctx, filepath.Dir(st.Path())) // another gencode process
		require.NoError(t, err)
		defer other.Close()
		held, err := other.Lease(ctx, busy, 0)
		require.NoError(t, err)
		h := newHarness(t, 120, 24, withStore(st), func(o *harnessSetup) { o.LeaseWait = 100 * time.Millisecond })
		h.agent.scripts = append(h.agent.scripts, events(assistant("fresh answer"), agent.Event{Kind: agent.EventDone}))
		h.typ("new question")
		h.key("enter")
		created := h.m.SessionID()
		_, err = other.Lease(ctx, created, 0)
		require.ErrorIs(t, err, session.ErrInUse, "a new session is leased from its creation")

		h.cmds.results["/resume"] = commands.Result{Action: commands.ActionResumeSession, SessionID: busy}
		h.typ("/resume " + busy)
		h.key("enter")
		h.untilModel("the refusal", func(m Model) bool { return strings.Contains(h.view(), "is in use by") })
		require.Equal(t, created, h.m.SessionID(), "a session in use is not shown")
		require.Contains(t, h.view(), "session "+busy+" is in use by gencode pid")
		require.NotContains(t, h.view(), "busy question")

		h.cmds.results["/resume"] = commands.Result{Action: commands.ActionResumeSession, SessionID: free}
		h.typ("/resume " + free)
		h.key("enter")
		h.untilModel("the resumed session", func(m Model) bool { return m.SessionID() == free })
		_, err = other.Lease(ctx, free, 0)
		require.ErrorIs(t, err, session.ErrInUse, "the shown session is leased")
		require.Eventually(t, func() bool {
			l, err := other.Lease(ctx, created, 0)
			l.Release()
			return err == nil
		}, 5*time.Second, 10*time.Millisecond, "the session left behind is released")

		held.Release()
		h.cmds.results["/clear"] = commands.Result{Action: commands.ActionNewSession}
		h.typ("/clear")
		h.key("enter")
		require.Eventually(t, func() bool {
			l, err := other.Lease(ctx, free, 0)
			l.Release()
			return err == nil
		}, 5*time.Second, 10*time.Millisecond, "/clear releases the session")
	})
	t.Run("model", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		id := seed(t, st, "s", session.Message{Role: session.RoleUser, Content: "q"})
		oldSum, newSum := &fakeSummarizer{}, &fakeSummarizer{}
		h := newHarness(t, 80, 24, withStore(st), withSession(id), func(o *harnessSetup) {
			o.Summarizer = oldSum
			o.SwitchModel = func(name string) (agentRunner, Summarizer, error) {
				return &fakeAgent{model: name, window: 8192}, newSum, nil
			}
		})
		h.cmds.results["/model"] = commands.Result{Action: commands.ActionSetModel, Model: "qwen2.5-coder"}
		h.typ("/model qwen2.5-coder")
		h.key("enter")
		h.until("the new model and its window", func(view string) bool {
			return strings.Contains(view, "qwen2.5-coder") && strings.Contains(view, "/8.2k")
		})
		// /summarize now uses the new model's summarizer.
		h.cmds.results["/summarize"] = commands.Result{Action: commands.ActionSummarize}
		h.typ("/summarize")
		h.key("enter")
		h.untilModel("the summary", func(Model) bool { return len(newSum.Calls()) == 1 })
		require.Empty(t, oldSum.Calls())
	})
	t.Run("summarize", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		id := seed(t, st, "long", session.Message{Role: session.RoleUser, Content: "q"})
		sum := &fakeSummarizer{rep: summarize.Report{Phase: summarize.Finished, Duration: 1500 * time.Millisecond, Summary: &session.Summary{
			FromSeq: 1, ToSeq: 40, MessagesBefore: 52, MessagesAfter: 13, TokensBefore: 30000, TokensAfter: 6000,
			Model: "gpt-4o-mini", Topics: []string{"store tests"}, FilesModified: []string{"store.go"}}}}
		h := newHarness(t, 80, 30, withStore(st), withSession(id), func(o *harnessSetup) { o.Summarizer = sum })
		h.cmds.results["/summarize"] = commands.Result{Action: commands.ActionSummarize, Focus: "tests"}
		h.typ("/summarize tests")
		h.key("enter")
		h.until("the summary report", func(view string) bool { return strings.Contains(view, "summarized 40 msgs") })
		require.Equal(t, []string{id + ":tests"}, sum.Calls())
		view := h.view()
		require.Contains(t, view, "╭─ Session Summary")
		require.Contains(t, view, "Messages: 52 → 13")
		require.Contains(t, view, "summarized 40 msgs")
	})
	t.Run("nothing to summarize", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		id := seed(t, st, "short", session.Message{Role: session.RoleUser, Content: "q"},
			session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "b", Name: "Bash", Arguments: `{"command":"./gen.sh"}`}}},
			session.Message{Role: session.RoleTool, ToolCallID: "b", Name: "Bash", Content: "ok", Meta: session.Meta{Tool: "Bash", Command: "./gen.sh",
				Changes: &session.FileChanges{Observed: true, Created: []string{"out/gen.go"}, Deleted: []string{"old.go"}}}})
		sum := &fakeSummarizer{err: fmt.Errorf("compact: %w", summarize.ErrNothingToSummarize)}
		h := newHarness(t, 80, 30, withStore(st), withSession(id), func(o *harnessSetup) { o.Summarizer = sum })
		h.cmds.results["/summarize"] = commands.Result{Action: commands.ActionSummarize}
		h.typ("/summarize")
		h.key("enter")
		require.Contains(t, h.view(), "Nothing to summarize")
		require.Contains(t, h.view(), "nothing to summarize")
		require.NotContains(t, h.view(), "✗")
		// The session's facts all the same: what the shell changed.
		require.Contains(t, h.view(), "Files created in the session (1)")
		require.Contains(t, h.view(), "out/gen.go")
		require.Contains(t, h.view(), "old.go")
	})
	t.Run("no registry", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, 80, 24, func(o *harnessSetup) { o.Commands = nil })
		h.typ("/help")
		h.key("enter")
		require.Contains(t, h.view(), "slash commands are not available")
	})
}

func TestScrollKeys(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	var msgs []session.Message
	for i := range 80 {
		msgs = append(msgs, session.Message{Role: session.RoleUser, Content: fmt.Sprintf("message %d", i)})
	}
	id := seed(t, st, "scroll", msgs...)
	h := newHarness(t, 80, 20, withStore(st), withSession(id))
	require.Contains(t, h.view(), "message 79")
	h.key("pgup")
	require.NotContains(t, h.view(), "message 79")
	h.key("end") // the editor is empty: End scrolls the chat
	require.Contains(t, h.view(), "message 79")
	h.key("home")
	require.Contains(t, h.view(), "message 0")
	h.typ("abc")
	h.key("end") // with text, End moves the cursor
	require.Contains(t, h.view(), "message 0")
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	require.NotContains(t, h.view(), "message 0")
}

// TestResumePagesOlderHistory opens a long session: only the tail is
// loaded, and scrolling to the top pages in what came before.
func TestResumePagesOlderHistory(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	var msgs []session.Message
	for i := range 500 {
		msgs = append(msgs, session.Message{Role: session.RoleUser, Content: fmt.Sprintf("message %d", i)})
	}
	id := seed(t, st, "long", msgs...)
	h := newHarness(t, 80, 20, withStore(st), withSession(id), func(o *harnessSetup) { o.HistoryTail = 50 })
	require.Equal(t, 50, h.m.chat.Len())
	for range 40 {
		h.key("pgup")
	}
	require.Greater(t, h.m.chat.Len(), 50)
	h.key("home")
	for h.m.chat.Len() < 500 {
		n := h.m.chat.Len()
		h.key("home")
		if h.m.chat.Len() == n {
			t.Fatalf("paging stopped at %d messages", n)
		}
	}
	h.key("home")
	require.Contains(t, h.view(), "message 0")
}

func TestResizeReflows(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	id := seed(t, st, "resize", chatHistory()...)
	h := newHarness(t, 120, 30, withStore(st), withSession(id))
	for _, size := range [][2]int{{60, 20}, {100, 45}, {30, 12}} {
		h.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		lines := strings.Split(h.view(), "\n")
		require.Len(t, lines, size[1], "at %v", size)
		for _, l := range lines {
			require.LessOrEqual(t, ansi.StringWidth(l), size[0], "at %v: %q", size, l)
		}
	}
}

// blockingStore blocks every read until released: if Update or View read
// the store, the test would hang.
type blockingStore struct {
	*session.Store
	release chan struct{}
}

func (b *blockingStore) wait() { <-b.release }

func (b *blockingStore) Session(ctx context.Context, id string) (session.Session, error) {
	b.wait()
	return b.Store.Session(ctx, id)
}

func (b *blockingStore) Tail(ctx context.Context, id string, n int) ([]session.Message, error) {
	b.wait()
	return b.Store.Tail(ctx, id, n)
}

func (b *blockingStore) LoadView(ctx context.Context, id string) (session.View, error) {
	b.wait()
	return b.Store.LoadView(ctx, id)
}

func (b *blockingStore) Tally(ctx context.Context, id string, r session.TallyRule) (session.Tally, error) {
	b.wait()
	return b.Store.Tally(ctx, id, r)
}

func (b *blockingStore) CreateSession(ctx context.Context, cwd, model string) (session.Session, error) {
	b.wait()
	return b.Store.CreateSession(ctx, cwd, model)
}

func TestUpdateNeverWaitsForTheStore(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	id := seed(t, st, "t", chatHistory()...)
	bs := &blockingStore{Store: st, release: make(chan struct{})}
	done := make(chan struct{})
	var h *harness
	go func() {
		defer close(done)
		h = newHarness(t, 80, 20, withStore(bs), withSession(id), noSettle)
		h.quiet = 50 * time.Millisecond
		h.typ("hello")
		h.key("enter")
		h.key("pgup")
		_ = h.view()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Update or View blocked on the store")
	}
	require.Contains(t, h.view(), "❯ hello", "the message shows before the store answers")
	close(bs.release)
	h.until("the history", func(v string) bool { return strings.Contains(v, "Now add a test") })
}

// TestBackgroundCompactionAfterTheTurn: a background summary that
// finishes when no turn runs still reaches the status bar and the chat.
func TestBackgroundCompactionAfterTheTurn(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	id := seed(t, st, "long", session.Message{Role: session.RoleUser, Content: "q"})
	ch := make(chan summarize.Report, 4)
	h := newHarness(t, 100, 24, withStore(st), withSession(id), func(o *harnessSetup) { o.Compactions = ch })
	ch <- summarize.Report{SessionID: id, Phase: summarize.Started, Background: true}
	h.until("the spinner", func(v string) bool { return strings.Contains(v, "summarizing in the background") })
	ch <- summarize.Report{SessionID: "another", Phase: summarize.Failed}
	ch <- summarize.Report{SessionID: id, Phase: summarize.Finished, Background: true, Summary: &session.Summary{
		FromSeq: 1, ToSeq: 30, TokensBefore: 20000, TokensAfter: 3000, Topics: []string{"the store"}}}
	h.until("the notice", func(v string) bool { return strings.Contains(v, "Summarized messages 1-30") })
	require.Contains(t, h.view(), "summarized 30 msgs")
	require.NotContains(t, h.view(), "failed")
}

// TestStaleDecisionCannotAnswerTheNextDialog: a second y pressed on a
// dialog already answered (key repeat) must not approve the next tool call,
// which the user has not seen yet.
func TestStaleDecisionCannotAnswerTheNextDialog(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	ctx := context.Background()
	first, second := make(chan tools.Decision, 1), make(chan tools.Decision, 1)
	h.update(askMsg{ctx: ctx, req: tools.Request{Tool: "Write", Summary: "a.txt"}, reply: first})
	_, cmd := h.m.dialog.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
	stale := cmd() // the same key, pressed twice before the dialog closed
	h.update(cmd())
	require.Equal(t, tools.AllowOnce, <-first)

	h.update(askMsg{ctx: ctx, req: tools.Request{Tool: "Bash", Summary: "rm -rf build"}, reply: second})
	h.update(stale)
	select {
	case d := <-second:
		t.Fatalf("the Bash call was answered %v by a key pressed on the Write dialog", d)
	default:
	}
	require.Contains(t, h.view(), "Allow Bash?")
	_, cmd = h.m.dialog.Update(tea.KeyPressMsg{Code: 'n', Text: "n"})
	h.update(cmd())
	require.Equal(t, tools.Deny, <-second)
}

// TestSummarizeWaitsForTheTurn: /summarize during a running turn is
// refused with a note, so the turn never waits behind a manual compaction.
func TestSummarizeWaitsForTheTurn(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	id := seed(t, st, "long", session.Message{Role: session.RoleUser, Content: "q"})
	sum := &fakeSummarizer{}
	h := newHarness(t, 80, 30, withStore(st), withSession(id), func(o *harnessSetup) { o.Summarizer = sum })
	h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) { <-ctx.Done() })
	h.cmds.results["/summarize"] = commands.Result{Action: commands.ActionSummarize}
	h.typ("go on")
	h.key("enter")
	require.True(t, h.m.Running())
	h.typ("/summarize")
	h.key("enter")
	require.Empty(t, sum.Calls(), "no compaction while the turn runs")
	require.Contains(t, h.view(), "/summarize when it ends")
	h.key("esc")
}

// TestQuitRightAfterSendWaitsForTheTurn: a quit that comes before any Cmd
// ran still waits for the turn to write what it has, so the store is not
// closed under it and the message is not lost.
func TestQuitRightAfterSendWaitsForTheTurn(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	id := seed(t, st, "s", session.Message{Role: session.RoleUser, Content: "q"})
	h := newHarness(t, 80, 24, withStore(st), withSession(id))
	written := make(chan struct{})
	h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) {
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond) // the partial answer being written
		close(written)
	})
	nm, _ := h.m.Update(input.SubmitMsg{Text: "hello"}) // no Cmd has run yet
	m := nm.(Model)
	require.True(t, m.Running())
	m.Wait(5 * time.Second)
	select {
	case <-written:
	default:
		t.Fatal("Wait returned before the turn finished writing")
	}
}

// bashAsker plays a turn that waits for open, then asks to run a Bash
// command and reports the decision.
func bashAsker(asker *Asker, open <-chan struct{}, got chan<- tools.Decision) func(context.Context, chan<- agent.Event) {
	return func(ctx context.Context, ch chan<- agent.Event) {
		<-open
		ch <- agent.Event{Kind: agent.EventToolRun, Call: &session.ToolCall{ID: "b", Name: "Bash"}}
		d, err := asker.Ask(ctx, tools.Request{Tool: tools.ToolBash, Summary: "rm -rf build", Args: `{"command":"rm -rf build"}`})
		if err != nil {
			d = tools.Deny
		}
		got <- d
		ch <- agent.Event{Kind: agent.EventDone}
	}
}

// typeAhead types s one key every 100 ms, without waiting on the model.
func (h *harness) typeAhead(s string) {
	for _, r := range s {
		h.pause(100 * time.Millisecond)
		h.update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	h.pump()
}

// TestTypeAheadCannotAnswerTheDialog: a Bash call's dialog opens while
// the user types the next message. The "a" of "about", the "y" and "n"
// must not answer it: every key goes to the draft, shown under the dialog.
// Once the user stops and has seen it, a deliberate y answers.
func TestTypeAheadCannotAnswerTheDialog(t *testing.T) {
	t.Parallel()
	asker := NewAsker()
	h := newHarness(t, 80, 30, func(o *harnessSetup) { o.Asker = asker })
	open, got := make(chan struct{}), make(chan tools.Decision, 1)
	h.agent.scripts = append(h.agent.scripts, bashAsker(asker, open, got))
	h.typ("clean the build")
	h.key("enter")
	h.typeAhead("so what do you ")
	close(open)
	h.until("the dialog", func(v string) bool { return strings.Contains(v, "Allow Bash?") })
	h.typeAhead("think about my plan")
	h.key("enter") // held back: a turn runs
	select {
	case d := <-got:
		t.Fatalf("typing answered the dialog: %v", d)
	default:
	}
	const draft = "so what do you think about my plan"
	require.Equal(t, draft, h.m.input.Value(), "every letter is in the draft")
	view := h.view()
	require.Contains(t, view, "Allow Bash?")
	require.Contains(t, view, "❯ "+draft, "the draft shows under the dialog")
	require.Contains(t, view, "typed into your draft")

	h.pause(answerGuard)
	h.key("y")
	select {
	case d := <-got:
		require.Equal(t, tools.AllowOnce, d)
	case <-time.After(5 * time.Second):
		t.Fatal("a deliberate y did not answer the dialog")
	}
	h.until("the turn's end", func(string) bool { return !h.m.Running() })
	require.Equal(t, draft, h.m.input.Value())
	require.NotContains(t, h.view(), "Allow Bash?")
}

// TestDialogGuardAfterItOpens: a key right after the dialog opens goes to
// the draft; Esc always denies at once (denying is safe).
func TestDialogGuardAfterItOpens(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		first string
		after time.Duration
		want  tools.Decision
		draft string
	}{
		{"y too soon, then y", "y", 100 * time.Millisecond, tools.AllowOnce, "y"},
		{"a too soon, then y", "a", answerGuard - time.Millisecond, tools.AllowOnce, "a"},
		{"esc at once", "esc", 0, tools.Deny, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			asker := NewAsker()
			h := newHarness(t, 80, 30, func(o *harnessSetup) { o.Asker = asker })
			open, got := make(chan struct{}), make(chan tools.Decision, 1)
			close(open)
			h.agent.scripts = append(h.agent.scripts, bashAsker(asker, open, got))
			h.typ("clean the build")
			h.key("enter")
			h.until("the dialog", func(v string) bool { return strings.Contains(v, "Allow Bash?") })
			h.pause(answerGuard) // read the dialog; the last key was long ago
			h.pause(-answerGuard + tt.after)
			h.key(tt.first)
			if tt.first != "esc" {
				select {
				case d := <-got:
					t.Fatalf("%s %s after the dialog opened answered %v", tt.first, tt.after, d)
				default:
				}
				require.Equal(t, tt.draft, h.m.input.Value())
				h.pause(answerGuard)
				h.key("y")
			}
			select {
			case d := <-got:
				require.Equal(t, tt.want, d)
			case <-time.After(5 * time.Second):
				t.Fatal("the dialog was not answered")
			}
			h.until("the turn's end", func(string) bool { return !h.m.Running() })
			require.Equal(t, tt.draft, h.m.input.Value())
		})
	}
}

// TestDialogStatusSaysWhatEscDoes: while the dialog asks, Esc denies the
// call; the status line says so, and says "cancel" again afterwards.
func TestDialogStatusSaysWhatEscDoes(t *testing.T) {
	t.Parallel()
	asker := NewAsker()
	h := newHarness(t, 120, 30, func(o *harnessSetup) { o.Asker = asker })
	open, got := make(chan struct{}), make(chan tools.Decision, 1)
	close(open)
	h.agent.scripts = append(h.agent.scripts, bashAsker(asker, open, got),
		func(ctx context.Context, ch chan<- agent.Event) { <-ctx.Done() })
	h.typ("clean the build")
	h.key("enter")
	h.until("the dialog", func(v string) bool { return strings.Contains(v, "Allow Bash?") })
	require.Contains(t, h.view(), "(esc denies)")
	require.NotContains(t, h.view(), "esc to cancel")
	h.key("esc")
	require.Equal(t, tools.Deny, <-got)
	h.until("the turn's end", func(string) bool { return !h.m.Running() })
	h.typ("next")
	h.key("enter")
	require.Contains(t, h.view(), "(esc to cancel)")
	h.key("esc")
}

// TestCtrlCClearsTheDraftFirst: Ctrl+C on a draft clears it (Up brings it
// back); a second Ctrl+C, on the empty editor, quits.
func TestCtrlCClearsTheDraftFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 20)
	h.typ("half a thought")
	h.key("ctrl+c")
	require.False(t, h.quit)
	require.Empty(t, h.m.input.Value())
	require.Contains(t, h.view(), "draft cleared")
	h.key("up")
	require.Equal(t, "half a thought", h.m.input.Value(), "Up brings the cleared draft back")
	h.key("ctrl+c")
	require.Empty(t, h.m.input.Value())
	h.key("ctrl+c")
	require.True(t, h.quit)
}

// TestCtrlCCancelsTheTurnFirst: during a turn the first Ctrl+C cancels it
// as Esc does (the partial answer stays, the draft too); the next clears
// the draft, the one after quits.
func TestCtrlCCancelsTheTurnFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 20)
	h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) {
		ch <- agent.Event{Kind: agent.EventTextDelta, Text: "Working on it"}
		<-ctx.Done()
		ch <- agent.Event{Kind: agent.EventMessage, Message: &session.Message{Role: session.RoleAssistant,
			Content: "Working on it", Meta: session.Meta{Interrupted: true}}}
		ch <- agent.Event{Kind: agent.EventError, Err: agent.ErrCanceled}
	})
	h.typ("long task")
	h.key("enter")
	h.until("the streamed text", func(v string) bool { return strings.Contains(v, "Working on it") })
	h.typ("next question")
	h.key("ctrl+c")
	h.until("the turn's end", func(string) bool { return !h.m.Running() })
	require.False(t, h.quit)
	require.Contains(t, h.view(), "⎿ interrupted")
	require.Equal(t, "next question", h.m.input.Value())
	h.key("ctrl+c")
	require.False(t, h.quit)
	require.Empty(t, h.m.input.Value())
	h.key("ctrl+c")
	require.True(t, h.quit)
}

// TestPasteShowsAsItsPlaceholderAfterResume: a 500-line paste shows as its
// placeholder when sent, and again when the session is opened later (-c,
// /resume): the log says where the paste lies. Up recalls it the same way
// and sends the whole text again.
func TestPasteShowsAsItsPlaceholderAfterResume(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, "log line %03d\n", i)
	}
	big := b.String()
	st := newStore(t)
	h := newHarness(t, 80, 30, withStore(st))
	h.agent.scripts = append(h.agent.scripts, events(agent.Event{Kind: agent.EventDone}))
	h.typ("what failed here? ")
	h.send(tea.PasteMsg{Content: big})
	h.key("enter")
	require.Equal(t, []string{"what failed here? " + big}, h.agent.Starts(), "the model gets the whole text")
	spans := h.agent.metas[0].Pastes
	require.Len(t, spans, 1)
	ph := "[pasted text #1: 500 lines, 6.3 KB]"
	require.Contains(t, h.view(), "❯ what failed here? "+ph)

	// What the agent logs (text and meta), opened later as -c would.
	id := seed(t, st, "", session.Message{Role: session.RoleUser, Content: "what failed here? " + big, Meta: session.Meta{Pastes: spans}},
		session.Message{Role: session.RoleAssistant, Content: "Line 250 did."})
	for _, open := range []string{"-c", "/resume"} {
		t.Run(open, func(t *testing.T) {
			var r *harness
			if open == "-c" {
				r = newHarness(t, 80, 30, withStore(st), withSession(id))
			} else {
				r = newHarness(t, 80, 30, withStore(st))
				r.cmds.results["/resume"] = commands.Result{Action: commands.ActionResumeSession, SessionID: id}
				r.typ("/resume " + id)
				r.key("enter")
				r.until("the history", func(v string) bool { return strings.Contains(v, "Line 250 did.") })
			}
			view := r.view()
			require.Contains(t, view, "❯ what failed here? "+ph)
			require.NotContains(t, view, "log line 250")
			r.key("up")
			if open == "/resume" {
				require.Equal(t, "/resume "+id, r.m.input.Value(), "the history outlives a /resume")
				r.key("up")
			}
			require.Equal(t, "what failed here? "+ph, r.m.input.Value())
			r.agent.scripts = append(r.agent.scripts, events(agent.Event{Kind: agent.EventDone}))
			r.key("enter")
			require.Equal(t, []string{"what failed here? " + big}, r.agent.Starts())
		})
	}
}

// TestUpRecallsThePromptsOfEarlierSessions: in a new session, Up walks
// the messages sent in the project's earlier sessions, newest first; a
// paste comes back as its placeholder and is sent whole; another
// project's messages are not there.
func TestUpRecallsThePromptsOfEarlierSessions(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	big := strings.Repeat("a pasted line\n", 40)
	seed(t, st, "old", session.Message{Role: session.RoleUser, Content: "run the tests"},
		session.Message{Role: session.RoleAssistant, Content: "they pass"},
		session.Message{Role: session.RoleUser, Content: "look: " + big, Meta: session.Meta{Pastes: []session.Paste{{Start: 6, End: 6 + len(big), N: 1}}}})
	other, err := st.CreateSession(context.Background(), "/elsewhere", "gpt-4o-mini")
	require.NoError(t, err)
	_, err = st.Append(context.Background(), other.ID, session.Message{Role: session.RoleUser, Content: "not this project"})
	require.NoError(t, err)

	h := newHarness(t, 80, 20, withStore(st))
	h.until("the project's prompts", func(string) bool { return len(h.m.input.Value()) == 0 && h.m.input.Recallable() == 2 })
	h.key("up")
	require.Equal(t, "look: [pasted text #1: 40 lines, 560 bytes]", h.m.input.Value())
	h.key("up")
	require.Equal(t, "run the tests", h.m.input.Value())
	h.key("up")
	require.Equal(t, "run the tests", h.m.input.Value(), "nothing older: not another project's")
	h.key("down")
	h.key("enter")
	require.Equal(t, []string{"look: " + big}, h.agent.Starts())
}

// TestDenyAndSayWhy: t in the dialog asks for a reason; the keys typed
// then, however fast, are the reason (not the draft's), and Enter denies
// with it. Esc while typing denies without one.
func TestDenyAndSayWhy(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ end, want string }{{"enter", "use the Makefile"}, {"esc", ""}} {
		t.Run(tt.end, func(t *testing.T) {
			t.Parallel()
			asker := NewAsker()
			h := newHarness(t, 80, 24, func(o *harnessSetup) { o.Asker = asker })
			type answer struct {
				d      tools.Decision
				reason string
			}
			got := make(chan answer, 1)
			h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) {
				d, reason, err := asker.AskWhy(ctx, tools.Request{Tool: tools.ToolBash, Summary: "go test ./...", Args: `{"command":"go test ./..."}`})
				require.NoError(t, err)
				got <- answer{d, reason}
				ch <- agent.Event{Kind: agent.EventDone}
			})
			h.typ("run the tests")
			h.key("enter")
			h.until("the dialog", func(v string) bool { return strings.Contains(v, "Allow Bash?") })
			require.Contains(t, h.view(), "t say why")
			h.pause(time.Second)
			h.key("t")
			require.Contains(t, h.view(), "why not?")
			h.typ("use the Makefilee") // no pause between keys: still the reason
			h.key("backspace")
			require.Contains(t, h.view(), "why not? use the Makefile")
			require.Empty(t, h.m.input.Value(), "the reason went to the draft")
			h.key(tt.end)
			select {
			case a := <-got:
				require.Equal(t, answer{tools.Deny, tt.want}, a)
			case <-time.After(5 * time.Second):
				t.Fatal("the tool got no answer")
			}
			h.until("the turn's end", func(string) bool { return !h.m.Running() })
			require.NotContains(t, h.view(), "Allow Bash?")
		})
	}
}

// statusCtx is the context figure of the status bar.
func statusCtx(view string) string {
	lines := strings.Split(strings.TrimRight(view, "\n"), "\n")
	last := lines[len(lines)-1]
	i := strings.Index(last, "ctx ")
	if i < 0 {
		return ""
	}
	f := strings.Fields(last[i:])
	out := strings.Join(f[:3], " ")
	if len(f) > 3 && f[3] == "(server)" {
		out += " " + f[3]
	}
	return out
}

// statusLine is the status bar: the view's last line.
func statusLine(view string) string {
	lines := strings.Split(strings.TrimRight(view, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestStatusContextIsNeverStale is issue 12.8: the status bar's context
// figure is the size of the next request, as /context measures it, in each
// state where it used to be stale.
func TestStatusContextIsNeverStale(t *testing.T) {
	t.Parallel()
	t.Run("a new session's first turn", func(t *testing.T) {
		t.Parallel()
		// It said ctx 0 until the provider's usage came, and local
		// servers often send none.
		h := newHarness(t, 120, 20, func(o *harnessSetup) { o.Agent.(*fakeAgent).fixed = 2500 })
		h.until("the fixed part", func(v string) bool { return statusCtx(v) == "ctx 2.5k/128k 2%" })
		gate := make(chan struct{})
		h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) {
			ch <- agent.Event{Kind: agent.EventContext, Context: &agent.Size{Tokens: 2600, Window: 128000}}
			<-gate
			ch <- agent.Event{Kind: agent.EventDone}
		})
		h.typ("first message")
		h.key("enter")
		h.until("the first request's size during the first turn", func(v string) bool { return statusCtx(v) == "ctx 2.6k/128k 2%" })
		close(gate)
		h.until("the turn's end", func(string) bool { return !h.m.Running() })
	})
	t.Run("right after a summary", func(t *testing.T) {
		t.Parallel()
		// It rose again at once: the provider's count of the request sent
		// before the summary came after it.
		bg := make(chan summarize.Report, 1)
		h := newHarness(t, 120, 20, func(o *harnessSetup) {
			o.Agent.(*fakeAgent).fixed = 9000
			o.Compactions = bg
		})
		h.until("the first measure", func(v string) bool { return statusCtx(v) == "ctx 9.0k/128k 7%" })
		gate, gate2 := make(chan struct{}), make(chan struct{})
		h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) {
			ch <- agent.Event{Kind: agent.EventContext, Context: &agent.Size{Tokens: 9000, Window: 128000}}
			<-gate
			ch <- agent.Event{Kind: agent.EventContext, Context: &agent.Size{Tokens: 4000, Window: 128000}}
			// The provider's count for the request, sent after the summary.
			ch <- agent.Event{Kind: agent.EventUsage, Usage: &agent.Usage{PromptTokens: 9100, CompletionTokens: 50, Window: 128000}}
			<-gate2
			ch <- agent.Event{Kind: agent.EventDone}
		})
		h.typ("a message")
		h.key("enter")
		h.until("the request's size", func(v string) bool { return statusCtx(v) == "ctx 9.0k/128k 7%" })
		// A summary lands during the turn: measured at once.
		h.agent.setFixed(4000, 128000, false)
		bg <- summarize.Report{Phase: summarize.Finished, Summary: &session.Summary{FromSeq: 1, ToSeq: 30, TokensBefore: 9000, TokensAfter: 4000}}
		h.until("the figure after the summary", func(v string) bool { return statusCtx(v) == "ctx 4.0k/128k 3%" })
		close(gate)
		h.untilModel("the provider's usage", func(Model) bool { return h.sawEvent(agent.EventUsage) })
		require.Equal(t, "ctx 4.0k/128k 3%", statusCtx(h.view()), "the provider's count from before the summary is not shown")
		h.agent.setFixed(4100, 128000, false)
		close(gate2)
		h.until("the turn's end", func(string) bool { return !h.m.Running() })
		require.Equal(t, "ctx 4.1k/128k 3%", statusCtx(h.view()))

		// A background summary between turns: measured again at once.
		h.agent.setFixed(2000, 128000, false)
		bg <- summarize.Report{Phase: summarize.Finished, Summary: &session.Summary{FromSeq: 1, ToSeq: 40, TokensBefore: 4100, TokensAfter: 2000}}
		h.until("the figure after a background summary", func(v string) bool { return statusCtx(v) == "ctx 2.0k/128k 2%" })
	})
	t.Run("after an overflow", func(t *testing.T) {
		t.Parallel()
		// The request that failed stayed as the figure after the turn,
		// though the overflow compaction or the learned window changed it.
		h := newHarness(t, 120, 20, func(o *harnessSetup) { o.Agent.(*fakeAgent).fixed = 9000 })
		h.until("the first measure", func(v string) bool { return statusCtx(v) == "ctx 9.0k/128k 7%" })
		h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) {
			ch <- agent.Event{Kind: agent.EventContext, Context: &agent.Size{Tokens: 9000, Window: 128000}}
			h.agent.setFixed(3000, 6000, true) // the log after the turn: compacted, the window learned
			ch <- agent.Event{Kind: agent.EventError, Err: errors.New("send: context window exceeded")}
		})
		h.typ("a message")
		h.key("enter")
		h.until("the turn's end", func(string) bool { return !h.m.Running() })
		h.until("a fresh figure", func(v string) bool { return statusCtx(v) == "ctx 3.0k/6.0k 50% (server)" })
	})
	for _, how := range []string{"/clear", "/resume"} {
		t.Run("nothing to summarize is gone after "+how, func(t *testing.T) {
			t.Parallel()
			st := newStore(t)
			other := seed(t, st, "the other one", session.Message{Role: session.RoleUser, Content: "an old question"})
			sum := &fakeSummarizer{err: fmt.Errorf("compact: %w", summarize.ErrNothingToSummarize)}
			h := newHarness(t, 120, 20, withStore(st), func(o *harnessSetup) { o.Summarizer = sum })
			h.agent.scripts = append(h.agent.scripts, events(assistant("an answer"), agent.Event{Kind: agent.EventDone}))
			h.typ("a question")
			h.key("enter")
			h.until("the answer", func(v string) bool { return strings.Contains(v, "an answer") })
			h.cmds.results["/summarize"] = commands.Result{Action: commands.ActionSummarize}
			h.typ("/summarize")
			h.key("enter")
			h.until("the summarizer's word", func(v string) bool { return strings.Contains(statusLine(v), "nothing to summarize") })
			h.cmds.results["/clear"] = commands.Result{Action: commands.ActionNewSession, Text: "Started a new session."}
			h.cmds.results["/resume"] = commands.Result{Action: commands.ActionResumeSession, SessionID: other}
			h.typ(how)
			h.key("enter")
			h.until("a fresh status", func(v string) bool { return strings.Contains(statusLine(v), "summarizer idle") })
			require.NotContains(t, statusLine(h.view()), "nothing to summarize")
		})
	}
}

// TestRefusedMessageNeverTitlesTheSession: a first message the agent
// refuses as too large for the window is not the new session's title
// (the status bar named the session after it); the next one is.
func TestRefusedMessageNeverTitlesTheSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 100, 20)
	tooLarge := fmt.Errorf("your message is about 9000 tokens: %w", agent.ErrMessageTooLarge)
	h.agent.scripts = append(h.agent.scripts,
		events(agent.Event{Kind: agent.EventError, Err: tooLarge}),
		events(agent.Event{Kind: agent.EventMessage, Message: &session.Message{Role: session.RoleUser, Content: "a short question"}},
			assistant("an answer"), agent.Event{Kind: agent.EventDone}))
	h.typ("a huge paste that does not fit")
	h.key("enter")
	h.until("the refusal", func(v string) bool { return strings.Contains(v, "the message is back in the editor") })
	require.Empty(t, h.m.title)
	require.NotContains(t, lastLine(h.view()), "a huge paste", "the status bar names the session after a refused message")
	h.m.input.Reset()
	h.typ("a short question")
	h.key("enter")
	h.until("the answer", func(v string) bool { return strings.Contains(v, "an answer") })
	require.Equal(t, "a short question", h.m.title)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestNotesLiveAsLongAsTheirState: a status note goes when what it says
// stops being true. "draft cleared · ctrl+c again to quit" goes when Up
// brings the draft back, and the next Ctrl+C clears it again instead of
// quitting; "queued message removed" expires like the other notes.
func TestNotesLiveAsLongAsTheirState(t *testing.T) {
	t.Parallel()
	t.Run("draft back", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, 100, 20)
		h.typ("a draft")
		h.key("ctrl+c")
		require.Contains(t, lastLine(h.view()), "draft cleared")
		h.key("up")
		require.Equal(t, "a draft", h.m.input.Value())
		require.NotContains(t, lastLine(h.view()), "draft cleared", "the note outlived the cleared draft")
		h.key("ctrl+c")
		require.False(t, h.quit, "ctrl+c quit with a draft in the editor")
		require.True(t, h.m.input.Empty())
	})
	t.Run("queued message removed", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, 100, 20)
		release := make(chan struct{})
		h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			ch <- agent.Event{Kind: agent.EventDone}
		})
		defer close(release)
		h.typ("first")
		h.key("enter")
		h.typ("second")
		h.key("enter")
		seq := h.m.quitSeq
		h.key("esc")
		require.Contains(t, lastLine(h.view()), "queued message removed")
		require.Greater(t, h.m.quitSeq, seq, "no timer ends the note")
		h.send(quitExpiredMsg{seq: h.m.quitSeq})
		require.NotContains(t, lastLine(h.view()), "queued message removed", "the note stayed through later turns")
	})
}

// TestBackgroundNotesShowLive: a note from beside the turns (an MCP
// server that failed) shows in the chat when it comes, idle or during a
// turn, each once.
func TestBackgroundNotesShowLive(t *testing.T) {
	t.Parallel()
	notes := make(chan string, 4)
	h := newHarness(t, 100, 24, func(o *harnessSetup) { o.Notes = notes })
	notes <- "MCP server gh failed: start: exec: \"gh-mcp\": not found; gencode restarts it (see /mcp)"
	h.until("the failure", func(v string) bool { return strings.Contains(v, "MCP server gh failed") })
	release := make(chan struct{})
	h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		ch <- agent.Event{Kind: agent.EventDone}
	})
	h.typ("hello")
	h.key("enter")
	h.until("the turn", func(string) bool { return h.m.Running() })
	notes <- "MCP server gh is running again"
	h.until("the recovery, during the turn", func(v string) bool { return strings.Contains(v, "MCP server gh is running again") })
	require.True(t, h.m.Running())
	close(release)
	h.until("the turn's end", func(string) bool { return !h.m.Running() })
	require.Equal(t, 1, strings.Count(h.view(), "MCP server gh failed"))
	require.Equal(t, 1, strings.Count(h.view(), "MCP server gh is running again"))
}

// TestEmptyNoteMeasuresTheContextAgain: what the next request carries
// changed beside the turns (an MCP server's tools came or went): the
// status bar measures again, idle, and says what /context would; the
// chat shows nothing for it.
func TestEmptyNoteMeasuresTheContextAgain(t *testing.T) {
	t.Parallel()
	notes := make(chan string, 4)
	h := newHarness(t, 120, 24, func(o *harnessSetup) { o.Notes = notes })
	h.until("the first figure", func(v string) bool { return strings.Contains(v, "ctx 0/128k") })
	before := h.m.chat.View()
	h.agent.setFixed(1860, 128000, false) // a server's schemas are in the next request
	notes <- ""
	h.until("the figure measured again", func(v string) bool { return strings.Contains(v, "ctx 1.9k/128k") })
	require.Equal(t, before, h.m.chat.View(), "nothing said in the chat")
}
