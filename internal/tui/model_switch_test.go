package tui

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/session"
)

// realCommands is the commands registry itself, as gencode wires it.
func realCommands(st *session.Store) func(*harnessSetup) {
	return func(o *harnessSetup) {
		o.Commands = commands.New(commands.Deps{Store: st, Config: config.Default(), Window: func(string) int { return 8192 }})
	}
}

// TestModelSwitchSaysSwitchedOnceDone: /model says "Switched" when the
// switch is done, not before; a switch that fails says so, and nothing
// says it switched.
func TestModelSwitchSaysSwitchedOnceDone(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	id := seed(t, st, "s", session.Message{Role: session.RoleUser, Content: "q"})
	gate := make(chan struct{})
	h := newHarness(t, 100, 24, withStore(st), withSession(id), realCommands(st), func(o *harnessSetup) {
		o.SwitchModel = func(name string) (agentRunner, Summarizer, error) {
			<-gate
			if name == "nope" {
				return nil, nil, errors.New("no such model")
			}
			return &fakeAgent{model: name, window: 8192}, nil, nil
		}
	})
	h.typ("/model qwen2.5-coder")
	h.key("enter")
	require.NotContains(t, h.view(), "Switched", "said before the switch")
	close(gate)
	h.until("the switch", func(v string) bool {
		return strings.Contains(v, "Switched to qwen2.5-coder (context window 8,192 tokens).")
	})

	h.typ("/model nope")
	h.key("enter")
	h.until("the failure", func(v string) bool { return strings.Contains(v, "could not switch to nope: no such model") })
	require.NotContains(t, h.view(), "Switched to nope")
	require.Contains(t, h.view(), "qwen2.5-coder", "the model in use stays")
}

// TestModelSwitchSaysTheServersWindow: the switch says the window the
// server gives the new model (the agent's probe), not the model table's
// (128,000 on an Ollama that loaded it at 4,096).
func TestModelSwitchSaysTheServersWindow(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	id := seed(t, st, "s", session.Message{Role: session.RoleUser, Content: "q"})
	h := newHarness(t, 100, 24, withStore(st), withSession(id), realCommands(st), func(o *harnessSetup) {
		o.SwitchModel = func(name string) (agentRunner, Summarizer, error) {
			return &fakeAgent{model: name, window: 128000, probed: 4096}, nil, nil
		}
	})
	h.typ("/model llama3.2")
	h.key("enter")
	h.until("the switch", func(v string) bool { return strings.Contains(v, "Switched to llama3.2") })
	require.Contains(t, h.view(), "Switched to llama3.2 (context window 4,096 tokens).")
}

// TestCommandsGetTheStateTheyWereTypedFor: each command is given the
// session and model shown when it was typed, with the agent's view policy.
func TestCommandsGetTheStateTheyWereTypedFor(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	id := seed(t, st, "s", session.Message{Role: session.RoleUser, Content: "q"})
	h := newHarness(t, 80, 24, withStore(st), withSession(id))
	h.typ("/history")
	h.key("enter")
	h.cmds.mu.Lock()
	defer h.cmds.mu.Unlock()
	require.Len(t, h.cmds.states, 1)
	got := h.cmds.states[0]
	require.NotNil(t, got.AwaitWindow, "/context waits for the server's window")
	got.AwaitWindow = nil
	require.Equal(t, commands.State{SessionID: id, Model: "gpt-4o-mini"}, got)
}

// TestModelSwitchAndSummarizeDoNotOverlap: the old model's summarizer must
// be done with the session before the new model's works on it, so /model
// waits for a running /summarize, /summarize for a running switch, and a
// message sent during a switch goes to the new model once it is in.
func TestModelSwitchAndSummarizeDoNotOverlap(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	id := seed(t, st, "s", session.Message{Role: session.RoleUser, Content: "q"})
	oldSum := &fakeSummarizer{gate: make(chan struct{}), err: errors.New("stopped")}
	var switched atomic.Int32
	gate := make(chan struct{})
	next := &fakeAgent{model: "qwen2.5-coder", window: 8192}
	h := newHarness(t, 100, 24, withStore(st), withSession(id), realCommands(st), func(o *harnessSetup) {
		o.Summarizer = oldSum
		o.SwitchModel = func(name string) (agentRunner, Summarizer, error) {
			switched.Add(1)
			<-gate
			return next, &fakeSummarizer{}, nil
		}
	})
	h.typ("/summarize")
	h.key("enter")
	h.typ("/model qwen2.5-coder")
	h.key("enter")
	h.until("the refusal", func(v string) bool {
		return strings.Contains(v, "/summarize is running: switch the model when it ends")
	})
	close(oldSum.gate)
	h.until("the summarize's end", func(v string) bool { return strings.Contains(v, "summarization failed") })
	require.Zero(t, switched.Load(), "switched while /summarize ran")

	h.typ("/model qwen2.5-coder")
	h.key("enter")
	h.typ("/summarize")
	h.key("enter")
	h.until("the refusal", func(v string) bool { return strings.Contains(v, "A model switch is running: /summarize when it ends.") })
	h.typ("hello")
	h.key("enter")
	require.Empty(t, h.agent.Starts(), "the old model got a message during the switch")
	close(gate)
	h.until("the switch", func(v string) bool { return strings.Contains(v, "Switched to qwen2.5-coder") })
	require.Eventually(t, func() bool { return len(next.Starts()) == 1 }, 5*time.Second, 10*time.Millisecond,
		"the queued message goes to the new model")
	require.Equal(t, "hello", next.Starts()[0])
	require.Empty(t, h.agent.Starts())
	require.Len(t, oldSum.Calls(), 1)
}
