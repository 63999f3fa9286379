package chat

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/tui/keys"
	"github.com/gencode/gencode/internal/tui/markdown"
	"github.com/gencode/gencode/internal/tui/theme"
	"github.com/gencode/gencode/internal/tui/vlist"
)

func newChat(width, height int) (Model, *markdown.Renderer) {
	th := theme.New(true, colorprofile.NoTTY)
	md := markdown.New(th)
	m := New(th, md)
	m.SetSize(width, height)
	return m, md
}

// conversation is n messages: user questions and markdown answers.
func conversation(n int) []session.Message {
	out := make([]session.Message, n)
	for i := range out {
		out[i].Seq = int64(i + 1)
		if i%2 == 0 {
			out[i].Role, out[i].Content = session.RoleUser, fmt.Sprintf("question %d", i)
		} else {
			out[i].Role = session.RoleAssistant
			out[i].Content = fmt.Sprintf("## Answer %d\n\nSome **markdown** and `code`.\n\n```go\nx := %d\n```\n", i, i)
		}
	}
	return out
}

// settle runs the chat's Cmds (renders, flushes) until none are left,
// feeding their messages back; it returns messages meant for the parent.
func settle(t testing.TB, m *Model, cmd tea.Cmd) []tea.Msg {
	t.Helper()
	var parent []tea.Msg
	queue := []tea.Cmd{cmd, m.Sync()}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		msg := c()
		if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().ConvertibleTo(reflect.TypeOf([]tea.Cmd(nil))) {
			queue = append(queue, v.Convert(reflect.TypeOf([]tea.Cmd(nil))).Interface().([]tea.Cmd)...)
			continue
		}
		switch msg.(type) {
		case renderedMsg, blockRenderedMsg, flushMsg, tailRenderedMsg:
			var next tea.Cmd
			*m, next = m.Update(msg)
			queue = append(queue, next, m.Sync())
		case nil:
		default:
			parent = append(parent, msg)
		}
	}
	return parent
}

func TestGoldenChatKinds(t *testing.T) {
	t.Parallel()
	for _, w := range []int{80, 120} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			t.Parallel()
			m, _ := newChat(w, 30)
			m.SetHistory([]session.Message{
				{Seq: 1, Role: session.RoleUser, Content: "read it"},
				{Seq: 2, Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "a", Name: "Read", Arguments: `{"file_path":"main.go"}`}, {ID: "b", Name: "Write", Arguments: `{"file_path":"out.txt","content":"x"}`}}},
				{Seq: 3, Role: session.RoleTool, ToolCallID: "a", Content: strings.Repeat("line\n", 30), Meta: session.Meta{Tool: "Read"}},
				{Seq: 4, Role: session.RoleTool, ToolCallID: "b", Content: "permission denied: the user declined this Write call", Meta: session.Meta{Denied: true, Failed: true}},
			}, []session.Summary{{FromSeq: 1, ToSeq: 1, Content: "## Goal\n\nRead main.go.\n\n## Current state\n\nDone."}}, false)
			m.AddInfo("History summarized: messages 1–1")
			m.AddError("cannot reach the model endpoint", "ctrl+r sends the message again")
			settle(t, &m, nil)
			golden.RequireEqual(t, m.View())
		})
	}
}

// TestStreamingRendersOnlyTheTail: a streamed token re-renders the
// unfinished tail of the answer, never a finished message.
func TestStreamingRendersOnlyTheTail(t *testing.T) {
	t.Parallel()
	m, md := newChat(100, 40)
	m.SetHistory(conversation(200), nil, false)
	settle(t, &m, nil)
	items, mdRenders := m.Stats().ItemRenders, md.Renders()
	require.Positive(t, mdRenders, "the visible answers were rendered")

	tokens := strings.Fields("Here is a plan.\n\nFirst, read the file. Then change it.\n\n```go\nfunc f() {}\n```\n\nDone.")
	for _, tok := range tokens {
		m.HandleEvent(agent.Event{Kind: agent.EventTextDelta, Text: tok + " "})
		// Deliver the flush the tick would bring.
		settle(t, &m, func() tea.Msg { return flushMsg{gen: m.stream.gen} })
	}
	require.Equal(t, items, m.Stats().ItemRenders, "finished items were rendered again")
	s := m.stream
	// Markdown renders since: one per tail redraw plus one per block.
	require.Equal(t, mdRenders+int64(s.tailCount+len(s.blocks)), md.Renders())
	require.Contains(t, m.View(), "Done.")
}

