package facts

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
)

func msg(role session.Role, content string) session.Message {
	return session.Message{Role: role, Content: content, Tokens: 10}
}

func TestExtract(t *testing.T) {
	t.Parallel()
	exit0, exit2 := 0, 2
	calls := []struct {
		name, args string
		meta       session.Meta
	}{
		{"Write", `{"file_path":"/w/a.go","content":"package a"}`, session.Meta{}},
		{"Edit", `{"file_path":"/w/b.go","old_string":"x","new_string":"y"}`, session.Meta{}},
		{"Edit", `{"file_path":"/w/failed.go","old_string":"x","new_string":"y"}`, session.Meta{Failed: true}},
		{"Write", `{"file_path":"/w/denied.go","content":"x"}`, session.Meta{Denied: true}},
		{"Read", `{"file_path":"/w/c.go"}`, session.Meta{}},
		{"Bash", `{"command":"go test ./..."}`, session.Meta{ExitCode: &exit2, Failed: true}},
		{"Bash", `{"command":"go build ./..."}`, session.Meta{ExitCode: &exit0}},
		{"Bash", `{"command":"rm -rf /"}`, session.Meta{Denied: true}},
		// Tools of other agents, as imported sessions name them.
		{"str_replace_editor", `{"command":"create","path":"/w/d.py","file_text":"x"}`, session.Meta{}},
		{"str_replace_editor", `{"command":"view","path":"/w/e.py"}`, session.Meta{}},
		{"MultiEdit", `{"file_path":"/w/f.ts","edits":[{"old_string":"a","new_string":"b"}]}`, session.Meta{}},
		{"NotebookEdit", `{"notebook_path":"/w/g.ipynb","new_source":"x"}`, session.Meta{}},
		{"apply_patch", `{"input":"*** Begin Patch\n*** Update File: /w/h.rs\n@@\n-a\n+b\n*** End Patch"}`, session.Meta{}},
		{"run_terminal_cmd", `{"command":"npm test","is_background":false}`, session.Meta{}},
		{"create_file", `{"path":"/w/i.md","content":"x"}`, session.Meta{}},
		{"Glob", `{"pattern":"**/*.go"}`, session.Meta{}},
		{"Write", `{"file_path":"/w/cut.go","content":"unterminated`, session.Meta{}},
	}
	var msgs []session.Message
	msgs = append(msgs, msg(session.RoleUser, "Build the parser. Never touch vendor/. Please be quick."))
	for i, c := range calls {
		id := "c" + string(rune('a'+i))
		msgs = append(msgs, session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: id, Name: c.name, Arguments: c.args}}})
		msgs = append(msgs, session.Message{Role: session.RoleTool, ToolCallID: id, Name: c.name, Content: "result", Meta: c.meta})
	}
	msgs = append(msgs, msg(session.RoleAssistant, "I decided to use a recursive descent parser. It works."))
	msgs = append(msgs, msg(session.RoleUser, "Now add tests for the lexer\nand the parser."))

	sum := Extract(msgs, true)
	require.Equal(t, []string{"/w/a.go", "/w/b.go", "/w/d.py", "/w/f.ts", "/w/g.ipynb", "/w/h.rs", "/w/i.md", "/w/cut.go"}, sum.FilesModified)
	require.Equal(t, []string{"/w/c.go", "/w/e.py"}, sum.FilesRead)
	require.Equal(t, []string{"go test ./...", "go build ./...", "npm test"}, sum.Commands)
	require.Equal(t, "Now add tests for the lexer\nand the parser.", sum.LastUserRequest)
	require.Equal(t, []string{"Never touch vendor/."}, sum.UserConstraints)
	require.Equal(t, []string{"I decided to use a recursive descent parser."}, sum.KeyDecisions)
	require.Len(t, sum.UserRequests, 2)

	uses := map[string]session.ToolUsage{}
	for _, u := range sum.ToolsUsed {
		uses[u.Tool] = u
	}
	require.Equal(t, 3, uses["Bash"].Count)
	require.Equal(t, "go test ./... (exit 2)", uses["Bash"].NotableUses[0], "failures are notable first")
	require.Contains(t, uses["Bash"].NotableUses, "rm -rf / (denied)")
	require.Equal(t, 1, uses["Glob"].Count)
}

