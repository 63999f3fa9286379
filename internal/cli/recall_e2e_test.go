package cli_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
)

// TestRecallFindsWhatASummaryDropped: acceptance 1 of the recall issue. A
// fact stated early in a session is behind a summary that does not keep it,
// so the context the model gets lacks it; a scripted SearchHistory call
// finds it, and ReadHistory returns the original message verbatim.
//
// The summary is applied through the store (the summarizer is not needed
// for this): the test seeds the sandbox's data directory, then runs the
// built binary with -c.
func TestRecallFindsWhatASummaryDropped(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	dataDir := filepath.Join(sb.home, "data")
	sb.env["GENCODE_HOME"] = dataDir

	fact := "Note for later: the escrow code for the staging vault is HELIOTROPE-7731; " +
		"the cron job vault_rotate changes it every 90 days."
	ctx := context.Background()
	store, err := session.Open(ctx, dataDir)
	require.NoError(t, err)
	cwd, err := filepath.EvalSymlinks(sb.work)
	require.NoError(t, err)
	sess, err := store.CreateSession(ctx, cwd, "gpt-4o-mini")
	require.NoError(t, err)
	msgs := []session.Message{
		{Role: session.RoleUser, Content: fact},
		{Role: session.RoleAssistant, Content: "Noted."},
	}
	for i := 3; i <= 10; i += 2 {
		msgs = append(msgs,
			session.Message{Role: session.RoleUser, Content: fmt.Sprintf("Step %d of the parser refactor: split the lexer.", i)},
			session.Message{Role: session.RoleAssistant, Content: fmt.Sprintf("Done with step %d.", i)})
	}
	_, err = store.Append(ctx, sess.ID, msgs...)
	require.NoError(t, err)
	_, err = store.ApplySummary(ctx, session.Summary{SessionID: sess.ID, FromSeq: 1, ToSeq: 8,
		Content: "## Goal\nRefactor the parser.\n## Current state\nThe lexer is split.", TokenCount: 20}, nil, false)
	require.NoError(t, err)
	require.NoError(t, store.Close())

	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{Name: "SearchHistory", Arguments: `{"query":"escrow code"}`}),
		openaitest.Calls(openaitest.ToolCall{Name: "ReadHistory", Arguments: `{"from_seq":1,"to_seq":1}`}),
		openaitest.Text("The escrow code is HELIOTROPE-7731."),
	)
	res := sb.run("-c", "-p", "What was the escrow code I gave you?")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	require.Equal(t, "The escrow code is HELIOTROPE-7731.\n", res.stdout)

	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	var names []string
	for _, tool := range reqs[0].Tools {
		names = append(names, tool.Function.Name)
	}
	require.Contains(t, names, "SearchHistory")
	require.Contains(t, names, "ReadHistory")

	first := reqs[0].Messages
	require.Contains(t, first[1].Content, "Messages 1-8 of this session are summarized", "the summary, after the system prompt")
	require.Contains(t, first[1].Content, "SearchHistory")
	for i, m := range first {
		require.NotContains(t, m.Content, "HELIOTROPE", "request 1, message %d: the fact was compacted away", i)
	}

	// Found: the fact, and the question just asked (not the search call).
	search := lastTool(t, reqs[1].Messages)
	require.Contains(t, search, `2 messages match "escrow code":`)
	require.Regexp(t, `seq 1 · user · [^\n]*«escrow» «code» for the staging vault is HELIOTROPE-7731`, search)
	require.Contains(t, search, "seq 11 · user · ")

	read := lastTool(t, reqs[2].Messages)
	require.Contains(t, read, "--- seq 1 · user · ")
	require.Contains(t, read, fact, "the original message, verbatim")
}

// lastTool is the content of the last message, which must be a tool result.
func lastTool(t *testing.T, msgs []openai.ChatCompletionMessage) string {
	t.Helper()
	last := msgs[len(msgs)-1]
	require.Equal(t, "tool", last.Role, "last message: %+v", last)
	require.False(t, strings.HasPrefix(last.Content, "error"), "tool failed: %s", last.Content)
	return last.Content
}
