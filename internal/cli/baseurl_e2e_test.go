package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestBaseURLCredentialsStayOut: OPENAI_BASE_URL with a user name and
// password (http://admin:PASS@host/v1) reached Bash's environment, so
// `env` showed them to the model and they were stored with the tool's
// result; /config, warnings and errors showed the URL as given. Now the
// configuration takes them out (the client never sent them), commands
// get the URL without them, and nothing stored, logged or printed holds
// them; the endpoint still answers.
func TestBaseURLCredentialsStayOut(t *testing.T) {
	t.Parallel()
	const user, pass = "admin", "S3cretPass-e2e"
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	plain := srv.URL()
	sb.env["OPENAI_BASE_URL"] = strings.Replace(plain, "://", "://"+user+":"+pass+"@", 1)
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "env", Name: "Bash", Arguments: args(t, map[string]any{"command": "env; echo url=[$OPENAI_BASE_URL]"})}),
		openaitest.Text("Done."),
	)
	res := sb.run("-p", "show me the environment", "--allow", "Bash")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "Done.\n", res.stdout)
	require.Contains(t, res.stderr, "holds a user name and password", "the user is told once")

	got := toolResults(srv)
	require.Contains(t, got["env"], "url=["+plain+"]", "commands get the URL without them")
	hist := sb.run("history", "--json")
	require.Equal(t, 0, hist.code, hist.stderr)
	log, err := os.ReadFile(filepath.Join(sb.home, ".local", "state", "gencode", "gencode.log"))
	require.NoError(t, err)

	// A failing endpoint: its error names the URL's host only.
	srv.Enqueue(openaitest.Error(400, ""))
	bad := sb.run("-p", "again")
	require.Equal(t, 1, bad.code, bad.stderr)

	for where, text := range map[string]string{
		"stderr": res.stderr + bad.stderr, "the env result": got["env"], "the requests": allBodies(srv),
		"the stored session": hist.stdout, "the log": string(log),
	} {
		require.NotContains(t, text, pass, "%s holds the password", where)
		require.NotContains(t, text, user+":", "%s holds the user name", where)
	}
}

// allBodies is every request's body, as the server received it.
func allBodies(srv *openaitest.Server) string {
	var b strings.Builder
	for _, r := range srv.Requests() {
		b.Write(r.Body)
	}
	return b.String()
}
