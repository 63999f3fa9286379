package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext/termtexttest"
	"github.com/gencode/gencode/internal/tools"
)

// widths are the terminal widths every view is checked at.
var widths = []int{80, 120}

const answerMD = "## Printing in Go\n\nUse **fmt**: `fmt.Println` writes a line.\n\n```go\npackage main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n```\n\n- `Println` adds a newline\n- `Printf` formats\n"

func chatHistory() []session.Message {
	exit := 0
	return []session.Message{
		{Role: session.RoleUser, Content: "Show me how to print in Go, then list the files."},
		{Role: session.RoleAssistant, Content: answerMD},
		{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{
			{ID: "c1", Name: "Bash", Arguments: `{"command":"ls -la"}`},
			{ID: "c2", Name: "Read", Arguments: `{"file_path":"missing.go"}`},
		}},
		{Role: session.RoleTool, ToolCallID: "c1", Name: "Bash", Content: "total 24\ndrwxr-xr-x  4 me me 4096 .\ndrwxr-xr-x 12 me me 4096 ..\n-rw-r--r--  1 me me  120 go.mod\n-rw-r--r--  1 me me  512 main.go\n-rw-r--r--  1 me me 2048 README.md\ndrwxr-xr-x  2 me me 4096 internal",
			Meta: session.Meta{Tool: "Bash", Command: "ls -la", ExitCode: &exit}},
		{Role: session.RoleTool, ToolCallID: "c2", Name: "Read", Content: "error: missing.go does not exist", Meta: session.Meta{Tool: "Read", Failed: true}},
		{Role: session.RoleAssistant, Content: "The directory holds `main.go`; `missing.go` does not exist."},
		{Role: session.RoleUser, Content: "Now add a test."},
		{Role: session.RoleAssistant, Content: "I will add `main_test.go` with a table-driven", Meta: session.Meta{Interrupted: true}},
	}
}

func TestGoldenChat(t *testing.T) {
	t.Parallel()
	for _, w := range widths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			t.Parallel()
			st := newStore(t)
			id := seed(t, st, "Printing in Go", chatHistory()...)
			h := newHarness(t, w, 44, withStore(st), withSession(id))
			golden.RequireEqual(t, h.view())
		})
	}
}

func TestGoldenPermissionDialog(t *testing.T) {
	t.Parallel()
	req := tools.Request{
		Tool: tools.ToolWrite, Summary: "hello.go (5 lines)", Args: `{"file_path":"hello.go","content":"..."}`,
		Path: "/work/hello.go",
		Diff: "--- /dev/null\n+++ b/hello.go\n@@ -0,0 +1,5 @@\n+package main\n+\n+func main() {\n+\tprintln(\"hi\")\n+}\n",
	}
	for _, draft := range []string{"", "so what do you think"} {
		for _, w := range []int{40, 80, 120} {
			name := fmt.Sprint(w)
			if draft != "" {
				name = "draft/" + name
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, w, 24)
				h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) { <-ctx.Done() })
				h.typ("write hello.go")
				h.key("enter")
				reply := make(chan tools.Decision, 1)
				h.send(askMsg{ctx: context.Background(), req: req, reply: reply})
				// Typed while the dialog opened: kept in the draft, shown
				// under the dialog.
				h.typ(draft)
				view := h.view()
				lines := strings.Split(view, "\n")
				require.Len(t, lines, 24)
				for _, l := range lines {
					require.LessOrEqual(t, ansi.StringWidth(l), w, "%q", l)
				}
				golden.RequireEqual(t, view)
			})
		}
	}
}

func TestGoldenErrorLine(t *testing.T) {
	t.Parallel()
	for _, w := range widths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, w, 16)
			err := fmt.Errorf("request: %w", llm.ErrUnreachable)
			h.agent.scripts = append(h.agent.scripts, events(agent.Event{Kind: agent.EventError, Err: err}))
			h.typ("hello?")
			h.key("enter")
			require.Contains(t, h.view(), "ctrl+r")
			golden.RequireEqual(t, h.view())
		})
	}
}

func TestGoldenReportBox(t *testing.T) {
	t.Parallel()
	rep := commands.Report{
		Title: "History — 日本語 ✓",
		Sections: []commands.Section{
			{Title: "Summaries", Lines: []string{
				"#1  messages 1–120   set up the project, chose SQLite 🗄️",
				"#2  messages 121–300 文字化けの修正とテスト 🎉",
			}},
			{Title: "Recent", Lines: []string{
				"user       fix the flaky test in internal/session/store_test.go and explain why it failed on CI but never locally",
				"assistant  done",
			}, More: 42},
		},
		Footer: "/history --full shows everything",
	}
	for _, w := range widths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, w, 20)
			h.cmds.results["/history"] = commands.Result{Report: &rep, Text: "Showing **2** summaries."}
			h.typ("/history")
			h.key("enter")
			view := h.view()
			golden.RequireEqual(t, view)
			// Every line of the box is as wide as its top border.
			var box []string
			for _, l := range strings.Split(view, "\n") {
				if strings.HasPrefix(l, "╭") || strings.HasPrefix(l, "│") || strings.HasPrefix(l, "╰") {
					box = append(box, l)
				}
			}
			require.GreaterOrEqual(t, len(box), 8)
			for _, l := range box {
				require.Equal(t, ansi.StringWidth(box[0]), ansi.StringWidth(l), "misaligned: %q", l)
				require.LessOrEqual(t, ansi.StringWidth(l), w)
			}
		})
	}
}

