// Package checkpoint keeps restorable snapshots of a project's files in a
// shadow git directory outside the project, so that a rewind can put them
// back as they were before any tool call.
//
// A snapshot is `git add -A` plus `write-tree` and `commit-tree` against
// the project as work tree, with the git directory and index under
// gencode's data directory (one per project, named by a hash of its path).
// The user's own repository, index, stash and branches are never read or
// written: every git call gets GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE
// explicitly. The project's .gitignore rules apply (ignored paths are not
// kept), files above MaxFileBytes are left out and listed in the snapshot
// as not restorable, and contents are deduplicated by git's object store.
// Snapshot objects are unreferenced: Prune drops them by age and by the
// store's total size.
//
// A Store follows the project (package fschange, inotify) from its first
// snapshot on: a later snapshot updates the shadow index with only the
// paths that changed since the previous one, so its cost follows the
// change, not the project's size. The first snapshot of a process, one
// after a .gitignore changed, and any where the tree cannot be followed
// look at the whole tree (`git add -A` against the kept index: only
// files whose stat changed are hashed again).
package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gencode/gencode/internal/fschange"
)

// DefaultMaxFileBytes is the size above which a file is not kept.
const DefaultMaxFileBytes = 10 << 20

// ErrNoGit means git is not installed: no snapshot can be taken.
var ErrNoGit = errors.New("git is not installed")

// Options configure a Store.
type Options struct {
	// MaxFileBytes: files larger are not kept (0: DefaultMaxFileBytes).
	MaxFileBytes int64
	// MaxTime bounds one snapshot (0: DefaultMaxTime). Past it the project
	// is too large to keep: the Store says so (ErrTooLarge) from then on,
	// rather than hold every tool call.
	MaxTime time.Duration
	// Exclude are directories never kept (absolute): gencode's own data,
	// config and state directories when they lie inside the project, the
	// checkpoints themselves among them.
	Exclude []string
	// NoFollow looks at the whole tree on every snapshot instead of
	// following it: for a Store used once (a rewind's), where starting to
	// follow the tree would cost a walk for nothing.
	NoFollow bool
}

// DefaultMaxTime bounds one snapshot: the first of a session hashes every
// file, the later ones only what changed.
const DefaultMaxTime = 20 * time.Second

// ErrTooLarge means a snapshot took longer than Options.MaxTime: no more
// are taken for this project in this process.
var ErrTooLarge = errors.New("the project is too large to keep checkpoints of")

// Store is the shadow repository of one project.
type Store struct {
	gitDir  string
	workDir string
	maxFile int64
	maxTime time.Duration
	exclude []string // "/rel/" patterns for info/exclude
	follow  bool

	mu       sync.Mutex
	initDone bool
	tooLarge bool
	// obs follows the project since before last was taken; last is the
	// snapshot this process took last, with the shadow index in step
	// with it. A zero last means the next snapshot looks at the whole tree.
	obs  *fschange.Observer
	last Snapshot
	// lastDiff is what differs between the two snapshots before last
	// and last, when a followed snapshot found it.
	lastDiff lastDiff
	// Stats counts how snapshots were taken (for tests and benchmarks).
	stats Stats
}

// Stats counts a Store's snapshots by how they were taken.
type Stats struct {
	// Full looked at the whole tree; Changed updated only the paths the
	// tree's events named since the previous snapshot.
	Full, Changed int
}

// Stats says how the Store's snapshots were taken so far.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Dir is where the checkpoints of workDir live under dataDir.
func Dir(dataDir, workDir string) string {
	h := sha256.Sum256([]byte(filepath.Clean(workDir)))
	return filepath.Join(dataDir, "checkpoints", hex.EncodeToString(h[:8]))
}

// New returns the Store of workDir's checkpoints under dataDir. Nothing is
// created before the first Snapshot.
func New(dataDir, workDir string, opts Options) *Store {
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.MaxTime <= 0 {
		opts.MaxTime = DefaultMaxTime
	}
	s := &Store{gitDir: Dir(dataDir, workDir), workDir: workDir, maxFile: opts.MaxFileBytes, maxTime: opts.MaxTime, follow: !opts.NoFollow}
	for _, d := range append([]string{dataDir}, opts.Exclude...) {
		if rel, err := filepath.Rel(workDir, d); err == nil && rel != "." && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
			s.exclude = append(s.exclude, "/"+filepath.ToSlash(rel)+"/")
		}
	}
	return s
}

