// Package hooks runs the user's hook commands at points of a session
// (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PreCompact,
// PostCompact, Stop), the way Claude Code does: the event as JSON on stdin
// in Claude Code's field names, and its meaning read back from the exit
// code (2 blocks) and from a JSON answer on stdout ("decision": "block",
// hookSpecificOutput.permissionDecision "deny", additionalContext). Hooks
// come from gencode's config.toml and from Claude Code's settings files; a
// project's hooks (its .claude/settings.json, .gencode/hooks.toml) run only
// once the user approved them. It runs nothing itself: an Executor (the
// Bash tool's runner: its scrubbed environment, its sandbox) does.
package hooks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Event names a point of the session where hooks run, as Claude Code
// names it.
type Event string

// The events gencode runs hooks for.
const (
	SessionStart     Event = "SessionStart"
	UserPromptSubmit Event = "UserPromptSubmit"
	PreToolUse       Event = "PreToolUse"
	PostToolUse      Event = "PostToolUse"
	PreCompact       Event = "PreCompact"
	PostCompact      Event = "PostCompact"
	Stop             Event = "Stop"
)

// Events are every event, in the order a session meets them.
func Events() []Event {
	return []Event{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PreCompact, PostCompact, Stop}
}

// known reports whether e is an event gencode runs.
func known(e Event) bool {
	for _, k := range Events() {
		if k == e {
			return true
		}
	}
	return false
}

// DefaultTimeout is how long a hook may run before it is killed.
const DefaultTimeout = 60 * time.Second

// Hook is one hook command.
type Hook struct {
	Event   Event
	Matcher string
	Command string
	Timeout time.Duration
	// Source is the file it came from, as the user knows it.
	Source string
	// Project marks a hook from the repository: it runs only once the
	// user approved it (see ID).
	Project bool
}

// ID identifies a hook's content: an approval holds for this event,
// matcher and command, and a changed hook needs a new one.
func (h Hook) ID() string {
	sum := sha256.Sum256([]byte(string(h.Event) + "\x00" + h.Matcher + "\x00" + h.Command))
	return hex.EncodeToString(sum[:12])
}

// String is the hook as a line for the user.
func (h Hook) String() string {
	m := h.Matcher
	if m == "" {
		m = "*"
	}
	return fmt.Sprintf("%s [%s] %s (%s)", h.Event, m, oneLine(h.Command, 120), h.Source)
}

// matches reports whether the hook runs for target (the tool name, or
// the event's source or trigger): its matcher is a regular expression
// over the whole of it; empty or "*" matches everything.
func (h Hook) matches(target string) bool {
	if h.Matcher == "" || h.Matcher == "*" {
		return true
	}
	re, err := regexp.Compile("^(?:" + h.Matcher + ")$")
	if err != nil {
		return h.Matcher == target
	}
	return re.MatchString(target)
}

// Input is what a hook reads on stdin, in Claude Code's field names; the
// fields an event does not have are left out.
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  Event  `json:"hook_event_name"`
	// SessionStart: startup, resume, clear or compact.
	Source string `json:"source,omitempty"`
	// UserPromptSubmit.
	Prompt string `json:"prompt,omitempty"`
	// PreToolUse, PostToolUse.
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse any             `json:"tool_response,omitempty"`
	// PreCompact, PostCompact: manual or auto.
	Trigger            string `json:"trigger,omitempty"`
	CustomInstructions string `json:"custom_instructions,omitempty"`
	// PostCompact: the summary applied and the session's deterministic
	// facts (as gencode summarize --json prints them).
	Summary any `json:"summary,omitempty"`
	Facts   any `json:"facts,omitempty"`
	// Stop: a Stop hook already made the turn go on once.
	StopHookActive *bool `json:"stop_hook_active,omitempty"`
}

// Outcome is what running one hook command did.
type Outcome struct {
	Stdout, Stderr string
	ExitCode       int
	TimedOut       bool
	// Err: the command could not be started.
	Err error
}

// Executor runs a hook command with stdin, killed after timeout.
type Executor interface {
	RunHook(ctx context.Context, command string, stdin []byte, timeout time.Duration) Outcome
}