func TestFollowAndScroll(t *testing.T) {
	t.Parallel()
	m, _ := newChat(80, 10)
	m.SetHistory(conversation(60), nil, false)
	settle(t, &m, nil)
	require.Contains(t, m.View(), "question 58", "opens at the end")

	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	settle(t, &m, nil)
	require.False(t, m.Following())
	up := m.View()
	require.NotContains(t, up, "question 58")

	// Output arriving while scrolled up does not move the window.
	m.AddInfo("compacted")
	m.HandleEvent(agent.Event{Kind: agent.EventTextDelta, Text: "new"})
	settle(t, &m, nil)
	require.Equal(t, up, m.View())

	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyEnd, Mod: tea.ModCtrl})
	settle(t, &m, nil)
	require.True(t, m.Following())

	m.ScrollTop()
	settle(t, &m, nil)
	require.Contains(t, m.View(), "question 0")
	m.ScrollDown(1 << 20)
	settle(t, &m, nil)
	require.True(t, m.Following(), "scrolling past the end follows again")

	// The user's own message always brings the end into view.
	m.ScrollUp(30)
	m.AddUser("mine")
	settle(t, &m, nil)
	require.True(t, m.Following())
	require.Contains(t, m.View(), "mine")
}

func TestPagesOlderHistory(t *testing.T) {
	t.Parallel()
	all := conversation(300)
	m, _ := newChat(80, 12)
	m.SetHistory(all[200:], []session.Summary{{FromSeq: 1, ToSeq: 150, Content: "older work"}}, true)
	settle(t, &m, nil)
	m.ScrollTop()
	parent := settle(t, &m, nil)
	require.Equal(t, []tea.Msg{NeedOlderMsg{BeforeSeq: 201}}, parent)
	m.ScrollDown(3) // past the summary: the window starts at message 201
	require.Empty(t, settle(t, &m, nil), "asked again while loading")
	before := m.View()
	m.Prepend(all[100:200], true)
	settle(t, &m, nil)
	require.Equal(t, before, m.View(), "paging in older messages keeps the window still")
	// The summary now sits after the last message it covers.
	for i, it := range m.items {
		if it.kind == KindSummary {
			require.Equal(t, int64(150), m.items[i-1].seq)
		}
	}
	m.ScrollTop()
	require.Equal(t, []tea.Msg{NeedOlderMsg{BeforeSeq: 101}}, settle(t, &m, nil), "the next page")
}

func TestToolExpandByClickAndKey(t *testing.T) {
	t.Parallel()
	m, _ := newChat(80, 40)
	m.SetHistory([]session.Message{
		{Seq: 1, Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "a", Name: "Bash", Arguments: `{"command":"seq 50"}`}}},
		{Seq: 2, Role: session.RoleTool, ToolCallID: "a", Content: strings.TrimSpace(strings.Repeat("n\n", 50))},
	}, nil, false)
	settle(t, &m, nil)
	require.Contains(t, m.View(), "+46 lines")
	m, _ = m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, Y: 0})
	settle(t, &m, nil)
	require.NotContains(t, m.View(), "+46 lines")
	m, _ = m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, Y: 0})
	m, _ = m.Update(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	settle(t, &m, nil)
	require.NotContains(t, m.View(), "+46 lines")
}

func TestResizeReflows(t *testing.T) {
	t.Parallel()
	m, _ := newChat(120, 30)
	m.SetHistory([]session.Message{{Seq: 1, Role: session.RoleAssistant, Content: strings.Repeat("word ", 60)}}, nil, false)
	settle(t, &m, nil)
	wide := strings.Count(strings.TrimRight(m.View(), "\n"), "\n")
	m.SetSize(40, 30)
	settle(t, &m, nil)
	narrow := strings.Count(strings.TrimRight(m.View(), "\n"), "\n")
	require.Greater(t, narrow, wide)
	for _, l := range strings.Split(m.View(), "\n") {
		require.LessOrEqual(t, ansi.StringWidth(l), 40, "line wider than the view: %q", l)
	}
}

