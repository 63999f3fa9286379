package cli_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
)

// treeHash hashes every path, mode and content under dir, .git and
// ignored *.log files aside.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if strings.HasSuffix(rel, ".log") {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		sum := ""
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			sum = hex.EncodeToString(h[:])
		}
		lines = append(lines, fmt.Sprintf("%s %v %s", rel, fi.Mode(), sum))
		return nil
	}))
	sort.Strings(lines)
	h := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(h[:])
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// gitState is what the user's repository holds: status, index, stash,
// branches and HEAD.
func gitState(t *testing.T, dir string) string {
	return gitIn(t, dir, "status", "--porcelain", "--untracked-files=all") + "|" + gitIn(t, dir, "ls-files", "-s") + "|" +
		gitIn(t, dir, "stash", "list") + "|" + gitIn(t, dir, "branch", "-a", "-v") + "|" + gitIn(t, dir, "rev-parse", "HEAD")
}

// rewindProject is a git repository with a commit, a stash, a staged
// file and an ignored one.
func rewindProject(t *testing.T, work string) {
	t.Helper()
	for name, content := range map[string]string{"keep.txt": "keep me\n", "run.sh": "echo run\n", ".gitignore": "*.log\n", "notes.md": "v1\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(work, name), []byte(content), 0o644))
	}
	gitIn(t, work, "init", "-q")
	gitIn(t, work, "add", ".")
	gitIn(t, work, "commit", "-qm", "init")
	require.NoError(t, os.WriteFile(filepath.Join(work, "notes.md"), []byte("v2\n"), 0o644))
	gitIn(t, work, "stash", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(work, "staged.txt"), []byte("staged\n"), 0o644))
	gitIn(t, work, "add", "staged.txt")
	require.NoError(t, os.WriteFile(filepath.Join(work, "build.log"), []byte("ignored\n"), 0o644))
}

