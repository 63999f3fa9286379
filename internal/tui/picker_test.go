package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
)

// pickerModels is what the fake endpoint lists.
var pickerModels = []string{"gpt-4o", "gpt-4o-mini", "llama3.2", "o3-mini", "qwen2.5-coder"}

// withEndpoint wires the real registry, its /model asking the fake
// server through the real client, and a model switch that builds a fake
// agent for the name.
func withEndpoint(t *testing.T, st *session.Store, opts ...openaitest.Option) harnessOpt {
	srv := openaitest.NewServer(t, opts...)
	return func(o *harnessSetup) {
		o.Commands = commands.New(commands.Deps{Store: st, Config: config.Default(), Window: func(string) int { return 8192 },
			Cwd: "/work", Models: llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "k", MaxRetries: -1}).Models})
		o.SwitchModel = func(name string) (agentRunner, Summarizer, error) {
			return &fakeAgent{model: name, window: 8192}, nil, nil
		}
	}
}

// openPicker types line and waits for its picker.
func (h *harness) openPicker(line, title string) {
	h.t.Helper()
	h.typ(line)
	h.key("enter")
	h.untilModel("the picker", func(m Model) bool { return m.mode == modePicker && strings.Contains(m.Screen(), title) })
}

// TestModelPickerArrowsFilterPickAndEsc: /model opens the endpoint's
// models over the editor with the one in use selected; ↓ and Enter
// switch to the next, as /model NAME does, and the status bar says so;
// "/" filters and Enter takes the first match; Esc clears a filter, then
// closes the picker without a change, the draft as it was.
func TestModelPickerArrowsFilterPickAndEsc(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	h := newHarness(t, 100, 30, withStore(st), withEndpoint(t, st, openaitest.WithModels(pickerModels...)))

	h.openPicker("/model", "Switch the model")
	v := h.view()
	for _, id := range pickerModels {
		require.Contains(t, v, id)
	}
	require.Contains(t, v, "│ gpt-4o-mini  (current)", "the model in use is selected")
	require.NotContains(t, v, "Message gencode", "the picker is where the editor was")
	h.key("down")
	h.key("enter")
	h.until("the switch", func(v string) bool { return strings.Contains(v, "Switched to llama3.2") })
	require.False(t, (h.m.mode == modePicker))
	require.Equal(t, "llama3.2", h.m.agent.Model())
	require.Contains(t, h.m.status.View(), "llama3.2")

	// A filter: its first match.
	h.openPicker("/model", "Switch the model")
	h.key("/")
	h.typ("coder")
	h.key("enter")
	h.until("the filtered switch", func(v string) bool { return strings.Contains(v, "Switched to qwen2.5-coder") })
	require.Equal(t, "qwen2.5-coder", h.m.agent.Model())

	// Arrows leave the filter for its matches.
	h.openPicker("/model", "Switch the model")
	h.key("/")
	h.typ("gpt")
	h.key("down")
	h.key("enter")
	h.until("the second match", func(v string) bool { return strings.Contains(v, "Switched to gpt-4o-mini") })

	// Esc: the filter first, then the picker; nothing switches, the
	// draft the user had is still there.
	h.typ("half a thought")
	h.m.input.Reset()
	h.openPicker("/model", "Switch the model")
	h.key("/")
	h.typ("o3")
	h.key("esc")
	require.True(t, (h.m.mode == modePicker), "esc clears the filter first")
	require.Contains(t, h.view(), "llama3.2", "every model again")
	h.key("esc")
	h.pump()
	require.False(t, (h.m.mode == modePicker))
	require.Equal(t, "gpt-4o-mini", h.m.agent.Model())
	require.Contains(t, h.view(), "Message gencode")
	require.NotContains(t, h.view(), "Switch the model")
}

// TestModelPickerEndpointDown: when the endpoint does not list its
// models, /model still opens, with the model in use, and says why.
func TestModelPickerEndpointDown(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	h := newHarness(t, 120, 30, withStore(st), withEndpoint(t, st, openaitest.WithModelsError(500)))
	h.agent.model = "qwen2.5-coder"
	h.openPicker("/model", "Switch the model")
	v := h.view()
	require.Contains(t, v, "Could not list the endpoint's models")
	require.Contains(t, v, "showing the configured ones.")
	require.Contains(t, v, "qwen2.5-coder  (current)")
}

// TestModelNameRefusedInTheChat: /model with a name the endpoint does not
// list says so with the close matches, and the model stays.
func TestModelNameRefusedInTheChat(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	h := newHarness(t, 120, 30, withStore(st), withEndpoint(t, st, openaitest.WithModels(pickerModels...)))
	h.typ("/model gpt4o")
	h.key("enter")
	h.until("the refusal", func(v string) bool {
		return strings.Contains(v, "unknown model gpt4o: the endpoint does not list it; close matches: gpt-4o")
	})
	require.Equal(t, "gpt-4o-mini", h.m.agent.Model())
	require.NotContains(t, h.view(), "Switched")
}