// Close stops following the project. A Store not closed stops when it is
// collected.
func (s *Store) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.follow = false
	s.stopFollowing()
}

// stopFollowing drops the observer: the next snapshot looks at the whole
// tree. s.mu is held.
func (s *Store) stopFollowing() {
	if s.obs != nil {
		s.obs.Close()
		s.obs = nil
	}
	s.last = Snapshot{}
}

// observer is the Store's watch on the project, made (not yet started) on
// first use. s.mu is held.
func (s *Store) observer() *fschange.Observer {
	if s.obs == nil {
		rel := make([]string, len(s.exclude))
		for i, e := range s.exclude {
			rel[i] = strings.Trim(e, "/")
		}
		// The walk of the first snapshot is bounded by the Store's
		// own MaxTime: past fschange's default budget a large tree is
		// simply not followed (full snapshots, as without it).
		s.obs = fschange.New(s.workDir, fschange.Options{NoGit: true, Exclude: rel})
		runtime.AddCleanup(s, func(o *fschange.Observer) { o.Close() }, s.obs)
	}
	return s.obs
}

// GitDir is the shadow git directory.
func (s *Store) GitDir() string { return s.gitDir }

// WorkDir is the project.
func (s *Store) WorkDir() string { return s.workDir }

// git runs one git command against the shadow directory.
func (s *Store) git(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	base := []string{"-c", "core.autocrlf=false", "-c", "core.filemode=true", "-c", "core.symlinks=true",
		"-c", "core.quotepath=false", "-c", "core.excludesFile=/dev/null", "-c", "gc.auto=0", "-c", "core.hooksPath=/dev/null", "-c", "maintenance.auto=false"}
	cmd := exec.CommandContext(ctx, "git", append(base, args...)...)
	cmd.Dir = s.workDir
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") {
			continue // never the user's repository, index or object store
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "GIT_DIR="+s.gitDir, "GIT_WORK_TREE="+s.workDir,
		"GIT_INDEX_FILE="+filepath.Join(s.gitDir, "index"),
		"GIT_AUTHOR_NAME=gencode", "GIT_AUTHOR_EMAIL=checkpoint@gencode.local",
		"GIT_COMMITTER_NAME=gencode", "GIT_COMMITTER_EMAIL=checkpoint@gencode.local",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, ErrNoGit
		}
		return out, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func (s *Store) init(ctx context.Context) error {
	if s.initDone {
		return nil
	}
	if _, err := os.Stat(filepath.Join(s.gitDir, "HEAD")); err != nil {
		if err := os.MkdirAll(filepath.Dir(s.gitDir), 0o700); err != nil {
			return fmt.Errorf("checkpoints: %w", err)
		}
		// No template: a shadow directory needs none of the sample hooks
		// and files git would copy in (17 files, every new project).
		if _, err := s.git(ctx, nil, "init", "-q", "--template="); err != nil {
			return fmt.Errorf("checkpoints: %w", err)
		}
		_ = os.WriteFile(filepath.Join(s.gitDir, "description"), []byte("gencode checkpoints of "+s.workDir+"\n"), 0o600)
	}
	if err := os.MkdirAll(filepath.Join(s.gitDir, "info"), 0o700); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	if err := os.WriteFile(filepath.Join(s.gitDir, "info", "exclude"), []byte(strings.Join(s.exclude, "\n")+"\n"), 0o600); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	s.initDone = true
	return nil
}

// Snapshot is one kept state of the project.
type Snapshot struct {
	ID   string // a commit in the shadow directory
	Tree string
	// Skipped are files present but not kept (too large): a rewind
	// cannot restore them and leaves them alone.
	Skipped []string
}

// Take snapshots the project now.
func (s *Store) Take(ctx context.Context) (Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tooLarge {
		return Snapshot{}, fmt.Errorf("checkpoint %s: %w", s.workDir, ErrTooLarge)
	}
	if err := s.init(ctx); err != nil {
		return Snapshot{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.maxTime)
	defer cancel()
	snap, err := s.take(ctx)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		s.tooLarge = true
		s.stopFollowing()
		_ = os.Remove(filepath.Join(s.gitDir, "index.lock")) // the killed git's
		return Snapshot{}, fmt.Errorf("checkpoint %s: took over %s: %w", s.workDir, s.maxTime, ErrTooLarge)
	}
	return snap, err
}

