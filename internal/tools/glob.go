package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/gencode/gencode/internal/termtext"
)

const (
	globDescription = "Find files by glob pattern; ** matches any number of directories (e.g. **/*.go, src/*.{ts,tsx}). Returns paths sorted by name, at most 200, and how many more matched. Skips .git and node_modules unless the pattern names them, and files ignored by .gitignore; symlinks are not followed. path: directory to search (default: working directory)."
	globSchema      = `{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"}},"required":["pattern"]}`

	globMaxResults = 200
)

// skippedDirs are not descended into by Glob, Grep and LS.
func skippedDir(name string) bool {
	switch name {
	case ".git", "node_modules", ".hg", ".svn":
		return true
	}
	return false
}

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

func runGlob(ctx context.Context, s *Set, raw json.RawMessage) output {
	var a globArgs
	if msg, ok := decodeArgs(ToolGlob, raw, &a, "pattern"); !ok {
		return failf("%s", msg)
	}
	meta := Meta{Pattern: a.Pattern}
	fail := meta.failf
	pattern := filepath.ToSlash(strings.TrimSpace(a.Pattern))
	if pattern == "" {
		return fail("invalid arguments for Glob: pattern is empty")
	}
	// Move the literal leading directories (or an absolute prefix) into the
	// search root, so that "../x/*.go" and "/abs/**" work.
	base, pat := doublestar.SplitPattern(pattern)
	if pat == "" || !doublestar.ValidatePattern(pat) {
		return fail("invalid glob pattern %q", a.Pattern)
	}
	if slices.Contains(strings.Split(pat, "/"), "..") {
		return fail("invalid glob pattern %q: .. may only come before the first wildcard", a.Pattern)
	}
	root := a.Path
	if root == "" {
		root = "."
	}
	if filepath.IsAbs(base) {
		root = base
	} else {
		root = filepath.Join(root, filepath.FromSlash(base))
	}
	t, bad := s.resolveArg(ToolGlob, "path", root)
	if bad != nil {
		return (*bad).withMeta(meta)
	}
	if d := s.authorize(ctx, Request{Tool: ToolGlob, Summary: fmt.Sprintf("%s in %s", a.Pattern, t.display), Args: string(raw), Path: t.abs, OutsideWorkDir: t.outside}); d != nil {
		return d.output(meta)
	}
	dir, _, err := s.openRoot(t)
	switch {
	case errors.Is(err, errNotDir):
		return fail("%s is not a directory", t.display)
	case err != nil:
		return fileError(t.display, err).withMeta(meta)
	}
	defer dir.Close()

	// How deep a match can be: without ** the pattern's own depth.
	maxDepth := -1
	if !strings.Contains(pat, "**") {
		maxDepth = strings.Count(pat, "/") + 1
	}
	var matches []string
	ig := s.newIgnorer(t)
	err = fs.WalkDir(dir.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if rel == "." {
			ig.enter(dir, rel)
			return nil
		}
		depth := strings.Count(rel, "/") + 1
		if d.IsDir() {
			if skippedDir(d.Name()) && !strings.Contains(pat, d.Name()) || maxDepth >= 0 && depth >= maxDepth || ig.ignored(rel, true) {
				return fs.SkipDir
			}
			ig.enter(dir, rel)
			return nil
		}
		if doublestar.MatchUnvalidated(pat, rel) && !ig.ignored(rel, false) {
			matches = append(matches, s.displayPath(filepath.Join(t.abs, filepath.FromSlash(rel))))
		}
		return nil
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fail("Glob canceled: %v", err)
	}
	if len(matches) == 0 {
		return output{text: fmt.Sprintf("no files match %s in %s%s", a.Pattern, t.display, ig.note()), meta: meta}
	}
	slices.Sort(matches)
	var b strings.Builder
	for i, m := range matches {
		if i == globMaxResults {
			fmt.Fprintf(&b, "[%s not shown; narrow the pattern or path]\n", termtext.Count(len(matches)-i, "more file", "more files"))
			break
		}
		b.WriteString(m)
		b.WriteByte('\n')
	}
	return output{text: strings.TrimSuffix(b.String(), "\n"), meta: meta}
}

// includeMatcher returns a filter for Grep's include argument: a pattern
// without a slash matches the file name, one with a slash the path
// relative to the search root.
func includeMatcher(include string) (func(rel string) bool, error) {
	include = filepath.ToSlash(strings.TrimSpace(include))
	if include == "" {
		return func(string) bool { return true }, nil
	}
	if !doublestar.ValidatePattern(include) {
		return nil, fmt.Errorf("invalid include pattern %q", include)
	}
	if !strings.Contains(include, "/") {
		return func(rel string) bool { return doublestar.MatchUnvalidated(include, path.Base(rel)) }, nil
	}
	return func(rel string) bool { return doublestar.MatchUnvalidated(include, rel) }, nil
}
