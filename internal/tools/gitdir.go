package tools

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// A Write or Edit into a git directory is treated as one outside the
// working directory: it asks every time (never for the session or the
// project), and print mode refuses it unless Yolo. Git runs code its
// config names (core.fsmonitor, core.pager, core.sshCommand,
// diff.external, filter and diff drivers ...) and its hooks, so a model
// allowed to write inside the project could otherwise plant a command in
// .git/config or .git/hooks that a read-only command the user allowed
// (git status, git diff, an "always for this project" rule) runs later
// without asking. Codex CLI keeps .git read-only inside its writable roots
// for the same reason. Reading a git directory is not affected.

// gitGuard is why a write into a git directory asks (Request.Guard).
const gitGuard = "writes into .git ask every time: git runs code from its config and hooks"

// gitDirOf returns the git directory that abs (inside WorkDir, absolute,
// symlinks resolved) is in, "" for none. p is the path as given, joined to
// WorkDir, before its symlinks were followed. abs is in a git directory
// when
//   - a component of abs or of p is named .git (in any case, and as
//     Windows also reads it): the repository's own, a nested repository's
//     or a submodule's, a .git file (a gitdir link), a link named .git;
//   - abs is beneath the git directory or the common directory of the
//     repository that holds WorkDir, wherever its .git file or link
//     points (a worktree, `gitdir: elsewhere`, a working directory below
//     the top of the repository);
//   - a directory from WorkDir down to abs is a git directory as git
//     tells one (a HEAD file, and objects and refs or a commondir): a bare
//     repository, or a nested repository's directory under another name.
func (s *Set) gitDirOf(p, abs string) string {
	if d := dotGitPrefix(abs); d != "" {
		return d
	}
	if d := dotGitPrefix(p); d != "" {
		return d
	}
	for _, g := range repoGitDirs(s.workDir) {
		if within(g, abs) {
			return g
		}
	}
	rel, ok := relInside(s.workDir, abs)
	if !ok {
		return ""
	}
	d := s.workDir
	if isGitDir(d) {
		return d
	}
	for _, c := range splitPath(rel) {
		if c == "." {
			continue
		}
		d = filepath.Join(d, c)
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			break
		}
		if isGitDir(d) {
			return d
		}
	}
	return ""
}

// dotGitPrefix returns p up to its first component named .git, "" when
// it has none.
func dotGitPrefix(p string) string {
	vol := filepath.VolumeName(p)
	parts := splitPath(p[len(vol):])
	for i, c := range parts {
		if isDotGit(c) {
			return vol + string(filepath.Separator) + filepath.Join(parts[:i+1]...)
		}
	}
	return ""
}

// isDotGit reports whether a file name reaches a .git: in any case (macOS
// and Windows file systems ignore it), with the trailing dots and spaces
// Windows drops, or as its short name GIT~1.
func isDotGit(name string) bool {
	if strings.EqualFold(strings.TrimRight(name, ". "), ".git") {
		return true
	}
	return runtime.GOOS == "windows" && strings.EqualFold(name, "git~1")
}

// repoGitDirs returns the git directory of the repository that holds dir,
// as git finds it (dir/.git, a directory or a link to one or a gitdir
// file, then dir itself as a bare repository, then the same one level up),
// and its common directory when it has one (a worktree's); symlinks
// resolved. None when dir is in no repository.
func repoGitDirs(dir string) []string {
	for d := dir; ; {
		dotgit := filepath.Join(d, ".git")
		g := ""
		if fi, err := os.Stat(dotgit); err == nil {
			switch {
			case fi.IsDir():
				g = dotgit
			case fi.Mode().IsRegular():
				g = readGitFile(d, dotgit)
			}
		}
		if g == "" && isGitDir(d) {
			g = d
		}
		if g != "" {
			return withCommonDir(g)
		}
		up := filepath.Dir(d)
		if up == d {
			return nil
		}
		d = up
	}
}

// readGitFile reads the path a .git file ("gitdir: PATH") in dir points
// to; "" when it is not one.
func readGitFile(dir, name string) string {
	line, _, _ := strings.Cut(readSmall(name), "\n")
	g, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if g = strings.TrimSpace(g); !ok || g == "" {
		return ""
	}
	if !filepath.IsAbs(g) {
		g = filepath.Join(dir, g)
	}
	return g
}

// withCommonDir returns the git directory g resolved, and its common
// directory (named by g/commondir, relative to g) when it has one.
func withCommonDir(g string) []string {
	g = resolvedOrClean(g)
	out := []string{g}
	c := strings.TrimSpace(readSmall(filepath.Join(g, "commondir")))
	if c == "" {
		return out
	}
	if !filepath.IsAbs(c) {
		c = filepath.Join(g, c)
	}
	return append(out, resolvedOrClean(c))
}

// readSmall returns the start of the regular file name, "" when it is
// missing or not a regular file (a FIFO is not waited for).
func readSmall(name string) string {
	f, err := os.OpenFile(name, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	return string(b)
}

func resolvedOrClean(p string) string {
	p = filepath.Clean(p)
	if r, err := evalSymlinksPrefix(p); err == nil {
		return r
	}
	return p
}

// isGitDir reports whether d is a git directory as git tells one: a HEAD
// file, and either a commondir file (a worktree's) or objects and refs
// directories.
func isGitDir(d string) bool {
	if fi, err := os.Stat(filepath.Join(d, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if fi, err := os.Stat(filepath.Join(d, "commondir")); err == nil && fi.Mode().IsRegular() {
		return true
	}
	return isDir(filepath.Join(d, "objects")) && isDir(filepath.Join(d, "refs"))
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
