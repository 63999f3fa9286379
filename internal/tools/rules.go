package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/gencode/gencode/internal/shellfx"
)

// Rule is one "always for this project" answer (AllowProject): the calls
// of a project that run without asking from then on, across sessions.
// For Write and Edit it is the tool, inside the working directory. For
// Bash it is a command, saved exactly by default: `rm tmp.txt` allows
// `rm tmp.txt` and nothing else. A rule is widened (Exact false) only for
// the commands that read or test and cannot be made to write or run
// something else by a plain argument (see widenPrefix: cat, grep, ls,
// go test, git log ...): it then allows that command followed by
// arguments that are neither options nor paths leading out of the
// project (`cat README.md` saves `cat` + paths inside the project; it
// never allows `cat ../outside/secret` or `cat -v x`). A command with an
// argument naming a path outside the project is never saved, exactly or
// not: it asks every time.
type Rule struct {
	Tool string
	// Command is a Bash rule's words; empty for other tools. For a
	// widened rule it is the command's prefix (widenPrefix).
	Command []string
	// Exact: the command must be Command itself, with no more arguments.
	Exact bool
}

// String is the rule as the user reads it: "Write", or for Bash the
// command, shell-quoted, and what it allows: "rm tmp.txt (exactly this
// command)" or "go test [+ paths inside the project; no options]".
func (r Rule) String() string {
	if r.Tool != ToolBash {
		return r.Tool
	}
	s := strings.Join(quoteAll(r.Command), " ")
	if r.Exact {
		return s + " (exactly this command)"
	}
	return s + " [+ paths inside the project; no options]"
}

// Validate reports a rule that AllowProject would not save for the
// project in dir (the working directory, absolute): an unknown tool, a
// Bash rule without a command or another tool's with one, a command that
// runs others (a shell, env, sudo ...), an argument that names a path
// outside the project, or a widened rule for a command that is only ever
// saved exactly. ProjectRule checks what it saves with it, and the rules
// file is checked with it when it is read, so a hand-edited rule gets no
// more than the dialog would save.
func (r Rule) Validate(dir string) error {
	if IsExtName(r.Tool) && len(r.Command) == 0 && !r.Exact {
		return nil // an MCP tool, allowed whatever its arguments
	}
	if !slices.Contains(Names(), r.Tool) {
		return fmt.Errorf("rule for %q: %s", r.Tool, unknownTool(r.Tool))
	}
	switch {
	case r.Tool == ToolBash && len(r.Command) == 0:
		return errors.New("rule for Bash: no command")
	case r.Tool != ToolBash && (len(r.Command) > 0 || r.Exact):
		return fmt.Errorf("rule for %s: only Bash rules have a command", r.Tool)
	case r.Tool != ToolBash:
		return nil
	}
	quoted := strings.Join(quoteAll(r.Command), " ")
	for _, w := range r.Command {
		switch {
		case w == "":
			return fmt.Errorf("rule for Bash %q: an empty word", quoted)
		case strings.IndexFunc(w, unicode.IsControl) >= 0:
			return fmt.Errorf("rule for Bash %q: a control character", quoted)
		}
	}
	if runsOthers(r.Command) {
		return fmt.Errorf("rule for Bash %q: %s runs the commands or code it is given, so a rule for it would allow anything", quoted, r.Command[0])
	}
	for _, w := range r.Command[1:] {
		if pathOutside(dir, w) {
			return fmt.Errorf("rule for Bash %q: %q is a path outside the project", quoted, w)
		}
	}
	if !r.Exact && widenPrefix(r.Command) != len(r.Command) {
		return fmt.Errorf("rule for Bash %q: allows more arguments, but gencode saves this command only exactly (add exact = true, or remove the rule)", quoted)
	}
	return nil
}

// Equal reports whether r and o allow the same calls.
func (r Rule) Equal(o Rule) bool {
	return r.Tool == o.Tool && r.Exact == o.Exact && slices.Equal(r.Command, o.Command)
}