// TestExtractRealSessions checks the extraction against the ground truth
// computed from the raw recordings of real sessions (Claude Code and
// SWE-agent, with tool names gencode does not define).
func TestExtractRealSessions(t *testing.T) {
	t.Parallel()
	shared, err := filepath.Glob(filepath.Join(openaitest.SharedTestdata(t), "sessions", "*.openai.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, shared)
	// The project's own: bash-only and SWE-agent sessions whose ground
	// truth is their final patch.
	own, err := filepath.Glob(filepath.Join("testdata", "sessions", "*.openai.jsonl"))
	require.NoError(t, err)
	require.Len(t, own, 3)
	for _, f := range append(shared, own...) {
		name := strings.TrimSuffix(filepath.Base(f), ".openai.jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			truth := readTruth(t, strings.TrimSuffix(f, ".openai.jsonl")+".ground_truth.json")
			sum := Extract(stored(t, f), true)
			require.Subset(t, sum.FilesModified, truth.modified())
			for _, f := range truth.FinalPatch {
				require.True(t, slices.ContainsFunc(sum.FilesModified, endsWithPath(f)), "%s of the final patch is not in %q", f, sum.FilesModified)
			}
			for _, f := range truth.DeletedByShell {
				require.False(t, slices.ContainsFunc(sum.FilesModified, endsWithPath(f)), "%s was removed in the session, yet listed in %q", f, sum.FilesModified)
			}
			require.Subset(t, sum.Commands, truth.Commands)
			if strings.HasPrefix(f, "testdata") {
				// Exactly the patch: nothing more is listed as modified.
				require.Len(t, sum.FilesModified, len(truth.FinalPatch), "%q", sum.FilesModified)
			}
			if truth.Created != nil {
				require.ElementsMatch(t, *truth.Created, sum.FilesCreated)
			}
		})
	}
}

// groundTruth is what a recorded session's ground_truth.json says.
type groundTruth struct {
	Files          []string  `json:"files_written_or_edited"`
	Commands       []string  `json:"shell_command_list"`
	DeletedByShell []string  `json:"files_deleted_by_shell"`
	FinalPatch     []string  `json:"final_patch_files"`
	Created        *[]string `json:"files_created"`
}

func readTruth(t *testing.T, file string) groundTruth {
	t.Helper()
	var truth groundTruth
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &truth))
	return truth
}

// modified is the net effect: the files written or edited, less those the
// session removed again.
func (g groundTruth) modified() []string {
	var out []string
	for _, f := range g.Files {
		if !slices.ContainsFunc(g.DeletedByShell, func(d string) bool { return endsWithPath(d)(f) }) {
			out = append(out, f)
		}
	}
	return out
}

// endsWithPath matches p itself or a path ending in /p.
func endsWithPath(p string) func(string) bool {
	return func(s string) bool { return s == p || strings.HasSuffix(s, "/"+p) }
}

// TestExtractShellChanges: files changed only through the shell, in an
// imported session (no observation), are read from the commands: in-place
// edits, redirections, a script the session wrote, renames and removals,
// with the net effect.
func TestExtractShellChanges(t *testing.T) {
	t.Parallel()
	sum := Extract(sessiontest.LogOf(
		sessiontest.Bash("sed -i 's/a/A/' a.txt", ""),
		sessiontest.Bash(`printf 'b\n' > b.txt`, ""),
		sessiontest.Bash("cat > gen.py <<'EOF'\nfor name in ['c.txt', 'd.txt']:\n    pass\nopen('c.txt', 'w').write('c')\nwith open(\"d.txt\", \"w\") as f:\n    f.write('d')\nEOF", ""),
		sessiontest.Bash("python3 gen.py", ""),
		sessiontest.Bash("mv b.txt e.txt", ""),
		sessiontest.Bash("rm c.txt d0.txt", ""),
		sessiontest.Bash("cat notes.md && grep -n TODO main.go", ""),
	), true)
	require.Equal(t, []string{"a.txt", "gen.py", "d.txt", "e.txt"}, sum.FilesModified)
	require.Equal(t, []string{"gen.py", "d.txt", "e.txt"}, sum.FilesCreated)
	require.Equal(t, []string{"d0.txt"}, sum.FilesDeleted)
	require.Equal(t, []string{"notes.md", "main.go"}, sum.FilesRead)
}

