package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gencode/gencode/internal/termtext"
)

const (
	grepDescription = "Search file contents with a Go (RE2) regular expression; use (?i) to ignore case. Prints file:line:text, at most 200 matches, and how many more there were. Skips binary files, symlinks, .git, node_modules and files ignored by .gitignore. path: file or directory (default: working directory). include: glob filter, e.g. *.go or src/**/*.{ts,tsx}."
	grepSchema      = `{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"},"include":{"type":"string"}},"required":["pattern"]}`

	grepMaxMatches  = 200
	grepMaxLineText = 200 // bytes of a matching line shown
	grepMaxLine     = 64 << 10
)

type grepArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
	Include string `json:"include"`
}

func runGrep(ctx context.Context, s *Set, raw json.RawMessage) output {
	var a grepArgs
	if msg, ok := decodeArgs(ToolGrep, raw, &a, "pattern"); !ok {
		return failf("%s", msg)
	}
	meta := Meta{Pattern: a.Pattern}
	fail := meta.failf
	if a.Pattern == "" {
		return fail("invalid arguments for Grep: pattern is empty")
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return fail("invalid regular expression: %v (Go RE2 syntax: no lookaround or backreferences)", err)
	}
	include, err := includeMatcher(a.Include)
	if err != nil {
		return fail("%v", err)
	}
	root := a.Path
	if root == "" {
		root = "."
	}
	t, bad := s.resolveArg(ToolGrep, "path", root)
	if bad != nil {
		return (*bad).withMeta(meta)
	}
	if d := s.authorize(ctx, Request{Tool: ToolGrep, Summary: fmt.Sprintf("%s in %s", a.Pattern, t.display), Args: string(raw), Path: t.abs, OutsideWorkDir: t.outside}); d != nil {
		return d.output(meta)
	}
	g := grepper{s: s, re: re}
	dir, fi, err := s.openRoot(t)
	switch {
	case errors.Is(err, errNotDir) && fi.Mode().IsRegular():
		rp, err := s.open(t)
		if err != nil {
			return fail("Grep %s: %v", t.display, err)
		}
		defer rp.close()
		g.file(rp.root, rp.name, t.abs)
	case errors.Is(err, errNotDir):
		return fail("%s is not a regular file or directory", t.display)
	case err != nil:
		return fileError(t.display, err).withMeta(meta)
	default:
		defer dir.Close()
		ig := s.newIgnorer(t)
		err = fs.WalkDir(dir.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable entries are skipped
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			switch {
			case d.IsDir():
				if rel != "." && (skippedDir(d.Name()) || ig.ignored(rel, true) || s.private(filepath.Join(t.abs, filepath.FromSlash(rel))) != "") {
					return fs.SkipDir
				}
				ig.enter(dir, rel)
			case d.Type().IsRegular() && include(rel) && !ig.ignored(rel, false) && s.private(filepath.Join(t.abs, filepath.FromSlash(rel))) == "":
				g.file(dir, rel, filepath.Join(t.abs, filepath.FromSlash(rel)))
			}
			return nil
		})
		if err != nil {
			return fail("Grep canceled: %v", err)
		}
		g.ignored = ig.note()
	}
	return output{text: g.report(a.Pattern, t.display), meta: meta}
}

// grepper collects matches, keeping the first grepMaxMatches lines and
// counting the rest.
type grepper struct {
	s       *Set
	re      *regexp.Regexp
	b       strings.Builder
	matches int
	files   int
	binary  int
	ignored string // what .gitignore left out, said when nothing matched
}

// file searches name in root; abs is how its matches are named.
func (g *grepper) file(root *os.Root, rel, abs string) {
	f, fi, err := openExisting(root, rel)
	if err != nil {
		return
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		return
	}
	if isBinary(head, len(head) < sniffBytes) {
		g.binary++
		return
	}
	name := g.s.displayPath(abs)
	lr := lineReader{r: br, max: grepMaxLine}
	found := false
	for n := 1; ; n++ {
		line, _, err := lr.next()
		if err != nil {
			break
		}
		if !g.re.Match(line) {
			continue
		}
		found = true
		g.matches++
		if g.matches > grepMaxMatches {
			continue
		}
		text := string(line)
		if len(text) > grepMaxLineText {
			text = text[:runeStart(text, grepMaxLineText)] + " …"
		}
		fmt.Fprintf(&g.b, "%s:%d:%s\n", name, n, text)
	}
	if found {
		g.files++
	}
}

func (g *grepper) report(pattern, where string) string {
	var tail []string
	if g.matches > grepMaxMatches {
		tail = append(tail, fmt.Sprintf("showing %d of %d matches in %d files; narrow the pattern, path or include", grepMaxMatches, g.matches, g.files))
	}
	if g.binary > 0 {
		tail = append(tail, termtext.Count(g.binary, "binary file", "binary files")+" skipped")
	}
	out := g.b.String()
	if g.matches == 0 {
		out = fmt.Sprintf("no matches for %s in %s%s\n", pattern, where, g.ignored)
	}
	if len(tail) > 0 {
		out += "[" + strings.Join(tail, "; ") + "]"
	}
	return strings.TrimSuffix(out, "\n")
}
