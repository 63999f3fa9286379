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

// Grant is a place a sandboxed command may write: a directory and
// everything beneath it (Dir), or one existing file.
type Grant struct {
	Path string
	Dir  bool
}

// Plan turns the writable roots and the protected paths into the grants
// the kernel is given. Landlock grants by hierarchy: a rule on a directory
// covers all beneath it, and nothing can take a subtree back out. So a
// root that holds no protected path is granted whole; a root that holds
// one is not granted itself: Plan walks down from it towards each
// protected path and grants every entry it meets at each level except
// the directories on the way and the protected paths themselves. What it
// costs: a new entry cannot be created (nor an entry removed or renamed)
// directly in the root or in a directory on the way (the project's top
// level, ~/.config, ~/.local/share when the project is $HOME); existing
// files there stay writable, and everything below the other entries is
// as writable as the rest of the project.
//
// A root that is itself a protected path, or lies inside one, is not
// granted at all; it is returned in skipped. Symbolic links met on the
// walk are never granted (a rule on a link would land on its target); a
// write through one still reaches its target only when the target is
// writable itself, as the kernel checks where a file really is.
//
// A root that does not exist is left out: there is nothing to grant.
//
// Roots and protected paths must be absolute and clean, symbolic links
// resolved (see Resolve); a protected path that does not exist yet is
// protected all the same (the directories on its way cannot get the entry
// that would start it).
func Plan(roots, protected []string) (grants []Grant, skipped []string, err error) {
	for _, root := range roots {
		if slices.ContainsFunc(protected, func(p string) bool { return within(root, p) }) {
			skipped = append(skipped, root)
			continue
		}
		var inner []string
		for _, p := range protected {
			if within(p, root) {
				inner = append(inner, p)
			}
		}
		if len(inner) == 0 {
			fi, err := os.Stat(root)
			if err != nil {
				continue // nothing there to grant (a writable dir not made yet)
			}
			grants = append(grants, Grant{Path: root, Dir: fi.IsDir()})
			continue
		}
		g, err := walkAround(root, inner, protected)
		if err != nil {
			return nil, nil, err
		}
		grants = append(grants, g...)
	}
	return grants, skipped, nil
}

// walkAround grants the entries of root and of the directories between
// root and each of inner (protected paths strictly beneath root), except
// those directories and the protected paths.
func walkAround(root string, inner, protected []string) ([]Grant, error) {
	onPath := map[string]bool{}
	for _, p := range inner {
		for d := filepath.Dir(p); within(d, root); d = filepath.Dir(d) {
			onPath[d] = true
			if d == root {
				break
			}
		}
	}
	dirs := make([]string, 0, len(onPath))
	for d := range onPath {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	var grants []Grant
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue // nothing there yet: nothing to grant, and it cannot be created
		}
		if err != nil {
			return nil, fmt.Errorf("list %s to build the rules around gencode's directories: %w", d, err)
		}
		for _, e := range entries {
			full := filepath.Join(d, e.Name())
			if onPath[full] || slices.ContainsFunc(protected, func(p string) bool { return within(full, p) }) {
				continue
			}
			fi, err := os.Lstat(full)
			if err != nil {
				continue // gone since the listing
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				continue
			}
			grants = append(grants, Grant{Path: full, Dir: fi.IsDir()})
		}
	}
	return grants, nil
}

// within reports whether path is dir or lies beneath it (both clean and
// absolute).
func within(path, dir string) bool {
	if path == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(path, dir)
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// Resolve makes path absolute (against cwd) and clean, with the symbolic
// links of its longest existing prefix resolved: a path that does not
// exist yet is resolved as far as it exists, so that it still names the
// place it will be created in.
func Resolve(path, cwd string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	path = filepath.Clean(path)
	rest := ""
	for p := path; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(p) == p {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}
