package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext/termtexttest"
)

// runningTool returns a script whose model calls name with args; the call
// starts and reports tails, in order, then the turn waits to be canceled
// or for release to close (then the call's result, result, comes).
func runningTool(name, args string, release <-chan struct{}, result string, tails ...string) func(context.Context, chan<- agent.Event) {
	call := session.ToolCall{ID: "c1", Name: name, Arguments: args}
	return func(ctx context.Context, ch chan<- agent.Event) {
		ch <- agent.Event{Kind: agent.EventMessage, Message: &session.Message{Seq: 2, Role: session.RoleAssistant, ToolCalls: []session.ToolCall{call}}}
		ch <- agent.Event{Kind: agent.EventToolRun, Call: &call}
		for _, tail := range tails {
			ch <- agent.Event{Kind: agent.EventToolProgress, Progress: &agent.ToolProgress{CallID: "c1", Tail: tail, Bytes: int64(len(tail))}}
		}
		select {
		case <-ctx.Done():
			return
		case <-release:
		}
		ch <- agent.Event{Kind: agent.EventMessage, Message: &session.Message{Seq: 3, Role: session.RoleTool, ToolCallID: "c1", Name: name,
			Content: result, Meta: session.Meta{Tool: name}}}
		ch <- agent.Event{Kind: agent.EventDone}
	}
}

const countCommand = `{"command":"for i in 1 2 3 4 5 6 7; do echo line $i; sleep 1.5; done"}`

// TestGoldenToolProgress: a running Bash call shows a spinner, the time
// since it started and the last lines of its output; a running Grep shows
// what it searches, with a spinner and its time.
func TestGoldenToolProgress(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, tool, args string
		tails            []string
	}{
		{"bash", "Bash", countCommand, []string{"", "line 1\n", "line 1\nline 2\nline 3\nline 4\nline 5\nline 6 is a long line: " + strings.Repeat("wide ", 30) + "\n"}},
		{"grep", "Grep", `{"pattern":"func New","path":"internal/"}`, nil},
	}
	for _, c := range cases {
		for _, w := range []int{40, 80, 120} {
			t.Run(fmt.Sprintf("%s/%d", c.name, w), func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, w, 16)
				h.agent.scripts = append(h.agent.scripts, runningTool(c.tool, c.args, nil, "", c.tails...))
				h.typ("go on")
				h.key("enter")
				h.untilModel("the call running", func(m Model) bool { return strings.Contains(m.Screen(), "0.0s") })
				h.pause(3200 * time.Millisecond)
				h.send(h.m.chat.TickMsg())
				view := h.view()
				require.Contains(t, view, "3.2s")
				lines := strings.Split(view, "\n")
				require.Len(t, lines, 16)
				for _, l := range lines {
					require.LessOrEqual(t, ansi.StringWidth(l), w, "%q", l)
				}
				golden.RequireEqual(t, view)
				h.key("ctrl+c")
			})
		}
	}
}

// TestToolProgressUpdates: the tail follows the output as it arrives,
// the timer counts on each tick, and the call's result replaces both; the
// spinner stops once no call runs.
func TestToolProgressUpdates(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 20)
	release := make(chan struct{})
	h.agent.scripts = append(h.agent.scripts, runningTool("Bash", countCommand, release, "line 1\nline 2\n[exit code 0]", "", "live 1\n", "live 1\nlive 2\n"))
	h.typ("count")
	h.key("enter")
	h.until("the live tail", func(v string) bool { return strings.Contains(v, "live 2") })
	v := h.view()
	require.Contains(t, v, "⎿ live 1")
	require.Contains(t, v, "0.0s")
	require.True(t, h.m.chat.Ticking(), "the spinner turns while the call runs")

	h.pause(1500 * time.Millisecond)
	h.send(h.m.chat.TickMsg())
	require.Contains(t, h.view(), "1.5s", "the timer counts on each tick")

	close(release)
	h.until("the result", func(v string) bool { return strings.Contains(v, "✓") })
	v = h.view()
	require.NotContains(t, v, "live")
	require.NotContains(t, v, "1.5s")
	require.Contains(t, v, "⎿ line 1")
	h.send(h.m.chat.TickMsg())
	require.False(t, h.m.chat.Ticking(), "the spinner stops when no call runs")
}

// TestToolProgressEscapesInert: escape sequences in a running command's
// output never reach the terminal (colours on), whatever the tool sent.
func TestToolProgressEscapesInert(t *testing.T) {
	t.Parallel()
	for _, c := range termtexttest.Corpus() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, 100, 30, func(o *harnessSetup) { o.Profile = colorprofile.ANSI256 })
			h.agent.scripts = append(h.agent.scripts, runningTool("Bash", countCommand, nil, "", "", "before "+c.In+" after\nlast line\n"))
			h.typ("x")
			h.key("enter")
			h.until("the live tail", func(v string) bool { return strings.Contains(ansi.Strip(v), "last line") })
			view := h.view()
			if raw := termtexttest.Raw(view); len(raw) > 0 {
				t.Fatalf("%v reached the view:\n%q", raw, view)
			}
			h.key("ctrl+c")
		})
	}
}
