package view

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
)

func TestContextCapsHugeToolOutputs(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := 0; i < 2000; i++ {
		lines = append(lines, fmt.Sprintf("line %04d ünïcode", i))
	}
	big := strings.Join(lines, "\n")
	v := session.View{Session: session.Session{ID: "s"}, Messages: []session.Message{
		{Seq: 1, Role: session.RoleUser, Content: "run it", Tokens: 5},
		{Seq: 2, Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "a", Name: "Bash"}}, Tokens: 10},
		{Seq: 3, Role: session.RoleTool, ToolCallID: "a", Name: "Bash", Content: big, Tokens: 12000},
	}}
	c := NewPolicy(Config{Window: 8000}).Build(v) // caps outputs at 1000 tokens
	require.Equal(t, 1, c.CutCount)
	out := c.Messages[2].Content // no system prompt: no system message
	require.True(t, utf8.ValidString(out))
	require.True(t, strings.HasPrefix(out, "line 0000"))
	require.True(t, strings.HasSuffix(out, "line 1999 ünïcode"))
	require.Contains(t, out, "message 3 of the session log")
	require.Less(t, len(out), len(big)/8)
	require.Less(t, c.Tokens, 1200)
	require.Equal(t, big, v.Messages[2].Content, "the view's messages are not changed")

	none := NewPolicy(Config{Window: 160000}).Build(v)
	require.Equal(t, 0, none.CutCount)
	require.Equal(t, big, none.Messages[2].Content)
}

func TestRenderSummaryWithinItsLimit(t *testing.T) {
	t.Parallel()
	s := session.Summary{Content: "## Goal\n- x", LastUserRequest: "do it", RenderChars: 600}
	for i := 0; i < 300; i++ {
		s.FilesModified = append(s.FilesModified, fmt.Sprintf("/w/pkg/file%03d.go", i))
		s.Commands = append(s.Commands, fmt.Sprintf("go test ./pkg/%03d", i))
	}
	out := RenderSummary(s)
	require.Less(t, len(out), 1200)
	require.Contains(t, out, "/w/pkg/file299.go", "the newest entries are shown")
	require.NotContains(t, out, "/w/pkg/file000.go")
	require.Contains(t, out, "earlier not shown; all are kept in the summary record")
	s.RenderChars = 0
	require.Contains(t, RenderSummary(s), "/w/pkg/file000.go")
}

// TestRenderSummaryCommandsNotRun: the commands of calls that never ran
// are listed apart, so a model reading the summary does not take them
// for commands that ran.
func TestRenderSummaryCommandsNotRun(t *testing.T) {
	t.Parallel()
	out := RenderSummary(session.Summary{FromSeq: 1, ToSeq: 4, Commands: []string{"rm -rf build"}, CommandsNotRun: []string{"rm -f notes.txt"}})
	if !strings.Contains(out, "Commands run: rm -rf build\n") ||
		!strings.Contains(out, "Commands that never ran (denied, canceled or without a result): rm -f notes.txt\n") {
		t.Fatalf("RenderSummary = %q, want the commands run and, apart, the one that never ran", out)
	}
}
