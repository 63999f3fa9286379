package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, dir, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return string(out)
}

func TestTakeRestoreLeavesUserRepoAlone(t *testing.T) {
	ctx := context.Background()
	proj, data := t.TempDir(), t.TempDir()
	write(t, proj, "keep.txt", "keep\n", 0o644)
	write(t, proj, "run.sh", "echo hi\n", 0o644)
	write(t, proj, ".gitignore", "ignored.log\n", 0o644)
	write(t, proj, "ignored.log", "noise\n", 0o644)
	gitOut(t, proj, "init", "-q")
	gitOut(t, proj, "add", ".")
	gitOut(t, proj, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
	write(t, proj, "staged.txt", "s\n", 0o644)
	gitOut(t, proj, "add", "staged.txt")
	statusBefore := gitOut(t, proj, "status", "--porcelain")
	indexBefore := gitOut(t, proj, "ls-files", "-s")

	s := New(data, proj, Options{MaxFileBytes: 100})
	before, err := s.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	write(t, proj, "a.txt", "new\n", 0o644)
	write(t, proj, "b/c.txt", "deep\n", 0o644)
	write(t, proj, "big.bin", strings.Repeat("x", 200), 0o644)
	write(t, proj, "ignored.log", "changed\n", 0o644)
	os.Remove(filepath.Join(proj, "keep.txt"))
	os.Chmod(filepath.Join(proj, "run.sh"), 0o755)

	cur, err := s.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cur.Skipped) != 1 || cur.Skipped[0] != "big.bin" {
		t.Fatalf("Skipped = %v, want [big.bin]", cur.Skipped)
	}
	loaded, err := s.Load(ctx, cur.ID)
	if err != nil || loaded.Tree != cur.Tree || len(loaded.Skipped) != 1 {
		t.Fatalf("Load = %+v, %v; want %+v", loaded, err, cur)
	}
	done, err := s.Restore(ctx, cur, before, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 4 {
		t.Errorf("Restore changed %v, want a.txt, b/c.txt, keep.txt, run.sh", done)
	}
	for _, gone := range []string{"a.txt", "b"} {
		if _, err := os.Stat(filepath.Join(proj, gone)); !os.IsNotExist(err) {
			t.Errorf("%s still there", gone)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "keep.txt")); string(b) != "keep\n" {
		t.Errorf("keep.txt = %q", b)
	}
	if fi, _ := os.Stat(filepath.Join(proj, "run.sh")); fi.Mode().Perm() != 0o644 {
		t.Errorf("run.sh mode %v, want 0644", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "ignored.log")); string(b) != "changed\n" {
		t.Errorf("ignored file touched: %q", b)
	}
	if _, err := os.Stat(filepath.Join(proj, "big.bin")); err != nil {
		t.Errorf("big.bin (not restorable) was removed: %v", err)
	}
	os.Remove(filepath.Join(proj, "big.bin"))
	if got := gitOut(t, proj, "status", "--porcelain"); got != statusBefore {
		t.Errorf("git status = %q, want %q", got, statusBefore)
	}
	if idx := gitOut(t, proj, "ls-files", "-s"); idx != indexBefore {
		t.Error("the user's index changed")
	}
	if err := s.Prune(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, before.ID); err == nil {
		t.Error("a pruned checkpoint still loads")
	}
}

// TestCommitIsGitsCommitTree: the commit a snapshot records (written by
// gencode, not by a git process) is the object `git commit-tree` makes of
// the same tree, message and time, byte for byte, and git's strictest
// check of the shadow directory finds nothing wrong; a followed snapshot's
// (trees written by gencode too) and a whole-tree one's alike.
func TestCommitIsGitsCommitTree(t *testing.T) {
	ctx := context.Background()
	proj := t.TempDir()
	write(t, proj, "keep.txt", "keep\n", 0o644)
	write(t, proj, "big.bin", strings.Repeat("x", 200), 0o644) // skipped: named in the message
	s := New(t.TempDir(), proj, Options{MaxFileBytes: 100})
	defer s.Close()
	whole, err := s.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	write(t, proj, "d/new.txt", "new\n", 0o644)
	followed, err := s.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	shadow := func(stdin string, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_DIR="+s.GitDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		cmd.Env = append(cmd.Env, env...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	for _, snap := range []Snapshot{whole, followed} {
		body := shadow("", nil, "cat-file", "commit", snap.ID)
		head, msg, ok := strings.Cut(body, "\n\n")
		if !ok {
			t.Fatalf("commit %s: no message: %q", snap.ID, body)
		}
		var date string
		for _, l := range strings.Split(head, "\n") {
			if rest, ok := strings.CutPrefix(l, "committer gencode <checkpoint@gencode.local> "); ok {
				date = rest
			}
		}
		if date == "" {
			t.Fatalf("commit %s: no committer: %q", snap.ID, head)
		}
		id := strings.TrimSpace(shadow(msg, []string{
			"GIT_AUTHOR_NAME=gencode", "GIT_AUTHOR_EMAIL=checkpoint@gencode.local", "GIT_AUTHOR_DATE=" + date,
			"GIT_COMMITTER_NAME=gencode", "GIT_COMMITTER_EMAIL=checkpoint@gencode.local", "GIT_COMMITTER_DATE=" + date,
		}, "commit-tree", snap.Tree))
		if id != snap.ID {
			t.Errorf("snapshot commit %s, git commit-tree of the same: %s\nours:\n%s", snap.ID, id, body)
		}
	}
	if !strings.Contains(shadow("", nil, "cat-file", "commit", whole.ID), "\nskipped:\nbig.bin\n") {
		t.Error("the skipped file is not in the commit's message")
	}
	shadow("", nil, "fsck", "--strict", "--no-dangling")
}

// TestLooseTreesAreCatFiles: a followed snapshot reads the old trees of
// the changed directories from their loose objects, not through a git
// process, and finds what `git cat-file --batch` finds: the root, nested
// directories, a missing one, a file where a directory is looked for,
// and a path through a file. Once the shadow directory is packed (a user's
// `git gc` there) it reads them through git, and the snapshots still
// match the whole tree's.
func TestLooseTreesAreCatFiles(t *testing.T) {
	ctx := context.Background()
	proj := t.TempDir()
	write(t, proj, "keep.txt", "keep\n", 0o644)
	write(t, proj, "d/e/f.txt", "f\n", 0o644)
	write(t, proj, "d/g.txt", "g\n", 0o644)
	s := New(t.TempDir(), proj, Options{})
	defer s.Close()
	snap, err := s.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{"", "d", "d/e", "missing", "d/missing", "keep.txt", "d/e/f.txt", "keep.txt/x"}
	loose, ok := s.readLooseTrees(snap.Tree, dirs)
	if !ok {
		t.Fatal("the snapshot's trees are not read from their loose objects")
	}
	git, err := s.catFileTrees(ctx, snap.Tree, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(loose) != fmt.Sprint(git) {
		t.Fatalf("loose objects read:\n%v\ncat-file read:\n%v", loose, git)
	}
	if len(loose) != 3 {
		t.Errorf("read %d trees, want 3 (the root, d, d/e): %v", len(loose), loose)
	}

	whole := New(t.TempDir(), proj, Options{NoFollow: true})
	for _, step := range []string{"loose", "packed"} {
		if step == "packed" {
			// Every object into a pack (no ref names a checkpoint: repack
			// would leave them loose), then the loose copies removed.
			var ids []string
			dirs, _ := filepath.Glob(filepath.Join(s.GitDir(), "objects", "??"))
			for _, d := range dirs {
				names, _ := os.ReadDir(d)
				for _, n := range names {
					ids = append(ids, filepath.Base(d)+n.Name())
				}
			}
			cmd := exec.Command("git", "pack-objects", "-q", filepath.Join(s.GitDir(), "objects", "pack", "pack"))
			cmd.Env = append(os.Environ(), "GIT_DIR="+s.GitDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
			cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("pack-objects: %v: %s", err, out)
			}
			cmd = exec.Command("git", "prune-packed")
			cmd.Env = append(os.Environ(), "GIT_DIR="+s.GitDir())
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("prune-packed: %v: %s", err, out)
			}
			if _, ok := s.readLooseTrees(s.last.Tree, []string{"d/e"}); ok {
				t.Fatal("packed trees read as loose")
			}
		}
		write(t, proj, "d/e/f.txt", "f "+step+"\n", 0o644)
		before := s.Stats()
		got, err := s.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want, err := whole.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Tree != want.Tree {
			t.Fatalf("%s: followed snapshot %s, whole tree %s", step, got.Tree, want.Tree)
		}
		if s.Stats().Changed != before.Changed+1 {
			t.Fatalf("%s: the snapshot was not a followed one: %+v", step, s.Stats())
		}
	}
}

func TestTakeTooSlowIsTooLarge(t *testing.T) {
	ctx := context.Background()
	proj := t.TempDir()
	for i := range 200 {
		write(t, proj, filepath.Join("d", strings.Repeat("x", i%7+1)+string(rune('a'+i%26))+".txt"), strings.Repeat("y", i), 0o644)
	}
	s := New(t.TempDir(), proj, Options{MaxTime: time.Nanosecond})
	if _, err := s.Take(ctx); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Take = %v, want ErrTooLarge", err)
	}
	if _, err := s.Take(ctx); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("second Take = %v, want ErrTooLarge (sticky)", err)
	}
}

