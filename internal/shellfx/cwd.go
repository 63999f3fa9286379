package shellfx

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Shell follows the working directory of a shell that persists from one
// command to the next (Claude Code's Bash, OpenHands' and SWE-agent's
// shells): `cd`, `pushd`, `popd` and `cd -` at the top level of a command
// move it for the commands after. A `cd` inside a subshell, a pipeline or
// a command substitution does not. A directory it cannot tell (cd "$X")
// leaves Dir unchanged: the last one known.
type Shell struct {
	Dir   string   // the directory the next command runs in ("" unknown)
	prev  string   // OLDPWD, for cd -
	stack []string // pushd's stack, top last
}

// Run moves the shell's directory as command does.
func (s *Shell) Run(command string) {
	if !strings.Contains(command, "cd") && !strings.Contains(command, "pushd") && !strings.Contains(command, "popd") {
		return // nothing can move it: no need to parse
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return
	}
	w := &walker{src: command}
	for _, st := range f.Stmts {
		s.stmt(w, st)
	}
}

func (s *Shell) stmt(w *walker, st *syntax.Stmt) {
	if st == nil || st.Background {
		return
	}
	switch c := st.Cmd.(type) {
	case *syntax.BinaryCmd:
		if c.Op == syntax.AndStmt || c.Op == syntax.OrStmt {
			s.stmt(w, c.X)
			s.stmt(w, c.Y)
		}
	case *syntax.Block:
		for _, x := range c.Stmts {
			s.stmt(w, x)
		}
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			return
		}
		var words []string
		for _, a := range c.Args {
			lit, ok := w.literal(a)
			if !ok {
				lit = "\x00" // not a literal word
			}
			words = append(words, lit)
		}
		s.builtin(words)
	}
}

// builtin applies one simple command that may move the directory.
func (s *Shell) builtin(words []string) {
	args := words[1:]
	for len(args) > 0 && (args[0] == "-P" || args[0] == "-L" || args[0] == "--") {
		args = args[1:]
	}
	switch words[0] {
	case "cd":
		switch {
		case len(args) == 0:
			s.move("~")
		case args[0] == "-":
			if s.prev != "" {
				s.move(s.prev)
			}
		default:
			s.move(s.join(args[0]))
		}
	case "pushd":
		if len(args) == 0 { // swap the top two
			if n := len(s.stack); n > 0 {
				top := s.stack[n-1]
				s.stack[n-1] = s.Dir
				s.move(top)
			}
			return
		}
		if strings.HasPrefix(args[0], "+") || strings.HasPrefix(args[0], "-") && args[0] != "-" {
			return // rotations: rare in agents' commands
		}
		d := s.join(args[0])
		if d == "" {
			return
		}
		s.stack = append(s.stack, s.Dir)
		s.move(d)
	case "popd":
		if n := len(s.stack); n > 0 {
			top := s.stack[n-1]
			s.stack = s.stack[:n-1]
			s.move(top)
		}
	}
}

// join is d against the shell's directory; "" when d is not a literal.
func (s *Shell) join(d string) string {
	switch {
	case strings.Contains(d, "\x00") || strings.ContainsAny(d, "$`*?"):
		return ""
	case path.IsAbs(d) || strings.HasPrefix(d, "~"):
		return path.Clean(d)
	case s.Dir == "":
		return ""
	}
	return path.Join(s.Dir, d)
}

func (s *Shell) move(d string) {
	if d == "" {
		return
	}
	s.prev, s.Dir = s.Dir, d
}