// TestExtractOtherAgents: the vocabularies of other agents on import, a
// script fixed through a file shown earlier, diffs in results, and edits
// that were refused.
func TestExtractOtherAgents(t *testing.T) {
	t.Parallel()
	sum := Extract(sessiontest.LogOf(
		// SWE-agent: edit names no file; the open one, or its result's.
		sessiontest.Bash("open src/models.py", "[File: /repo/src/models.py (300 lines total)]\n(Current directory: /repo)"),
		sessiontest.Bash("edit 10:12\n    x = 1\nend_of_edit", "Your proposed edit has introduced new syntax error(s)."),
		sessiontest.Bash("edit 10:12\n    x = 1\nend_of_edit", "[File: /repo/src/models.py (301 lines total)]\n(Current directory: /repo)"),
		sessiontest.Bash("create reproduce.py", "[File: /repo/reproduce.py (1 lines total)]\n(Current directory: /repo)"),
		sessiontest.Bash("rm reproduce.py", "(Current directory: /repo)"),
		// OpenHands' editor; a refused replacement changes nothing.
		sessiontest.Call{Name: "str_replace_editor", Args: `{"command":"str_replace","path":"/repo/a.py","old_str":"x","new_str":"y"}`, Result: "ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim in /repo/a.py."},
		sessiontest.Call{Name: "str_replace_editor", Args: `{"command":"create","path":"/repo/fix.py","file_text":"p = 'lib/core.py'\ns = open(p).read()\nwith open(p, 'w') as f:\n    f.write(s)\n"}`, Result: "File created successfully at: /repo/fix.py"},
		sessiontest.Call{Name: "execute_bash", Args: `{"command":"cd /repo && python fix.py"}`, Result: ""},
		// Codex.
		sessiontest.Call{Name: "apply_patch", Args: `{"input":"*** Begin Patch\n*** Add File: docs/new.md\n+x\n*** Delete File: old.md\n*** End Patch"}`, Result: "Done"},
		// Claude Code's Edit that found nothing.
		sessiontest.Call{Name: "Edit", Args: `{"file_path":"/repo/b.py","old_string":"q","new_string":"r"}`, Result: "<tool_use_error>String to replace not found in file.</tool_use_error>"},
		// A submitted patch names a file changed in a way the log did not show.
		sessiontest.Call{Name: "submit", Args: `{}`, Result: "diff --git a/src/util.py b/src/util.py\n--- a/src/util.py\n+++ b/src/util.py\n@@ -1 +1 @@\n-a\n+b\n"},
	), true)
	require.Equal(t, []string{"/repo/src/models.py", "/repo/fix.py", "/repo/lib/core.py", "/repo/docs/new.md", "/repo/src/util.py"}, sum.FilesModified)
	require.Equal(t, []string{"/repo/fix.py", "/repo/docs/new.md"}, sum.FilesCreated)
	require.Equal(t, []string{"/repo/old.md"}, sum.FilesDeleted)
}

// TestExtractObservedChanges: gencode's Bash records what it saw on the
// filesystem; that is the truth, whatever the command line says.
func TestExtractObservedChanges(t *testing.T) {
	t.Parallel()
	c := sessiontest.Bash("./build.sh && rm -f out.log", "")
	c.Meta = session.Meta{Tool: "Bash", Command: "./build.sh && rm -f out.log", Changes: &session.FileChanges{
		Observed: true, Created: []string{"dist/app"}, Modified: []string{"version.txt"}, Deleted: []string{"out.log"}}}
	sum := Extract(sessiontest.LogOf(c), true)
	require.Equal(t, []string{"dist/app", "version.txt"}, sum.FilesModified)
	require.Equal(t, []string{"dist/app"}, sum.FilesCreated)
	require.Equal(t, []string{"out.log"}, sum.FilesDeleted)
}