// TestDataDirInsideProjectIsNotKept: gencode's data directory inside the
// project (a dotfiles repository as the working directory) is never kept,
// the checkpoints themselves included.
func TestDataDirInsideProjectIsNotKept(t *testing.T) {
	ctx := context.Background()
	proj := t.TempDir()
	data := filepath.Join(proj, ".local", "share", "gencode")
	write(t, proj, ".local/share/gencode/gencode.db", "db", 0o600)
	write(t, proj, "a.txt", "a", 0o644)
	s := New(data, proj, Options{})
	snap, err := s.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.git(ctx, nil, "ls-tree", "-r", "--name-only", snap.Tree)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "a.txt" {
		t.Fatalf("kept %q, want only a.txt", got)
	}
}

// TestRestoreFileOverDirectory: a file comes back where a directory was
// made; a directory that holds an ignored file is refused before any
// change.
func TestRestoreFileOverDirectory(t *testing.T) {
	ctx := context.Background()
	proj := t.TempDir()
	write(t, proj, ".gitignore", "*.log\n", 0o644)
	write(t, proj, "b", "file\n", 0o644)
	write(t, proj, "other.txt", "1\n", 0o644)
	s := New(t.TempDir(), proj, Options{})
	before, err := s.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(proj, "b"))
	write(t, proj, "b/c.txt", "c\n", 0o644)
	write(t, proj, "b/x.log", "ignored\n", 0o644)
	write(t, proj, "other.txt", "2\n", 0o644)
	cur, err := s.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Restore(ctx, cur, before, nil); err == nil || !strings.Contains(err.Error(), "b/x.log") {
		t.Fatalf("Restore = %v, want a refusal naming b/x.log", err)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "other.txt")); string(b) != "2\n" {
		t.Fatal("a refused restore changed other.txt")
	}
	os.Remove(filepath.Join(proj, "b", "x.log"))
	cur, err = s.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Restore(ctx, cur, before, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(proj, "b")); err != nil || string(b) != "file\n" {
		t.Fatalf("b = %q, %v", b, err)
	}
}

