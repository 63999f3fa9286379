package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestShellChangesInTheFacts: a print-mode session whose files change only
// through Bash (sed -i, printf >, a Python script the session wrote, mv,
// rm). `summarize --json` names what the session did, as the filesystem
// saw it: created then removed is nothing, a rename is the new name, and
// a file that existed before and was removed is deleted; the boxed report
// says the same.
func TestShellChangesInTheFacts(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	srv := openaitest.NewServer(t, openaitest.WithResponder(summarize))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "a.txt"), []byte("a\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "d0.txt"), []byte("old\n"), 0o644))
	bash := func(id, command string) openaitest.Reply {
		return openaitest.Calls(openaitest.ToolCall{ID: id, Name: "Bash", Arguments: args(t, map[string]any{"command": command})})
	}
	srv.Enqueue(
		bash("sed", "sed -i 's/a/A/' a.txt"),
		bash("printf", `printf 'b\n' > b.txt`),
		// The paths are computed: no parser could know them.
		bash("script", "cat > gen.py <<'EOF'\nfor name in 'cd':\n    open(name + '.txt', 'w').write(name)\nEOF\npython3 gen.py"),
		bash("mv", "mv b.txt e.txt"),
		bash("rm", "rm c.txt d0.txt"),
		openaitest.Text("Done."),
	)
	res := sb.run("-p", "shuffle the files", "--allow", "Bash")
	require.Equal(t, 0, res.code, res.stderr)
	require.FileExists(t, filepath.Join(sb.work, "d.txt"))
	require.NoFileExists(t, filepath.Join(sb.work, "c.txt"))

	res = sb.run("summarize", "--json")
	require.Equal(t, 0, res.code, res.stderr)
	var out struct {
		SessionID string `json:"session_id"`
		Facts     struct {
			Modified    []string `json:"files_modified"`
			Created     []string `json:"files_created"`
			Deleted     []string `json:"files_deleted"`
			Read        []string `json:"files_read"`
			CommandRuns int      `json:"command_runs"`
			Commands    []string `json:"commands"`
		} `json:"session_facts"`
		Summary *json.RawMessage `json:"summary"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out), res.stdout)
	require.ElementsMatch(t, []string{"a.txt", "e.txt", "gen.py", "d.txt"}, out.Facts.Modified)
	require.ElementsMatch(t, []string{"e.txt", "gen.py", "d.txt"}, out.Facts.Created)
	require.Equal(t, []string{"d0.txt"}, out.Facts.Deleted)
	require.Equal(t, 5, out.Facts.CommandRuns)
	require.Len(t, out.Facts.Commands, 5)
	require.Nil(t, out.Summary, "a session this short is not compacted")

	res = sb.run("summarize")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "4 files modified, 5 shell commands run")
	require.Contains(t, res.stdout, "Files modified in the session (4)")
	require.Contains(t, res.stdout, "Files created in the session (3)")
	require.Contains(t, res.stdout, "Files deleted in the session (1)")
	for _, f := range []string{"a.txt", "e.txt", "gen.py", "d.txt", "d0.txt"} {
		require.Contains(t, res.stdout, "• "+f)
	}
	for _, f := range []string{"b.txt", "c.txt"} {
		require.NotContains(t, res.stdout, "• "+f)
	}

	// history --json carries the same facts, and each Bash result's
	// observed changes as metadata.
	res = sb.run("history", "--json")
	require.Equal(t, 0, res.code, res.stderr)
	var hist struct {
		Facts struct {
			Deleted []string `json:"files_deleted"`
		} `json:"session_facts"`
		Messages []struct {
			Meta *struct {
				Changes *struct {
					Observed bool     `json:"observed"`
					Created  []string `json:"created"`
				} `json:"changes"`
			} `json:"meta"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &hist))
	require.Equal(t, []string{"d0.txt"}, hist.Facts.Deleted)
	var created []string
	for _, m := range hist.Messages {
		if m.Meta != nil && m.Meta.Changes != nil {
			require.True(t, m.Meta.Changes.Observed)
			created = append(created, m.Meta.Changes.Created...)
		}
	}
	require.Equal(t, []string{"b.txt", "c.txt", "d.txt", "gen.py", "e.txt"}, created) // sorted per call
}