// take is a snapshot of what changed since the last one when the tree has
// been followed since, of the whole tree otherwise.
func (s *Store) take(ctx context.Context) (Snapshot, error) {
	if s.follow {
		c, followed, err := s.observer().Changed(ctx)
		switch {
		case err != nil:
			// Not followed (no inotify, out of watches, too large):
			// whole-tree snapshots, as without an observer.
			s.stopFollowing()
			s.follow = false
		case followed && s.last.Tree != "":
			if snap, ok := s.takeChanged(ctx, c); ok {
				s.last = snap
				return snap, nil
			}
			// A .gitignore changed, or git refused a path: follow
			// afresh from a whole-tree snapshot.
			s.stopFollowing()
			if _, _, err := s.observer().Changed(ctx); err != nil {
				s.stopFollowing()
				s.follow = false
			}
		}
	}
	s.lastDiff = lastDiff{}
	snap, err := s.takeAll(ctx)
	if err == nil && s.obs != nil {
		s.last = snap
	}
	return snap, err
}

// commit records snap's tree and skipped files as a commit: its ID.
func (s *Store) commit(snap *Snapshot) error {
	msg := "gencode checkpoint\n"
	if len(snap.Skipped) > 0 {
		msg += "\nskipped:\n" + strings.Join(snap.Skipped, "\n") + "\n"
	}
	// The object `git commit-tree TREE` writes (no parent, the identity
	// every git call here sets, the local time and zone), written here as
	// the followed snapshots' trees are: a git process less per snapshot,
	// two per tool call (TestCommitIsGitsCommitTree).
	now := time.Now()
	ident := fmt.Sprintf("gencode <checkpoint@gencode.local> %d %s", now.Unix(), now.Format("-0700"))
	id, err := s.writeObject("commit", []byte("tree "+snap.Tree+"\nauthor "+ident+"\ncommitter "+ident+"\n\n"+msg))
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", s.workDir, err)
	}
	snap.ID = id
	return nil
}

// takeAll snapshots the whole tree: `git add -A` against the kept index.
func (s *Store) takeAll(ctx context.Context) (Snapshot, error) {
	// Files new or changed since the last snapshot: the only ones whose
	// size needs a look.
	out, err := s.gitRetry(ctx, nil, "ls-files", "-z", "--others", "--modified", "--exclude-standard")
	if err != nil {
		return Snapshot{}, fmt.Errorf("checkpoint %s: %w", s.workDir, err)
	}
	var skipped []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p == "" {
			continue
		}
		fi, err := os.Lstat(filepath.Join(s.workDir, filepath.FromSlash(p)))
		if err == nil && fi.Mode().IsRegular() && fi.Size() > s.maxFile {
			skipped = append(skipped, p)
		}
	}
	spec := []string{"."}
	for _, p := range skipped {
		spec = append(spec, ":(exclude,literal)"+p)
	}
	if _, err := s.gitRetry(ctx, []byte(strings.Join(spec, "\x00")), "add", "-A", "--ignore-errors",
		"--pathspec-from-file=-", "--pathspec-file-nul"); err != nil && !strings.Contains(err.Error(), "unable to index") {
		return Snapshot{}, fmt.Errorf("checkpoint %s: %w", s.workDir, err)
	}
	if len(skipped) > 0 { // a file that grew past the limit leaves the index
		// (not `rm --cached`: with no HEAD it refuses a file whose
		// content differs from the index's, which is this one.)
		if _, err := s.gitRetry(ctx, []byte(strings.Join(skipped, "\x00")), "update-index", "-z", "--force-remove", "--stdin"); err != nil {
			return Snapshot{}, fmt.Errorf("checkpoint %s: %w", s.workDir, err)
		}
	}
	tree, err := s.git(ctx, nil, "write-tree")
	if err != nil {
		return Snapshot{}, fmt.Errorf("checkpoint %s: %w", s.workDir, err)
	}
	snap := Snapshot{Tree: strings.TrimSpace(string(tree)), Skipped: skipped}
	if err := s.commit(&snap); err != nil {
		return Snapshot{}, err
	}
	s.stats.Full++
	return snap, nil
}