// TestFollowedSnapshotsMatchWholeTree: each snapshot a following Store
// takes from the paths that changed is the tree a whole-tree snapshot of
// the same state holds, byte for byte and mode for mode, through creates,
// deletes, chmods, a file replaced by a directory and back, a symlink, a
// file growing past the size limit and shrinking again, a .gitignore
// change, and a change made by a restore. What each step changed, as
// Changed says it (a call's record), is the diff of the two snapshots;
// after a followed snapshot it is known without git.
func TestFollowedSnapshotsMatchWholeTree(t *testing.T) {
	ctx := context.Background()
	path := os.Getenv("PATH")
	proj := t.TempDir()
	write(t, proj, ".gitignore", "*.log\n", 0o644)
	write(t, proj, "keep.txt", "keep\n", 0o644)
	write(t, proj, "run.sh", "echo hi\n", 0o644)
	write(t, proj, "d/e/f.txt", "f\n", 0o644)
	write(t, proj, "x.log", "ignored\n", 0o644)
	followed := New(t.TempDir(), proj, Options{MaxFileBytes: 100})
	defer followed.Close()
	whole := New(t.TempDir(), proj, Options{MaxFileBytes: 100, NoFollow: true})
	first, err := followed.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"nothing changed", func() {}},
		{"create, nested create, delete, chmod", func() {
			write(t, proj, "a.txt", "new\n", 0o644)
			write(t, proj, "b/c/d.txt", "deep\n", 0o644)
			os.Remove(filepath.Join(proj, "keep.txt"))
			os.Chmod(filepath.Join(proj, "run.sh"), 0o755)
			write(t, proj, "y.log", "ignored too\n", 0o644)
		}},
		{"edit in place", func() { write(t, proj, "a.txt", "edited\n", 0o644) }},
		{"file replaced by a directory", func() {
			os.Remove(filepath.Join(proj, "a.txt"))
			write(t, proj, "a.txt/inner.txt", "inner\n", 0o644)
		}},
		{"directory removed, file back", func() {
			os.RemoveAll(filepath.Join(proj, "a.txt"))
			write(t, proj, "a.txt", "file again\n", 0o644)
		}},
		{"directory tree removed", func() { os.RemoveAll(filepath.Join(proj, "d")) }},
		{"symlink", func() { os.Symlink("run.sh", filepath.Join(proj, "link")) }},
		{"too large", func() { write(t, proj, "big.bin", strings.Repeat("x", 200), 0o644) }},
		{"small again", func() { write(t, proj, "big.bin", "x", 0o644) }},
		{"grown past the limit", func() { write(t, proj, "big.bin", strings.Repeat("y", 300), 0o644) }},
		{".gitignore no longer ignores *.log", func() { write(t, proj, ".gitignore", "\n", 0o644) }},
		{"a log changes after", func() { write(t, proj, "x.log", "kept now\n", 0o644) }},
		{"renamed directory", func() { os.Rename(filepath.Join(proj, "b"), filepath.Join(proj, "b2")) }},
	}
	prev := first
	for _, st := range steps {
		st.do()
		before := followed.Stats()
		got, err := followed.Take(ctx)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		want, err := whole.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Tree != want.Tree || strings.Join(got.Skipped, ",") != strings.Join(want.Skipped, ",") {
			out, _ := followed.git(ctx, nil, "diff-tree", "-r", "--name-status", want.Tree, got.Tree)
			t.Fatalf("%s: followed snapshot %s (skipped %v) differs from the whole tree's %s (skipped %v):\n%s",
				st.name, got.Tree, got.Skipped, want.Tree, want.Skipped, out)
		}
		// What the snapshot changed, as a call records it, is the
		// diff of the two; a followed one says it without git.
		wantPaths := []string{}
		cs, err := followed.Diff(ctx, prev, got)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			wantPaths = append(wantPaths, c.Path)
		}
		sort.Strings(wantPaths)
		if followed.Stats().Changed > before.Changed {
			t.Setenv("PATH", "")
		}
		paths, err := followed.Changed(ctx, prev.ID, got.ID)
		t.Setenv("PATH", path)
		if err != nil || !slices.Equal(paths, wantPaths) {
			t.Fatalf("%s: Changed = %q, %v; want %q", st.name, paths, err, wantPaths)
		}
		prev = got
	}
	// A restore's own writes are seen like any other change.
	cur, err := followed.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := followed.Restore(ctx, cur, first, nil); err != nil {
		t.Fatal(err)
	}
	got, err := followed.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := whole.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tree != want.Tree {
		t.Fatalf("after a restore: followed %s, whole tree %s", got.Tree, want.Tree)
	}
	st := followed.Stats()
	// The first snapshot, and the two after .gitignore changed (by hand,
	// then by the restore), look at the whole tree; every other one
	// follows the change.
	if st.Full != 3 || st.Changed != len(steps) {
		t.Errorf("Stats = %+v, want 3 whole-tree snapshots and %d from the changes", st, len(steps))
	}
}

