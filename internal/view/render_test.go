package view

import (
	"crypto/sha256"
	"encoding/hex"
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

// A stored summary's block, kept by the store (session.View.Blocks), is
// what the request shows, as RenderSummary rendered it: a request's view
// carries a summary's range and counts, not its facts.
func TestBuildShowsTheStoredBlock(t *testing.T) {
	t.Parallel()
	whole := session.Summary{ID: "s1", FromSeq: 1, ToSeq: 40, Content: "## Goal\n- ship it",
		UserConstraints: []string{"The port of service 8 is 7008."}, RenderChars: 2000}
	head := session.Summary{ID: "s1", FromSeq: 1, ToSeq: 40, RenderChars: 2000}
	msgs := []session.Message{{Seq: 41, Role: session.RoleUser, Content: "go on"}}
	p := NewPolicy(Config{Window: 8192})
	want := p.Build(session.View{Session: session.Session{ID: "x"}, Summaries: []session.Summary{whole}, Messages: msgs})
	require.Contains(t, want.Messages[0].Content, "The port of service 8 is 7008.")
	got := NewPolicy(Config{Window: 8192}).Build(session.View{Session: session.Session{ID: "x"},
		Summaries: []session.Summary{head}, Messages: msgs, Blocks: map[string]string{"s1": RenderSummary(whole)}})
	require.Equal(t, want.Messages, got.Messages)
	require.Equal(t, want.Tokens, got.Tokens)
}

// BlockForm names RenderSummary's output, which the store keeps with each
// summary: a change to the output under the same form would leave the
// summaries stored before showing the old one. When this fails because the
// output changed on purpose, give BlockForm a new value and take the new
// digest.
func TestBlockFormNamesTheBlock(t *testing.T) {
	t.Parallel()
	s := session.Summary{ID: "s1", FromSeq: 3, ToSeq: 90, Content: "## Goal\n- ship it\n# Heading", Goal: "g",
		KeyDecisions: []string{"use SQLite"}, Topics: []string{"store"}, CurrentState: "half done", NextSteps: []string{"test"},
		FilesModified: []string{"/w/a.go"}, FilesCreated: []string{"/w/b.go"}, FilesDeleted: []string{"/w/c.go"},
		FilesReverted: []string{"/w/d.go"}, FilesRead: []string{"/w/e.go"}, ToolsUsed: []session.ToolUsage{{Tool: "Bash", Count: 3, NotableUses: []string{"go vet"}}},
		Commands: []string{"go test ./..."}, CommandRuns: 4, LastUserRequest: strings.Repeat("do it ", 100),
		UserConstraints: []string{"Never push.", "The port of service 8 is 7008."}, Focus: "the store",
		CommandsNotRun: []string{"rm -rf /"}, UserRequests: []string{"first", "second"}, SystemNotes: []string{"be brief"},
		UserConstraintsLeftOut: 3}
	for i := range 300 {
		s.FilesModified = append(s.FilesModified, fmt.Sprintf("/w/pkg/file%03d.go", i))
		s.UserConstraints = append(s.UserConstraints, fmt.Sprintf("The port of service %d is %d.", i, 7000+i))
	}
	var all strings.Builder
	for _, limits := range [][2]int{{0, 0}, {600, 0}, {4000, 300}} {
		s.RenderChars, s.KeepChars = limits[0], limits[1]
		all.WriteString(RenderSummary(s))
		fallback := s
		fallback.Content, fallback.Fallback = "", true
		all.WriteString(RenderSummary(fallback))
	}
	sum := sha256.Sum256([]byte(all.String()))
	require.Equal(t, "1", BlockForm)
	require.Equal(t, "b66c6323034362ed79b8548d579bc9185e69886c0bc34d0c56319d6305ca12bd", hex.EncodeToString(sum[:]),
		"RenderSummary's output changed: give BlockForm a new value, then take this digest")
}
