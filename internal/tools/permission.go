package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gencode/gencode/internal/termtext"
)

// Mode is what a tool may do without asking the user.
type Mode int

// Modes. The zero value is ModeAsk, the safe choice.
const (
	ModeAsk   Mode = iota // ask the Asker (denied when there is none)
	ModeAllow             // run without asking (inside WorkDir)
	ModeDeny              // never run; the tool is also left out of Definitions
)

// String returns "ask", "allow" or "deny".
func (m Mode) String() string {
	switch m {
	case ModeAllow:
		return "allow"
	case ModeDeny:
		return "deny"
	default:
		return "ask"
	}
}

// Permissions maps a tool name to its Mode.
type Permissions map[string]Mode

// DefaultPermissions returns the defaults of DESIGN.md: Read, Glob, Grep and
// LS are allowed (inside the working directory); Write, Edit and Bash ask.
func DefaultPermissions() Permissions {
	return Permissions{
		ToolRead:  ModeAllow,
		ToolWrite: ModeAsk,
		ToolEdit:  ModeAsk,
		ToolBash:  ModeAsk,
		ToolGlob:  ModeAllow,
		ToolGrep:  ModeAllow,
		ToolLS:    ModeAllow,
	}
}

// Allow sets the named tools to ModeAllow, as `--allow Write,Edit,Bash` does.
// Each name may itself be a comma-separated list; names are matched without
// regard to case. An unknown name is an error and changes nothing.
func (p Permissions) Allow(names ...string) error {
	var canon []string
	for _, n := range names {
		for _, part := range strings.Split(n, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			c, ok := canonicalName(part)
			if !ok {
				return fmt.Errorf("allow %q: unknown tool (tools: %s)", part, strings.Join(Names(), ", "))
			}
			canon = append(canon, c)
		}
	}
	for _, c := range canon {
		p[c] = ModeAllow
	}
	return nil
}

func canonicalName(name string) (string, bool) {
	for _, n := range Names() {
		if strings.EqualFold(n, name) {
			return n, true
		}
	}
	return "", false
}

// Decision is the Asker's answer.
type Decision int

// Decisions. The zero value is Deny.
const (
	Deny         Decision = iota
	AllowOnce             // this call only
	AllowSession          // this call and, inside WorkDir, every later call of the tool
)

// String returns "deny", "allow once" or "allow for session".
func (d Decision) String() string {
	switch d {
	case AllowOnce:
		return "allow once"
	case AllowSession:
		return "allow for session"
	default:
		return "deny"
	}
}

// Request describes a call that needs the user's approval.
type Request struct {
	Tool           string
	Summary        string // one line: the key argument (path, command, pattern)
	Args           string // the raw JSON arguments
	Path           string // the absolute path the call touches, symlinks resolved (Bash: the directory it runs in)
	OutsideWorkDir bool   // Path is outside the working directory
	Diff           string // Write/Edit: unified diff of the file, old -> new
}

// Choices are the answers the user may give to r. A write outside the
// working directory is never granted for the session, so it offers no
// AllowSession.
func (r Request) Choices() []Decision {
	if r.OutsideWorkDir && (r.Tool == ToolWrite || r.Tool == ToolEdit) {
		return []Decision{AllowOnce, Deny}
	}
	return []Decision{AllowOnce, AllowSession, Deny}
}

// Allows reports whether d is one of r's Choices.
func (r Request) Allows(d Decision) bool { return slices.Contains(r.Choices(), d) }

// Asker is answered by the front end (a dialog in the TUI). Ask blocks until
// the user decides or ctx ends; an error counts as Deny. When the agent runs
// tool calls in parallel, Ask may be called from several goroutines at once.
type Asker interface {
	Ask(ctx context.Context, r Request) (Decision, error)
}

// ReasonAsker is an Asker whose user may deny with a reason, which the
// model is told with the denial ("": none given).
type ReasonAsker interface {
	AskWhy(ctx context.Context, r Request) (Decision, string, error)
}

// AskerFunc adapts a function to the Asker interface.
type AskerFunc func(ctx context.Context, r Request) (Decision, error)

// Ask calls f(ctx, r).
func (f AskerFunc) Ask(ctx context.Context, r Request) (Decision, error) { return f(ctx, r) }

type grantKey struct {
	tool    string
	outside bool
}

// authorize applies the rules documented on Run. It returns "" when the call
// may proceed, else the denial message for the model.
func (s *Set) authorize(ctx context.Context, r Request) string {
	if s.perms[r.Tool] == ModeDeny {
		return fmt.Sprintf("permission denied: %s is disabled by configuration", r.Tool)
	}
	if s.yolo || (byUser(ctx) && !r.OutsideWorkDir) {
		return ""
	}
	key := grantKey{tool: r.Tool, outside: r.OutsideWorkDir}
	if !r.OutsideWorkDir && s.perms[r.Tool] == ModeAllow {
		return ""
	}
	if r.Allows(AllowSession) && s.granted(key) {
		return ""
	}
	if s.asker == nil {
		switch {
		case !r.Allows(AllowSession): // a write outside
			return fmt.Sprintf("permission denied: %s outside the working directory (%s) is refused; only --yolo allows it. Work inside %s", r.Tool, r.Path, s.workDir)
		case r.OutsideWorkDir:
			return fmt.Sprintf("permission denied: %s outside the working directory (%s) needs approval; the user can rerun with --yolo", r.Tool, r.Path)
		default:
			return fmt.Sprintf("permission denied: %s needs approval; the user can rerun with --allow %s or --yolo", r.Tool, r.Tool)
		}
	}
	// The front end shows these: no escape sequences from the model or files.
	r.Summary, r.Args, r.Path, r.Diff = s.redact(termtext.Sanitize(r.Summary)), s.redact(termtext.Sanitize(r.Args)), s.redact(termtext.Sanitize(r.Path)), s.redact(termtext.Sanitize(r.Diff))
	var (
		d      Decision
		reason string
		err    error
	)
	if ra, ok := s.asker.(ReasonAsker); ok {
		d, reason, err = ra.AskWhy(ctx, r)
	} else {
		d, err = s.asker.Ask(ctx, r)
	}
	if err != nil {
		return fmt.Sprintf("permission denied: asking the user about %s failed: %v", r.Tool, err)
	}
	switch d {
	case AllowSession:
		if r.Allows(AllowSession) {
			s.grant(key)
		}
		return ""
	case AllowOnce:
		return ""
	default:
		if reason = strings.TrimSpace(reason); reason != "" {
			return fmt.Sprintf("permission denied: the user declined this %s call and said why: %q. Do not retry it unchanged; take what they said into account", r.Tool, reason)
		}
		return fmt.Sprintf("permission denied: the user declined this %s call; do not retry it unchanged, ask the user how to proceed", r.Tool)
	}
}

func (s *Set) granted(k grantKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grants[k]
}

func (s *Set) grant(k grantKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grants[k] = true
}

func denied(msg string, meta Meta) output {
	return output{text: msg, isError: true, denied: true, meta: meta}
}
