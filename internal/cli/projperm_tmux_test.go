package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// allToolResults are the tool messages of every request the fake server
// was sent.
func allToolResults(srv *openaitest.Server) []string {
	var out []string
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			if m.Role == "tool" {
				out = append(out, m.Content)
			}
		}
	}
	return out
}

// TestAlwaysForThisProjectInTmux: "always for this project" (p) on a
// Bash call in one session saves a rule, so that in a new session, and in
// print mode, the same command runs without a dialog.
func TestAlwaysForThisProjectInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	call := func(cmd string) openaitest.Reply {
		return openaitest.Calls(openaitest.ToolCall{Name: "Bash", Arguments: `{"command":"` + cmd + `"}`})
	}
	// cat only reads: the rule saved is cat followed by paths inside
	// the project, so the other files are allowed by it too.
	for _, f := range []string{"first", "again", "printed"} {
		require.NoError(t, os.WriteFile(filepath.Join(sb.work, f+".txt"), []byte("saved-rule "+f+"\n"), 0o644))
	}
	srv.Enqueue(call("cat first.txt"), openaitest.Text("Ran it."))

	p := startTUI(t, sb)
	p.waitText("Message gencode")
	p.typeLine("run it")
	s := p.waitText("Allow Bash?")
	require.Contains(t, s, "p saves the rule: cat [+ paths inside the project; no options]")
	time.Sleep(700 * time.Millisecond) // the dialog takes keys once the user has seen it
	p.keys("p")
	p.waitText("Ran it.")
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
	files, err := filepath.Glob(filepath.Join(sb.env["XDG_CONFIG_HOME"], "gencode", "projects", "*", "permissions.toml"))
	require.NoError(t, err)
	require.Len(t, files, 1, "the rule is saved in the config dir")
	fi, err := os.Stat(files[0])
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// A new session: the model runs the command again, and no dialog opens
	// (one would hold the turn, and "Ran it again." would never come).
	srv.Enqueue(call("cat again.txt"), openaitest.Text("Ran it again."))
	p = startTUI(t, sb)
	p.waitText("Message gencode")
	p.typeLine("again")
	s = p.waitText("Ran it again.")
	require.NotContains(t, s, "Allow Bash?")
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())

	// Print mode, with nobody to ask, honours the rule too.
	srv.Enqueue(call("cat printed.txt"), openaitest.Text("Printed."))
	res := sb.run("-p", "once more")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	require.Equal(t, "Printed.\n", res.stdout)

	results := strings.Join(allToolResults(srv), "\n")
	for _, want := range []string{"saved-rule first", "saved-rule again", "saved-rule printed"} {
		require.Contains(t, results, want)
	}
	require.NotContains(t, results, "permission denied")
}
