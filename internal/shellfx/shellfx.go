// Package shellfx says what a shell command line does to files, read from the
// command itself: which files it writes, changes in place, deletes, renames,
// reverts to their committed state, reads, and which scripts it runs. It
// parses the command with a real shell parser (mvdan.cc/sh, the parser of
// shfmt), so quoting, pipelines, &&/||/; lists, subshells, `cd DIR && ...`
// and heredocs (data, not commands) are understood; it never runs anything.
//
// It is the fallback when a change could not be observed on the filesystem
// (imported sessions, older sessions, a tree too large to watch): what it
// reports is what the command says, not what happened. Paths it cannot know
// (variables, globs, command substitutions, xargs input) are left out.
package shellfx

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Kind is what an Op does to its path.
type Kind uint8

// The kinds of Op.
const (
	// Read: the command reads the file (cat, head, sed -n, grep PATTERN F, <).
	Read Kind = iota + 1
	// Write: the file's content is replaced or created (>, tee, cp/install
	// target, a heredoc to cat); whether it existed before is not known.
	Write
	// Modify: the file is changed in place (>>, sed -i, perl -i, a patch).
	Modify
	// Create: the file is new (SWE-agent's create, a patch from /dev/null).
	Create
	// Touch: the file exists afterwards; an existing one keeps its content.
	Touch
	// Delete: the file, or everything under the directory, is removed.
	Delete
	// Rename: Path moves to To.
	Rename
	// Revert: the file, or everything under the directory ("." for all),
	// goes back to its committed state (git checkout --, git restore).
	Revert
	// Run: a script is executed; Lang says its language. With Content set it
	// is an inline script (python -c, a heredoc to python), else Path names
	// the script file.
	Run
	// Mkdir: the directory is made by the session; what it holds was not
	// there before.
	Mkdir
)

var kindNames = [...]string{Read: "read", Write: "write", Modify: "modify", Create: "create", Touch: "touch",
	Delete: "delete", Rename: "rename", Revert: "revert", Run: "run", Mkdir: "mkdir"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Op is one effect of a command on one path, in the order the command
// performs them.
type Op struct {
	Kind Kind
	// Path is cleaned and joined to the shell's directory when that is
	// known; otherwise it stays relative.
	Path string
	// To is the new path of a Rename.
	To string
	// Content is the data written when the command line holds it (a heredoc
	// to cat or tee), or the inline script of a Run.
	Content string
	// Lang is a Run's language: "python", "node", "shell", "perl", "ruby".
	Lang string
	// CurrentFile marks an edit of the file an editor has open (SWE-agent's
	// edit and insert): Path is empty, the session knows which file it is.
	CurrentFile bool
	// Dir is the shell's directory when a Run starts ("" when unknown): a
	// script's relative paths resolve against it.
	Dir string
}

func (o Op) String() string {
	switch {
	case o.Kind == Rename:
		return fmt.Sprintf("rename %s -> %s", o.Path, o.To)
	case o.CurrentFile:
		return o.Kind.String() + " <open file>"
	case o.Kind == Run && o.Path == "":
		return "run inline " + o.Lang
	}
	return o.Kind.String() + " " + o.Path
}

// Effects is what one command line does.
type Effects struct {
	Ops []Op
	// Dir is the shell's directory after the command when it changed it
	// (a `cd` at the top level), else "".
	Dir string
}

// Parse reads the effects of command, run by a shell whose directory is dir
// ("" when unknown: relative paths then stay relative). It fails only when
// the command is not valid shell; the helper commands of SWE-agent's
// interface (create, open, edit, insert, str_replace_editor) are understood
// too.
func Parse(command, dir string) (Effects, error) {
	if ops, ok := parseAgentCommand(command, dir); ok {
		return Effects{Ops: ops}, nil
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return Effects{}, fmt.Errorf("parse shell command: %w", err)
	}
	w := &walker{src: command, dir: dir, startDir: dir}
	w.stmts(f.Stmts)
	e := Effects{Ops: w.ops}
	if w.dir != w.startDir {
		e.Dir = w.dir
	}
	return e, nil
}

type walker struct {
	src           string
	dir, startDir string
	unknownDir    bool // a cd whose target is not literal: relative paths are unknown
	ops           []Op
}

func (w *walker) add(op Op) {
	if op.Path == "" && !op.CurrentFile && !(op.Kind == Run && op.Content != "") {
		return
	}
	if op.Kind == Run && !w.unknownDir {
		op.Dir = w.dir
	}
	w.ops = append(w.ops, op)
}

// resolve makes p a cleaned path against the shell's directory; "" when it
// cannot be known.
func (w *walker) resolve(p string) string {
	if p == "" || p == "-" {
		return ""
	}
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/random", "/dev/urandom":
		return ""
	}
	if strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/") {
		return ""
	}
	if path.IsAbs(p) || strings.HasPrefix(p, "~") {
		return path.Clean(p)
	}
	if w.unknownDir {
		return ""
	}
	if w.dir == "" {
		return path.Clean(p)
	}
	return path.Join(w.dir, p)
}

