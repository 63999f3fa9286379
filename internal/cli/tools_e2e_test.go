package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/cli"
	"github.com/gencode/gencode/internal/openaitest"
)

func args(t *testing.T, kv map[string]any) string {
	t.Helper()
	b, err := json.Marshal(kv)
	require.NoError(t, err)
	return string(b)
}

// toolResults returns the tool messages of the last request, by call id.
func toolResults(srv *openaitest.Server) map[string]string {
	reqs := srv.Requests()
	out := map[string]string{}
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

func TestToolsThroughTheBinary(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "w", Name: "Write", Arguments: args(t, map[string]any{"file_path": "notes/todo.txt", "content": "alpha\nbeta\n"})}),
		openaitest.Calls(openaitest.ToolCall{ID: "e", Name: "Edit", Arguments: args(t, map[string]any{"file_path": "notes/todo.txt", "old_string": "beta", "new_string": "gamma"})}),
		// Parallel calls: Read and Bash in one message.
		openaitest.Calls(
			openaitest.ToolCall{ID: "r", Name: "Read", Arguments: args(t, map[string]any{"file_path": "notes/todo.txt"})},
			openaitest.ToolCall{ID: "b", Name: "Bash", Arguments: args(t, map[string]any{"command": "wc -l < notes/todo.txt && echo done-$((6*7))"})},
		),
		openaitest.Text("All done."),
	)
	res := sb.run("-p", "make a todo file", "--allow", "Write,Edit,Bash")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "All done.\n", res.stdout)
	data, err := os.ReadFile(filepath.Join(sb.work, "notes", "todo.txt"))
	require.NoError(t, err)
	require.Equal(t, "alpha\ngamma\n", string(data))
	got := toolResults(srv)
	require.Contains(t, got["r"], "alpha")
	require.Contains(t, got["r"], "gamma")
	require.Contains(t, got["b"], "done-42")
	for i, r := range srv.Requests() {
		require.NoError(t, openaitest.CheckMessageRules(r.Messages), "request %d", i)
	}
}

func TestToolsDeniedWithoutAllow(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	srv.Enqueue(
		openaitest.Calls(
			openaitest.ToolCall{ID: "w", Name: "Write", Arguments: args(t, map[string]any{"file_path": "x.txt", "content": "x"})},
			openaitest.ToolCall{ID: "b", Name: "Bash", Arguments: args(t, map[string]any{"command": "touch ran.txt"})},
			openaitest.ToolCall{ID: "e", Name: "Edit", Arguments: args(t, map[string]any{"file_path": "keep.txt", "old_string": "x", "new_string": "y"})},
		),
		openaitest.Text("I could not do it."),
	)
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "keep.txt"), []byte("x\n"), 0o644))
	res := sb.run("-p", "write and run")
	// The turn goes on to its answer; stderr says what was denied and
	// the exit status that the turn could not do what it was asked.
	require.Equal(t, cli.ExitDenied, res.code, "stderr: %s", res.stderr)
	require.Equal(t, "I could not do it.\n", res.stdout)
	for _, want := range []string{
		"gencode: denied Write (x.txt): Write needs approval",
		"gencode: denied Bash (touch ran.txt): Bash needs approval; the user can rerun with --allow Bash or --yolo",
		"gencode: denied Edit (keep.txt): ",
		"gencode: 3 tool calls were denied, so the turn may not have done what was asked (--allow Write,Bash,Edit, or --yolo)",
	} {
		require.Contains(t, res.stderr, want)
	}
	require.NoFileExists(t, filepath.Join(sb.work, "x.txt"))
	require.NoFileExists(t, filepath.Join(sb.work, "ran.txt"))
	kept, err := os.ReadFile(filepath.Join(sb.work, "keep.txt"))
	require.NoError(t, err)
	require.Equal(t, "x\n", string(kept))
	got := toolResults(srv)
	for _, id := range []string{"w", "b", "e"} {
		require.Contains(t, got[id], "permission denied", "result %s: %s", id, got[id])
		require.Contains(t, got[id], "--allow", "the model is told how to allow it: %s", got[id])
	}
}

func TestAllowWriteStaysInsideTheWorkingDirectory(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	outside := filepath.Join(sb.home, "outside")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(sb.work, "link")))
	srv.Enqueue(
		openaitest.Calls(
			openaitest.ToolCall{ID: "rel", Name: "Write", Arguments: args(t, map[string]any{"file_path": "../x", "content": "x"})},
			openaitest.ToolCall{ID: "abs", Name: "Write", Arguments: args(t, map[string]any{"file_path": filepath.Join(outside, "abs.txt"), "content": "x"})},
			openaitest.ToolCall{ID: "sym", Name: "Write", Arguments: args(t, map[string]any{"file_path": "link/sym.txt", "content": "x"})},
			openaitest.ToolCall{ID: "in", Name: "Write", Arguments: args(t, map[string]any{"file_path": "inside.txt", "content": "ok"})},
		),
		openaitest.Text("done"),
	)
	res := sb.run("-p", "write everywhere", "--allow", "Write")
	require.Equal(t, cli.ExitDenied, res.code, res.stderr)
	require.Contains(t, res.stderr, "gencode: denied Write ("+filepath.Join(sb.home, "x")+"): Write outside the working directory")
	require.NoFileExists(t, filepath.Join(sb.home, "x"))
	require.NoFileExists(t, filepath.Join(outside, "abs.txt"))
	require.NoFileExists(t, filepath.Join(outside, "sym.txt"))
	require.FileExists(t, filepath.Join(sb.work, "inside.txt"))
	got := toolResults(srv)
	for _, id := range []string{"rel", "abs", "sym"} {
		require.True(t, strings.Contains(got[id], "outside") || strings.Contains(got[id], "denied"), "result %s: %s", id, got[id])
	}
}

// A command the model runs does not see the API key, and a file that
// holds it is redacted: neither the log nor the next request has it.
func TestBashNeverLeaksTheAPIKey(t *testing.T) {
	t.Parallel()
	const key = "sk-proj-E2EKEY-0123456789abcdefghij"
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["OPENAI_API_KEY"] = key
	sb.env["GENCODE_MODEL"] = "gpt-4o-mini"
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, ".env"), []byte("OPENAI_API_KEY="+key+"\n"), 0o600))
	srv.Enqueue(
		openaitest.Calls(
			openaitest.ToolCall{ID: "env", Name: "Bash", Arguments: args(t, map[string]any{"command": "env; echo key=[$OPENAI_API_KEY]"})},
			openaitest.ToolCall{ID: "cat", Name: "Bash", Arguments: args(t, map[string]any{"command": "cat .env"})},
		),
		openaitest.Text("Done."),
	)
	res := sb.run("-p", "show me the environment", "--allow", "Bash")
	require.Equal(t, 0, res.code, res.stderr)

	got := toolResults(srv)
	require.Contains(t, got["env"], "HOME="+sb.home, "env ran")
	require.Contains(t, got["env"], "key=[]")
	require.NotContains(t, got["env"], "OPENAI_API_KEY=")
	require.NotContains(t, got["env"], "GENCODE_MODEL=")
	require.Contains(t, got["cat"], "OPENAI_API_KEY=[REDACTED:api-key]")
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	require.NotContains(t, string(reqs[1].Body), key, "the request after the calls")

	hist := sb.run("history", "--json")
	require.Equal(t, 0, hist.code, hist.stderr)
	require.Contains(t, hist.stdout, "REDACTED:api-key")
	require.NotContains(t, hist.stdout, key, "the log")
	require.NotContains(t, hist.stdout, strings.TrimPrefix(key, "sk-proj-"))
}
