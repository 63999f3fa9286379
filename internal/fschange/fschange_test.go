package fschange

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sh(t testing.TB, dir, script string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

func observe(t *testing.T, o *Observer, script string) Changes {
	t.Helper()
	ctx := context.Background()
	snap, err := o.Before(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sh(t, o.root, script)
	c, err := snap.After(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func eq(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

// The session's Bash command of the issue: files change only through the
// shell (sed -i, printf >, a script, mv, rm); .git and ignored files are
// not reported.
const sessionScript = `sed -i 's/a/A/' a.txt
printf 'b\n' > b.txt
python3 -c "open('c.txt','w').write('c'); open('d.txt','w').write('d')"
mv b.txt e.txt
rm c.txt d0.txt
mkdir -p build && echo x > build/out.o && echo log > run.log
echo ref > .git/FETCH_HEAD 2>/dev/null || true`

// modes are the ways an Observer can look: following the tree with
// inotify, or comparing snapshots.
var modes = []struct {
	name string
	opts Options
}{{"watch", Options{}}, {"snapshot", Options{NoWatch: true}}}

func TestObserveWalk(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			write(t, root, "a.txt", "a\n")
			write(t, root, "d0.txt", "d0\n")
			write(t, root, "same.txt", "same\n")
			write(t, root, ".gitignore", "build/\n*.log\n")
			write(t, root, ".git/HEAD", "ref: x\n") // a .git that is not a repository: skipped all the same
			opts := m.opts
			opts.NoGit = true
			o := New(root, opts)
			defer o.Close()
			c := observe(t, o, sessionScript)
			eq(t, "Created", c.Created, "d.txt", "e.txt")
			eq(t, "Modified", c.Modified, "a.txt")
			eq(t, "Deleted", c.Deleted, "d0.txt")
			// Changes between calls (an editor, the Write tool) are not the
			// next command's; a new directory's files are seen.
			write(t, root, "between.txt", "x")
			c = observe(t, o, "mkdir -p pkg/sub && echo x > pkg/sub/new.go && echo y > a.txt")
			eq(t, "Created", c.Created, "pkg/sub/new.go")
			eq(t, "Modified", c.Modified, "a.txt")
			c = observe(t, o, "mv pkg lib && rm -r lib/sub")
			eq(t, "Created", c.Created)
			eq(t, "Deleted", c.Deleted, "pkg/sub/new.go")
		})
	}
}

func TestObserveGit(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			testObserveGit(t, m.opts)
		})
	}
}

func testObserveGit(t *testing.T, opts Options) {
	root := t.TempDir()
	write(t, root, "a.txt", "a\n")
	write(t, root, "d0.txt", "d0\n")
	write(t, root, "dirty.txt", "v1\n")
	write(t, root, "sub/keep.txt", "k\n")
	write(t, root, ".gitignore", "build/\n*.log\n")
	sh(t, root, "git init -q && git add -A && git commit -qm init && echo v2 > dirty.txt && echo u > untracked.txt")
	o := New(root, opts)
	defer o.Close()
	c := observe(t, o, sessionScript+"\ngit checkout -q -- dirty.txt\nrm untracked.txt")
	if o.gitTop == "" {
		t.Fatal("the git work tree was not found")
	}
	eq(t, "Created", c.Created, "d.txt", "e.txt")
	eq(t, "Modified", c.Modified, "a.txt")
	eq(t, "Deleted", c.Deleted, "d0.txt", "untracked.txt")
	eq(t, "Reverted", c.Reverted, "dirty.txt")

	// A commit changes no file; an edit of an already changed file shows.
	c = observe(t, o, "git add -A && git commit -qm two && echo more >> a.txt")
	eq(t, "Modified", c.Modified, "a.txt")
	eq(t, "Created", c.Created)

	// Observed from a subdirectory, paths are relative to it.
	sub := New(filepath.Join(root, "sub"), opts)
	defer sub.Close()
	c = observe(t, sub, "echo n > new.txt && echo k2 > keep.txt && echo x > ../outside.txt")
	eq(t, "Created", c.Created, "new.txt")
	eq(t, "Modified", c.Modified, "keep.txt")
}

func TestBudget(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for i := range 10 {
		write(t, root, fmt.Sprintf("f%d", i), "x")
	}
	o := New(root, Options{NoGit: true, MaxFiles: 5})
	defer o.Close()
	_, err := o.Before(context.Background())
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Before = %v, want ErrTooLarge", err)
	}
	// Once too large, not walked again.
	os.RemoveAll(root)
	if _, err := o.Before(context.Background()); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("second Before = %v, want ErrTooLarge", err)
	}
}

// cpuTime is the user+system time of this process and its waited-for
// children.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	d := func(tv syscall.Timeval) time.Duration { return time.Duration(tv.Nano()) }
	return d(self.Utime) + d(self.Stime) + d(kids.Utime) + d(kids.Stime)
}

// tree makes n small files, 100 a directory, under root.
func tree(b *testing.B, root string, n int) {
	for i := range n {
		write(b, root, fmt.Sprintf("d%03d/e%02d/f%d.txt", i/1000, i/100%10, i), "x")
	}
}

// BenchmarkObserve measures what observation adds to one Bash call (a
// snapshot before and a comparison after) on git work trees of 1k, 10k and
// 50k files: following the tree with inotify (nothing changed, and one
// file edited: then git is asked whether it was reverted), and without
// it, comparing whole snapshots (walking the tree, or asking git status).
func BenchmarkObserve(b *testing.B) {
	for _, mode := range []string{"watch", "watch+edit", "walk", "git"} {
		for _, n := range []int{1_000, 10_000, 50_000} {
			b.Run(fmt.Sprintf("%s/%dk", mode, n/1000), func(b *testing.B) {
				root := b.TempDir()
				tree(b, root, n)
				if mode != "walk" {
					sh(b, root, "git init -q && git add -A && git commit -qm init && git status -s >/dev/null")
				}
				watch := strings.HasPrefix(mode, "watch")
				o := New(root, Options{NoGit: mode == "walk", NoWatch: !watch, MaxTime: time.Hour})
				defer o.Close()
				ctx := context.Background()
				if _, err := o.Before(ctx); err != nil { // the watcher's one walk
					b.Fatal(err)
				}
				cpu0 := cpuTime()
				edited := filepath.Join(root, "d000", "e00", "f0.txt")
				for i := 0; b.Loop(); i++ {
					snap, err := o.Before(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if mode == "watch+edit" { // the command edits one tracked file
						if err := os.WriteFile(edited, []byte(strconv.Itoa(i)), 0o644); err != nil {
							b.Fatal(err)
						}
					}
					if _, err := snap.After(ctx); err != nil {
						b.Fatal(err)
					}
				}
				// The machine is shared: CPU time (this process and the
				// git it runs) is the cost; wall time includes waiting.
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
			})
		}
	}
}