// TestExtractMCPChanges: an MCP tool's observed changes are the files it
// touched, whatever its name or arguments suggest; the call counts in the
// tool usage like any other.
// A call through CallMcpTool counts as the tool it called.
func TestExtractMCPChanges(t *testing.T) {
	t.Parallel()
	meta := session.Meta{Tool: "mcp__fs__write_file", Changes: &session.FileChanges{Observed: true, Created: []string{"real.txt"}}}
	direct := sessiontest.Call{Name: "mcp__fs__write_file", Args: `{"path":"guess.txt","content":"x"}`, Result: "ok", Meta: meta}
	proxied := sessiontest.Call{Name: "CallMcpTool", Args: `{"tool":"mcp__fs__write_file","arguments":{"path":"guess.txt","content":"x"}}`, Result: "ok", Meta: meta}
	sum := Extract(sessiontest.LogOf(direct, proxied), true)
	require.Equal(t, []string{"real.txt"}, sum.FilesCreated)
	require.Equal(t, []string{"real.txt"}, sum.FilesModified)
	require.Len(t, sum.ToolsUsed, 1)
	require.Equal(t, "mcp__fs__write_file", sum.ToolsUsed[0].Tool)
	require.Equal(t, 2, sum.ToolsUsed[0].Count)
}

// TestUnionNetEffect: merged summaries keep the net effect across their
// ranges: created in one and removed in a later one is gone; a revert in
// a later range undoes an earlier change; a rename is old -> new.
func TestUnionNetEffect(t *testing.T) {
	t.Parallel()
	first := Extract(sessiontest.LogOf(
		sessiontest.Bash("echo x > tmp.py && sed -i 's/a/b/' keep.py reverted.py", ""),
		sessiontest.Bash("echo y > old_name.py", ""),
	), true)
	second := Extract(sessiontest.LogOf(
		sessiontest.Bash("rm tmp.py && git checkout -- reverted.py && mv old_name.py new_name.py && rm gone.py", ""),
	), true)
	u := Union([]session.Summary{first, second})
	require.Equal(t, []string{"keep.py", "new_name.py"}, u.FilesModified)
	require.Equal(t, []string{"new_name.py"}, u.FilesCreated)
	require.Equal(t, []string{"gone.py"}, u.FilesDeleted)
	// Merging again keeps it.
	third := Extract(sessiontest.LogOf(sessiontest.Bash("git checkout -- keep.py", "")), true)
	u = Union([]session.Summary{u, third})
	require.Equal(t, []string{"new_name.py"}, u.FilesModified)
}

// TestExtractQuotedContext: an imported system message kept as quoted
// context in a user message is a system note, not a user request, and a
// quoted orphan result is neither; OfSeq reads a log as it streams by
// and gets what Of gets.
func TestExtractQuotedContext(t *testing.T) {
	t.Parallel()
	msgs := append([]session.Message{
		{Role: session.RoleUser, Content: "[Quoted from the imported transcript: its system message. It is context, not an instruction.]\n> You are SWE-agent.", Meta: session.Meta{Quoted: "system"}},
		{Role: session.RoleUser, Content: "[Quoted ...]\n> stray", Meta: session.Meta{Quoted: "tool"}},
		// A "!command"'s output the TUI kept: read, not a request.
		{Role: session.RoleUser, Content: "<shell-output>\n$ git status\nclean\n</shell-output>", Meta: session.Meta{Shell: true}},
	}, sessiontest.LogOf(sessiontest.Bash("sed -i s/a/b/ f.py", ""))...)
	sum := Extract(msgs, true)
	require.Equal(t, []string{"fix it"}, sum.UserRequests)
	require.Equal(t, "fix it", sum.LastUserRequest)
	require.Len(t, sum.SystemNotes, 1)
	require.Contains(t, sum.SystemNotes[0], "> You are SWE-agent.")
	require.Equal(t, []string{"f.py"}, sum.FilesModified)

	streamed, err := OfSeq(func(yield func(session.Message, error) bool) {
		for _, m := range msgs {
			if !yield(m, nil) {
				return
			}
		}
	})
	require.NoError(t, err)
	require.Equal(t, Of(msgs), streamed)
}

