// Package ignore is gencode's one .gitignore matcher, go-git's: the tools
// (what Glob, Grep and LS leave out) and fschange (which files a command
// changed) read .gitignore files the same way, so a file the tools hide
// is not counted as changed, nor the reverse.
package ignore

import (
	"bufio"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Pattern is one line of a .gitignore, scoped to the directory it is in.
type Pattern = gitignore.Pattern

// maxFile bounds how much of one .gitignore is read.
const maxFile = 1 << 20

// Parse reads the patterns of one .gitignore from r (at most 1 MiB of
// it), scoped to domain: its directory, as path components below the top
// of the tree.
func Parse(r io.Reader, domain []string) []Pattern {
	var ps []Pattern
	sc := bufio.NewScanner(io.LimitReader(r, maxFile))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// Match reports whether path (components below the top) is ignored by ps,
// as git reads them: the files of the directories above first, and the
// last pattern that matches decides.
func Match(ps []Pattern, path []string, isDir bool) bool {
	if len(ps) == 0 {
		return false
	}
	return gitignore.NewMatcher(ps).Match(path, isDir)
}
