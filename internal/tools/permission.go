package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gencode/gencode/internal/sandbox"
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
				return fmt.Errorf("allow %q: %s", part, unknownTool(part))
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
	if IsExtName(name) {
		return name, true // an MCP tool (mcp__SERVER__TOOL) or server (mcp__SERVER)
	}
	for _, n := range Names() {
		if strings.EqualFold(n, name) {
			return n, true
		}
	}
	return "", false
}

// unknownTool says that name is none of the tools: the one it is a typo
// of, if any, then the list.
func unknownTool(name string) string {
	hint := ""
	if near, ok := termtext.Typo(name, Names()); ok {
		hint = fmt.Sprintf("did you mean %s? ", near)
	}
	return fmt.Sprintf("unknown tool (%stools: %s)", hint, strings.Join(Names(), ", "))
}

// Decision is the Asker's answer.
type Decision int

// Decisions. The zero value is Deny.
const (
	Deny         Decision = iota
	AllowOnce             // this call only
	AllowSession          // this call and, inside WorkDir, every later call of the tool
	AllowProject          // this call, and its Rule saved for the project (Request.Project)
)

// String returns "deny", "allow once", "allow for session" or "allow for
// project".
func (d Decision) String() string {
	switch d {
	case AllowOnce:
		return "allow once"
	case AllowSession:
		return "allow for session"
	case AllowProject:
		return "allow for project"
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
	OutsideWorkDir bool   // Path is outside the working directory, or treated so (Guard)
	Diff           string // Write/Edit: unified diff of the file, old -> new
	// Project is the rule an AllowProject answer saves, as the user reads
	// it (Rule.String); "" when the call may not be allowed for the
	// project (see ProjectRule) or there is nowhere to save it.
	Project string
	// Note is what else the user should know to decide: why [sandbox]
	// auto_allow, which is set, did not spare the question ("": nothing).
	Note string
	// Guard, when set, says why a Path inside the working directory is
	// treated as outside it (OutsideWorkDir is set too): a Write or Edit
	// into a git directory. The front end shows it.
	Guard string
}

// Choices are the answers the user may give to r. A write outside the
// working directory (or into a git directory, see Guard) is never granted
// for the session, so it offers no AllowSession; AllowProject is offered
// when r.Project names its rule.
func (r Request) Choices() []Decision {
	if r.OutsideWorkDir && (r.Tool == ToolWrite || r.Tool == ToolEdit) {
		return []Decision{AllowOnce, Deny}
	}
	if r.Project != "" {
		return []Decision{AllowOnce, AllowSession, AllowProject, Deny}
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

// SaveReporter is an Asker told whether the rule of an AllowProject
// answer was saved, so that it can tell the user: rule is the rule as the
// request showed it (Request.Project); err is nil when it was saved.
type SaveReporter interface {
	Saved(tool, rule string, err error)
}

// AskerFunc adapts a function to the Asker interface.
type AskerFunc func(ctx context.Context, r Request) (Decision, error)

// Ask calls f(ctx, r).
func (f AskerFunc) Ask(ctx context.Context, r Request) (Decision, error) { return f(ctx, r) }

// ProjectRules are the rules the user saved for the project with
// AllowProject: a project settings file, read on each check (another
// gencode may have changed it). An error from Rules (a broken file) means
// no rule applies and AllowProject is not offered.
type ProjectRules interface {
	Rules() ([]Rule, error)
	Add(r Rule) error
}

type grantKey struct {
	tool    string
	outside bool
}

// Lift says what would have allowed a denied call without asking, so
// that print mode names only the flags that help.
type Lift int

// Lifts. The zero value is LiftNone.
const (
	LiftNone  Lift = iota // nothing: refused whatever the permissions, or declined by the user
	LiftAllow             // allowing the tool (--allow TOOL), or Yolo
	LiftYolo              // only Yolo: outside the working directory, or into a git directory
)

// String returns "", "allow" or "yolo".
func (l Lift) String() string {
	switch l {
	case LiftAllow:
		return "allow"
	case LiftYolo:
		return "yolo"
	default:
		return ""
	}
}

// denial is a refused call: what the model is told, and what would have
// allowed it.
type denial struct {
	msg  string
	lift Lift
}

// output is the tool result for d, recording what the call was about.
func (d *denial) output(meta Meta) output {
	o := denied(d.msg, meta)
	o.lift = d.lift
	return o
}

func deny(lift Lift, format string, args ...any) *denial {
	return &denial{msg: fmt.Sprintf(format, args...), lift: lift}
}

// authorize applies the rules documented on Run. It returns nil when the
// call may proceed, else the denial.
func (s *Set) authorize(ctx context.Context, r Request) *denial {
	d, _ := s.authorizeAuto(ctx, r)
	return d
}

// authorizeAuto is authorize, also saying whether the call goes ahead only
// because the sandbox auto-allows it (a Bash call nothing else allowed
// and that would have asked): then it returns the limits that call runs
// within (no network unless the sandbox allows it, the project's git
// directories read-only); nil when the call was allowed by the user or
// the configuration. A call whose limits cannot be promised (see
// sandbox.AutoLimits) asks, saying why.
func (s *Set) authorizeAuto(ctx context.Context, r Request) (*denial, *sandbox.Limits) {
	if s.modeOf(r.Tool) == ModeDeny {
		return deny(LiftNone, "permission denied: %s is disabled by configuration", r.Tool), nil
	}
	if s.yolo || (byUser(ctx) && !r.OutsideWorkDir) {
		return nil, nil
	}
	key := grantKey{tool: r.Tool, outside: r.OutsideWorkDir}
	if !r.OutsideWorkDir && s.modeOf(r.Tool) == ModeAllow {
		return nil, nil
	}
	if r.Allows(AllowSession) && s.granted(key) {
		return nil, nil
	}
	if s.projectAllows(r) {
		return nil, nil
	}
	autoWhy := ""
	if r.Tool == ToolBash && !r.OutsideWorkDir {
		var ok bool
		if ok, autoWhy = s.sandbox.AutoAllow(); ok {
			lim, err := s.sandbox.AutoLimits()
			if err == nil {
				return nil, &lim
			}
			autoWhy = "auto_allow did not apply to this command: " + err.Error()
		}
	}
	if s.asker == nil {
		switch {
		case r.Guard != "":
			return deny(LiftYolo, "permission denied: %s %s is refused: %s, and print mode cannot ask; only --yolo allows it. Do not retry; tell the user what you meant to change there", r.Tool, r.Path, r.Guard), nil
		case !r.Allows(AllowSession): // a write outside
			return deny(LiftYolo, "permission denied: %s outside the working directory (%s) is refused; only --yolo allows it. Work inside %s", r.Tool, r.Path, s.workDir), nil
		case r.OutsideWorkDir:
			return deny(LiftYolo, "permission denied: %s outside the working directory (%s) needs approval; the user can rerun with --yolo", r.Tool, r.Path), nil
		case autoWhy != "":
			return deny(LiftAllow, "permission denied: %s needs approval (%s); the user can rerun with --allow %s or --yolo", r.Tool, autoWhy, r.Tool), nil
		default:
			return deny(LiftAllow, "permission denied: %s needs approval; the user can rerun with --allow %s or --yolo", r.Tool, r.Tool), nil
		}
	}
	rule, saveable := s.projectRule(r)
	if saveable {
		r.Project = rule.String()
	}
	r.Note = autoWhy
	// The front end shows these: no escape sequences from the model or files.
	r.Summary, r.Args, r.Path, r.Diff = s.redact(termtext.Sanitize(r.Summary)), s.redact(termtext.Sanitize(r.Args)), s.redact(termtext.Sanitize(r.Path)), s.redact(termtext.Sanitize(r.Diff))
	r.Project, r.Guard = s.redact(termtext.Sanitize(r.Project)), termtext.Sanitize(r.Guard)
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
		return deny(LiftNone, "permission denied: asking the user about %s failed: %v", r.Tool, err), nil
	}
	switch d {
	case AllowSession:
		if r.Allows(AllowSession) {
			s.grant(key)
		}
		return nil, nil
	case AllowProject:
		if saveable {
			// The user allowed the call: it runs even when the rule could
			// not be saved; the front end says so.
			err := s.project.Add(rule)
			if sr, ok := s.asker.(SaveReporter); ok {
				sr.Saved(r.Tool, r.Project, err)
			}
		}
		return nil, nil
	case AllowOnce:
		return nil, nil
	default:
		if reason = strings.TrimSpace(reason); reason != "" {
			return deny(LiftNone, "permission denied: the user declined this %s call and said why: %q. Do not retry it unchanged; take what they said into account", r.Tool, reason), nil
		}
		return deny(LiftNone, "permission denied: the user declined this %s call; do not retry it unchanged, ask the user how to proceed", r.Tool), nil
	}
}

// projectAllows reports whether a rule saved for the project allows r.
func (s *Set) projectAllows(r Request) bool {
	if s.project == nil || r.OutsideWorkDir {
		return false
	}
	rules, err := s.project.Rules()
	return err == nil && allowedBy(rules, r)
}

// projectRule is the rule AllowProject would save for r, and whether it
// can be offered: r is eligible, holds no secret and the project's rules
// can be read.
func (s *Set) projectRule(r Request) (Rule, bool) {
	if s.project == nil {
		return Rule{}, false
	}
	rule, ok := ProjectRule(r)
	if !ok || s.redact(rule.String()) != rule.String() {
		return Rule{}, false // a secret is never written to the rules file
	}
	if _, err := s.project.Rules(); err != nil {
		return Rule{}, false
	}
	return rule, true
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