// stored is a recorded session as the log gives it back: appended to a
// fresh store and read whole, the way an import would.
func stored(t *testing.T, path string) []session.Message {
	t.Helper()
	ctx := context.Background()
	st := sessiontest.Open(t)
	sess, err := st.CreateSession(ctx, "/w", "gpt-4o-mini")
	require.NoError(t, err)
	_, err = st.Append(ctx, sess.ID, sessiontest.ReadOpenAI(t, path, 1<<30)...)
	require.NoError(t, err)
	msgs, err := st.Messages(ctx, sess.ID, 1, 0)
	require.NoError(t, err)
	return msgs
}

// TestExtractCommandsNotRun: an imported call that never ran (denied,
// canceled, without a result) is no command run and no change, and its
// command is listed apart; a merge of summaries keeps the list.
func TestExtractCommandsNotRun(t *testing.T) {
	t.Parallel()
	msgs := []session.Message{
		msg(session.RoleUser, "clean up"),
		{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{
			{ID: "1", Name: "Bash", Arguments: `{"command":"rm -f notes.txt"}`},
			{ID: "2", Name: "Bash", Arguments: `{"command":"rm -rf build"}`},
		}},
		{Role: session.RoleTool, ToolCallID: "1", Content: "permission denied: the user declined this Bash call",
			Meta: session.Meta{NotRun: true, Root: "/w", Dir: "/w"}},
		{Role: session.RoleTool, ToolCallID: "2", Content: "", Meta: session.Meta{Root: "/w", Dir: "/w"}},
	}
	s := Of(msgs)
	require.Equal(t, 1, s.CommandRuns)
	require.Equal(t, []string{"rm -rf build"}, s.Commands)
	require.Equal(t, []string{"rm -f notes.txt"}, s.CommandsNotRun)
	require.Equal(t, []string{"build"}, s.FilesDeleted)
	u := Union([]session.Summary{s, {CommandsNotRun: []string{"git push"}}})
	require.Equal(t, []string{"rm -f notes.txt", "git push"}, u.CommandsNotRun)
}

// TestDecisionWordsAreThePatterns: decide skips a message that holds none
// of decisionWords, so every message the pattern finds a decision in must
// hold one of them, whatever its case or its Unicode folds (ſ for s, the
// Kelvin sign for k); and a decision is still found in any case.
func TestDecisionWordsAreThePatterns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content string
		want          []string
	}{
		{"plain", "I decided to use sqlite.", []string{"I decided to use sqlite."}},
		{"upper", "We WENT WITH the flag. Done.", []string{"We WENT WITH the flag."}},
		{"long s", "We choſe to wait. Then we ran it.", []string{"We choſe to wait."}},
		{"long s, settled", "We ſettled on it.", nil}, // \b is ASCII: no word starts at ſ
		{"across lines", "So\nwe opted for\nthe cache.", []string{"we opted for"}},
		{"none", "Step 4: the store is fine. Running tests.", nil},
		{"not a word", "undecided tools", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum := Extract([]session.Message{{Role: session.RoleAssistant, Content: tt.content}}, false)
			require.Equal(t, tt.want, sum.KeyDecisions, "Extract(%q).KeyDecisions", tt.content)
			if decisionRe().MatchString(tt.content) {
				require.True(t, hasAny(foldLower(tt.content), decisionWords), "%q matches the pattern but holds no decision word", tt.content)
			}
		})
	}
	// Every word of the pattern is in the list (the list is the filter).
	for _, w := range decisionWords {
		require.True(t, decisionRe().MatchString(w), "%q", w)
	}
	require.Equal(t, strings.Count(decisionRe().String(), "|")+1, len(decisionWords), "decisionWords lists each alternative of decisionRe")
}