func (w *walker) stmts(list []*syntax.Stmt) {
	for _, s := range list {
		w.stmt(s)
	}
}

// scoped runs fn in a subshell: a cd inside does not last.
func (w *walker) scoped(fn func()) {
	dir, unknown := w.dir, w.unknownDir
	fn()
	w.dir, w.unknownDir = dir, unknown
}

func (w *walker) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	// Redirections: the files they write, and the data a heredoc feeds.
	var stdin *syntax.Redirect
	var outs []Op
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			stdin = r
			continue
		}
		if r.Word == nil {
			continue
		}
		target, ok := w.literal(r.Word)
		if !ok {
			continue
		}
		switch r.Op {
		case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob:
			outs = append(outs, Op{Kind: Write, Path: w.resolve(target)})
		case syntax.AppOut, syntax.AppAll, syntax.AppClob, syntax.AppAllClob:
			outs = append(outs, Op{Kind: Modify, Path: w.resolve(target)})
		case syntax.DplOut:
			if !isFD(target) { // >&file is &>file
				outs = append(outs, Op{Kind: Write, Path: w.resolve(target)})
			}
		case syntax.RdrIn, syntax.RdrInOut:
			w.add(Op{Kind: Read, Path: w.resolve(target)})
		}
	}
	var data string
	if stdin != nil && stdin.Hdoc != nil {
		data = w.text(stdin.Hdoc)
	} else if stdin != nil && stdin.Op == syntax.WordHdoc && stdin.Word != nil {
		data, _ = w.literal(stdin.Word)
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		w.call(c, data, stdin != nil, outs)
		return
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			w.scoped(func() { w.stmt(c.X) })
			w.scoped(func() { w.stmt(c.Y) })
		} else {
			w.stmt(c.X)
			w.stmt(c.Y)
		}
	case *syntax.Subshell:
		w.scoped(func() { w.stmts(c.Stmts) })
	case *syntax.Block:
		w.stmts(c.Stmts)
	case *syntax.IfClause:
		for cl := c; cl != nil; cl = cl.Else {
			w.stmts(cl.Cond)
			w.stmts(cl.Then)
		}
	case *syntax.WhileClause:
		w.stmts(c.Cond)
		w.stmts(c.Do)
	case *syntax.ForClause:
		w.stmts(c.Do)
	case *syntax.CaseClause:
		for _, it := range c.Items {
			w.stmts(it.Stmts)
		}
	case *syntax.TimeClause:
		w.stmt(c.Stmt)
	case *syntax.CoprocClause:
		w.scoped(func() { w.stmt(c.Stmt) })
	}
	for _, o := range outs {
		w.add(o)
	}
}