func TestCacheBounded(t *testing.T) {
	t.Parallel()
	c := newRenderCache(10 << 10)
	for i := range 1000 {
		c.put(cacheKey{id: i, width: 80}, []string{strings.Repeat("x", 100)}, false)
	}
	require.LessOrEqual(t, c.bytes, 10<<10)
	_, ok := c.get(cacheKey{id: 999, width: 80})
	require.True(t, ok, "the newest entry was evicted")
	_, ok = c.get(cacheKey{id: 0, width: 80})
	require.False(t, ok, "the oldest entry was kept")
}

func TestSplitBlocks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		blocks   int
		consumed string
	}{
		{"para one\n\npara two", 1, "para one\n\n"},
		{"```go\na\n\nb\n```\n\nafter", 1, "```go\na\n\nb\n```\n\n"},
		{"```go\na\n\nb", 0, ""},
		{"no newline yet", 0, ""},
	}
	for _, tt := range tests {
		blocks, n := splitBlocks(tt.in)
		if len(blocks) != tt.blocks || tt.in[:n] != tt.consumed {
			t.Errorf("splitBlocks(%q) = %d blocks, %q; want %d, %q", tt.in, len(blocks), tt.in[:n], tt.blocks, tt.consumed)
		}
	}
}

// BenchmarkScroll is one PgUp through a chat of 100 and of 10,000
// messages, as a user reads back: each page is a window not shown before,
// so its layout and the markdown renders of the items coming into view
// (and the page prefetched above) are paid in the op, their Cmds run as the
// runtime runs them. Reaching the top starts again from a new chat with
// cold caches, out of the timer.
func BenchmarkScroll(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			msgs := conversation(n)
			fresh := func() Model {
				m, _ := newChat(100, 40)
				m.SetHistory(msgs, nil, false)
				settle(b, &m, nil)
				return m
			}
			m := fresh()
			pages, prev := 0, ""
			for b.Loop() {
				if m.list.Top() == (vlist.Anchor{}) && !m.list.Following() {
					b.StopTimer()
					m = fresh()
					b.StartTimer()
				}
				m.ScrollUp(38)
				settle(b, &m, nil)
				v := m.View()
				if v == prev {
					b.Fatalf("page %d is the page before it", pages)
				}
				prev = v
				pages++
			}
		})
	}
}

func TestResizeWhileStreaming(t *testing.T) {
	t.Parallel()
	m, _ := newChat(120, 20)
	m.HandleEvent(agent.Event{Kind: agent.EventTextDelta, Text: strings.Repeat("wide ", 40)})
	settle(t, &m, func() tea.Msg { return flushMsg{gen: m.stream.gen} })
	m.SetSize(50, 20)
	settle(t, &m, nil) // the Sync schedules the redraw at the new width
	for _, l := range strings.Split(m.View(), "\n") {
		require.LessOrEqual(t, ansi.StringWidth(l), 50, "%q", l)
	}
	require.Equal(t, 50-gutter, m.stream.width)
}

// TestEmptyChatFooterIsTheKeyMap: an empty chat's hint names the keys
// of the key map (send, new line, quit), not a text of its own.
func TestEmptyChatFooterIsTheKeyMap(t *testing.T) {
	t.Parallel()
	m, _ := newChat(120, 5)
	settle(t, &m, nil)
	view := m.View()
	for _, b := range keys.Default().Editor.Footer() {
		require.Contains(t, view, b.Help().Key+" "+b.Help().Desc)
		require.Contains(t, b.Help().Key, b.Keys()[0], "the footer names a key the binding matches")
	}
}

