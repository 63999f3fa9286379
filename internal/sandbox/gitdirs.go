package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Git runs code that its config names (core.fsmonitor, core.pager,
// diff.external, filter drivers ...) and its hooks. A command that may
// write a git directory can therefore plant code that the user's own,
// unconfined `git status` or `git commit` runs later. Commands that ran
// without the user's decision (auto-allowed) get the git directories of
// the project read-only, as Codex CLI keeps .git read-only in its
// writable roots; commands the user approved keep them writable.

// maxGitWalkDirs bounds the directories GitDirs lists: past it the
// project is too large to search before every command, and an
// auto-allowed command asks instead.
const maxGitWalkDirs = 20000

// MaxGrants bounds the rules one command is given: the walk around the
// protected paths grants each entry on the way on its own.
const MaxGrants = 10000

// GitDirs returns the git directories beneath root (absolute, clean,
// symbolic links resolved) that git may run code from: root/.git always,
// also when it does not exist yet (an auto-allowed `git init` would
// otherwise make one with a config of its choosing, which the user's next
// git command in the project would run); every other entry named .git
// (a nested repository's, a submodule's, a .git file or link) and the
// git directory a .git file or link points to when it lies beneath root;
// and each directory git itself takes for a git directory (a HEAD file
// and objects and refs, or a commondir: a bare repository); and the .git
// of every submodule in the index of a repository found, also when the
// submodule is not initialised (git status would run git there). It does not
// descend into them, nor follow symbolic links. It lists at most maxDirs
// directories; a larger tree is an error (nothing could be promised), as
// is a root that is itself in a git directory.
func GitDirs(root string, maxDirs int) ([]string, error) {
	if d := dotGitIn(root); d != "" {
		return nil, fmt.Errorf("the project lies inside the git directory %s", d)
	}
	found := []string{filepath.Join(root, ".git")}
	add := func(p string) {
		if within(p, root) && !slices.Contains(found, p) {
			found = append(found, p)
		}
	}
	queue := []string{root}
	for n := 0; len(queue) > 0; n++ {
		if n >= maxDirs {
			return nil, fmt.Errorf("it has more than %d directories to search for git directories", maxDirs)
		}
		dir := queue[0]
		queue = queue[1:]
		entries, err := readDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				continue // gone, or not ours to list (nor, then, to write)
			}
			return nil, fmt.Errorf("list %s to find its git directories: %w", dir, err)
		}
		if isGitDirListing(entries) {
			if dir == root {
				return nil, fmt.Errorf("the project is itself a git directory (a bare repository)")
			}
			add(dir)
			continue
		}
		for _, e := range entries {
			full := filepath.Join(dir, e.Name())
			if isDotGit(e.Name()) {
				add(full)
				gd := full
				if to := pointsTo(dir, full); len(to) > 0 {
					gd = to[0]
					for _, g := range to {
						add(g)
					}
				}
				// Its submodules' .git, also before they are initialised.
				links, err := gitlinks(gd)
				if err != nil {
					return nil, err
				}
				for _, l := range links {
					add(filepath.Join(dir, filepath.FromSlash(l), ".git"))
				}
				continue
			}
			if e.IsDir() { // not a symbolic link: DirEntry does not follow them
				queue = append(queue, full)
			}
		}
	}
	slices.Sort(found)
	// One inside another (a submodule's git dir in .git/modules) is kept
	// by the outer one already.
	return slices.DeleteFunc(found, func(p string) bool {
		return slices.ContainsFunc(found, func(q string) bool { return q != p && within(p, q) })
	}), nil
}

// readDir lists dir unsorted (os.ReadDir sorts: a cost per command here).
func readDir(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// isDotGit reports whether a file name is .git, in any case (a
// case-insensitive file system reaches .git by any of them).
func isDotGit(name string) bool { return strings.EqualFold(name, ".git") }

// dotGitIn returns the part of p up to a component named .git, "".
func dotGitIn(p string) string {
	for d := p; ; d = filepath.Dir(d) {
		if isDotGit(filepath.Base(d)) {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// isGitDirListing reports whether a directory with these entries is a
// git directory as git tells one: a HEAD file, and either a commondir
// file or objects and refs directories.
func isGitDirListing(entries []fs.DirEntry) bool {
	has := func(name string, dir bool) bool {
		return slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == name && e.IsDir() == dir })
	}
	return has("HEAD", false) && (has("commondir", false) || has("objects", true) && has("refs", true))
}

// pointsTo returns where the .git entry dotgit in dir leads: the target
// of a link, or the gitdir of a "gitdir: PATH" file, and that one's
// common directory; symbolic links resolved.
func pointsTo(dir, dotgit string) []string {
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return nil
	}
	var g string
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		g, err = filepath.EvalSymlinks(dotgit)
		if err != nil {
			return nil
		}
	case fi.Mode().IsRegular():
		line, _, _ := strings.Cut(readSmall(dotgit), "\n")
		p, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if p = strings.TrimSpace(p); !ok || p == "" {
			return nil
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		g = Resolve(p, dir)
	default:
		return nil
	}
	out := []string{g}
	if c := strings.TrimSpace(readSmall(filepath.Join(g, "commondir"))); c != "" {
		if !filepath.IsAbs(c) {
			c = filepath.Join(g, c)
		}
		out = append(out, Resolve(c, g))
	}
	return out
}

// readSmall returns the start of the regular file name (see readSmallN).
func readSmall(name string) string { return readSmallN(name, 4096) }
