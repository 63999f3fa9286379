package summarize

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gencode/gencode/internal/facts"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
	"github.com/gencode/gencode/internal/view"
	"github.com/stretchr/testify/require"
)

func TestSelectRange(t *testing.T) {
	t.Parallel()
	U, A := session.RoleUser, session.RoleAssistant
	// 0 U, 1 A(call a,b), 2 T a, 3 T b, 4 A, 5 U, 6 A(call c), 7 T c, 8 A, 9 U
	log := []session.Message{
		msg(U, "one"), toolCallMsg("a", "b"), toolResult("a"), toolResult("b"), msg(A, "ok"),
		msg(U, "two"), toolCallMsg("c"), toolResult("c"), msg(A, "ok"), msg(U, "three"),
	}
	flat := func(m session.Message) int { return m.Tokens }
	tests := []struct {
		name string
		msgs []session.Message
		p    rangeParams
		want int
	}{
		{name: "preserve recent", msgs: log, p: rangeParams{preserve: 4}, want: 6},
		{name: "never inside a tool group", msgs: append([]session.Message{msg(U, "zero")}, log[:6]...), p: rangeParams{preserve: 4}, want: 2},
		{name: "a one-message range is not worth it", msgs: log, p: rangeParams{preserve: 7}, want: 0},
		{name: "too little left to summarize", msgs: log, p: rangeParams{preserve: 9}, want: 0},
		{name: "latest user message stays", msgs: log, p: rangeParams{preserve: 0}, want: 9},
		{name: "tail budget moves the cut past preserve", msgs: log, p: rangeParams{preserve: 8, tailBudget: 25}, want: 8},
		{name: "tail budget stops at the latest user message", msgs: log[:9], p: rangeParams{preserve: 2, tailBudget: 5}, want: 5},
		{name: "a long turn lets the cut pass the latest user message", msgs: log[:9], p: rangeParams{preserve: 2, tailBudget: 5, passUser: true}, want: 8},
		{name: "a turn that fits keeps its user message", msgs: log, p: rangeParams{preserve: 0, tailBudget: 100, passUser: true}, want: 9},
		{name: "a tool group at the end is kept whole", msgs: log[:8], p: rangeParams{preserve: 0, tailBudget: 1, passUser: true}, want: 6},
		{name: "/summarize passes the latest user message of one long turn", msgs: log[:9], p: rangeParams{preserve: 2, tailBudget: 100, passUser: true, manual: true}, want: 6},
		{name: "/summarize still keeps preserve_recent", msgs: log[:9], p: rangeParams{preserve: 8, manual: true}, want: 0},
		{name: "one message", msgs: log[:1], p: rangeParams{}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := selectRange(tt.msgs, tt.p, flat)
			if got != tt.want {
				t.Fatalf("selectRange(%+v) = %d, want %d", tt.p, got, tt.want)
			}
			if got > 0 {
				require.NotEqual(t, session.RoleTool, tt.msgs[got].Role, "the kept part starts with a tool result")
			}
		})
	}
}

func TestParseNarrative(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		answer        string
		wantText      string
		wantDecisions []string
		wantTopics    []string
		wantNext      []string
	}{
		{
			name:          "all headings",
			answer:        "## Goal\n- ship v1\n## Key decisions\n- use SQLite (one file)\n* keep WAL\n## Topics\n1. storage\n## Current state\n- tests pass\n## Next steps\n- add search",
			wantDecisions: []string{"use SQLite (one file)", "keep WAL"},
			wantTopics:    []string{"storage"},
			wantNext:      []string{"add search"},
		},
		{
			name:          "reasoning dropped and summary tag opened",
			answer:        "<think>let me see</think><summary>\n**Key Decisions:**\n- go with cobra\n</summary>",
			wantText:      "**Key Decisions:**\n- go with cobra",
			wantDecisions: []string{"go with cobra"},
		},
		{
			name:     "no headings: text kept whole",
			answer:   "The user set up a Go module and wrote main.go.",
			wantText: "The user set up a Go module and wrote main.go.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := parseNarrative(tt.answer)
			if tt.wantText != "" {
				require.Equal(t, tt.wantText, n.text)
			}
			require.Equal(t, tt.wantDecisions, n.decisions)
			require.Equal(t, tt.wantTopics, n.topics)
			require.Equal(t, tt.wantNext, n.nextSteps)
		})
	}
}