// TestTailRendersOffTheUpdate: a flush draws the streaming tail without
// glamour and asks for its markdown in a Cmd, as finished blocks are; a
// render that arrives for an answer that ended, or for a tail that has
// since been split into a block, is dropped.
func TestTailRendersOffTheUpdate(t *testing.T) {
	t.Parallel()
	m, md := newChat(80, 20)
	m.HandleEvent(agent.Event{Kind: agent.EventTextDelta, Text: "Some `inline` words"})
	before := md.Renders()
	m, cmd := m.Update(flushMsg{gen: m.stream.gen})
	require.Equal(t, before, md.Renders(), "Update waited for glamour")
	m.Sync()
	require.Contains(t, m.View(), "Some `inline` words", "plain until the render arrives")
	require.NotNil(t, cmd)
	msg := cmd()
	require.IsType(t, tailRenderedMsg{}, msg)
	m, _ = m.Update(msg)
	m.Sync()
	require.Contains(t, m.View(), "Some inline words")
	require.Equal(t, 1, m.stream.tailCount)

	// More text: the shown render stays until the next one arrives (no
	// flicker back to plain).
	m.HandleEvent(agent.Event{Kind: agent.EventTextDelta, Text: " and more"})
	m, cmd = m.Update(flushMsg{gen: m.stream.gen})
	m.Sync()
	require.Contains(t, m.View(), "Some inline words")
	stale := cmd()

	// The paragraph ends: the tail is now a block, the old render is of
	// text that is no longer the tail.
	m.HandleEvent(agent.Event{Kind: agent.EventTextDelta, Text: ".\n\nNext"})
	m, _ = m.Update(flushMsg{gen: m.stream.gen})
	m, _ = m.Update(stale)
	m.Sync()
	require.Equal(t, 1, strings.Count(m.View(), "and more"), "a stale tail was drawn beside its block:\n%s", m.View())

	// A render for an answer that ended is dropped.
	gen := m.stream.gen
	m.HandleEvent(agent.Event{Kind: agent.EventDone})
	m.HandleEvent(agent.Event{Kind: agent.EventTextDelta, Text: "A new answer"})
	m, _ = m.Update(tailRenderedMsg{gen: gen, seq: 99, width: m.inner(), lines: []string{"OLD ANSWER"}})
	m.Sync()
	require.NotContains(t, m.View(), "OLD ANSWER")
}

// TestStreamLaidOutAsAWhole: however the text arrives, the lines a flush
// keeps from earlier flushes (a long plain tail's finished lines, the
// blocks before the first that changed) are what laying out the whole
// answer again gives.
func TestStreamLaidOutAsAWhole(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	words := strings.Fields("a fix wraps the error with the request id so that the log line says which call failed and why, see internal/handler/serve_http.go")
	for i := 0; b.Len() < 9000; i++ {
		b.WriteString(words[i%len(words)])
		switch {
		case i%97 == 96:
			b.WriteString("\n\n")
		case i%41 == 40:
			b.WriteString("\n")
		case i == 300:
			b.WriteString("\n\n```go\nfunc f() {\n\treturn\n}\n```\n\n")
		case i%13 == 0:
			b.WriteString("  ")
		default:
			b.WriteString(" ")
		}
	}
	b.WriteString(strings.Repeat("onelongwordwithoutanyspace", 200)) // hard-wrapped
	text := b.String()
	m, _ := newChat(72, 20)
	frozen, kept := 0, 0
	for pos, step := 0, 1; pos < len(text); step = step%37 + 3 {
		end := min(pos+step, len(text))
		m.HandleEvent(agent.Event{Kind: agent.EventTextDelta, Text: text[pos:end]})
		pos = end
		if pos > len(text)/2 && m.width == 72 {
			m.SetSize(60, 20)
		}
		var cmd tea.Cmd
		m, cmd = m.Update(flushMsg{gen: m.stream.gen})
		if pos%5 == 0 { // let some renders arrive, out of step
			settle(t, &m, cmd)
		}
		s := m.stream
		if tail := m.stream.text.String()[s.done:]; !highlighted(tail) && strings.TrimSpace(tail) != "" {
			require.Equal(t, markdown.Plain(tail, s.width), s.tail, "the plain tail at byte %d", pos)
		}
		require.Equal(t, m.r.frame(&item{kind: KindAssistant}, s.body(), m.width), s.lines, "the layout at byte %d", pos)
		frozen = max(frozen, s.frozen)
		if len(s.blockAt) > 1 {
			kept++
		}
	}
	require.Greater(t, frozen, 20, "a long plain tail kept its finished lines")
	require.Positive(t, kept)
}