// TestRewindRestoresShellChanges: turn 1 creates a.txt with Write; turn 2
// edits it with sed -i, creates b/c.txt with a heredoc, removes keep.txt
// and makes run.sh executable, all through Bash. Rewinding to before turn
// 2 gives back the tree as turn 1 left it (bytes and modes), to before
// turn 1 the tree as it started; the user's git status, index, stash and
// branches never change; the session facts follow the files.
func TestRewindRestoresShellChanges(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	rewindProject(t, sb.work)
	git0, tree0 := gitState(t, sb.work), treeHash(t, sb.work)

	bash := func(id, command string) openaitest.Reply {
		return openaitest.Calls(openaitest.ToolCall{ID: id, Name: "Bash", Arguments: args(t, map[string]any{"command": command})})
	}
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "w", Name: "Write", Arguments: args(t, map[string]any{"file_path": "a.txt", "content": "alpha\nbeta\n"})}),
		openaitest.Text("Created."),
	)
	res := sb.run("-p", "create a.txt", "--allow", "Write")
	require.Equal(t, 0, res.code, res.stderr)
	tree1 := treeHash(t, sb.work)

	srv.Enqueue(
		bash("sed", "sed -i 's/beta/gamma/' a.txt"),
		bash("heredoc", "mkdir -p b && cat > b/c.txt <<'EOF'\nsee\nEOF"),
		bash("rm", "rm keep.txt"),
		bash("chmod", "chmod +x run.sh"),
		openaitest.Text("Done."),
	)
	res = sb.run("-c", "-p", "shuffle things", "--allow", "Bash")
	require.Equal(t, 0, res.code, res.stderr)
	require.NoFileExists(t, filepath.Join(sb.work, "keep.txt"))
	require.Equal(t, git0 != gitState(t, sb.work), true, "the turn changed the user's files")

	res = sb.run("rewind", "--list", "--json")
	require.Equal(t, 0, res.code, res.stderr)
	var list struct {
		Turns []struct {
			Turn                       int
			Text                       string
			Created, Modified, Deleted int
		}
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &list), res.stdout)
	require.Len(t, list.Turns, 2)
	require.Equal(t, 2, list.Turns[0].Turn, "newest first")
	require.Equal(t, [3]int{1, 2, 1}, [3]int{list.Turns[0].Created, list.Turns[0].Modified, list.Turns[0].Deleted})
	require.Equal(t, [3]int{1, 0, 0}, [3]int{list.Turns[1].Created, list.Turns[1].Modified, list.Turns[1].Deleted})
	res = sb.run("rewind", "--list")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "+1 ~2 -1  shuffle things")
	require.Contains(t, res.stdout, "gencode rewind --to N [--code|--conversation] · --summary ID · --undo[=ID]\n",
		"the way on is said in flags, not the TUI's /rewind")
	require.NotContains(t, res.stdout, "/rewind")

	res = sb.run("rewind", "--to", "2")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "gencode rewind --undo takes it back.\n", "the way back is said")
	require.Contains(t, res.stdout, "Rewound code and conversation to before turn 2.")
	require.Contains(t, res.stdout, "The turn's request was:\nshuffle things")
	require.Equal(t, tree1, treeHash(t, sb.work), "the tree as turn 1 left it")
	require.NoDirExists(t, filepath.Join(sb.work, "b"))
	b, err := os.ReadFile(filepath.Join(sb.work, "keep.txt"))
	require.NoError(t, err)
	require.Equal(t, "keep me\n", string(b))
	fi, err := os.Stat(filepath.Join(sb.work, "run.sh"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	// The facts: turn 2's changes are gone with it.
	facts := func() (created, modified, deleted []string) {
		res := sb.run("summarize", "--json")
		require.Equal(t, 0, res.code, res.stderr)
		var out struct {
			Facts struct {
				Modified []string `json:"files_modified"`
				Created  []string `json:"files_created"`
				Deleted  []string `json:"files_deleted"`
			} `json:"session_facts"`
		}
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &out), res.stdout)
		return out.Facts.Created, out.Facts.Modified, out.Facts.Deleted
	}
	c, m, d := facts()
	require.Equal(t, []string{"a.txt"}, c)
	require.Equal(t, []string{"a.txt"}, m)
	require.Empty(t, d)

	res = sb.run("rewind", "--to", "1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, tree0, treeHash(t, sb.work), "the tree as it started")
	require.Equal(t, git0, gitState(t, sb.work), "the user's repository is untouched")
	b, err = os.ReadFile(filepath.Join(sb.work, "build.log"))
	require.NoError(t, err)
	require.Equal(t, "ignored\n", string(b))
	c, m, d = facts()
	require.Empty(t, c)
	require.Empty(t, m)
	require.Empty(t, d)

	// Undo the last rewind: turn 1's file is back, and the rewind is listed as undone.
	res = sb.run("rewind", "--undo")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, tree1, treeHash(t, sb.work))
	res = sb.run("rewind", "--list")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "to before turn 1 (both), 1 file  [undone]")
	require.NotContains(t, strings.SplitN(res.stdout, "Summaries", 2)[0], "create a.txt  [rewound]")
	require.Contains(t, res.stdout, "shuffle things  [rewound]")

	// The history marks the rewound messages; a search still finds them.
	res = sb.run("history", "--full")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "[rewound]")
	res = sb.run("history", "--search", "shuffle")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "1 matches")
	require.Contains(t, res.stdout, "user: «shuffle» things")
	require.Equal(t, "A  staged.txt\n?? a.txt\n", gitIn(t, sb.work, "status", "--porcelain"), "a.txt is back, the rest as it was")
	require.Equal(t, strings.SplitN(git0, "|", 2)[1], strings.SplitN(gitState(t, sb.work), "|", 2)[1], "index, stash, branches, HEAD")
}

