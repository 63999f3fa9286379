// Package fschange observes which files under a directory a command
// created, modified and deleted, by comparing the tree before and after it
// (size, modification time, inode, mode). It skips .git and what .gitignore
// ignores.
//
// On Linux the tree is walked once and then followed with inotify: a call
// compares only the paths the kernel says were touched, so its cost follows
// what the command did, not the size of the tree. Inside a git work tree a
// changed file that git now sees as clean is reported as reverted. Where
// inotify is not available, each call asks `git status` (inside a work
// tree: only paths that differ from the index can have changed) or walks
// the tree.
//
// The cost is bounded: a tree with more files than Options.MaxFiles, or
// one that takes longer than Options.MaxTime to look at, is not observed
// (ErrTooLarge); the caller then falls back to reading the command.
package fschange

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrTooLarge means the tree passed a budget and was not observed.
var ErrTooLarge = errors.New("tree too large to observe")

// Default budgets.
const (
	DefaultMaxFiles = 200_000
	DefaultMaxTime  = 5 * time.Second
)

// Options bound an Observer's cost.
type Options struct {
	// MaxFiles is the most files a walk looks at (0: DefaultMaxFiles).
	MaxFiles int
	// MaxTime bounds one snapshot (0: DefaultMaxTime).
	MaxTime time.Duration
	// NoGit walks the tree even inside a git work tree.
	NoGit bool
	// NoWatch compares whole snapshots on every call instead of following
	// the tree with inotify.
	NoWatch bool
	// Exclude are directories (relative to the root, slash-separated)
	// never looked at, as if ignored: followed trees only (Changed).
	Exclude []string
}

// Changes is what happened between two snapshots: paths relative to the
// observed directory, slash-separated, sorted.
type Changes struct {
	Created, Modified, Deleted []string
	// Reverted are files back to their committed content (git checkout --,
	// git restore): they differed from the index before and do not now.
	Reverted []string
}

// Empty says whether nothing changed.
func (c Changes) Empty() bool {
	return len(c.Created)+len(c.Modified)+len(c.Deleted)+len(c.Reverted) == 0
}

// Observer snapshots one directory tree. It is safe for concurrent use;
// concurrent commands in one tree see each other's changes.
type Observer struct {
	root string
	opts Options

	mu       sync.Mutex
	probed   bool
	gitTop   string // the work tree's top directory; "" when not in one
	gitDir   string // its git directory (for HEAD)
	tooLarge error  // once a budget is passed, the tree is not walked again
	w        *watcher
	noWatch  bool // inotify failed once: snapshots from now on
}

// Close stops following the tree.
func (o *Observer) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.w != nil {
		o.w.close()
		o.w = nil
	}
	o.noWatch = true
}

// New returns an Observer of root (absolute).
func New(root string, opts Options) *Observer {
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	if opts.MaxTime <= 0 {
		opts.MaxTime = DefaultMaxTime
	}
	return &Observer{root: filepath.Clean(root), opts: opts}
}

// stat is what a snapshot keeps of a file.
type stat struct {
	size  int64
	mtime int64
	ino   uint64
	mode  fs.FileMode
}

func statOf(fi fs.FileInfo) stat {
	s := stat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = st.Ino
	}
	return s
}

// Snapshot is the tree's state before a command.
type Snapshot struct {
	o     *Observer
	files map[string]stat   // path -> stat; absent paths are not in it
	dirty map[string]string // git mode: path -> status before
	git   bool
	watch bool   // the watcher holds the state
	head  string // the commit checked out before (watch mode in git)
}

// Before takes the snapshot to compare with after the command. It fails
// with ErrTooLarge (wrapped, with the reason) when the tree passes a
// budget, now or on an earlier call.
func (o *Observer) Before(ctx context.Context) (*Snapshot, error) {
	o.mu.Lock()
	if o.tooLarge != nil {
		err := o.tooLarge
		o.mu.Unlock()
		return nil, err
	}
	if !o.probed {
		o.probed = true
		if !o.opts.NoGit {
			o.gitTop, o.gitDir = gitTopLevel(ctx, o.root)
		}
	}
	git := o.gitTop != ""
	ctx, cancel := context.WithTimeout(ctx, o.opts.MaxTime)
	defer cancel()
	if !o.opts.NoWatch && !o.noWatch {
		s, err := o.watchBefore(ctx)
		if s != nil || err != nil {
			o.mu.Unlock()
			if err != nil {
				return nil, o.fail(err)
			}
			return s, nil
		}
	}
	o.mu.Unlock()

	s := &Snapshot{o: o, git: git}
	var err error
	if git {
		s.dirty, s.files, err = o.gitState(ctx)
	} else {
		s.files, err = o.walk(ctx)
	}
	if err != nil {
		return nil, o.fail(err)
	}
	return s, nil
}

// fail remembers a budget overrun: the tree is not looked at again.
func (o *Observer) fail(err error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.failLocked(err)
}

func (o *Observer) failLocked(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w: looking at %s took over %s", ErrTooLarge, o.root, o.opts.MaxTime)
	}
	if errors.Is(err, ErrTooLarge) {
		o.tooLarge = err
		if o.w != nil {
			o.w.close()
			o.w = nil
		}
	}
	return err
}

// watchBefore starts following the tree the first time, then settles what
// changed since the last call (not the command's doing). It returns nil,
// nil when inotify cannot be used: snapshots then. o.mu is held.
func (o *Observer) watchBefore(ctx context.Context) (*Snapshot, error) {
	if o.w == nil {
		w, err := startWatcher(ctx, o)
		if errors.Is(err, ErrTooLarge) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		if err != nil {
			o.noWatch = true
			return nil, nil
		}
		o.w = w
	} else if _, err := o.w.settle(ctx); err != nil {
		return nil, err
	}
	s := &Snapshot{o: o, watch: true}
	if o.gitDir != "" {
		s.head = headCommit(o.gitDir)
	}
	return s, nil
}

