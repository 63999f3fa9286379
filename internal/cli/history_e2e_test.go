package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

type historyJSON struct {
	Session struct {
		ID           string `json:"id"`
		MessageCount int    `json:"message_count"`
	} `json:"session"`
	Messages []struct {
		Seq       int64  `json:"seq"`
		Role      string `json:"role"`
		Content   string `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct{ Name, Arguments string }
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
		Tokens     int    `json:"tokens"`
	} `json:"messages"`
	Summaries []json.RawMessage `json:"summaries"`
}

func realSessions(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(openaitest.SharedTestdata(t), "sessions", "*.openai.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Count(strings.TrimRight(string(b), "\n"), "\n") + 1
}

func TestImportHistoryJSONAndRoundTrip(t *testing.T) {
	t.Parallel()
	for _, file := range realSessions(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t)
			res := sb.run("import", file)
			require.Equal(t, 0, res.code, res.stderr)
			id := strings.TrimSpace(res.stdout)
			require.Regexp(t, `^[0-9a-f]{12}$`, id, "import prints the new id alone")

			res = sb.run("history", "--json", "--session", id)
			require.Equal(t, 0, res.code, res.stderr)
			var h historyJSON
			require.NoError(t, json.Unmarshal([]byte(res.stdout), &h))
			want := countLines(t, file)
			require.Len(t, h.Messages, want, "every message of the log")
			require.Equal(t, want, h.Session.MessageCount)
			for i, m := range h.Messages {
				require.EqualValues(t, i+1, m.Seq)
				require.Positive(t, m.Tokens)
			}

			// export jsonl -> import -> same messages, same order.
			res = sb.run("export", "--session", id, "--format", "jsonl")
			require.Equal(t, 0, res.code, res.stderr)
			out := filepath.Join(t.TempDir(), "export.jsonl")
			require.NoError(t, os.WriteFile(out, []byte(res.stdout), 0o600))
			res = sb.run("import", out)
			require.Equal(t, 0, res.code, res.stderr)
			id2 := strings.TrimSpace(res.stdout)
			require.NotEqual(t, id, id2)
			res = sb.run("history", "--json", "--session", id2)
			require.Equal(t, 0, res.code, res.stderr)
			var h2 historyJSON
			require.NoError(t, json.Unmarshal([]byte(res.stdout), &h2))
			require.Len(t, h2.Messages, len(h.Messages))
			for i := range h.Messages {
				a, b := h.Messages[i], h2.Messages[i]
				require.Equal(t, a.Role, b.Role, "message %d", i+1)
				require.Equal(t, a.Content, b.Content, "message %d", i+1)
				require.Equal(t, a.ToolCalls, b.ToolCalls, "message %d", i+1)
				require.Equal(t, a.ToolCallID, b.ToolCallID, "message %d", i+1)
			}

			res = sb.run("export", "--session", id)
			require.Equal(t, 0, res.code, res.stderr)
			require.Contains(t, res.stdout, "Session `"+id+"`")
		})
	}
}

func TestHistoryDefaultsToLatestSessionHere(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	srv.Enqueue(openaitest.Text("noted"))
	require.Equal(t, 0, sb.run("-p", "remember the blue door").code)
	res := sb.run("history", "--full")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "#1 user: remember the blue door")
	require.Contains(t, res.stdout, "#2 assistant: noted")
	require.Contains(t, res.stdout, "nothing summarized yet")

	empty := newSandbox(t)
	res = empty.run("history")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "no session in")

	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte("{\"role\":\"user\",\"content\":\"hi\"}\nnot json\n"), 0o600))
	res = sb.run("import", bad)
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "bad.jsonl:2: not a JSON message")
}

func TestHistorySearch(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	srv.Enqueue(openaitest.Text("Noted: the staging database is on port 6543."), openaitest.Text("ok"))
	require.Equal(t, 0, sb.run("-p", "remember: staging db uses port 6543 (not 5432)").code)
	require.Equal(t, 0, sb.run("-c", "-p", "thanks").code)
	for _, q := range []string{"6543", `"port 6543" (not`, "staging -db:*"} {
		res := sb.run("history", "--search", q)
		require.Equal(t, 0, res.code, "query %q: %s", q, res.stderr)
		require.Contains(t, res.stdout, "#1 user", "query %q:\n%s", q, res.stdout)
	}
	res := sb.run("history", "--search", "nothing-like-this")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "no message matches")
}