// isFD says whether a >& target is a file descriptor rather than a file.
func isFD(s string) bool {
	if s == "-" {
		return true
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// text is a heredoc body as written: literal parts as they are, expansions
// as their source text.
func (w *walker) text(word *syntax.Word) string {
	var b strings.Builder
	for _, part := range word.Parts {
		if lit, ok := part.(*syntax.Lit); ok {
			b.WriteString(lit.Value)
			continue
		}
		from, to := int(part.Pos().Offset()), int(part.End().Offset())
		if from >= 0 && to <= len(w.src) && from <= to {
			b.WriteString(w.src[from:to])
		}
	}
	return b.String()
}

// literal is the value of a word that has no expansion left: quotes
// removed, escapes resolved. ok is false for variables, command
// substitutions, globs and brace expansions.
func (w *walker) literal(word *syntax.Word) (string, bool) {
	if word == nil {
		return "", false
	}
	var b strings.Builder
	for _, part := range word.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[") {
				return "", false
			}
			b.WriteString(unescape(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// words are a call's arguments as literals; non-literal ones are "" with
// lit false.
type arg struct {
	s   string
	lit bool
}

func (w *walker) args(list []*syntax.Word) []arg {
	out := make([]arg, len(list))
	for i, word := range list {
		s, ok := w.literal(word)
		out[i] = arg{s, ok}
	}
	return out
}

// wrappers run the rest of their arguments as a command.
var wrappers = map[string]int{ // name -> options that take a value
	"sudo": 0, "env": 0, "nohup": 0, "time": 0, "command": 0, "exec": 0, "nice": 0, "stdbuf": 0,
	"timeout": 1, "builtin": 0, "doas": 0, "unbuffer": 0,
}

func (w *walker) call(c *syntax.CallExpr, stdin string, hasStdin bool, outs []Op) {
	defer func() {
		for _, o := range outs {
			w.add(o)
		}
	}()
	args := w.args(c.Args)
	// Command substitutions run too: $(sed -i ... f) still edits f.
	for _, word := range c.Args {
		w.substitutions(word)
	}
	for len(args) > 0 {
		if !args[0].lit {
			return
		}
		name := path.Base(args[0].s)
		n, ok := wrappers[name]
		if !ok {
			break
		}
		args = args[1:]
		// Skip the wrapper's options and VAR=value words.
		for len(args) > 0 && args[0].lit && (strings.HasPrefix(args[0].s, "-") || (name == "env" && strings.Contains(args[0].s, "="))) {
			args = args[1:]
		}
		if n > 0 && len(args) > 0 { // timeout DURATION
			args = args[n:]
		}
	}
	if len(args) == 0 || !args[0].lit {
		return
	}
	name := path.Base(args[0].s)
	rest := args[1:]
	if w.agentTool(name, rest) {
		return
	}
	switch name {
	case "cd", "pushd":
		w.cd(rest)
	case "cat", "head", "tail", "nl", "less", "more", "bat", "batcat", "wc", "tac", "od", "xxd", "hexdump", "strings", "view":
		hasFiles := false
		for _, a := range operands(rest, optsWithValue[name]) {
			hasFiles = true
			w.add(Op{Kind: Read, Path: w.resolve(a)})
		}
		if !hasFiles && hasStdin && name == "cat" && stdin != "" {
			// cat <<EOF > f: the heredoc is what the redirection writes.
			for i := range outs {
				if outs[i].Kind == Write {
					outs[i].Content = stdin
				}
			}
		}
	case "grep", "egrep", "fgrep", "rg", "ag", "ack":
		w.grep(rest)
	case "sed":
		w.sed(rest)
	case "perl":
		w.perl(rest, stdin)
	case "tee":
		kind := Write
		for _, a := range rest {
			if a.lit && (a.s == "-a" || a.s == "--append") {
				kind = Modify
			}
		}
		for _, a := range operands(rest, nil) {
			w.add(Op{Kind: kind, Path: w.resolve(a), Content: stdin})
		}
	case "touch":
		for _, a := range operands(rest, map[string]bool{"-d": true, "-t": true, "-r": true}) {
			w.add(Op{Kind: Touch, Path: w.resolve(a)})
		}
	case "truncate", "shred":
		for _, a := range operands(rest, map[string]bool{"-s": true, "-n": true}) {
			w.add(Op{Kind: Modify, Path: w.resolve(a)})
		}
	case "mkdir":
		parents := false
		for _, a := range rest {
			if a.lit && strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.Contains(a.s, "p") || a.lit && a.s == "--parents" {
				parents = true
			}
		}
		for _, a := range operands(rest, map[string]bool{"-m": true}) {
			// mkdir -p a/b makes the relative parents it names too (those
			// the ledger knows nothing under); an absolute path's parents
			// are taken to be there.
			if parents && !path.IsAbs(a) {
				for d := path.Dir(path.Clean(a)); d != "." && d != "/"; d = path.Dir(d) {
					w.add(Op{Kind: Mkdir, Path: w.resolve(d)})
				}
			}
			w.add(Op{Kind: Mkdir, Path: w.resolve(a)})
		}
	case "rm", "unlink":
		for _, a := range operands(rest, nil) {
			w.add(Op{Kind: Delete, Path: w.resolve(a)})
		}
	case "cp", "install", "ln":
		w.copyLike(name, rest)
	case "mv":
		w.move(rest)
	case "dd":
		for _, a := range rest {
			if a.lit && strings.HasPrefix(a.s, "of=") {
				w.add(Op{Kind: Write, Path: w.resolve(strings.TrimPrefix(a.s, "of="))})
			}
			if a.lit && strings.HasPrefix(a.s, "if=") {
				w.add(Op{Kind: Read, Path: w.resolve(strings.TrimPrefix(a.s, "if="))})
			}
		}
	case "git":
		w.git(rest, stdin)
	case "patch":
		w.patch(rest, stdin)
	case "python", "python2", "python3", "node", "nodejs", "bash", "sh", "zsh", "ruby", "deno", "bun", "tsx", "ts-node":
		w.interpreter(name, rest, stdin)
	case "xargs", "find", "parallel":
		// Targets come from input or a search: not known from the line.
		// find ... -exec runs its command on unknown files too.
	default:
		if strings.HasPrefix(args[0].s, "./") || strings.HasPrefix(args[0].s, "/") && strings.HasSuffix(name, ".sh") {
			w.add(Op{Kind: Run, Path: w.resolve(args[0].s), Lang: langOf(args[0].s)})
		}
		if rs := pythonVersion(name); rs {
			w.interpreter("python", rest, stdin)
		}
	}
}

// pythonVersion matches python3.11 and the like.
func pythonVersion(name string) bool {
	if !strings.HasPrefix(name, "python") {
		return false
	}
	for _, r := range strings.TrimPrefix(name, "python") {
		if (r < '0' || r > '9') && r != '.' {
			return false
		}
	}
	return true
}

func (w *walker) substitutions(word *syntax.Word) {
	syntax.Walk(word, func(n syntax.Node) bool {
		switch c := n.(type) {
		case *syntax.CmdSubst:
			w.scoped(func() { w.stmts(c.Stmts) })
			return false
		case *syntax.ProcSubst:
			w.scoped(func() { w.stmts(c.Stmts) })
			return false
		}
		return true
	})
}

func (w *walker) cd(rest []arg) {
	ops := operands(rest, nil)
	switch {
	case len(rest) == 0:
		w.dir, w.unknownDir = "~", false
	case len(ops) == 1:
		d := ops[0]
		if path.IsAbs(d) || strings.HasPrefix(d, "~") {
			w.dir, w.unknownDir = path.Clean(d), false
		} else if !w.unknownDir {
			if w.dir == "" {
				w.dir = path.Clean(d)
			} else {
				w.dir = path.Join(w.dir, d)
			}
		}
	default:
		w.unknownDir = true // cd "$X", cd -
	}
}

// optsWithValue lists, per command, the options whose value is the next
// argument (so it is not taken for a file).
var optsWithValue = map[string]map[string]bool{
	"head": {"-n": true, "-c": true},
	"tail": {"-n": true, "-c": true},
	"nl":   {"-b": true, "-v": true, "-w": true, "-s": true, "-i": true},
	"od":   {"-t": true, "-N": true, "-j": true, "-A": true},
	"xxd":  {"-l": true, "-s": true, "-c": true},
}

// operands are the literal non-option arguments (after "--" everything is
// one). Options named in withValue skip their value too.
func operands(args []arg, withValue map[string]bool) []string {
	var out []string
	dashdash := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			continue
		}
		if !dashdash && a.s == "--" {
			dashdash = true
			continue
		}
		if !dashdash && strings.HasPrefix(a.s, "-") && a.s != "-" {
			if withValue[a.s] {
				i++
			}
			continue
		}
		if !dashdash && strings.HasPrefix(a.s, "+") && len(a.s) > 1 { // tail +5
			continue
		}
		out = append(out, a.s)
	}
	return out
}

func (w *walker) grep(rest []arg) {
	patternGiven, recursive := false, false
	var pos []string
	dashdash := false
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !dashdash && a.lit && a.s == "--" {
			dashdash = true
			continue
		}
		if !dashdash && a.lit && strings.HasPrefix(a.s, "-") && len(a.s) > 1 {
			switch {
			case a.s == "-e" || a.s == "-f" || a.s == "--regexp" || a.s == "--file":
				patternGiven = true
				i++
			case strings.HasPrefix(a.s, "--regexp=") || strings.HasPrefix(a.s, "--file="):
				patternGiven = true
			case a.s == "-A" || a.s == "-B" || a.s == "-C" || a.s == "-m" || a.s == "--include" || a.s == "--exclude" ||
				a.s == "-g" || a.s == "-t" || a.s == "--type" || a.s == "--glob" || a.s == "--max-count":
				i++
			case !strings.HasPrefix(a.s, "--") && strings.ContainsAny(a.s, "rR"):
				recursive = true
			case a.s == "--recursive":
				recursive = true
			}
			continue
		}
		if !a.lit {
			if !patternGiven && len(pos) == 0 {
				pos = append(pos, "") // the pattern
			}
			continue
		}
		pos = append(pos, a.s)
	}
	if !patternGiven && len(pos) > 0 {
		pos = pos[1:]
	}
	if recursive {
		return // a directory search: no file in particular
	}
	for _, p := range pos {
		w.add(Op{Kind: Read, Path: w.resolve(p)})
	}
}

func (w *walker) sed(rest []arg) {
	inPlace, scriptGiven := false, false
	var pos []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !a.lit {
			if !scriptGiven && len(pos) == 0 {
				pos = append(pos, "")
			}
			continue
		}
		switch {
		case a.s == "-e" || a.s == "-f" || a.s == "--expression" || a.s == "--file":
			scriptGiven = true
			i++
		case strings.HasPrefix(a.s, "--expression=") || strings.HasPrefix(a.s, "--file="):
			scriptGiven = true
		case a.s == "-i" || strings.HasPrefix(a.s, "--in-place"):
			inPlace = true
			// BSD sed: -i '' (an empty backup suffix) is a separate word.
			if a.s == "-i" && i+1 < len(rest) && rest[i+1].lit && rest[i+1].s == "" {
				i++
			}
		case strings.HasPrefix(a.s, "-") && len(a.s) > 1 && !strings.HasPrefix(a.s, "--"):
			if strings.Contains(a.s, "i") { // -i.bak, -ni, -Ei
				inPlace = true
			}
			if strings.HasSuffix(a.s, "e") || strings.HasSuffix(a.s, "f") {
				scriptGiven = true
				i++
			}
		case strings.HasPrefix(a.s, "--"):
		default:
			pos = append(pos, a.s)
		}
	}
	if !scriptGiven && len(pos) > 0 {
		pos = pos[1:]
	}
	kind := Read
	if inPlace {
		kind = Modify
	}
	for _, p := range pos {
		w.add(Op{Kind: kind, Path: w.resolve(p)})
	}
}

func (w *walker) perl(rest []arg, stdin string) {
	inPlace, codeGiven := false, false
	var pos []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !a.lit {
			if codeGiven || len(pos) > 0 {
				continue
			}
			pos = append(pos, "")
			continue
		}
		if strings.HasPrefix(a.s, "-") && len(a.s) > 1 {
			flags := a.s[1:]
			if strings.HasPrefix(flags, "i") || strings.Contains(flags, "i") && !strings.HasPrefix(a.s, "-I") {
				inPlace = true
			}
			if strings.HasSuffix(flags, "e") || strings.HasSuffix(flags, "E") {
				codeGiven = true
				i++
			}
			continue
		}
		pos = append(pos, a.s)
	}
	if !codeGiven && len(pos) > 0 {
		if !inPlace && pos[0] != "" {
			w.add(Op{Kind: Run, Path: w.resolve(pos[0]), Lang: "perl"})
		}
		pos = pos[1:]
	}
	kind := Read
	if inPlace {
		kind = Modify
	}
	for _, p := range pos {
		if p != "" {
			w.add(Op{Kind: kind, Path: w.resolve(p)})
		}
	}
}

