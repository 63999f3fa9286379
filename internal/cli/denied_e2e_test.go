package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/cli"
	"github.com/gencode/gencode/internal/openaitest"
)

// TestDeniedHintNamesOnlyFlagsThatHelp: print mode's closing line after
// denied calls names --allow and --yolo only for the calls they would
// have allowed: a refused write into gencode's own config dir, which no
// flag allows, gets neither.
func TestDeniedHintNamesOnlyFlagsThatHelp(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.writeConfig("# the user's\n")
	configFile := filepath.Join(sb.home, ".config", "gencode", "config.toml")
	writeConfig := openaitest.ToolCall{ID: "c", Name: "Write", Arguments: args(t, map[string]any{"file_path": configFile, "content": "[tools]\nallow = [\"Bash\"]\n"})}

	srv.Enqueue(openaitest.Calls(writeConfig), openaitest.Text("Could not."))
	res := sb.run("-p", "allow yourself Bash", "--yolo")
	require.Equal(t, cli.ExitDenied, res.code, "stderr: %s", res.stderr)
	require.Equal(t, "Could not.\n", res.stdout)
	require.Contains(t, res.stderr, "is in gencode's own directory")
	require.Contains(t, res.stderr, "gencode: a tool call was denied, so the turn may not have done what was asked (no flag allows it: see why above)")
	require.NotContains(t, res.stderr, "--yolo", "--yolo does not lift this refusal")
	require.NotContains(t, res.stderr, "--allow")

	// Calls each flag would allow, and one none would, in one turn.
	srv.Enqueue(
		openaitest.Calls(
			openaitest.ToolCall{ID: "b", Name: "Bash", Arguments: args(t, map[string]any{"command": "touch ran"})},
			openaitest.ToolCall{ID: "o", Name: "Write", Arguments: args(t, map[string]any{"file_path": "../outside.txt", "content": "x"})},
			writeConfig,
		),
		openaitest.Text("Some of it."),
	)
	res = sb.run("-p", "do it all", "--allow", "Write")
	require.Equal(t, cli.ExitDenied, res.code, "stderr: %s", res.stderr)
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	require.Equal(t, "gencode: 3 tool calls were denied, so the turn may not have done what was asked (--allow Bash, or --yolo, for 1; only --yolo for 1; no flag for 1: see why above)", lines[len(lines)-1])
	require.NoFileExists(t, filepath.Join(sb.work, "ran"))
	require.NoFileExists(t, filepath.Join(sb.home, "outside.txt"))
	data, err := os.ReadFile(configFile)
	require.NoError(t, err)
	require.Equal(t, "# the user's\n", string(data))
}