// TestDiffPairsMatchesDiff: DiffPairs says for each pair what Diff says
// (creates, deletes, modes, nested paths, a name with a newline, a pair
// with nothing between, the same pair twice), and for a pair whose
// checkpoint is gone, ErrPruned for that pair only. Differ says of each
// path what Diff says (a mode changed, a directory become a file too).
func TestDiffPairsMatchesDiff(t *testing.T) {
	ctx := context.Background()
	proj := t.TempDir()
	s := New(t.TempDir(), proj, Options{})
	defer s.Close()
	var snaps []Snapshot
	take := func() {
		t.Helper()
		snap, err := s.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, snap)
	}
	write(t, proj, "a.txt", "a\n", 0o644)
	write(t, proj, "d/e/f.txt", "f\n", 0o644)
	take()
	write(t, proj, "a.txt", "a2\n", 0o644)
	write(t, proj, "d/e/g.txt", "g\n", 0o644)
	write(t, proj, "odd\nname.txt", "odd\n", 0o644)
	take()
	os.Remove(filepath.Join(proj, "d", "e", "f.txt"))
	write(t, proj, "run.sh", "echo\n", 0o755)
	take()
	take()
	pairs := []Pair{
		{snaps[0].ID, snaps[1].ID}, {snaps[1].ID, snaps[2].ID}, {snaps[2].ID, snaps[0].ID},
		{snaps[2].ID, snaps[3].ID}, {snaps[0].ID, snaps[1].ID},
		{"0123456789abcdef0123456789abcdef01234567", snaps[0].ID}, {snaps[0].ID, ""},
	}
	got, err := s.DiffPairs(ctx, pairs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(pairs) {
		t.Fatalf("DiffPairs gave %d answers to %d pairs", len(got), len(pairs))
	}
	load := map[string]Snapshot{}
	for _, snap := range snaps {
		load[snap.ID] = snap
	}
	for i, p := range pairs[:5] {
		want, err := s.Diff(ctx, load[p.From], load[p.To])
		if err != nil {
			t.Fatal(err)
		}
		if got[i].Err != nil || fmt.Sprint(got[i].Changes) != fmt.Sprint(want) {
			t.Errorf("DiffPairs pair %d = %v, %v; want %v (Diff)", i, got[i].Changes, got[i].Err, want)
		}
	}
	if len(got[0].Changes) != 3 || len(got[3].Changes) != 0 {
		t.Errorf("DiffPairs = %v, %v; want 3 changes, then none", got[0].Changes, got[3].Changes)
	}
	for _, i := range []int{5, 6} {
		if !errors.Is(got[i].Err, ErrPruned) {
			t.Errorf("DiffPairs pair %d: err %v, want ErrPruned", i, got[i].Err)
		}
	}

	// Differ: each path compared in a checkpoint of its own with the
	// last one says what Diff says of it; a gone checkpoint's paths are
	// gone.
	write(t, proj, "a.txt", "a2\n", 0o755) // the mode alone
	if err := os.RemoveAll(filepath.Join(proj, "d", "e")); err != nil {
		t.Fatal(err)
	}
	write(t, proj, "d/e", "now a file\n", 0o644)
	// A directory whose name holds a space, missing in the older ones:
	// git answers "<id>:my docs missing".
	write(t, proj, "my docs/x.md", "x\n", 0o644)
	take()
	last := snaps[len(snaps)-1]
	paths := []string{"a.txt", "d/e/f.txt", "d/e/g.txt", "d/e", "odd\nname.txt", "run.sh", "never.txt", "my docs/x.md", "my docs/none.md"}
	for _, from := range snaps {
		at := map[string]string{}
		for _, p := range paths {
			at[p] = from.ID
		}
		differ, gone, err := s.Differ(ctx, last, at)
		if err != nil {
			t.Fatal(err)
		}
		want, err := s.Diff(ctx, from, last)
		if err != nil {
			t.Fatal(err)
		}
		var wantPaths []string
		for _, c := range want {
			wantPaths = append(wantPaths, c.Path)
		}
		sort.Strings(wantPaths)
		if fmt.Sprint(differ) != fmt.Sprint(wantPaths) || len(gone) != 0 {
			t.Errorf("Differ from %s = %q (gone %q), want %q (Diff)", from.ID[:8], differ, gone, wantPaths)
		}
	}
	differ, gone, err := s.Differ(ctx, last, map[string]string{"a.txt": "0123456789abcdef0123456789abcdef01234567", "run.sh": snaps[0].ID})
	if err != nil || fmt.Sprint(differ) != "[run.sh]" || fmt.Sprint(gone) != "[a.txt]" {
		t.Errorf("Differ = %q, gone %q, %v; want run.sh differing, a.txt gone", differ, gone, err)
	}

	// Kept: the pairs DiffPairs can compare are those of kept
	// checkpoints, loose or packed (by hand: gencode never packs them).
	gone0 := "0123456789abcdef0123456789abcdef01234567"
	if _, err := s.git(ctx, []byte(snaps[1].ID+"\n"), "pack-objects", "-q", filepath.Join(s.GitDir(), "objects", "pack", "pack")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.GitDir(), "objects", snaps[1].ID[:2], snaps[1].ID[2:])); err != nil {
		t.Fatal(err)
	}
	kept, err := s.Kept(ctx, []string{snaps[0].ID, snaps[1].ID, gone0, "", snaps[0].ID})
	want := map[string]bool{snaps[0].ID: true, snaps[1].ID: true, gone0: false, "": false}
	if err != nil || fmt.Sprint(kept) != fmt.Sprint(want) {
		t.Errorf("Kept = %v, %v; want %v", kept, err, want)
	}
}
