package tui

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
)

// TestInitSendsItsInstruction: /init is a normal turn whose user message is
// the command's fixed instruction; the chat shows "/init" once, not the
// instruction.
func TestInitSendsItsInstruction(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 100, 30)
	h.cmds.results["/init"] = commands.Result{Action: commands.ActionPrompt, Prompt: commands.InitPrompt, Text: "Asking the model to write AGENTS.md."}
	h.agent.scripts = append(h.agent.scripts, events(assistant("AGENTS.md written."), agent.Event{Kind: agent.EventDone}))
	h.typ("/init")
	h.key("enter")
	h.until("the answer", func(v string) bool { return strings.Contains(v, "AGENTS.md written.") })
	require.Equal(t, []string{commands.InitPrompt}, h.agent.Starts())
	v := h.view()
	require.Equal(t, 1, strings.Count(v, "❯ /init"), v)
	require.NotContains(t, v, "First look at the project", "the instruction is sent, not shown")
	require.Contains(t, v, "Asking the model to write AGENTS.md.")
	require.NotEmpty(t, h.m.SessionID(), "a new session was made for it")
}

// TestPromptCommandWhileRunningQueues: a command that asks the model
// (/init, a user command), typed while a turn runs, is queued as a message
// typed then would be: listed as queued, sent when the turn ends, and
// given back to edit with Up.
func TestPromptCommandWhileRunningQueues(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 100, 30)
	h.cmds.results["/init"] = commands.Result{Action: commands.ActionPrompt, Prompt: commands.InitPrompt, Text: "Asking the model to write AGENTS.md."}
	first := make(chan struct{})
	h.agent.scripts = append(h.agent.scripts, gated(first, "answer one"),
		events(assistant("AGENTS.md written."), agent.Event{Kind: agent.EventDone}))
	h.typ("first")
	h.key("enter")
	h.typ("/init")
	h.key("enter")
	h.until("/init to be queued", func(v string) bool { return strings.Contains(v, "queued ❯ /init") })
	require.NotContains(t, h.view(), "a turn is running")
	// Up takes it back; Enter queues it again.
	h.key("up")
	require.Equal(t, "/init", h.m.input.Value())
	require.NotContains(t, h.view(), "queued ❯ /init")
	h.key("enter")
	h.until("/init to be queued again", func(v string) bool { return strings.Contains(v, "queued ❯ /init") })
	require.Equal(t, []string{"first"}, h.agent.Starts())

	close(first)
	h.until("/init to run", func(v string) bool { return strings.Contains(v, "AGENTS.md written.") && !h.m.Running() })
	require.Equal(t, []string{"first", commands.InitPrompt}, h.agent.Starts())
	v := h.view()
	require.NotContains(t, v, "queued")
	require.NotContains(t, v, "First look at the project", "the instruction is sent, not shown")
	// Shown once, when its turn starts: after the answer it waited for,
	// its note under it, before its own answer.
	require.Equal(t, 1, strings.Count(v, "❯ /init"), v)
	require.Equal(t, 1, strings.Count(v, "Asking the model to write AGENTS.md."), v)
	requireInOrder(t, v, "❯ first", "answer one", "❯ /init", "Asking the model", "AGENTS.md written.")
}

// TestQueuedCommandAfterAFailedTurn: after a canceled turn the queued
// messages go back into the editor, joined; a queued command among them
// would be sent as text there, so it is named in the notice instead.
func TestQueuedCommandAfterAFailedTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 100, 30)
	h.cmds.results["/init"] = commands.Result{Action: commands.ActionPrompt, Prompt: commands.InitPrompt, Text: "Asking the model to write AGENTS.md."}
	h.agent.scripts = append(h.agent.scripts, gated(make(chan struct{}), "never"))
	h.typ("first")
	h.key("enter")
	h.typ("second")
	h.key("enter")
	h.typ("/init")
	h.key("enter")
	h.until("/init to be queued", func(v string) bool { return strings.Contains(v, "queued ❯ /init") })
	h.key("ctrl+c")
	h.until("the turn to end", func(string) bool { return !h.m.Running() })
	require.Equal(t, "second", h.m.input.Value(), "the message is back, the command is not text in it")
	require.Contains(t, h.view(), "not run: /init")
	require.Equal(t, []string{"first"}, h.agent.Starts())
}

// TestNoticesShowWhenTheTUIOpens: what the CLI has to say about the
// instruction files (cut, unreadable, too large for the window) is in the
// chat from the start.
func TestNoticesShowWhenTheTUIOpens(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 100, 30, func(o *harnessSetup) {
		o.Notices = func() []string {
			return []string{"the instructions (AGENTS.md) take 2,250 tokens of every request, 27% of the 8,192-token window"}
		}
	})
	h.until("the notice", func(v string) bool { return strings.Contains(v, "⎿ the instructions (AGENTS.md) take 2,250 tokens") })
}
