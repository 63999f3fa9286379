package cli_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext/termtexttest"
)

// hostileText is the corpus every terminal surface is tested with, as one
// text a model could answer (valid UTF-8: it travels as JSON).
func hostileText() string {
	in, _ := termtexttest.Joined()
	return "BEGIN\n" + strings.ToValidUTF8(in, "\uFFFD") + "END"
}

// seedHostileSession stores a session whose every text a person sees
// carries the corpus: the user's message, a tool call's arguments, the
// tool's output, the answer, a summary (as an older version or an import
// could have stored it).
func seedHostileSession(t *testing.T, sb *sandbox) (id, evil string) {
	t.Helper()
	evil = hostileText()
	st := sb.openStore()
	defer st.Close()
	ctx := context.Background()
	sess, err := st.CreateSession(ctx, sb.work, "gpt-4o-mini")
	require.NoError(t, err)
	args, err := json.Marshal(map[string]string{"command": "echo " + evil})
	require.NoError(t, err)
	_, err = st.Append(ctx, sess.ID,
		session.Message{Role: session.RoleUser, Content: "first", Tokens: 10},
		session.Message{Role: session.RoleAssistant, Content: "ok", Tokens: 10},
		session.Message{Role: session.RoleUser, Content: "user " + evil, Tokens: 10},
		session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "c1", Name: "Bash", Arguments: string(args)}}, Tokens: 10},
		session.Message{Role: session.RoleTool, ToolCallID: "c1", Name: "Bash", Content: "output " + evil, Tokens: 10,
			Meta: session.Meta{Tool: "Bash", Command: "echo " + evil}},
		session.Message{Role: session.RoleAssistant, Content: "answer " + evil, Tokens: 10},
	)
	require.NoError(t, err)
	require.NoError(t, st.SetTitle(ctx, sess.ID, "title "+evil))
	_, err = st.ApplySummary(ctx, session.Summary{SessionID: sess.ID, FromSeq: 1, ToSeq: 2, Goal: "goal " + evil,
		Content: "## Goal\n" + evil, KeyDecisions: []string{"decision " + evil}, Commands: []string{"echo " + evil},
		Model: "gpt-4o-mini", TokensBefore: 40, TokensAfter: 10}, nil, false)
	require.NoError(t, err)
	return sess.ID, evil
}

// TestHostileTextInertOnATerminal is issue 14.5 through the binary: with
// stdout and stderr a terminal (script(1)'s pty), print mode's answer, a
// provider's error, history --full (with and without colour), history
// --json, sessions, summarize --json and both exports reach the terminal
// with nothing it would act on, while what they show is still there.
// Piped, see TestPipedOutputIsInert.
func TestHostileTextInertOnATerminal(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_THEME"] = "dark" // no colour query: its own OSC 11 is not under test
	id, evil := seedHostileSession(t, sb)

	srv.Enqueue(openaitest.Text("print " + evil))
	srv.Enqueue(openaitest.Error(400, `{"error":{"message":"bad \u001b]52;c;cm0gLXJm\u0007\u001b[2J request\r"}}`))
	r := startPty(t, sb, strings.Join([]string{
		`"$GENCODE" -r ` + id + ` -p go`,
		`"$GENCODE" -r ` + id + ` -p again`,
		`"$GENCODE" history --full --session ` + id,
		`NO_COLOR=1 "$GENCODE" history --full --session ` + id,
		`"$GENCODE" history --json --session ` + id,
		`"$GENCODE" export --session ` + id,
		`"$GENCODE" export --format jsonl --session ` + id,
		`"$GENCODE" sessions`,
		`echo DONE`,
	}, "; "))
	r.wait()
	out := r.output()
	// The pty turns each \n into \r\n; any other CR came from gencode.
	out = strings.ReplaceAll(out, "\r\n", "\n")
	require.Contains(t, out, "DONE")
	if raw := termtexttest.Raw(out); len(raw) > 0 {
		t.Fatalf("reached the terminal raw: %v\noutput:\n%q", raw, out)
	}
	for _, want := range []string{
		"print BEGIN",                // print mode's answer
		"bad request",                // the provider's error on stderr
		"answer BEGIN", "goal BEGIN", // history --full: the answer, the summary
		"Bash echo BEGIN",               // a tool call's arguments
		`"content": "answer BEGIN\n`,    // history --json, still JSON
		`"content":"answer BEGIN\n`,     // export jsonl
		"## assistant (#6)\n\nanswer B", // export md
		"title BEGIN",                   // sessions
		"copydone", "click here",        // what the corpus leaves
	} {
		require.Contains(t, out, want)
	}
}
