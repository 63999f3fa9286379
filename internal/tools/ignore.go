package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gencode/gencode/internal/ignore"
)

// ignorer tells which entries of one walk (Glob, Grep, LS) the .gitignore
// files exclude, as git would: the files of the walked tree, read as the
// walk enters each directory, plus those of the directories above it up to
// the repository's top (where .git is) and .git/info/exclude. Without a
// repository the .gitignore files from the working directory down count.
//
// A walk root that is itself ignored was asked for by name: the rules from
// above it are dropped, and only the .gitignore files inside it apply.
type ignorer struct {
	prefix   []string // the walk root below the top, where pattern domains start
	patterns []ignore.Pattern
	skipped  int // entries left out
}

// newIgnorer prepares the rules for a walk of the directory t.
func (s *Set) newIgnorer(t target) *ignorer {
	top, repo := t.abs, false
	for d := t.abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			top, repo = d, true
			break
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	if !repo && !t.outside {
		top = s.workDir
	}
	ig := &ignorer{}
	rel, ok := relInside(top, t.abs)
	if !ok {
		return ig
	}
	if rel != "." {
		ig.prefix = strings.Split(filepath.ToSlash(rel), "/")
	}
	r, err := os.OpenRoot(top)
	if err != nil {
		return ig
	}
	defer r.Close()
	if repo {
		ig.patterns = readIgnoreFile(r, ".git/info/exclude", nil)
	}
	for i := range ig.prefix {
		dir := ig.prefix[:i]
		name := filepath.Join(filepath.FromSlash(strings.Join(dir, "/")), ".gitignore")
		ig.patterns = append(ig.patterns, readIgnoreFile(r, name, dir)...)
	}
	if len(ig.prefix) > 0 && ignore.Match(ig.patterns, ig.prefix, true) {
		ig.patterns = nil
	}
	return ig
}

// path is rel (slash-separated, below the walk root) as components below top.
func (ig *ignorer) path(rel string) []string {
	p := append([]string(nil), ig.prefix...)
	if rel != "." && rel != "" {
		p = append(p, strings.Split(rel, "/")...)
	}
	return p
}

// enter reads the .gitignore of the directory rel of the walk (root is the
// walked directory), whose rules then apply below it.
func (ig *ignorer) enter(root *os.Root, rel string) {
	ig.patterns = append(ig.patterns, readIgnoreFile(root, filepath.Join(filepath.FromSlash(rel), ".gitignore"), ig.path(rel))...)
}

// ignored reports whether the entry rel is excluded, and counts it if so.
func (ig *ignorer) ignored(rel string, isDir bool) bool {
	if len(ig.patterns) == 0 {
		return false
	}
	if ignore.Match(ig.patterns, ig.path(rel), isDir) {
		ig.skipped++
		return true
	}
	return false
}

// note says what was left out, for a result that found nothing.
func (ig *ignorer) note() string {
	if ig.skipped == 0 {
		return ""
	}
	if ig.skipped == 1 {
		return " (1 entry ignored by .gitignore was not searched)"
	}
	return fmt.Sprintf(" (%d entries ignored by .gitignore were not searched)", ig.skipped)
}

// readIgnoreFile parses the patterns of the ignore file name in root,
// scoped to domain. A missing or unreadable file has none.
func readIgnoreFile(root *os.Root, name string, domain []string) []ignore.Pattern {
	f, fi, err := openExisting(root, name)
	if err != nil {
		return nil
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return nil
	}
	return ignore.Parse(f, domain)
}