// TestRewindConflict: a file edited by hand after gencode's turn is not
// overwritten: the rewind lists it with its diff and refuses; --keep PATH
// rewinds the rest and leaves it; --overwrite PATH overwrites it.
func TestRewindConflict(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	rewindProject(t, sb.work)
	tree0 := treeHash(t, sb.work)
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "b", Name: "Bash", Arguments: args(t, map[string]any{"command": "echo more >> keep.txt && echo new > n.txt"})}),
		openaitest.Text("Done."),
	)
	res := sb.run("-p", "touch keep.txt", "--allow", "Bash")
	require.Equal(t, 0, res.code, res.stderr)
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "keep.txt"), []byte("keep me\nmore\nby hand\n"), 0o644))

	res = sb.run("rewind", "--to", "1", "--code")
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stderr, "gencode: 1 file changed outside gencode since it last wrote it; nothing was changed (--force overwrites it; --keep PATH keeps it):")
	require.Contains(t, res.stderr, "keep.txt")
	require.Contains(t, res.stderr, "+by hand")
	require.Equal(t, 1, strings.Count(res.stderr, "changed outside gencode"), "the conflict is said once:\n%s", res.stderr)
	require.FileExists(t, filepath.Join(sb.work, "n.txt"), "nothing changed")
	b, _ := os.ReadFile(filepath.Join(sb.work, "keep.txt"))
	require.Equal(t, "keep me\nmore\nby hand\n", string(b))

	// Keep mine: the rest is rewound, keep.txt is left as edited; the
	// undo brings n.txt back.
	res = sb.run("rewind", "--to", "1", "--code", "--keep", "keep.txt")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "Kept as you left them: keep.txt")
	require.NoFileExists(t, filepath.Join(sb.work, "n.txt"))
	b, _ = os.ReadFile(filepath.Join(sb.work, "keep.txt"))
	require.Equal(t, "keep me\nmore\nby hand\n", string(b))
	res = sb.run("rewind", "--undo")
	require.Equal(t, 0, res.code, res.stderr)
	require.FileExists(t, filepath.Join(sb.work, "n.txt"))

	res = sb.run("rewind", "--to", "1", "--code", "--overwrite", "keep.txt")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, tree0, treeHash(t, sb.work))
	require.Contains(t, res.stdout, "Rewound code to before turn 1.")

	// A code-only rewind keeps the conversation: the facts count what it
	// restored where it happened, so n.txt, created then removed, is in
	// no list.
	res = sb.run("summarize", "--json")
	require.Equal(t, 0, res.code, res.stderr)
	var out struct {
		Facts struct {
			Modified []string `json:"files_modified"`
			Created  []string `json:"files_created"`
			Deleted  []string `json:"files_deleted"`
		} `json:"session_facts"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out), res.stdout)
	require.Empty(t, out.Facts.Created)
	require.Empty(t, out.Facts.Deleted)
	require.NotContains(t, out.Facts.Modified, "n.txt")
}

// TestRewindAsksAgainAfterUndo: a hand edit overwritten by a rewind (as
// the user chose) and brought back by --undo is still the user's: the same
// rewind refuses again, naming it with its diff, and changes nothing; the
// file gencode created, which the undo put back too, rewinds without a
// question once the hand edit is kept.
func TestRewindAsksAgainAfterUndo(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	rewindProject(t, sb.work)
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "b", Name: "Bash", Arguments: args(t, map[string]any{"command": "echo more >> keep.txt && echo new > n.txt"})}),
		openaitest.Text("Done."),
	)
	res := sb.run("-p", "touch keep.txt", "--allow", "Bash")
	require.Equal(t, 0, res.code, res.stderr)
	mine := "keep me\nmore\nby hand\n"
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "keep.txt"), []byte(mine), 0o644))
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(sb.work, name))
		require.NoError(t, err)
		return string(b)
	}

	first := sb.run("rewind", "--to", "1", "--code")
	require.Equal(t, 1, first.code, first.stdout)
	require.Contains(t, first.stderr, "+by hand")
	res = sb.run("rewind", "--to", "1", "--code", "--overwrite", "keep.txt")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "keep me\n", read("keep.txt"))
	res = sb.run("rewind", "--undo")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, mine, read("keep.txt"), "the undo brings the hand edit back")
	require.FileExists(t, filepath.Join(sb.work, "n.txt"))

	res = sb.run("rewind", "--to", "1", "--code")
	require.Equal(t, 1, res.code, "the hand edit is still the user's:\n%s", res.stdout)
	require.Equal(t, first.stderr, res.stderr, "asked as the first rewind asked")
	require.Equal(t, mine, read("keep.txt"), "nothing changed")
	require.FileExists(t, filepath.Join(sb.work, "n.txt"), "nothing changed")

	res = sb.run("rewind", "--to", "1", "--code", "--keep", "keep.txt")
	require.Equal(t, 0, res.code, res.stderr)
	require.NoFileExists(t, filepath.Join(sb.work, "n.txt"), "gencode's file rewinds without a question")
	require.Equal(t, mine, read("keep.txt"))
}

// TestRewindAsksAboutHandEditsBeforeACall: files the user changed by hand
// between two turns, which the second turn's call did not touch, stay the
// user's: a rewind to before the first turn refuses, naming each (the one
// it would overwrite, the one it would delete) with its diff, and changes
// nothing; with both kept, what gencode wrote rewinds without a question.
func TestRewindAsksAboutHandEditsBeforeACall(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	rewindProject(t, sb.work)
	bash := func(command string, flags ...string) {
		t.Helper()
		srv.Enqueue(
			openaitest.Calls(openaitest.ToolCall{ID: "b", Name: "Bash", Arguments: args(t, map[string]any{"command": command})}),
			openaitest.Text("Done."),
		)
		res := sb.run(append(flags, "-p", "run "+command, "--allow", "Bash")...)
		require.Equal(t, 0, res.code, res.stderr)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(sb.work, name))
		require.NoError(t, err)
		return string(b)
	}
	bash("echo more >> keep.txt && echo new > n.txt")
	mine := "keep me\nmore\nby hand\n"
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "keep.txt"), []byte(mine), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "mine.txt"), []byte("mine, by hand\n"), 0o644))
	bash("echo two > two.txt", "-c")

	// Each call recorded in the log what it changed, which the check
	// reads rather than comparing every call's checkpoints again.
	ctx := context.Background()
	st, err := session.Open(ctx, filepath.Join(sb.home, ".local", "share", "gencode"))
	require.NoError(t, err)
	list, err := st.Sessions(ctx, 1)
	require.NoError(t, err)
	turns, err := st.Turns(ctx, list[0].ID)
	require.NoError(t, err)
	var recorded [][]string
	for _, turn := range turns {
		for _, cp := range turn.Checkpoints {
			require.True(t, cp.ChangedKnown, "turn %d", turn.N)
			recorded = append(recorded, cp.Changed)
		}
	}
	require.NoError(t, st.Close())
	require.Equal(t, [][]string{{"keep.txt", "n.txt"}, {"two.txt"}}, recorded)

	res := sb.run("rewind", "--to", "1", "--code")
	require.Equal(t, 1, res.code, "the hand edits are the user's:\n%s", res.stdout)
	require.Contains(t, res.stderr, "gencode: 2 files changed outside gencode since it last wrote them; nothing was changed (--force overwrites them all; --keep PATH or --overwrite PATH for each):")
	require.Contains(t, res.stderr, "keep.txt")
	require.Contains(t, res.stderr, "+by hand")
	require.Contains(t, res.stderr, "mine.txt")
	require.Contains(t, res.stderr, "+mine, by hand")
	require.Equal(t, mine, read("keep.txt"), "nothing changed")
	require.Equal(t, "mine, by hand\n", read("mine.txt"), "nothing changed")
	require.FileExists(t, filepath.Join(sb.work, "two.txt"), "nothing changed")

	// One decided: only the other is listed.
	res = sb.run("rewind", "--to", "1", "--code", "--keep", "keep.txt")
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stderr, "gencode: 1 file changed outside gencode since it last wrote it; nothing was changed (--force overwrites it; --keep PATH keeps it):\n  mine.txt (not in the checkpoint: overwriting it deletes it)\n")
	require.NotContains(t, res.stderr, "keep.txt")
	require.FileExists(t, filepath.Join(sb.work, "two.txt"), "nothing changed")

	// Named by --session, the session is named in the way back too.
	res = sb.run("rewind", "--session", list[0].ID, "--to", "1", "--code", "--keep", "keep.txt", "--keep", "mine.txt")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "gencode rewind --session "+list[0].ID+" --undo takes it back.\n")
	require.NoFileExists(t, filepath.Join(sb.work, "two.txt"), "gencode's files rewind without a question")
	require.NoFileExists(t, filepath.Join(sb.work, "n.txt"))
	require.Equal(t, mine, read("keep.txt"))
	require.Equal(t, "mine, by hand\n", read("mine.txt"))
}

// TestRewindCompactionUndoneAndRedone: a compaction taken back puts the
// view back as it was before it (messages and tokens); undoing that puts
// the summary back, and the view matches what the compaction left.
func TestRewindCompactionUndoneAndRedone(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithResponder(summarize))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
	sb.seedSession(12, 3)
	type view struct{ Summaries, Messages, Tokens int }
	listing := func() (v view, sums []struct {
		ID     string
		Active bool
	}) {
		res := sb.run("rewind", "--list", "--json")
		require.Equal(t, 0, res.code, res.stderr)
		var out struct {
			View      view
			Summaries []struct {
				ID     string
				Active bool
			}
		}
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &out), res.stdout)
		return out.View, out.Summaries
	}
	before, sums := listing()
	require.Empty(t, sums)
	require.Equal(t, 48, before.Messages)

	res := sb.run("summarize")
	require.Equal(t, 0, res.code, res.stderr)
	compacted, sums := listing()
	require.Len(t, sums, 1)
	require.Equal(t, 1, compacted.Summaries)
	require.Less(t, compacted.Tokens, before.Tokens)

	res = sb.run("rewind", "--summary", sums[0].ID)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, fmt.Sprintf("the view holds 0 summaries and 48 messages (%d tokens) now", before.Tokens))
	undone, sums := listing()
	require.Equal(t, before, undone)
	require.False(t, sums[0].Active)

	res = sb.run("rewind", "--undo")
	require.Equal(t, 0, res.code, res.stderr)
	redone, sums := listing()
	require.Equal(t, compacted, redone)
	require.True(t, sums[0].Active)
	res = sb.run("rewind", "--list")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "summary "+sums[0].ID+" taken back  [undone]")
}

// TestRewindSaysWhatItCannotRestore: a turn run with [rewind] off kept
// no checkpoint: rewinding its files refuses before changing anything and
// names the call; the conversation alone can still be rewound.
func TestRewindSaysWhatItCannotRestore(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	cfg := filepath.Join(sb.env["XDG_CONFIG_HOME"], "gencode", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o755))
	require.NoError(t, os.WriteFile(cfg, []byte("[rewind]\nenabled = false\n"), 0o644))
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "b", Name: "Bash", Arguments: args(t, map[string]any{"command": "echo x > x.txt"})}),
		openaitest.Text("Done."),
	)
	res := sb.run("-p", "make x", "--allow", "Bash")
	require.Equal(t, 0, res.code, res.stderr)
	require.NoError(t, os.Remove(cfg))

	res = sb.run("rewind", "--list")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "make x  [files not kept]")
	res = sb.run("rewind", "--to", "1")
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stderr, "changed files without a checkpoint")
	require.Contains(t, res.stderr, "turn 1, Bash (message 3): no checkpoint was kept")
	require.FileExists(t, filepath.Join(sb.work, "x.txt"))

	res = sb.run("rewind", "--to", "1", "--conversation")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "Rewound conversation to before turn 1.")
	require.FileExists(t, filepath.Join(sb.work, "x.txt"))
}

// TestRewindInTmux: in the TUI, /rewind shows the card of turns with the
// files each changed; "/rewind 1" puts the files back, says what it did
// and shows the request to send again; "/rewind undo" brings them back.
func TestRewindInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "b", Name: "Bash", Arguments: args(t, map[string]any{"command": "mkdir -p b && echo c > b/c.txt"})}),
		openaitest.Text("Made b/c.txt."),
	)
	res := sb.run("-p", "make the b dir", "--allow", "Bash")
	require.Equal(t, 0, res.code, res.stderr)

	p := startTUI(t, sb, "-c")
	p.waitText("Made b/c.txt.")
	p.typeLine("/rewind list")
	p.waitText("+1 ~0 -0  make the b dir")
	// The picker: the turn, then the three ways; Enter takes the first.
	p.typeLine("/rewind")
	p.waitText("turn 1")
	p.keys("Enter")
	p.waitText("Restore conversation only")
	p.keys("Enter")
	p.waitText("Rewound code and conversation to before turn 1.")
	p.waitText("removed b/c.txt")
	p.waitText("takes the rewind back")
	require.NoDirExists(t, filepath.Join(sb.work, "b"))
	p.keys("C-c") // the turn's text is back in the editor: cleared
	p.typeLine("/rewind undo")
	p.waitText("undone.")
	require.FileExists(t, filepath.Join(sb.work, "b", "c.txt"))
	p.keys("C-c")
	p.keys("C-c")
	if code := p.exitCode(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}
