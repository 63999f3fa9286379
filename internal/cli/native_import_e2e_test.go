package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

type nativeTruth struct {
	Format   string   `json:"format"`
	Root     string   `json:"root"`
	Modified []string `json:"modified"`
	Created  []string `json:"created"`
	Deleted  []string `json:"deleted"`
	Commands int      `json:"commands"`
	Source   string   `json:"source"`
	// NotRun are the commands of calls that never ran (denied, canceled,
	// without a result), listed apart in the facts.
	NotRun []string `json:"not_run"`
}

// TestNativeImportFactsAreExact: each native fixture (Claude Code, Codex,
// SWE-agent, mini-swe-agent, OpenHands) imports through the binary by its
// content; `summarize --json` lists exactly the files its truth file lists
// (precision and recall 1.0) relative to its root, and the exact command
// count; `history --full` names its format and root; a `-c` turn continues
// it against the fake server.
func TestNativeImportFactsAreExact(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/native/*.truth.json")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 5)
	// The acceptance: at least six public trajectories ("real:" sources,
	// files nobody here wrote) from at least four agents' formats.
	public, agents := 0, map[string]bool{}
	for _, tf := range files {
		var truth nativeTruth
		b, err := os.ReadFile(tf)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &truth), tf)
		if strings.HasPrefix(truth.Source, "real:") {
			public++
			agents[truth.Format] = true
		}
	}
	require.GreaterOrEqual(t, public, 6, "public trajectories")
	require.GreaterOrEqual(t, len(agents), 4, "agents of the public trajectories")
	for _, tf := range files {
		base := strings.TrimSuffix(tf, ".truth.json")
		t.Run(filepath.Base(base), func(t *testing.T) {
			t.Parallel()
			var truth nativeTruth
			b, err := os.ReadFile(tf)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &truth))
			matches, _ := filepath.Glob(base + ".*")
			var file string
			for _, m := range matches {
				if m != tf {
					file, _ = filepath.Abs(m)
				}
			}
			require.NotEmpty(t, file)

			srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithResponder(summarize))
			sb := newSandbox(t)
			sb.useServer(srv)
			res := sb.run("import", file)
			require.Equal(t, 0, res.code, res.stderr)
			id := strings.TrimSpace(res.stdout)
			require.Contains(t, res.stderr, "read in the "+truth.Format+" format (root "+truth.Root+")")

			res = sb.run("summarize", "--json", "--session", id)
			require.Equal(t, 0, res.code, res.stderr)
			var out struct {
				Facts struct {
					Modified    []string `json:"files_modified"`
					Created     []string `json:"files_created"`
					Deleted     []string `json:"files_deleted"`
					CommandRuns int      `json:"command_runs"`
					NotRun      []string `json:"commands_not_run"`
				} `json:"session_facts"`
			}
			require.NoError(t, json.Unmarshal([]byte(res.stdout), &out), res.stdout)
			modified := slices.DeleteFunc(slices.Clone(out.Facts.Modified), func(p string) bool { return slices.Contains(out.Facts.Created, p) })
			require.ElementsMatch(t, truth.Modified, modified, "modified")
			require.ElementsMatch(t, truth.Created, out.Facts.Created, "created")
			require.ElementsMatch(t, truth.Deleted, out.Facts.Deleted, "deleted")
			require.Equal(t, truth.Commands, out.Facts.CommandRuns, "commands run")
			require.ElementsMatch(t, truth.NotRun, out.Facts.NotRun, "commands not run")

			res = sb.run("history", "--full", "--session", id)
			require.Equal(t, 0, res.code, res.stderr)
			require.Contains(t, res.stdout, "Imported from: "+truth.Format+" · root "+truth.Root)

			res = sb.run("history", "--session", id)
			require.Equal(t, 0, res.code, res.stderr)
			require.Contains(t, res.stdout, "Imported from: "+truth.Format+" · root "+truth.Root)

			res = sb.run("-c", "-p", "what changed?")
			require.Equal(t, 0, res.code, res.stderr)
			require.NotEmpty(t, strings.TrimSpace(res.stdout))
		})
	}
}

// TestImportRefusesAnUnknownFormat: input of no known format is refused
// with what was seen and the formats accepted, and no session is created.
func TestImportRefusesAnUnknownFormat(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	file := filepath.Join(t.TempDir(), "notes.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(`{"kind":"note","text":"hello"}`+"\n"), 0o600))
	res := sb.run("import", file)
	require.NotEqual(t, 0, res.code)
	require.Contains(t, res.stderr, "not a session format gencode imports: it holds one JSON object with the keys kind, text")
	for _, f := range []string{"openai", "claude-code", "codex", "swe-agent", "mini-swe-agent", "openhands"} {
		require.Contains(t, res.stderr, f)
	}
	res = sb.run("sessions")
	require.Equal(t, 0, res.code, res.stderr)
	require.NotContains(t, res.stdout, "notes", fmt.Sprintf("no session: %q", res.stdout))
}

// TestImportFormatFlag: --format forces a format; a name it does not know
// is refused with the names it knows; a file that is not in the forced
// format is refused and creates no session.
func TestImportFormatFlag(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	file, err := filepath.Abs("testdata/native/codex_rollout.jsonl")
	require.NoError(t, err)
	res := sb.run("import", "--format", "codex", file)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stderr, "read in the codex format (root /work/api)")
	require.Contains(t, res.stderr, "1 call(s) never ran (denied, canceled or without a result): no command run, no change:\n  shell rm -f app.py\n")

	res = sb.run("import", "--format", "cursor", file)
	require.NotEqual(t, 0, res.code)
	require.Contains(t, res.stderr, `unknown format "cursor": the formats are openai, claude-code, codex, swe-agent, mini-swe-agent, openhands`)

	res = sb.run("import", "--format", "openai", file)
	require.NotEqual(t, 0, res.code)
	require.Contains(t, res.stderr, "codex_rollout.jsonl:1: a message without a role")

	res = sb.run("sessions")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, 1, strings.Count(res.stdout, "Add a health endpoint"), res.stdout)
}