// copyLike handles cp, install and ln: the last operand is the target (a
// directory when there are several sources or it ends in /).
func (w *walker) copyLike(name string, rest []arg) {
	withValue := map[string]bool{"-m": true, "-o": true, "-g": true, "-S": true, "--suffix": true, "-t": true, "--target-directory": true}
	targetDir := ""
	for i, a := range rest {
		if a.lit && (a.s == "-t" || a.s == "--target-directory") && i+1 < len(rest) && rest[i+1].lit {
			targetDir = rest[i+1].s
		}
		if a.lit && strings.HasPrefix(a.s, "--target-directory=") {
			targetDir = strings.TrimPrefix(a.s, "--target-directory=")
		}
		if a.lit && name == "install" && a.s == "-d" {
			return // makes directories
		}
	}
	ops := operands(rest, withValue)
	srcs, dst := ops, targetDir
	if dst == "" {
		if len(ops) < 2 {
			return
		}
		srcs, dst = ops[:len(ops)-1], ops[len(ops)-1]
	}
	isDir := targetDir != "" || len(srcs) > 1 || strings.HasSuffix(dst, "/") || dst == "." || dst == ".."
	for _, s := range srcs {
		if name != "ln" {
			w.add(Op{Kind: Read, Path: w.resolve(s)})
		}
		t := dst
		if isDir {
			t = path.Join(dst, path.Base(s))
		}
		w.add(Op{Kind: Write, Path: w.resolve(t)})
	}
}