// edits is a session where the model wrote a file and edited another, as
// the agent logs it (the change in the result's meta).
func edits() []session.Message {
	var content, diff strings.Builder
	diff.WriteString("--- /dev/null\n+++ b/notes/plan.md\n@@ -0,0 +1,12 @@\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&content, "step %d of the plan, with a line long enough to need cutting at forty columns\n", i)
		fmt.Fprintf(&diff, "+step %d of the plan, with a line long enough to need cutting at forty columns\n", i)
	}
	return []session.Message{
		{Seq: 1, Role: session.RoleUser, Content: "write the plan, then fix the handler"},
		{Seq: 2, Role: session.RoleAssistant, ToolCalls: []session.ToolCall{
			{ID: "w", Name: "Write", Arguments: fmt.Sprintf(`{"file_path":"notes/plan.md","content":%q}`, content.String())},
			{ID: "e", Name: "Edit", Arguments: `{"file_path":"handler.go","old_string":"return nil","new_string":"return fmt.Errorf(\"serve: %w\", err)"}`},
		}},
		{Seq: 3, Role: session.RoleTool, ToolCallID: "w", Name: "Write", Content: "Created notes/plan.md (1,032 bytes, 12 lines)",
			Meta: session.Meta{Tool: "Write", FilePath: "notes/plan.md", Diff: diff.String()}},
		{Seq: 4, Role: session.RoleTool, ToolCallID: "e", Name: "Edit", Content: "Edited handler.go (1 replacement)",
			Meta: session.Meta{Tool: "Edit", FilePath: "handler.go", Diff: "--- a/handler.go\n+++ b/handler.go\n@@ -10,5 +10,5 @@\n \tif err != nil {\n \t\tlog.Print(err)\n-\t\treturn nil\n+\t\treturn fmt.Errorf(\"serve: %w\", err)\n \t}\n"}},
	}
}

// TestGoldenEditDiffs: a Write or Edit shows the change it made under its
// result, a few lines until expanded, at 40, 80 and 120 columns.
func TestGoldenEditDiffs(t *testing.T) {
	t.Parallel()
	for _, w := range []int{40, 80, 120} {
		for _, expanded := range []bool{false, true} {
			name := fmt.Sprint(w)
			if expanded {
				name += "-expanded"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				m, _ := newChat(w, 40)
				m.SetHistory(edits(), nil, false)
				if expanded {
					m, _ = m.Update(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
				}
				settle(t, &m, nil)
				golden.RequireEqual(t, m.View())
			})
		}
	}
}

