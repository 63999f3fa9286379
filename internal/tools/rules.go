package tools

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/gencode/gencode/internal/shellfx"
)

// Rule is one "always for this project" answer (AllowProject): the calls
// of a project that run without asking from then on, across sessions.
// For Write and Edit it is the tool, inside the working directory. For
// Bash it is a command: its first two words, which then allow any
// arguments after them (`go test ./...` saves `go test …`), or, when
// the command is a single word or its second word is an option, that
// exact command (`ls -la` saves `ls -la`).
type Rule struct {
	Tool string
	// Command is a Bash rule's words; empty for other tools.
	Command []string
	// Exact: the command must be Command itself, with no more arguments.
	Exact bool
}

// String is the rule as the user reads it: "Write", or for Bash the
// command, shell-quoted, with "…" where any arguments may follow.
func (r Rule) String() string {
	if r.Tool != ToolBash {
		return r.Tool
	}
	words := make([]string, len(r.Command))
	for i, w := range r.Command {
		words[i] = shellQuote(w)
	}
	s := strings.Join(words, " ")
	if !r.Exact {
		s += " …"
	}
	return s
}

// Validate reports a rule that cannot have been saved by AllowProject: an
// unknown tool, a Bash rule without a command or another tool's with one.
func (r Rule) Validate() error {
	if !slices.Contains(Names(), r.Tool) {
		return fmt.Errorf("rule for %q: unknown tool (tools: %s)", r.Tool, strings.Join(Names(), ", "))
	}
	switch {
	case r.Tool == ToolBash && len(r.Command) == 0:
		return fmt.Errorf("rule for Bash: no command")
	case r.Tool == ToolBash && slices.Contains(r.Command, ""):
		return fmt.Errorf("rule for Bash %q: an empty word", r.String())
	case r.Tool != ToolBash && (len(r.Command) > 0 || r.Exact):
		return fmt.Errorf("rule for %s: only Bash rules have a command", r.Tool)
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
// redirections, expansions or substitutions) or whose command runs other
// commands it is given (a shell, sudo, env, xargs, find, eval ...).
func ProjectRule(r Request) (Rule, bool) {
	if r.OutsideWorkDir {
		return Rule{}, false
	}
	switch r.Tool {
	case ToolWrite, ToolEdit:
		return Rule{Tool: r.Tool}, true
	case ToolBash:
	default:
		return Rule{}, false
	}
	cmds, ok := shellfx.Commands(bashCommand(r.Args))
	if !ok || len(cmds) != 1 {
		return Rule{}, false
	}
	words := cmds[0]
	for _, w := range words {
		if strings.IndexFunc(w, unicode.IsControl) >= 0 {
			return Rule{}, false
		}
	}
	if runsOthers(words) {
		return Rule{}, false
	}
	if len(words) == 1 || strings.HasPrefix(words[1], "-") {
		return Rule{Tool: ToolBash, Command: words, Exact: true}, true
	}
	return Rule{Tool: ToolBash, Command: words[:2]}, true
}

// allowedBy reports whether rules allow r without asking. A Bash command
// is allowed only when every simple command of it (`a && b | c`) is
// allowed by a rule, and only when it is a plain command line (see
// shellfx.Commands): a redirection or a substitution anywhere asks.
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
		if !slices.ContainsFunc(rules, func(x Rule) bool { return x.allowsCommand(words) }) {
			return false
		}
	}
	return true
}

func (r Rule) allowsCommand(words []string) bool {
	if r.Tool != ToolBash || len(r.Command) == 0 {
		return false
	}
	if r.Exact {
		return slices.Equal(words, r.Command)
	}
	return len(words) >= len(r.Command) && slices.Equal(words[:len(r.Command)], r.Command)
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