func (w *walker) move(rest []arg) {
	targetDir := ""
	for i, a := range rest {
		if a.lit && (a.s == "-t" || a.s == "--target-directory") && i+1 < len(rest) && rest[i+1].lit {
			targetDir = rest[i+1].s
		}
	}
	ops := operands(rest, map[string]bool{"-t": true, "--target-directory": true, "-S": true, "--suffix": true})
	srcs, dst := ops, targetDir
	if dst == "" {
		if len(ops) < 2 {
			return
		}
		srcs, dst = ops[:len(ops)-1], ops[len(ops)-1]
	}
	isDir := targetDir != "" || len(srcs) > 1 || strings.HasSuffix(dst, "/") || dst == "." || dst == ".."
	for _, s := range srcs {
		t := dst
		if isDir {
			t = path.Join(dst, path.Base(s))
		}
		from, to := w.resolve(s), w.resolve(t)
		if from == "" || to == "" {
			continue
		}
		w.add(Op{Kind: Rename, Path: from, To: to})
	}
}

func (w *walker) git(rest []arg, stdin string) {
	// Skip global options: git -C dir, -c k=v, --no-pager ...
	dir := ""
	for len(rest) > 0 && rest[0].lit && strings.HasPrefix(rest[0].s, "-") {
		if (rest[0].s == "-C" || rest[0].s == "-c") && len(rest) > 1 {
			if rest[0].s == "-C" && rest[1].lit {
				dir = rest[1].s
			}
			rest = rest[2:]
			continue
		}
		rest = rest[1:]
	}
	if len(rest) == 0 || !rest[0].lit {
		return
	}
	if dir != "" {
		saved, unknown := w.dir, w.unknownDir
		w.cd([]arg{{dir, true}})
		defer func() { w.dir, w.unknownDir = saved, unknown }()
	}
	sub, args := rest[0].s, rest[1:]
	switch sub {
	case "checkout", "restore":
		w.gitRevert(sub, args)
	case "reset":
		for _, a := range args {
			if a.lit && a.s == "--hard" {
				w.add(Op{Kind: Revert, Path: w.resolve(".")})
			}
		}
	case "rm":
		cached := false
		for _, a := range args {
			if a.lit && a.s == "--cached" {
				cached = true
			}
		}
		if !cached {
			for _, p := range operands(args, nil) {
				w.add(Op{Kind: Delete, Path: w.resolve(p)})
			}
		}
	case "mv":
		w.move(args)
	case "apply", "am":
		for _, a := range args {
			if a.lit && (a.s == "--check" || a.s == "--stat" || a.s == "--numstat" || a.s == "--cached") {
				return
			}
		}
		if stdin != "" {
			w.ops = append(w.ops, w.patchOps(stdin, 0, false)...)
		}
	case "stash":
		if len(args) == 0 || args[0].lit && (args[0].s == "push" || args[0].s == "save") {
			w.add(Op{Kind: Revert, Path: w.resolve(".")})
		}
	case "show", "diff", "log", "blame", "cat-file":
		// Read-only; git show REV:path names a file but of another revision.
	}
}