// TestEditDiffExpands: the change is in the transcript, cut to a few
// lines; a click on the call or Ctrl+O shows all of it.
func TestEditDiffExpands(t *testing.T) {
	t.Parallel()
	m, _ := newChat(100, 40)
	m.SetHistory(edits(), nil, false)
	settle(t, &m, nil)
	v := m.View()
	require.Contains(t, v, "⏺ Write(notes/plan.md) ✓")
	require.Contains(t, v, "⎿ Created notes/plan.md")
	require.Contains(t, v, "@@ -0,0 +1,12 @@")
	require.Contains(t, v, "+step 5 of the plan")
	require.NotContains(t, v, "+step 6 of the plan")
	require.Contains(t, v, "… +7 lines (click or ctrl+o to expand)")
	require.Contains(t, v, "-        return nil")
	require.Contains(t, v, `+        return fmt.Errorf("serve: %w", err)`)
	require.NotContains(t, v, "+++ b/", "the file names are the call's own")

	m, _ = m.Update(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	settle(t, &m, nil)
	v = m.View()
	require.Contains(t, v, "+step 12 of the plan")
	require.NotContains(t, v, "+7 lines")
}

// TestKeptShellOutputShowsAsItRan: the output of a "!command" kept in the
// log at quit shows again as the block it was, not as a typed message.
func TestKeptShellOutputShowsAsItRan(t *testing.T) {
	t.Parallel()
	m, _ := newChat(80, 16)
	m.SetHistory([]session.Message{
		{Seq: 1, Role: session.RoleUser, Content: ShellBlocks([]string{"$ echo hi\nhi\n[exit code 0]", "$ pwd\n/w\n[exit code 0]"}), Meta: session.Meta{Shell: true}},
		{Seq: 2, Role: session.RoleUser, Content: "what did it print?"},
	}, nil, false)
	settle(t, &m, nil)
	v := m.View()
	require.Contains(t, v, "$ echo hi")
	require.Contains(t, v, "$ pwd")
	require.Equal(t, 2, strings.Count(v, "[exit code 0]"), "both outputs:\n%s", v)
	require.NotContains(t, v, "shell-output")
	require.Equal(t, 1, strings.Count(v, "❯"), "one typed message:\n%s", v)
}

// TestRetriesUpdateOneLine: the retries of a request update one chat line
// ("↻ rate limited, retrying in 3 s (2/5)"), not one line per attempt; a
// later request's retries get their own line.
func TestRetriesUpdateOneLine(t *testing.T) {
	t.Parallel()
	m, _ := newChat(100, 20)
	for _, text := range []string{"rate limited, retrying in 1 s (1/5)", "rate limited, retrying in 2 s (2/5)", "rate limited, retrying in 3 s (3/5)"} {
		m.HandleEvent(agent.Event{Kind: agent.EventRetry, Text: text})
	}
	settle(t, &m, nil)
	v := m.View()
	require.Equal(t, 1, strings.Count(v, "↻"), "one line for the retries:\n%s", v)
	require.Contains(t, v, "retrying in 3 s (3/5)")
	m.HandleEvent(agent.Event{Kind: agent.EventMessage, Message: &session.Message{Role: session.RoleAssistant, Content: "an answer"}})
	m.HandleEvent(agent.Event{Kind: agent.EventRetry, Text: "server error, retrying in 1 s (1/5)"})
	settle(t, &m, nil)
	require.Equal(t, 2, strings.Count(m.View(), "↻"), "a later request's retries have their own line")
}

// TestProxiedCallShowsTheMCPTool: a CallMcpTool call is shown as the MCP
// tool it called, with that tool's key argument, as a direct call is.
func TestProxiedCallShowsTheMCPTool(t *testing.T) {
	t.Parallel()
	m, _ := newChat(100, 10)
	m.SetHistory([]session.Message{
		{Seq: 1, Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "a", Name: "CallMcpTool",
			Arguments: `{"tool":"mcp__github__create_issue","arguments":{"title":"Crash on start"}}`}}},
		{Seq: 2, Role: session.RoleTool, ToolCallID: "a", Name: "CallMcpTool", Content: "issue #12 created",
			Meta: session.Meta{Tool: "mcp__github__create_issue"}},
	}, nil, false)
	settle(t, &m, nil)
	view := ansi.Strip(m.View())
	require.Contains(t, view, "mcp__github__create_issue")
	require.Contains(t, view, "Crash on start")
	require.NotContains(t, view, "CallMcpTool")
}

// TestClippedMessageDrawsAsWhole: a long request or answer read for the
// screen (its head, Clipped: session.Store.TailShown) is drawn exactly as
// the whole message is: the same lines, the same "cut for display" note.
func TestClippedMessageDrawsAsWhole(t *testing.T) {
	t.Parallel()
	line := strings.Repeat("word ", 30) + "\n"
	for _, tt := range []struct {
		name string
		role session.Role
		text string
	}{
		{"answer, many lines", session.RoleAssistant, "## Long\n\n" + strings.Repeat(line, 20_000)},
		{"answer, one line", session.RoleAssistant, strings.Repeat("x", 1<<20)},
		{"request, many lines", session.RoleUser, strings.Repeat(line, 20_000)},
		{"request, long lines", session.RoleUser, strings.Repeat(strings.Repeat("y", 900)+"\n", 2_000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			draw := func(m session.Message) string {
				c, _ := newChat(100, 400)
				c.SetHistory([]session.Message{{Seq: 1, Role: session.RoleUser, Content: "go"}, m}, nil, false)
				if tt.role == session.RoleUser {
					c.SetHistory([]session.Message{m, {Seq: 2, Role: session.RoleAssistant, Content: "ok"}}, nil, false)
				}
				settle(t, &c, nil)
				c.ScrollTop()
				return c.View()
			}
			whole := session.Message{Seq: 2, Role: tt.role, Content: tt.text}
			if tt.role == session.RoleUser {
				whole.Seq = 1
			}
			shown := whole
			shown.Content, shown.Clipped = tt.text[:ShownBytes], true
			want := draw(whole)
			require.Contains(t, want, "cut for display")
			require.Equal(t, want, draw(shown))
		})
	}
}