// ProjectRule is the rule AllowProject saves for r, and false when r may
// not be allowed for the project: a call outside the working directory,
// a tool other than Write, Edit and Bash, or a Bash command that is not
// one plain command (see shellfx.Commands: no lists, pipes,
// redirections, expansions or substitutions), whose command runs other
// commands it is given (a shell, sudo, env, xargs, find, eval ...), or
// that names a path outside the project. A Bash command is saved exactly,
// unless it is a widenable command (widenPrefix) and every argument after
// its prefix already is a confined argument (confinedArg): then the rule
// is the prefix, widened. r.Path is the directory Bash runs in.
func ProjectRule(r Request) (Rule, bool) {
	if r.OutsideWorkDir {
		return Rule{}, false
	}
	if IsExtName(r.Tool) {
		return Rule{Tool: r.Tool}, true
	}
	switch r.Tool {
	case ToolWrite, ToolEdit:
		return Rule{Tool: r.Tool}, true
	case ToolBash:
	default:
		return Rule{}, false
	}
	cmds, ok := shellfx.Commands(bashCommand(r.Args))
	if !ok || len(cmds) != 1 || len(cmds[0]) == 0 {
		return Rule{}, false
	}
	words := cmds[0]
	rule := Rule{Tool: ToolBash, Command: words, Exact: true}
	if n := widenPrefix(words); n > 0 && !slices.ContainsFunc(words[n:], func(w string) bool { return !confinedArg(r.Path, w) }) {
		rule = Rule{Tool: ToolBash, Command: words[:n:n]}
	}
	if rule.Validate(r.Path) != nil {
		return Rule{}, false
	}
	return rule, true
}

// allowedBy reports whether rules allow r without asking. A Bash command
// is allowed only when every simple command of it (`a && b | c`) is
// allowed by a rule, and only when it is a plain command line (see
// shellfx.Commands): a redirection or a substitution anywhere asks.
// r.Path is the directory Bash runs in: a rule's arguments and a widened
// rule's added arguments must stay inside it.
func allowedBy(rules []Rule, r Request) bool {
	if r.OutsideWorkDir || len(rules) == 0 {
		return false
	}
	if r.Tool != ToolBash {
		return slices.ContainsFunc(rules, func(x Rule) bool { return x.Tool == r.Tool && len(x.Command) == 0 })
	}
	cmds, ok := shellfx.Commands(bashCommand(r.Args))
	if !ok {
		return false
	}
	for _, words := range cmds {
		if !slices.ContainsFunc(rules, func(x Rule) bool { return x.allowsCommand(r.Path, words) }) {
			return false
		}
	}
	return true
}

// allowsCommand reports whether r allows the simple command words, run
// in dir. A rule that Validate refuses allows nothing, whoever wrote it.
func (r Rule) allowsCommand(dir string, words []string) bool {
	if r.Tool != ToolBash || len(r.Command) == 0 || len(words) < len(r.Command) {
		return false
	}
	if !slices.Equal(words[:len(r.Command)], r.Command) || r.Validate(dir) != nil {
		return false
	}
	if r.Exact {
		return len(words) == len(r.Command)
	}
	for _, w := range words[len(r.Command):] {
		if !confinedArg(dir, w) {
			return false
		}
	}
	return true
}

// widenPrefix is how many leading words of a command make the prefix of
// a widened rule: 1 for a command that only reads (cat, grep, ls ...), 2
// for a subcommand that only reads or tests (go test, git log ...); 0
// for every other command, which is saved exactly. A command is here only
// when a plain argument (not an option, no path out of the project)
// cannot make it write, delete, or run code other than the project's own
// tests: rm, mv, cp, dd, tee, chmod, chown, ln, sed, awk, make, npm run,
// git checkout, reset, clean, push, rebase ... are never widened. A
// command named by a path (./x, /bin/cat) is never widened either.
func widenPrefix(words []string) int {
	if len(words) == 0 {
		return 0
	}
	switch words[0] {
	case "cat", "head", "tail", "wc", "ls", "stat", "file", "du", "tree", "nl", "sort",
		"grep", "egrep", "fgrep", "rg", "diff", "cmp", "cksum", "md5sum", "sha1sum", "sha256sum", "sha512sum",
		"pytest":
		return 1
	}
	if len(words) < 2 {
		return 0
	}
	switch words[0] + " " + words[1] {
	case "go test", "go vet", "go list", "go doc",
		"git status", "git log", "git diff", "git show", "git blame", "git ls-files", "git grep", "git shortlog",
		"cargo test", "cargo check", "cargo clippy":
		return 2
	}
	return 0
}