// TestResumePickerSwitchesSession: /resume lists the sessions, the latest
// other than the one shown selected; Enter resumes it exactly as /resume
// ID does; a filter finds an older one; Esc closes without a change.
func TestResumePickerSwitchesSession(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	old := seed(t, st, "the old one", session.Message{Role: session.RoleUser, Content: "an old question"})
	mid := seed(t, st, "the middle one", session.Message{Role: session.RoleUser, Content: "a middle question"})
	cur := seed(t, st, "the current one", session.Message{Role: session.RoleUser, Content: "a current question"})
	h := newHarness(t, 100, 30, withStore(st), withSession(cur), withEndpoint(t, st))

	h.openPicker("/resume", "Resume a session")
	v := h.view()
	for _, title := range []string{"the old one", "the middle one", "the current one"} {
		require.Contains(t, v, title)
	}
	require.Contains(t, v, "│ the middle one")
	h.key("enter")
	h.until("the resumed session", func(v string) bool { return strings.Contains(v, "a middle question") })
	require.Equal(t, mid, h.m.SessionID())
	require.Contains(t, h.m.status.View(), "the middle one")

	h.openPicker("/resume", "Resume a session")
	h.key("/")
	h.typ("old")
	h.key("enter")
	h.until("the old session", func(v string) bool { return strings.Contains(v, "an old question") })
	require.Equal(t, old, h.m.SessionID())

	h.openPicker("/resume", "Resume a session")
	h.key("esc")
	h.pump()
	require.False(t, (h.m.mode == modePicker))
	require.Equal(t, old, h.m.SessionID())
}

// TestGoldenPickers: the /model and /resume pickers at each width.
func TestGoldenPickers(t *testing.T) {
	t.Parallel()
	sessions := commands.Pick{Title: "Resume a session", Selected: 1}
	for i, s := range []struct{ title, detail string }{
		{"Fix the flaky login test", "2026-01-02 03:00 · 42 msgs · 20260102-030000-ab12 · shown now"},
		{"Add a --json flag to gencode sessions", "2026-01-01 18:30 · 17 msgs · 20260101-183000-cd34"},
		{"Why is the summarizer slow on long sessions?", "2025-12-30 09:15 · 230 msgs · 20251230-091500-ef56 · /home/me/other"},
	} {
		sessions.Items = append(sessions.Items, commands.Choice{Title: s.title, Detail: s.detail,
			Result: commands.Result{Action: commands.ActionResumeSession, SessionID: fmt.Sprint(i)}})
	}
	for _, which := range []string{"model", "resume", "filter"} {
		for _, w := range []int{40, 80, 120} {
			t.Run(fmt.Sprintf("%s/%d", which, w), func(t *testing.T) {
				t.Parallel()
				st := newStore(t)
				h := newHarness(t, w, 24, withStore(st), withEndpoint(t, st, openaitest.WithModels(pickerModels...)))
				switch which {
				case "model", "filter":
					h.openPicker("/model", "Switch the model")
					if which == "filter" {
						h.key("/")
						h.typ("gpt")
						h.untilModel("the matches", func(m Model) bool { return !strings.Contains(m.Screen(), "llama3.2") })
					}
				case "resume":
					fc := &fakeCommands{results: map[string]commands.Result{"/resume": {Pick: &sessions}}}
					h.m.o.Commands = fc
					h.openPicker("/resume", "Resume a session")
				}
				golden.RequireEqual(t, h.view())
			})
		}
	}
}

// TestKeysTypedWhileAPickerOpensReachIt: keys typed right after Enter on
// /model, before the endpoint answered and the list opened, are the
// list's: none is lost and none lands in the editor. The filter holds
// every key, in order.
func TestKeysTypedWhileAPickerOpensReachIt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line, typed, filter string
	}{
		{"model", "/model", "/llama", "llama"},
		{"model, a longer filter", "/model", "/qwen2.5-c", "qwen2.5-c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := newStore(t)
			h := newHarness(t, 100, 30, withStore(st), withEndpoint(t, st, openaitest.WithModels(pickerModels...)))
			h.typ(tt.line)
			h.update(keyMsg("enter"))
			for _, r := range tt.typed { // no pump: the list is not open yet
				h.update(textKey(string(r)))
			}
			require.False(t, (h.m.mode == modePicker), "the list opened before its command ran")
			h.untilModel("the picker", func(m Model) bool { return m.mode == modePicker })
			h.pump()
			require.Contains(t, h.view(), "Filter: "+tt.filter)
			require.Equal(t, tt.filter, h.m.pk.list.FilterValue(), "the filter got every key typed")
			require.True(t, h.m.input.Empty(), "nothing typed went to the editor: %q", h.m.input.Value())
		})
	}
}
