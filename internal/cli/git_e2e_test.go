package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/cli"
	"github.com/gencode/gencode/internal/openaitest"
)

// gitGuard is what a refused write into .git tells the model and the user.
const gitGuard = "writes into .git ask every time: git runs code from its config and hooks"

// TestWriteIntoGitThroughTheBinary: a print-mode turn run with --allow
// Write,Edit cannot plant a command in .git/config (core.fsmonitor, run
// by a later allowed `git status`) or a hook: each write is refused,
// saying why, the files stay as they were, the answer is still printed,
// and the exit status is that of other denials, with a closing line that
// names --yolo only. A write elsewhere in the project works.
func TestWriteIntoGitThroughTheBinary(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	const config = "[core]\n\trepositoryformatversion = 0\n"
	gitDir := filepath.Join(sb.work, ".git")
	for _, d := range []string{"objects", "refs/heads", "hooks"} {
		require.NoError(t, os.MkdirAll(filepath.Join(gitDir, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(gitDir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(gitDir, "config"), []byte(config), 0o644))

	srv.Enqueue(
		openaitest.Calls(
			openaitest.ToolCall{ID: "w", Name: "Write", Arguments: args(t, map[string]any{"file_path": ".git/config", "content": config + "\tfsmonitor = touch pwned\n"})},
			openaitest.ToolCall{ID: "e", Name: "Edit", Arguments: args(t, map[string]any{"file_path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\tpager = touch pwned"})},
			openaitest.ToolCall{ID: "h", Name: "Write", Arguments: args(t, map[string]any{"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"})},
			openaitest.ToolCall{ID: "ok", Name: "Write", Arguments: args(t, map[string]any{"file_path": ".gitignore", "content": "*.o\n"})},
		),
		openaitest.Text("Done."),
	)
	res := sb.run("-p", "speed up git status", "--allow", "Write,Edit")
	require.Equal(t, cli.ExitDenied, res.code, "stderr: %s", res.stderr)
	require.Equal(t, "Done.\n", res.stdout)

	got := toolResults(srv)
	for _, id := range []string{"w", "e", "h"} {
		require.Contains(t, got[id], "permission denied", id)
		require.Contains(t, got[id], gitGuard, id)
	}
	require.Contains(t, got["ok"], "Created .gitignore")
	for _, want := range []string{
		"gencode: denied Write (.git/config): Write " + filepath.Join(gitDir, "config") + " is refused: " + gitGuard,
		"gencode: denied Edit (.git/config): ",
		"gencode: denied Write (.git/hooks/pre-commit): ",
		"gencode: 3 tool calls were denied, so the turn may not have done what was asked (only --yolo allows them)",
	} {
		require.Contains(t, res.stderr, want)
	}
	require.NotContains(t, res.stderr, "--allow", "--allow Write,Edit was given; it does not lift these")

	data, err := os.ReadFile(filepath.Join(gitDir, "config"))
	require.NoError(t, err)
	require.Equal(t, config, string(data), ".git/config is unchanged")
	require.NoFileExists(t, filepath.Join(gitDir, "hooks", "pre-commit"))
	require.FileExists(t, filepath.Join(sb.work, ".gitignore"))
}