// gitRetry is git, retried while another gencode holds the shadow index.
func (s *Store) gitRetry(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	for i := 0; ; i++ {
		out, err := s.git(ctx, stdin, args...)
		if err == nil || i == 20 || !strings.Contains(err.Error(), "index.lock") {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Load reads a snapshot back by its ID.
func (s *Store) Load(ctx context.Context, id string) (Snapshot, error) {
	out, err := s.git(ctx, nil, "cat-file", "commit", id)
	if err != nil {
		return Snapshot{}, fmt.Errorf("checkpoint %s: %w", short(id), ErrPruned)
	}
	snap := Snapshot{ID: id}
	head, body, _ := strings.Cut(string(out), "\n\n")
	for _, l := range strings.Split(head, "\n") {
		if t, ok := strings.CutPrefix(l, "tree "); ok {
			snap.Tree = t
		}
	}
	if _, list, ok := strings.Cut(body, "skipped:\n"); ok {
		for _, p := range strings.Split(strings.TrimSpace(list), "\n") {
			if p != "" {
				snap.Skipped = append(snap.Skipped, p)
			}
		}
	}
	return snap, nil
}

// ErrPruned means a checkpoint's objects are gone (pruned or never kept).
var ErrPruned = errors.New("checkpoint no longer kept")

func short(id string) string {
	if len(id) > 10 {
		return id[:10]
	}
	return id
}

// Change is one file that differs between two snapshots.
type Change struct {
	Path string
	// Op is what restoring would do to the file: "create" (absent now),
	// "modify" (content or mode), "delete" (absent then).
	Op string
}

// Diff lists the files that differ between snapshots from and to, as
// what going from "from" to "to" does to each.
func (s *Store) Diff(ctx context.Context, from, to Snapshot) ([]Change, error) {
	out, err := s.git(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--name-status", from.Tree, to.Tree)
	if err != nil {
		return nil, err
	}
	f := strings.Split(string(out), "\x00")
	var cs []Change
	for i := 0; i+1 < len(f); i += 2 {
		cs = append(cs, Change{Path: f[i+1], Op: opOf(f[i])})
	}
	return cs, nil
}

// FileDiff is a unified diff of one path between two snapshots.
func (s *Store) FileDiff(ctx context.Context, from, to Snapshot, path string) string {
	out, _ := s.git(ctx, nil, "diff", "--no-color", "--no-ext-diff", from.Tree, to.Tree, "--", ":(literal)"+path)
	return string(out)
}

// Restore puts the project's files back as they are in target, given cur,
// a snapshot of the project taken just now. Only the paths in only are
// touched (all differing paths when only is nil). Files skipped in either
// snapshot are left alone. It returns the changes made.
func (s *Store) Restore(ctx context.Context, cur, target Snapshot, only map[string]bool) ([]Change, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, err := s.Diff(ctx, cur, target)
	if err != nil {
		return nil, err
	}
	skip := map[string]bool{}
	for _, p := range append(append([]string{}, cur.Skipped...), target.Skipped...) {
		skip[p] = true
	}
	var put, del []string
	var done []Change
	for _, c := range cs {
		if skip[c.Path] || only != nil && !only[c.Path] {
			continue
		}
		if c.Op == "delete" {
			del = append(del, c.Path)
		} else {
			put = append(put, c.Path)
		}
		done = append(done, c)
	}
	// A directory where a file comes back must hold only files the
	// rewind removes: what else is in it (ignored, too large) is not the
	// rewind's to remove. Checked before anything changes.
	gone := map[string]bool{}
	for _, p := range del {
		gone[p] = true
	}
	for _, p := range put {
		abs := filepath.Join(s.workDir, filepath.FromSlash(p))
		if fi, err := os.Lstat(abs); err != nil || !fi.IsDir() {
			continue
		}
		err := filepath.WalkDir(abs, func(q string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(s.workDir, q)
			if !gone[filepath.ToSlash(rel)] {
				return fmt.Errorf("%s", filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("rewind: %s comes back as a file, but the directory there holds %v, never kept (ignored or too large): move it away first", p, err)
		}
	}
	for _, p := range del {
		abs := filepath.Join(s.workDir, filepath.FromSlash(p))
		if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("rewind: remove %s: %w", p, err)
		}
		removeEmptyParents(s.workDir, filepath.Dir(abs))
	}
	if len(put) > 0 {
		for _, p := range put { // a directory in the way of a file
			abs := filepath.Join(s.workDir, filepath.FromSlash(p))
			if fi, err := os.Lstat(abs); err == nil && fi.IsDir() {
				// Its kept files went with the deletions; what is left
				// (ignored or too large) is not the rewind's to remove.
				if err := os.RemoveAll(abs); err != nil { // only emptied directories left, checked above
					return nil, fmt.Errorf("rewind: %s: %w", p, err)
				}
			}
		}
		spec := make([]string, len(put))
		for i, p := range put {
			spec[i] = ":(literal)" + p
		}
		if _, err := s.gitRetry(ctx, []byte(strings.Join(spec, "\x00")), "checkout", "-f", target.ID,
			"--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
			return nil, fmt.Errorf("rewind: %w", err)
		}
		// checkout sets 0755 or 0644 from the tree under the umask; put
		// the kept executable bit back whatever the umask.
		for _, p := range put {
			fixMode(ctx, s, target, p)
		}
	}
	sort.Slice(done, func(i, j int) bool { return done[i].Path < done[j].Path })
	return done, nil
}

// fixMode makes p's permission bits 0755 or 0644 as git recorded them.
func fixMode(ctx context.Context, s *Store, target Snapshot, p string) {
	out, err := s.git(ctx, nil, "ls-tree", "-z", target.Tree, "--", p)
	if err != nil || len(out) < 6 {
		return
	}
	mode := os.FileMode(0o644)
	switch string(out[:6]) {
	case "100755":
		mode = 0o755
	case "100644":
	default:
		return
	}
	_ = os.Chmod(filepath.Join(s.workDir, filepath.FromSlash(p)), mode)
}

func removeEmptyParents(root, dir string) {
	for dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// Size is the bytes the shadow directory holds.
func (s *Store) Size() int64 {
	var n int64
	_ = filepath.WalkDir(s.gitDir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Prune drops checkpoints older than maxAge, then older ones still while
// the store holds more than maxBytes (0: no bound). Snapshots in keep
// (IDs) are not protected beyond their age: a pruned checkpoint makes a
// rewind to it fail with ErrPruned, and say so.
func (s *Store) Prune(ctx context.Context, maxAge time.Duration, maxBytes int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := os.Stat(filepath.Join(s.gitDir, "HEAD")); err != nil {
		return nil
	}
	ages := []time.Duration{maxAge}
	for a := maxAge / 2; a > time.Minute; a /= 2 {
		ages = append(ages, a)
	}
	ages = append(ages, 0)
	for i, age := range ages {
		if i > 0 && (maxBytes <= 0 || s.Size() <= maxBytes) {
			return nil
		}
		if age <= 0 && i == 0 {
			continue
		}
		exp := "now"
		if age > 0 {
			exp = time.Now().Add(-age).Format(time.RFC3339)
		}
		// Loose objects only: checkpoints are never packed.
		if _, err := s.git(ctx, nil, "prune", "--expire="+exp); err != nil {
			return fmt.Errorf("prune checkpoints: %w", err)
		}
	}
	return nil
}

// Checkpoint takes a snapshot and returns its ID (tools.Checkpointer).
func (s *Store) Checkpoint(ctx context.Context) (string, error) {
	snap, err := s.Take(ctx)
	return snap.ID, err
}

// PruneDaily is Prune at most once a day per project: a stamp file in the
// shadow directory records the last run.
func (s *Store) PruneDaily(ctx context.Context, maxAge time.Duration, maxBytes int64) error {
	stamp := filepath.Join(s.gitDir, "gencode-pruned")
	if fi, err := os.Stat(stamp); err == nil && time.Since(fi.ModTime()) < 24*time.Hour {
		return nil
	}
	if _, err := os.Stat(filepath.Join(s.gitDir, "HEAD")); err != nil {
		return nil
	}
	if err := s.Prune(ctx, maxAge, maxBytes); err != nil {
		return err
	}
	return os.WriteFile(stamp, nil, 0o600)
}
