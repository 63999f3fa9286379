package fschange

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// gitTopLevel is the top of the git work tree that holds dir and its git
// directory, or "".
func gitTopLevel(ctx context.Context, dir string) (top, gitDir string) {
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel", "--absolute-git-dir")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", ""
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return "", ""
	}
	top = lines[0]
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	return top, lines[1]
}

// headCommit is the commit HEAD names, read from the git directory
// ("" when it cannot be read).
func headCommit(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(b))
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok {
		return head
	}
	if b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(ref))); err == nil {
		return strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(gitDir, "packed-refs")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if id, name, ok := strings.Cut(l, " "); ok && name == ref {
				return id
			}
		}
	}
	return "ref " + ref // an unborn branch
}

// reverted moves to Reverted the modified files whose content is now the
// committed one (HEAD did not move, so they were not committed). It asks
// git for the committed blob ids (ls-tree reads no index, so its cost does
// not grow with the tree) and hashes the files itself.
func (o *Observer) reverted(ctx context.Context, c Changes) Changes {
	args := append([]string{"ls-tree", "-z", "HEAD", "--"}, c.Modified...)
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = o.root
	out, err := cmd.Output()
	if err != nil {
		return c
	}
	committed := map[string]string{}
	for _, f := range bytes.Split(out, []byte{0}) {
		meta, name, ok := strings.Cut(string(f), "\t")
		if fields := strings.Fields(meta); ok && len(fields) == 3 && fields[1] == "blob" && fields[0] != "120000" {
			committed[filepath.ToSlash(name)] = fields[2]
		}
	}
	var still []string
	for _, p := range c.Modified {
		if id, ok := committed[p]; ok && blobID(filepath.Join(o.root, filepath.FromSlash(p)), len(id)) == id {
			c.Reverted = append(c.Reverted, p)
		} else {
			still = append(still, p)
		}
	}
	c.Modified = still
	c.sort()
	return c
}

// blobID is git's object id of the file's content: SHA-1 (40 hex digits)
// or SHA-256 (64), "" when it cannot be read.
func blobID(file string, hexLen int) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	var h hash.Hash
	switch hexLen {
	case 40:
		h = sha1.New()
	case 64:
		h = sha256.New()
	default:
		return ""
	}
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// gitState lists the paths under the root that differ from the index or
// are untracked (not ignored), with their status, and stats them. A path
// git does not list is as committed: a command that changes it makes git
// list it afterwards.
func (o *Observer) gitState(ctx context.Context) (map[string]string, map[string]stat, error) {
	// --no-optional-locks: never take index.lock (the command may run git).
	cmd := exec.CommandContext(ctx, "git", "--no-optional-locks", "status", "--porcelain=v1", "-z",
		"--untracked-files=all", "--ignore-submodules=dirty", "--", ".")
	cmd.Dir = o.root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("git status in %s: %w: %s", o.root, err, strings.TrimSpace(stderr.String()))
	}
	prefix, err := filepath.Rel(o.gitTop, o.root)
	if err != nil {
		return nil, nil, fmt.Errorf("git status in %s: %w", o.root, err)
	}
	prefix = filepath.ToSlash(prefix)
	rel := func(p string) (string, bool) {
		if prefix == "." {
			return p, under(p)
		}
		r := strings.TrimPrefix(p, prefix+"/")
		return r, r != p && under(r)
	}
	dirty := map[string]string{}
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		f := string(fields[i])
		if len(f) < 4 {
			continue
		}
		status, p := f[:2], f[3:]
		if status[0] == 'R' || status[0] == 'C' { // the source follows
			if i+1 < len(fields) {
				if src, ok := rel(string(fields[i+1])); ok && status[0] == 'R' {
					dirty[src] = "D "
				}
			}
			i++
		}
		if len(dirty) >= o.opts.MaxFiles {
			return nil, nil, fmt.Errorf("%w: over %d changed files under %s", ErrTooLarge, o.opts.MaxFiles, o.root)
		}
		if r, ok := rel(p); ok && !strings.HasSuffix(r, "/") {
			dirty[r] = status
		}
	}
	paths := make([]string, 0, len(dirty))
	for p := range dirty {
		paths = append(paths, path.Clean(p))
	}
	return dirty, o.lstat(paths), nil
}

// gitDiff compares two git states. A path listed only after the command
// was as committed before; one listed only before may have been reverted
// (or committed: then its file did not change).
func (s *Snapshot) gitDiff(dirty map[string]string, files map[string]stat) Changes {
	var c Changes
	for p, st := range dirty {
		b, before := s.dirty[p]
		a, exists := files[p]
		if !before {
			switch {
			case strings.Contains(st, "D") && !exists:
				c.Deleted = append(c.Deleted, p)
			case st == "??" || st[0] == 'A' || st[0] == 'R' || st[0] == 'C':
				if exists {
					c.Created = append(c.Created, p)
				}
			case exists:
				c.Modified = append(c.Modified, p)
			}
			continue
		}
		old, existed := s.files[p]
		switch {
		case existed && !exists:
			c.Deleted = append(c.Deleted, p)
		case !existed && exists:
			if strings.Contains(b, "D") { // a tracked file deleted before, back now
				c.Modified = append(c.Modified, p)
			} else {
				c.Created = append(c.Created, p)
			}
		case existed && exists && old != a:
			c.Modified = append(c.Modified, p)
		}
	}
	for p, b := range s.dirty {
		if _, still := dirty[p]; still {
			continue
		}
		old, existed := s.files[p]
		a, exists := s.o.lstat([]string{p})[p]
		switch {
		case existed && !exists:
			c.Deleted = append(c.Deleted, p)
		case b == "??" || b[0] == 'A':
			// An untracked file now clean: committed, or gone (above).
		case exists && (!existed || old != a):
			c.Reverted = append(c.Reverted, p)
		}
	}
	c.sort()
	return c
}
