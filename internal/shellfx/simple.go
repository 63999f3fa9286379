package shellfx

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Commands splits a plain command line into its simple commands, each as
// its words with quotes removed: `go test ./... && go vet ./...` is
// [[go test ./...] [go vet ./...]]. The commands may be joined by ;, &&,
// || and | (and newlines); ok is false for anything a plain reading could
// get wrong: a redirection, a variable or command substitution, a glob,
// brace or tilde expansion, an assignment, a subshell, a block, a
// function, control flow, a negation or a command sent to the background.
// It never runs anything.
func Commands(command string) (cmds [][]string, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil || len(f.Stmts) == 0 {
		return nil, false
	}
	w := &walker{src: command}
	var add func(s *syntax.Stmt) bool
	add = func(s *syntax.Stmt) bool {
		if s == nil || s.Negated || s.Background || s.Coprocess || s.Disown || len(s.Redirs) > 0 {
			return false
		}
		switch c := s.Cmd.(type) {
		case *syntax.CallExpr:
			if len(c.Assigns) > 0 || len(c.Args) == 0 {
				return false
			}
			words := make([]string, len(c.Args))
			for i, a := range c.Args {
				if !plainWord(a) {
					return false
				}
				lit, ok := w.literal(a)
				if !ok {
					return false
				}
				words[i] = lit
			}
			cmds = append(cmds, words)
			return true
		case *syntax.BinaryCmd:
			switch c.Op {
			case syntax.AndStmt, syntax.OrStmt, syntax.Pipe:
				return add(c.X) && add(c.Y)
			}
		}
		return false
	}
	for _, s := range f.Stmts {
		if !add(s) {
			return nil, false
		}
	}
	return cmds, true
}

// plainWord reports whether a word's unquoted parts expand to
// themselves: literal's check leaves out globs, and this one braces and
// a leading tilde too.
func plainWord(word *syntax.Word) bool {
	for i, part := range word.Parts {
		lit, ok := part.(*syntax.Lit)
		if !ok {
			continue
		}
		if strings.ContainsAny(lit.Value, "{}") || (i == 0 && strings.HasPrefix(lit.Value, "~")) {
			return false
		}
	}
	return true
}
