package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/termtext"
)

// TestRealSessionsImportSummarizeReport: each recorded session from other
// agents imports, summarizes, and the report names every file its ground
// truth says was written or edited, and how many shell commands ran.
func TestRealSessionsImportSummarizeReport(t *testing.T) {
	t.Parallel()
	for _, file := range realSessions(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			var truth struct {
				Files          []string `json:"files_written_or_edited"`
				ShellCommands  int      `json:"shell_commands"`
				DeletedByShell []string `json:"files_deleted_by_shell"`
			}
			b, err := os.ReadFile(strings.TrimSuffix(file, ".openai.jsonl") + ".ground_truth.json")
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &truth))
			// The net effect: a file written and then removed in the
			// session (a reproduce script) is not modified.
			var files []string
			for _, f := range truth.Files {
				if !slices.ContainsFunc(truth.DeletedByShell, func(d string) bool { return strings.HasSuffix(f, "/"+d) }) {
					files = append(files, f)
				}
			}

			srv := openaitest.NewServer(t, openaitest.WithResponder(summarize))
			sb := newSandbox(t)
			sb.useServer(srv)
			sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
			res := sb.run("import", file)
			require.Equal(t, 0, res.code, res.stderr)
			id := strings.TrimSpace(res.stdout)
			// Files are listed relative to the session's root, which
			// import infers from the absolute paths (issue 28).
			if m := regexp.MustCompile(`\(root ([^)]+)\)`).FindStringSubmatch(res.stderr); m != nil && m[1] != "unknown" {
				for i, f := range files {
					files[i] = strings.TrimPrefix(f, m[1]+"/")
				}
			}

			res = sb.run("summarize", "--session", id)
			require.Equal(t, 0, res.code, res.stderr)
			out := res.stdout
			if !strings.HasPrefix(out, "Nothing to summarize") {
				require.Contains(t, out, "Session Summary · "+id)
			}
			for _, f := range files {
				require.Contains(t, out, f, "file %s", f)
			}
			require.Contains(t, out, termtext.Count(len(files), "file", "files")+" modified, "+termtext.Count(truth.ShellCommands, "shell command", "shell commands")+" run")
		})
	}
}
