package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/permstore"
	"github.com/gencode/gencode/internal/tools"
)

// TestWriteCannotGrantBash: with the working directory at the home that
// holds gencode's config dir (a home or dotfiles project), a print-mode
// turn run with --allow Write,Edit cannot write the config (which would
// allow Bash from the next start) nor the project's permission rules
// (which apply at once): both are refused and stay as they were, and a
// later turn's Bash is still denied. A write elsewhere in the home works.
func TestWriteCannotGrantBash(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	home, err := filepath.EvalSymlinks(sb.home)
	require.NoError(t, err)
	conf := filepath.Join(home, ".config", "gencode")
	config := "# the user's\n"
	sb.writeConfig(config)
	rulesFile := permstore.Path(conf, home)
	require.NoError(t, permstore.Open(conf, home).Add(permstoreWrite()))
	rules, err := os.ReadFile(rulesFile)
	require.NoError(t, err)
	rel, err := filepath.Rel(home, rulesFile)
	require.NoError(t, err)

	srv.Enqueue(
		openaitest.Calls(
			openaitest.ToolCall{ID: "c", Name: "Write", Arguments: args(t, map[string]any{"file_path": ".config/gencode/config.toml", "content": "[tools]\nallow = [\"Bash\"]\n"})},
			openaitest.ToolCall{ID: "p", Name: "Write", Arguments: args(t, map[string]any{"file_path": rel, "content": "[[rule]]\ntool = \"Bash\"\ncommand = [\"touch\", \"pwned\"]\nexact = true\n"})},
			openaitest.ToolCall{ID: "e", Name: "Edit", Arguments: args(t, map[string]any{"file_path": ".config/gencode/config.toml", "old_string": "# the user's", "new_string": "[tools]\nallow = [\"Bash\"]"})},
			openaitest.ToolCall{ID: "r", Name: "Read", Arguments: args(t, map[string]any{"file_path": rel})},
			openaitest.ToolCall{ID: "ok", Name: "Write", Arguments: args(t, map[string]any{"file_path": "notes.txt", "content": "fine\n"})},
		),
		openaitest.Text("Done."),
		openaitest.Calls(openaitest.ToolCall{ID: "b", Name: "Bash", Arguments: args(t, map[string]any{"command": "touch pwned"})}),
		openaitest.Text("Tried."),
	)
	res := sb.runIn(home, "", "-p", "configure yourself", "--allow", "Write,Edit")
	require.Equal(t, 3, res.code, "denied calls exit 3: %s", res.stderr)
	got := toolResults(srv)
	for _, id := range []string{"c", "p", "e"} {
		require.Contains(t, got[id], "is in gencode's own directory "+conf, id)
	}
	require.Contains(t, got["r"], "permission denied", "the rules file is outside the project for Read")
	require.Contains(t, got["ok"], "Created notes.txt")

	data, err := os.ReadFile(filepath.Join(conf, "config.toml"))
	require.NoError(t, err)
	require.Equal(t, config, string(data), "the config is unchanged")
	data, err = os.ReadFile(rulesFile)
	require.NoError(t, err)
	require.Equal(t, string(rules), string(data), "the permission rules are unchanged")

	res = sb.runIn(home, "", "-p", "now run it")
	require.Equal(t, 3, res.code, res.stderr)
	require.Contains(t, toolResults(srv)["b"], "permission denied: Bash needs approval")
	require.NoFileExists(t, filepath.Join(home, "pwned"))
}

func permstoreWrite() tools.Rule { return tools.Rule{Tool: tools.ToolWrite} }