func (w *walker) gitRevert(sub string, args []arg) {
	dashdash := -1
	staged, worktree := false, false
	for i, a := range args {
		if a.lit && a.s == "--" && dashdash < 0 {
			dashdash = i
		}
		if a.lit && (a.s == "--staged" || a.s == "-S") {
			staged = true
		}
		if a.lit && (a.s == "--worktree" || a.s == "-W") {
			worktree = true
		}
		if a.lit && sub == "checkout" && (a.s == "-b" || a.s == "-B") {
			return // a new branch
		}
	}
	var paths []string
	switch {
	case dashdash >= 0:
		paths = operands(args[dashdash+1:], nil)
	case sub == "restore":
		paths = operands(args, map[string]bool{"-s": true, "--source": true})
	default:
		// git checkout X: a branch or a path; a path when it looks like one.
		for _, p := range operands(args, nil) {
			if p == "." || strings.Contains(p, "/") || strings.Contains(path.Base(p), ".") && !strings.HasPrefix(p, "v") {
				paths = append(paths, p)
			}
		}
	}
	if sub == "restore" && staged && !worktree {
		return // only the index
	}
	for _, p := range paths {
		w.add(Op{Kind: Revert, Path: w.resolve(p)})
	}
}

func (w *walker) patch(rest []arg, stdin string) {
	strip, hasStrip := 0, false
	reverse := false
	var target string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !a.lit {
			continue
		}
		switch {
		case strings.HasPrefix(a.s, "-p") && len(a.s) > 2:
			fmt.Sscanf(a.s[2:], "%d", &strip)
			hasStrip = true
		case a.s == "-p" && i+1 < len(rest):
			fmt.Sscanf(rest[i+1].s, "%d", &strip)
			hasStrip = true
			i++
		case a.s == "-R" || a.s == "--reverse":
			reverse = true
		case a.s == "-i" || a.s == "--input" || a.s == "-o" || a.s == "-d" || a.s == "-B" || a.s == "-r":
			i++
		case a.s == "--dry-run":
			return
		case !strings.HasPrefix(a.s, "-") && target == "":
			target = a.s
		}
	}
	if target != "" {
		w.add(Op{Kind: Modify, Path: w.resolve(target)})
		return
	}
	if stdin != "" {
		// DiffFiles already drops git's a/ and b/: -p1 strips nothing more.
		extra := 0
		if hasStrip && strip > 1 {
			extra = strip - 1
		}
		ops := w.patchOps(stdin, extra, reverse)
		w.ops = append(w.ops, ops...)
	}
}

