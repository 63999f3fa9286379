package fschange

import (
	"os"
	"strings"

	"github.com/gencode/gencode/internal/ignore"
)

// ignorer applies the .gitignore files met on the way down a walk, with
// the matcher the tools use (package ignore).
type ignorer struct {
	stack    []ignoreFile
	patterns []ignore.Pattern // the stack's rules, shallowest file first
}

type ignoreFile struct {
	base  string // directory of the .gitignore, relative to the root ("" for the root)
	rules []ignore.Pattern
}

// push reads a .gitignore of directory base; it says whether it added one.
func (g *ignorer) push(file, base string) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	rules := ignore.Parse(f, components(base))
	if len(rules) == 0 {
		return false
	}
	g.stack = append(g.stack, ignoreFile{base: base, rules: rules})
	g.patterns = append(g.patterns, rules...)
	return true
}

func (g *ignorer) pop() {
	top := g.stack[len(g.stack)-1]
	g.stack = g.stack[:len(g.stack)-1]
	g.patterns = g.patterns[:len(g.patterns)-len(top.rules)]
}

// add puts a file read before on the stack.
func (g *ignorer) add(f ignoreFile) {
	g.stack = append(g.stack, f)
	g.patterns = append(g.patterns, f.rules...)
}

// ignored says whether rel (relative to the root) is ignored: the last
// matching rule decides, a deeper .gitignore's after its parents'.
func (g *ignorer) ignored(rel string, isDir bool) bool {
	return ignore.Match(g.patterns, components(rel), isDir)
}

// components is a slash-separated path below the root as its parts.
func components(rel string) []string {
	if rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}