func TestGoldenStreaming(t *testing.T) {
	t.Parallel()
	for _, w := range widths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, w, 20)
			h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) {
				for _, d := range []string{"Title\x1b]0;pwned\x07 ", "here.\n\nClear\x1b[2J", " screen ", "and a list:\n\n- one\n- tw"} {
					ch <- agent.Event{Kind: agent.EventTextDelta, Text: d}
				}
				ch <- agent.Event{Kind: agent.EventToolCallStart, Text: "Bash"}
				<-ctx.Done()
			})
			h.typ("go")
			h.key("enter")
			// The tail is drawn on a timer: on a loaded machine the
			// harness's quiet period can end before it fires.
			h.until("the streamed tail", func(v string) bool { return strings.Contains(v, "• tw") })
			golden.RequireEqual(t, h.view())
		})
	}
}

// TestEscapeSequencesInert checks with colours on that nothing but SGR
// (colour) sequences reaches the terminal, wherever hostile text comes in
// (the streamed answer, the final message, a tool call's name and
// arguments, tool output, an error, the session title), for each case of
// the corpus every surface is tested with.
func TestEscapeSequencesInert(t *testing.T) {
	t.Parallel()
	for _, c := range termtexttest.Corpus() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			evil := c.In
			args, err := json.Marshal(map[string]string{"command": "echo " + strings.ToValidUTF8(evil, "?")})
			require.NoError(t, err)
			st := newStore(t)
			id := seed(t, st, "title"+evil,
				session.Message{Role: session.RoleUser, Content: "user " + evil},
				session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "x", Name: "Bash" + evil, Arguments: string(args)}}},
				session.Message{Role: session.RoleTool, ToolCallID: "x", Name: "Bash", Content: "out " + evil},
			)
			h := newHarness(t, 100, 40, withStore(st), withSession(id), func(o *harnessSetup) { o.Profile = colorprofile.ANSI256 })
			final := &session.Message{Seq: 99, Role: session.RoleAssistant, Content: "final " + evil}
			h.agent.scripts = append(h.agent.scripts, events(
				agent.Event{Kind: agent.EventTextDelta, Text: "stream " + evil},
				agent.Event{Kind: agent.EventToolCallStart, Text: "Ba" + evil},
			))
			h.typ("x")
			h.key("enter")
			// The stream renders in a Cmd: on a loaded machine it may
			// land after the harness's quiet period, so wait for it.
			shows := func(words ...string) func(string) bool {
				return func(v string) bool {
					for _, w := range words {
						if !strings.Contains(ansi.Strip(v), w) {
							return false
						}
					}
					return true
				}
			}
			h.until("the streamed text", shows("stream"))
			streamed := h.view()
			h.agent.scripts = append(h.agent.scripts, events(
				agent.Event{Kind: agent.EventMessage, Message: final},
				agent.Event{Kind: agent.EventError, Err: errors.New("boom " + evil)},
			))
			h.typ("y")
			h.key("enter")
			h.until("the final answer and the error", shows("final", "boom"))
			done := h.view()
			require.Contains(t, ansi.Strip(streamed), "stream")
			require.Contains(t, ansi.Strip(done), "final")
			require.Contains(t, ansi.Strip(done), "boom")
			for _, view := range []string{streamed, done} {
				if raw := termtexttest.Raw(view); len(raw) > 0 {
					t.Fatalf("%v reached the view:\n%q", raw, view)
				}
			}
		})
	}
}

// TestGoldenQueue: messages sent during a turn are listed above the
// editor, one line each, with what Up and Esc do; long ones are cut to the
// width, not wrapped.
func TestGoldenQueue(t *testing.T) {
	t.Parallel()
	for _, w := range []int{40, 80, 120} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, w, 16)
			h.agent.scripts = append(h.agent.scripts, waitCancel)
			h.typ("refactor the parser")
			h.key("enter")
			for _, msg := range []string{"then run the tests", "and update the README with every new flag and setting you added", "one", "two"} {
				h.typ(msg)
				h.key("enter")
			}
			h.typ("a draft")
			view := h.view()
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