// importSessionN imports the first n messages.
func importSessionN(t *testing.T, store *session.Store, path string, n int) *logBuilder {
	t.Helper()
	l := newLog(t, store)
	l.add(sessiontest.ReadOpenAI(t, path, n)...)
	return l
}

// TestRealSessionAgainstTheReference summarizes the first 132 messages of a
// real 5-hour Claude Code session, where Claude Code compacted it, and
// checks the result against Claude Code's own summary: every file that
// summary names as created or edited is in ours, from the log. The range is
// one long agentic turn after "continue", so the cut must pass that user
// message; the summarizer's window is small, so it goes in chunks.
func TestRealSessionAgainstTheReference(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(openaitest.SharedTestdata(t), "sessions")
	ref, err := os.ReadFile(filepath.Join(dir, "05_claudecode_spotter_main-4d5611e5.claude_compact_summary.txt"))
	require.NoError(t, err)
	store := openStore(t)
	l := importSessionN(t, store, filepath.Join(dir, "05_claudecode_spotter_main-4d5611e5.openai.jsonl"), 132)
	llm := &fakeLLM{}
	cfg := testConfig(32768)
	cfg.SummaryWindow = 8192
	s := newSummarizer(store, llm, charCounter{}, cfg)
	defer s.Close()
	rep, err := s.SummarizeNow(context.Background(), l.id, "")
	require.NoError(t, err)
	sum := rep.Summary
	require.Greater(t, sum.ToSeq, int64(42), "the long turn after \"continue\" was not summarized")
	require.Equal(t, "continue", sum.LastUserRequest)
	require.GreaterOrEqual(t, sum.Chunks, 2)
	for _, r := range llm.requests() {
		require.Less(t, charCounter{}.Count(r.System+r.Prompt)+r.MaxTokens, cfg.SummaryWindow)
	}
	v := l.view()
	files := append(append([]string{}, sum.FilesModified...), facts.Extract(v.Messages, false).FilesModified...)
	const root = "/home/USER/projects/spotter-worktrees/spotter-dov/"
	for _, f := range files {
		require.True(t, strings.HasPrefix(f, root), f)
	}
	for _, rel := range []string{
		"lib/spotter_web/live/transcript_computers.ex", "lib/spotter_web/components/transcript_components.ex",
		"lib/spotter_web/live/session_live.ex", "lib/spotter_web/live/subagent_live.ex",
		"lib/spotter/services/transcript_renderer.ex", "test/spotter_web/live/subagent_live_test.exs",
		"test/spotter/services/transcript_renderer_test.exs",
	} {
		require.Contains(t, string(ref), rel, "the reference names %s", rel)
		require.Contains(t, files, root+rel)
	}
	require.NotEmpty(t, sum.Commands)
	require.Contains(t, sum.Commands, "bd show spotter-dov")
}

// TestSummaryBlockNamesDeletionsAndReverts: the block the model reads
// after a compaction says which files the range deleted and which it put
// back as committed, not only which it modified; otherwise the model
// would go on reading and editing files that are gone or changed back.
func TestSummaryBlockNamesDeletionsAndReverts(t *testing.T) {
	t.Parallel()
	sum := facts.Extract(sessiontest.LogOf(
		sessiontest.Bash(`printf 'x\n' > scratch.txt`, ""),
		sessiontest.Bash("sed -i 's/a/A/' main.go", ""),
		sessiontest.Bash("rm old.go", ""),
		sessiontest.Bash("git checkout -- main.go", ""),
	), true)
	block := view.RenderSummary(sum)
	require.Contains(t, block, "Files modified: scratch.txt\n")
	require.Contains(t, block, "Files deleted: old.go\n")
	require.Contains(t, block, "Files reverted to their committed state: main.go\n")
}

func msg(role session.Role, content string) session.Message {
	return session.Message{Role: role, Content: content, Tokens: 10}
}

func toolCallMsg(ids ...string) session.Message {
	m := msg(session.RoleAssistant, "")
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, session.ToolCall{ID: id, Name: "Bash", Arguments: `{"command":"ls"}`})
	}
	return m
}

func toolResult(id string) session.Message {
	m := msg(session.RoleTool, "out")
	m.ToolCallID = id
	return m
}