// Approvals says whether the user approved a project hook.
type Approvals interface {
	HookApproved(id string) bool
}

// Result is what the hooks of one event decided, together.
type Result struct {
	// Block: the call, prompt or stop is refused (exit code 2, "decision":
	// "block", permissionDecision "deny", "continue": false); Reason says
	// why, for the model (PreToolUse, PostToolUse, Stop) or the user
	// (UserPromptSubmit).
	Block  bool
	Reason string
	// Context is text for the model (additionalContext; the stdout of a
	// UserPromptSubmit or SessionStart hook).
	Context []string
	// Messages are for the user (systemMessage).
	Messages []string
	// Ran counts the hooks that ran.
	Ran int
}

// Options configure a Runner.
type Options struct {
	Hooks     []Hook
	Exec      Executor
	Approvals Approvals // nil: no project hook is approved
	// Report shows the user a hook's failure, or that project hooks are
	// waiting for approval: once per hook and kind of problem, never per
	// call.
	Report func(msg string)
	Cwd    string
	// Transcript returns the transcript_path of a session ("" if none).
	Transcript func(sessionID string) string
	// Logger gets a panic's stack (nil: discarded).
	Logger *slog.Logger
}

// Runner runs the hooks of a session. It is safe for concurrent use.
type Runner struct {
	o Options

	mu   sync.Mutex
	told map[string]bool // problems already reported
}

// New returns a Runner; a nil Runner runs nothing.
func New(o Options) *Runner {
	if o.Report == nil {
		o.Report = func(string) {}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{o: o, told: map[string]bool{}}
}

// Hooks are the hooks the Runner knows.
func (r *Runner) Hooks() []Hook {
	if r == nil {
		return nil
	}
	return r.o.Hooks
}

// Has reports whether any hook is configured for ev.
func (r *Runner) Has(ev Event) bool {
	if r == nil {
		return false
	}
	for _, h := range r.o.Hooks {
		if h.Event == ev {
			return true
		}
	}
	return false
}

// Unapproved are the project hooks not approved yet.
func (r *Runner) Unapproved() []Hook {
	if r == nil {
		return nil
	}
	var out []Hook
	for _, h := range r.o.Hooks {
		if h.Project && !r.approved(h) {
			out = append(out, h)
		}
	}
	return out
}

// TellUnapproved reports each project hook not approved yet (once: a
// later Run that skips it says nothing more).
func (r *Runner) TellUnapproved() {
	for _, h := range r.Unapproved() {
		r.tellUnapproved(h)
	}
}

func (r *Runner) tellUnapproved(h Hook) {
	r.tell("unapproved "+h.ID(), fmt.Sprintf("hooks: not running the project's hook %s until you approve it (/hooks approve, or gencode hooks --approve)", h))
}

func (r *Runner) approved(h Hook) bool {
	return !h.Project || (r.o.Approvals != nil && r.o.Approvals.HookApproved(h.ID()))
}

// tell reports msg once under key.
func (r *Runner) tell(key, msg string) {
	r.mu.Lock()
	seen := r.told[key]
	r.told[key] = true
	r.mu.Unlock()
	if !seen {
		r.o.Report(msg)
	}
}

// Run runs the hooks of ev whose matcher matches target, all at once,
// and returns what they decided. A hook that fails (cannot start, exits
// with a code other than 0 and 2, runs past its timeout and is killed)
// decides nothing: the session goes on, and the failure is reported once.
// An unapproved project hook is not run, and that is said once.
func (r *Runner) Run(ctx context.Context, ev Event, target string, in Input) Result {
	if r == nil || r.o.Exec == nil {
		return Result{}
	}
	var run []Hook
	for _, h := range r.o.Hooks {
		if h.Event != ev || !h.matches(target) {
			continue
		}
		if !r.approved(h) {
			r.tellUnapproved(h)
			continue
		}
		run = append(run, h)
	}
	if len(run) == 0 {
		return Result{}
	}
	in.HookEventName = ev
	if in.Cwd == "" {
		in.Cwd = r.o.Cwd
	}
	if in.TranscriptPath == "" && r.o.Transcript != nil && in.SessionID != "" {
		in.TranscriptPath = r.o.Transcript(in.SessionID)
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		r.tell("input "+string(ev), fmt.Sprintf("hooks: cannot encode the %s input: %v", ev, err))
		return Result{}
	}
	results := make([]Result, len(run))
	var wg sync.WaitGroup
	for i, h := range run {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					r.o.Logger.Error("hooks: panic", "hook", h.String(), "session", in.SessionID, "panic", p, "stack", string(debug.Stack()))
					r.tell("panic "+h.ID(), fmt.Sprintf("hooks: %s: internal error: %v", h, p))
				}
			}()
			results[i] = r.one(ctx, h, stdin)
		}()
	}
	wg.Wait()
	var out Result
	var reasons []string
	for _, res := range results {
		out.Ran += res.Ran
		out.Context = append(out.Context, res.Context...)
		out.Messages = append(out.Messages, res.Messages...)
		if res.Block {
			out.Block = true
			if res.Reason != "" {
				reasons = append(reasons, res.Reason)
			}
		}
	}
	out.Reason = strings.Join(reasons, "\n")
	return out
}