// patchOps resolves the files of a unified diff against the shell's
// directory.
func (w *walker) patchOps(diff string, strip int, reverse bool) []Op {
	var out []Op
	for _, f := range DiffFiles(diff) {
		p := stripPath(f.Path, strip)
		op := Op{Kind: f.Kind, Path: w.resolve(p)}
		if f.Kind == Rename {
			op.To = w.resolve(stripPath(f.To, strip))
		}
		if reverse {
			switch f.Kind {
			case Create:
				op.Kind = Delete
			case Delete:
				op.Kind = Create
			}
		}
		if op.Path != "" {
			out = append(out, op)
		}
	}
	return out
}

// stripPath drops n leading components.
func stripPath(p string, n int) string {
	for i := 0; i < n; i++ {
		j := strings.IndexByte(p, '/')
		if j < 0 {
			return p
		}
		p = p[j+1:]
	}
	return p
}

func (w *walker) interpreter(name string, rest []arg, stdin string) {
	lang := map[string]string{"python": "python", "python2": "python", "python3": "python", "node": "node", "nodejs": "node",
		"bash": "shell", "sh": "shell", "zsh": "shell", "ruby": "ruby", "deno": "node", "bun": "node", "tsx": "node", "ts-node": "node"}[name]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if !a.lit {
			return
		}
		switch {
		case a.s == "-c" || a.s == "-e" || a.s == "--eval" || a.s == "-p":
			if i+1 < len(rest) && rest[i+1].lit {
				w.add(Op{Kind: Run, Lang: lang, Content: rest[i+1].s})
			}
			return
		case a.s == "-m":
			return // a module: pytest, pip ...
		case a.s == "-" || a.s == "/dev/stdin":
			if stdin != "" {
				w.add(Op{Kind: Run, Lang: lang, Content: stdin})
			}
			return
		case strings.HasPrefix(a.s, "-"):
			if a.s == "-W" || a.s == "-X" || a.s == "-o" || a.s == "-r" || a.s == "--require" {
				i++
			}
			continue
		}
		w.add(Op{Kind: Run, Path: w.resolve(a.s), Lang: lang})
		return
	}
	if stdin != "" { // python3 <<EOF
		w.add(Op{Kind: Run, Lang: lang, Content: stdin})
	}
}

func langOf(p string) string {
	switch path.Ext(p) {
	case ".py":
		return "python"
	case ".js", ".mjs", ".cjs", ".ts":
		return "node"
	case ".rb":
		return "ruby"
	case ".pl":
		return "perl"
	}
	return "shell"
}
