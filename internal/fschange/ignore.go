package fschange

import (
	"bufio"
	"os"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignorer applies the .gitignore files met on the way down a walk.
type ignorer struct {
	stack []ignoreFile
}

type ignoreFile struct {
	base  string // directory of the .gitignore, relative to the root ("" for the root)
	rules []ignoreRule
}

type ignoreRule struct {
	pattern  string
	negate   bool
	dirOnly  bool
	anchored bool // contains a slash: matched against the path from base
}

// push reads a .gitignore of directory base; it says whether it added one.
func (g *ignorer) push(file, base string) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	var rules []ignoreRule
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var r ignoreRule
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		line = strings.TrimPrefix(line, `\`)
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored, line = true, strings.TrimPrefix(line, "/")
		}
		if line == "" {
			continue
		}
		r.pattern = line
		rules = append(rules, r)
	}
	if len(rules) == 0 {
		return false
	}
	g.stack = append(g.stack, ignoreFile{base: base, rules: rules})
	return true
}

func (g *ignorer) pop() { g.stack = g.stack[:len(g.stack)-1] }

// ignored says whether rel (relative to the root) is ignored; the deepest
// .gitignore and its last matching rule decide.
func (g *ignorer) ignored(rel string, isDir bool) bool {
	for i := len(g.stack) - 1; i >= 0; i-- {
		f := g.stack[i]
		sub := rel
		if f.base != "" {
			sub = strings.TrimPrefix(rel, f.base+"/")
		}
		name := path.Base(rel)
		for j := len(f.rules) - 1; j >= 0; j-- {
			r := f.rules[j]
			if r.dirOnly && !isDir {
				continue
			}
			var ok bool
			if r.anchored {
				ok, _ = doublestar.Match(r.pattern, sub)
			} else {
				ok, _ = path.Match(r.pattern, name)
			}
			if ok {
				return !r.negate
			}
		}
	}
	return false
}