// confinedArg reports whether w may follow a widened rule's prefix: not
// an option (- or +), and, read as a path relative to dir (symlinks
// followed), inside dir. A plain word that is no file (a test name, a
// branch) reads as a path inside dir, so it is allowed too.
func confinedArg(dir, w string) bool {
	if w == "" || w[0] == '-' || w[0] == '+' || strings.IndexFunc(w, unicode.IsControl) >= 0 {
		return false
	}
	return !pathOutside(dir, w)
}

// pathOutside reports whether the argument w names, or may name, a path
// outside dir (absolute; a relative dir is treated as outside). Every
// reading of w a command might make is checked: w itself, the value
// after an = (--file=/etc/x) or a : (HEAD:../x, host:/etc; a URL other
// than file: is not a path), and the value of a short option (-I/usr).
// Each must not start with ~, and must resolve (relative to dir, symlinks
// followed) to dir or below it.
func pathOutside(dir, w string) bool {
	if dir == "" || !filepath.IsAbs(dir) {
		return true
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	cands := []string{w}
	if len(w) > 2 && w[0] == '-' && w[1] != '-' {
		cands = append(cands, w[2:])
	}
	for i := 0; i < len(w); i++ {
		if w[i] != '=' && w[i] != ':' {
			continue
		}
		if w[i] == ':' && isURL(w[:i], w[i+1:]) {
			continue
		}
		cands = append(cands, w[i+1:])
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if c[0] == '~' {
			return true
		}
		p := c
		if !filepath.IsAbs(p) {
			p = dir + string(filepath.Separator) + p
		}
		real, err := evalSymlinksPrefix(p)
		if err != nil || !within(dir, real) {
			return true
		}
	}
	return false
}

// isURL reports whether scheme ":" rest is a URL that is not a file: a
// scheme of letters, digits, + . - and rest starting with //.
func isURL(scheme, rest string) bool {
	if !strings.HasPrefix(rest, "//") || scheme == "" || strings.EqualFold(scheme, "file") {
		return false
	}
	for i, c := range scheme {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-')) {
			return false
		}
	}
	return true
}

// quoteAll shell-quotes each word for display.
func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuote(w)
	}
	return out
}

// bashCommand is the command of a Bash call's arguments.
func bashCommand(args string) string {
	var a struct {
		Command string `json:"command"`
	}
	if json.Unmarshal([]byte(args), &a) != nil {
		return ""
	}
	return a.Command
}

// runsOthers reports whether a command runs other commands or code it is
// given in its arguments, or changes how later commands run, so that a
// rule for it would allow anything: shells, wrappers (sudo, env, xargs,
// timeout ...), find and fd (-exec), eval and other builtins, and
// runners of arbitrary packages (uv run, npm exec, go run ...).
func runsOthers(words []string) bool {
	name := words[0]
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	switch name {
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox",
		"eval", "exec", "source", ".", "command", "builtin", "enable", "trap", "alias", "unalias",
		"export", "declare", "typeset", "local", "readonly", "set", "unset", "shopt", "hash", "cd", "pushd", "popd",
		"env", "sudo", "doas", "su", "pkexec", "runuser", "xargs", "nohup", "timeout", "time", "nice",
		"ionice", "chrt", "taskset", "setsid", "stdbuf", "unbuffer", "watch", "strace", "ltrace", "gdb",
		"chroot", "flock", "script", "nsenter", "unshare", "firejail", "parallel", "ssh", "find", "fd",
		"npx", "uvx", "pipx", "bunx":
		return true
	}
	if len(words) < 2 {
		return false
	}
	switch name + " " + words[1] {
	case "uv run", "uv tool", "poetry run", "pipenv run", "conda run", "pixi run", "npm exec", "pnpm exec",
		"pnpm dlx", "yarn exec", "yarn dlx", "bun x", "bundle exec", "go run", "nix run", "nix shell",
		"docker run", "docker exec", "podman run", "podman exec", "kubectl exec", "git submodule":
		return true
	}
	return false
}

// shellQuote quotes a word for display when it is not plain.
func shellQuote(w string) string {
	if w != "" && strings.IndexFunc(w, func(c rune) bool {
		return !(unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("-_./:=+,@%^", c))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