// ErrNotFollowed means the Observer cannot follow the tree (no inotify, out
// of watches): Changed has nothing to say; look at the whole tree.
var ErrNotFollowed = errors.New("tree not followed")

// Changed says which files changed since the previous call, from the
// events the kernel queued meanwhile: its cost follows the change, not the
// tree. The first call starts following the tree (one walk) and returns
// followed false: nothing is known of what came before, look at the whole
// tree. It is the Observer's only consumer's call: an Observer used for
// Changed is not used for Before. It fails with ErrNotFollowed where the
// tree cannot be followed, and ErrTooLarge past a budget.
func (o *Observer) Changed(ctx context.Context) (c Changes, followed bool, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.tooLarge != nil {
		return Changes{}, false, o.tooLarge
	}
	if o.opts.NoWatch || o.noWatch {
		return Changes{}, false, ErrNotFollowed
	}
	ctx, cancel := context.WithTimeout(ctx, o.opts.MaxTime)
	defer cancel()
	if o.w == nil {
		w, err := startWatcher(ctx, o)
		if err != nil {
			if errors.Is(err, ErrTooLarge) || errors.Is(err, context.DeadlineExceeded) {
				return Changes{}, false, o.failLocked(err)
			}
			o.noWatch = true
			return Changes{}, false, fmt.Errorf("%w: %w", ErrNotFollowed, err)
		}
		o.w = w
		return Changes{}, false, nil
	}
	c, err = o.w.settle(ctx)
	if err != nil {
		return Changes{}, false, o.failLocked(err)
	}
	return c, true, nil
}

// excluded says whether rel is in or is one of Options.Exclude.
func (o *Observer) excluded(rel string) bool {
	for _, d := range o.opts.Exclude {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// After compares the tree now with the snapshot.
func (s *Snapshot) After(ctx context.Context) (Changes, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.opts.MaxTime)
	defer cancel()
	if s.watch {
		s.o.mu.Lock()
		defer s.o.mu.Unlock()
		if s.o.w == nil {
			return Changes{}, errors.New("observer closed")
		}
		c, err := s.o.w.settle(ctx)
		if err != nil {
			return Changes{}, s.o.failLocked(err)
		}
		if s.head != "" && len(c.Modified) > 0 && headCommit(s.o.gitDir) == s.head {
			c = s.o.reverted(ctx, c)
		}
		return c, nil
	}
	if s.git {
		dirty, files, err := s.o.gitState(ctx)
		if err != nil {
			return Changes{}, s.o.fail(err)
		}
		return s.gitDiff(dirty, files), nil
	}
	files, err := s.o.walk(ctx)
	if err != nil {
		return Changes{}, s.o.fail(err)
	}
	var c Changes
	for p, b := range s.files {
		a, ok := files[p]
		switch {
		case !ok:
			c.Deleted = append(c.Deleted, p)
		case a != b:
			c.Modified = append(c.Modified, p)
		}
	}
	for p := range files {
		if _, ok := s.files[p]; !ok {
			c.Created = append(c.Created, p)
		}
	}
	c.sort()
	return c, nil
}

func (c *Changes) sort() {
	slices.Sort(c.Created)
	slices.Sort(c.Modified)
	slices.Sort(c.Deleted)
	slices.Sort(c.Reverted)
}

// walk stats every file under the root that .gitignore does not ignore.
func (o *Observer) walk(ctx context.Context) (map[string]stat, error) {
	files := map[string]stat{}
	ign := &ignorer{}
	var visit func(dir, rel string) error
	visit = func(dir, rel string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := os.Open(dir)
		if err != nil {
			return nil // gone or unreadable: nothing to see
		}
		entries, err := f.ReadDir(-1)
		f.Close()
		if err != nil && len(entries) == 0 {
			return nil
		}
		pushed := false
		for _, e := range entries {
			if e.Name() == ".gitignore" && e.Type().IsRegular() {
				pushed = ign.push(filepath.Join(dir, ".gitignore"), rel)
				break
			}
		}
		for _, e := range entries {
			name := e.Name()
			r := name
			if rel != "" {
				r = rel + "/" + name
			}
			isDir := e.IsDir()
			if isDir && name == ".git" || ign.ignored(r, isDir) {
				continue
			}
			if isDir {
				if err := visit(filepath.Join(dir, name), r); err != nil {
					return err
				}
				continue
			}
			if len(files) >= o.opts.MaxFiles {
				return fmt.Errorf("%w: over %d files under %s", ErrTooLarge, o.opts.MaxFiles, o.root)
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			files[r] = statOf(fi)
		}
		if pushed {
			ign.pop()
		}
		return nil
	}
	if err := visit(o.root, ""); err != nil {
		return nil, err
	}
	return files, nil
}

// lstat stats the given paths (relative to the root); missing ones are
// left out.
func (o *Observer) lstat(paths []string) map[string]stat {
	files := make(map[string]stat, len(paths))
	for _, p := range paths {
		if fi, err := os.Lstat(filepath.Join(o.root, filepath.FromSlash(p))); err == nil && !fi.IsDir() {
			files[p] = statOf(fi)
		}
	}
	return files
}

// under says whether rel is inside the observed tree (not ../ of it).
func under(rel string) bool {
	return rel != "" && rel != "." && !strings.HasPrefix(rel, "../") && rel != ".." && !path.IsAbs(rel)
}
