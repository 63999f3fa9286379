package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/permstore"
)

// TestHandEditedRulesThroughTheBinary: a permissions.toml edited by hand
// to hold an interpreter rule and a widened rm is checked on load as the
// dialog checks what it saves: print mode names the ignored lines on
// stderr at start, and the commands they would have allowed are denied,
// while the exact rule that the dialog could have saved still applies.
func TestHandEditedRulesThroughTheBinary(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	work, err := filepath.EvalSymlinks(sb.work)
	require.NoError(t, err)
	path := permstore.Path(filepath.Join(sb.home, ".config", "gencode"), work)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	body := "[[rule]]\ntool = \"Bash\"\ncommand = [\"sh\", \"-c\"]\n\n" +
		"[[rule]]\ntool = \"Bash\"\ncommand = [\"rm\", \"keep.txt\"]\n\n" +
		"[[rule]]\ntool = \"Bash\"\ncommand = [\"echo\", \"fine\"]\nexact = true\n"
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "keep.txt"), []byte("x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "precious.txt"), []byte("x\n"), 0o644))

	srv.Enqueue(
		openaitest.Calls(
			openaitest.ToolCall{ID: "sh", Name: "Bash", Arguments: args(t, map[string]any{"command": "sh -c 'touch pwned'"})},
			openaitest.ToolCall{ID: "rm", Name: "Bash", Arguments: args(t, map[string]any{"command": "rm keep.txt precious.txt"})},
			openaitest.ToolCall{ID: "ok", Name: "Bash", Arguments: args(t, map[string]any{"command": "echo fine"})},
		),
		openaitest.Text("Done."),
	)
	res := sb.run("-p", "go")
	require.Equal(t, 3, res.code, "denied calls exit 3: %s", res.stderr)
	require.Contains(t, res.stderr, path+`:1: ignored: rule for Bash "sh -c": sh runs the commands or code it is given`)
	require.Contains(t, res.stderr, path+`:5: ignored: rule for Bash "rm keep.txt": allows more arguments, but gencode saves this command only exactly`)
	got := toolResults(srv)
	require.Contains(t, got["sh"], "permission denied")
	require.Contains(t, got["rm"], "permission denied")
	require.Contains(t, got["ok"], "fine")
	require.NoFileExists(t, filepath.Join(sb.work, "pwned"))
	require.FileExists(t, filepath.Join(sb.work, "precious.txt"))
}