// one runs one hook and reads its answer.
func (r *Runner) one(ctx context.Context, h Hook, stdin []byte) Result {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	o := r.o.Exec.RunHook(ctx, h.Command, stdin, timeout)
	res := Result{Ran: 1}
	switch {
	case o.Err != nil:
		r.tell("fail "+h.ID(), fmt.Sprintf("hooks: %s cannot run: %v", h, o.Err))
		return res
	case o.TimedOut:
		r.tell("timeout "+h.ID(), fmt.Sprintf("hooks: %s ran past its %s timeout and was killed; going on without it", h, timeout))
		return res
	case ctx.Err() != nil:
		return res
	case o.ExitCode == 2:
		res.Block = true
		res.Reason = strings.TrimSpace(o.Stderr)
		if res.Reason == "" {
			res.Reason = "blocked by a " + string(h.Event) + " hook"
		}
		return res
	case o.ExitCode != 0:
		msg := fmt.Sprintf("hooks: %s failed with exit code %d", h, o.ExitCode)
		if e := oneLine(o.Stderr, 300); e != "" {
			msg += ": " + e
		}
		r.tell("fail "+h.ID(), msg)
		return res
	}
	out := strings.TrimSpace(o.Stdout)
	if strings.HasPrefix(out, "{") {
		if ans, ok := parseAnswer(out); ok {
			return ans.result(h.Event)
		}
	}
	// Plain stdout is context for the events whose output the model
	// reads in Claude Code; elsewhere it is for the log.
	if out != "" && (h.Event == UserPromptSubmit || h.Event == SessionStart) {
		res.Context = append(res.Context, out)
	}
	return res
}

// answer is a hook's JSON answer on stdout, in Claude Code's fields.
type answer struct {
	Continue      *bool  `json:"continue"`
	StopReason    string `json:"stopReason"`
	SystemMessage string `json:"systemMessage"`
	Decision      string `json:"decision"`
	Reason        string `json:"reason"`
	Specific      struct {
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		AdditionalContext        string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func parseAnswer(s string) (answer, bool) {
	var a answer
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return answer{}, false
	}
	return a, true
}

// result is what an answer decides. "allow" and "ask" permission
// decisions change nothing: gencode's own permissions still apply.
func (a answer) result(ev Event) Result {
	res := Result{Ran: 1}
	if a.SystemMessage != "" {
		res.Messages = append(res.Messages, a.SystemMessage)
	}
	if c := a.Specific.AdditionalContext; c != "" {
		res.Context = append(res.Context, c)
	}
	switch {
	case a.Continue != nil && !*a.Continue:
		res.Block, res.Reason = true, a.StopReason
	case a.Specific.PermissionDecision == "deny":
		res.Block, res.Reason = true, a.Specific.PermissionDecisionReason
	case a.Decision == "block":
		res.Block, res.Reason = true, a.Reason
	}
	if res.Block && res.Reason == "" {
		res.Reason = "blocked by a " + string(ev) + " hook"
	}
	return res
}

// oneLine is s on one line, at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}
