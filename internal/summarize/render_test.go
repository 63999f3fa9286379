package summarize

import (
	"context"
	"errors"
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
	c := NewPolicy(ViewConfig{Window: 8000}).Build(v) // caps outputs at 1000 tokens
	require.Equal(t, 1, c.CutCount)
	out := c.Messages[2].Content // no system prompt: no system message
	require.True(t, utf8.ValidString(out))
	require.True(t, strings.HasPrefix(out, "line 0000"))
	require.True(t, strings.HasSuffix(out, "line 1999 ünïcode"))
	require.Contains(t, out, "message 3 of the session log")
	require.Less(t, len(out), len(big)/8)
	require.Less(t, c.Tokens, 1200)
	require.Equal(t, big, v.Messages[2].Content, "the view's messages are not changed")

	none := NewPolicy(ViewConfig{Window: 160000}).Build(v)
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

// encCounter is a tokenizer that names its encoding and whether its
// vocabulary loaded (Err), as tokens.Counter does.
type encCounter struct {
	charCounter
	err error
}

func (encCounter) Encoding() string { return "o200k_base" }
func (c encCounter) Err() error     { return c.err }

// TestTokenKeyOnlyForExactCounts: a summary keeps what its count counted
// (TokenKey) when the tokenizer is exact; a count estimated because the
// vocabulary did not load is not one a later run may reuse.
func TestTokenKeyOnlyForExactCounts(t *testing.T) {
	t.Parallel()
	for _, loadErr := range []error{nil, errors.New("load encoding o200k_base: broken")} {
		store := openStore(t)
		l := newLog(t, store)
		for i := range 12 {
			l.turn(fmt.Sprintf("request %d", i), bashCall("ls", "a\nb", 0))
		}
		llm := &fakeLLM{answer: func(r Request) (Completion, error) { return Completion{Text: echoSummary(r)}, nil }}
		s := New(store, llm, encCounter{err: loadErr}, testConfig(16000))
		rep, err := s.SummarizeNow(context.Background(), l.id, "")
		s.Close()
		require.NoError(t, err)
		require.NotNil(t, rep.Summary)
		if loadErr != nil {
			require.Empty(t, rep.Summary.TokenKey, "an estimate is not reused")
			continue
		}
		require.Equal(t, tokenKey("o200k_base", RenderSummary(*rep.Summary)), rep.Summary.TokenKey)
	}
}
