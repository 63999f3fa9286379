package cli_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestInvalidModelOutputDoesNotPoisonTheSession is issue 14.8 through the
// binary: a model answers with arguments that are not JSON, two calls with
// one id, then an empty message. The log keeps what was received; every
// later request is valid for a provider that enforces the message rules.
func TestInvalidModelOutputDoesNotPoisonTheSession(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	srv.Enqueue(
		openaitest.Calls(
			openaitest.ToolCall{ID: "call_1", Name: "LS", Arguments: `{"path": "`},
			openaitest.ToolCall{ID: "call_1", Name: "LS", Arguments: `{}`},
		),
		openaitest.Text(""),
	)
	res := sb.run("-p", "list the files")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)

	srv.Enqueue(openaitest.Text("Fine now."))
	res = sb.run("-c", "-p", "and now?")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	require.Equal(t, "Fine now.\n", res.stdout)

	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	for i, r := range reqs {
		require.NoError(t, openaitest.CheckMessageRules(r.Messages), "request %d", i)
		require.NoError(t, openaitest.CheckRoleAlternation(r.Messages), "request %d", i)
	}
	third := reqs[2].Messages
	roles := []string{}
	for _, m := range third {
		roles = append(roles, m.Role)
	}
	require.Equal(t, []string{"system", "user", "assistant", "tool", "tool", "assistant", "user"}, roles)
	require.Contains(t, third[5].Content, "No answer", "the empty answer is not sent; a note stands for it")
	require.Equal(t, "{}", third[2].ToolCalls[0].Function.Arguments)
	require.NotEqual(t, third[2].ToolCalls[0].ID, third[2].ToolCalls[1].ID)
	require.Contains(t, third[3].Content, "not valid JSON")

	hist := sb.run("history", "--json")
	require.Equal(t, 0, hist.code, hist.stderr)
	require.Contains(t, hist.stdout, `{\"path\": \"`, "the log keeps the arguments as received")
}
