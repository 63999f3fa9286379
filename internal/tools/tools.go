// Package tools implements the agent's tools (Read, Write, Edit, Bash, Glob,
// Grep, LS): the JSON schemas the model sees, argument validation, the
// permission check and the actions themselves.
//
// A Set is the registry the agent loop talks to: Definitions lists the
// schemas to send with each request, and Run executes one tool call. A tool's
// failure (bad arguments, missing file, non-zero exit, permission denied) is
// an ordinary Result with IsError set, to be sent back to the model; Run never
// returns a Go error and never panics on model input.
//
// Every Result's text is sanitized (no terminal escape sequences or control
// characters, valid UTF-8) and capped at Options.OutputCapTokens: Content
// keeps the head and the tail, Full keeps everything for the session log
// (for Bash, at most the first and the last MiB of its output).
//
// Paths are confined to the working directory; see [Options] and [Set.Run]
// for the permission rules. Files are reached only through an os.Root, so
// a symlink swapped in after the permission check cannot lead a call out
// of the directory it was allowed in.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/gencode/gencode/internal/fschange"
	"github.com/gencode/gencode/internal/sandbox"
	"github.com/gencode/gencode/internal/termtext"
)

// Tool names, exactly as the model sees them.
const (
	ToolRead  = "Read"
	ToolWrite = "Write"
	ToolEdit  = "Edit"
	ToolBash  = "Bash"
	ToolGlob  = "Glob"
	ToolGrep  = "Grep"
	ToolLS    = "LS"
)

// Names lists the tool names in the order Definitions returns them.
func Names() []string {
	return []string{ToolRead, ToolWrite, ToolEdit, ToolBash, ToolGlob, ToolGrep, ToolLS}
}

// DefaultOutputCapTokens is the default size limit of a Result's Content.
const DefaultOutputCapTokens = 8000

// Definition is a tool as the model sees it.
type Definition struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON schema of the arguments object
}

// Call is one tool call requested by the model.
type Call struct {
	ID        string
	Name      string
	Arguments string // raw JSON object from the model
	// Progress, when set, is told what a running Bash call has printed so
	// far (see Progress), from another goroutine, at most every
	// ProgressInterval; never after Run returns. It must not block: it
	// returns false when it could not take an update, and a newer one is
	// offered at the next tick. The Result is the same with or without it.
	Progress func(Progress) bool
}

// Result is the outcome of a Call.
type Result struct {
	Content  string // what goes back to the model: sanitized and capped
	Full     string // the whole sanitized output when Content was capped; "" otherwise
	IsError  bool   // the tool failed: bad arguments, not found, non-zero exit, denied ...
	Denied   bool   // permission was refused (IsError is set too)
	Lift     Lift   // Denied: what would have allowed the call without asking
	ExitCode *int   // Bash only: the shell's exit status (128+N when killed by signal N)
	Meta     Meta
}

// Meta describes a call for the summarizer (files touched, commands run).
type Meta struct {
	Tool     string
	FilePath string // Read, Write, Edit: the file, relative to WorkDir when inside it
	Command  string // Bash
	Pattern  string // Glob, Grep
	Success  bool   // !IsError
	// Changes is what a Bash command did to the files under WorkDir.
	Changes *FileChanges
	// Diff is the change a Write or Edit made, as the approval dialog
	// shows it (a unified diff, capped): for the transcript, not the model.
	Diff string
	// Checkpoint is WorkDir's kept state around a call that may change
	// files (nil: none kept).
	Checkpoint *Checkpoint
}

// Options configure a Set.
type Options struct {
	// WorkDir is the session's working directory (absolute). Relative paths
	// are resolved against it, Bash runs in it, and it bounds what the tools
	// may touch without asking.
	WorkDir string

	// Permissions holds the per-tool mode; tools it does not list get
	// DefaultPermissions. For print mode, grant --allow with Permissions.Allow.
	Permissions Permissions

	// Asker answers "ask" decisions. nil means nobody can be asked (print
	// mode): such calls are denied and the model is told which flag allows them.
	Asker Asker

	// Project holds the rules saved for the project (AllowProject
	// answers); they allow calls inside WorkDir in print mode too. nil:
	// none, and AllowProject is not offered.
	Project ProjectRules

	// Yolo allows every call without asking, outside WorkDir too; only tools
	// set to ModeDeny in Permissions stay denied.
	Yolo bool

	// OutputCapTokens caps Content (default DefaultOutputCapTokens).
	OutputCapTokens int

	// CountTokens measures text against OutputCapTokens; nil means
	// len(text)/4. It may be called on large outputs, so it should be fast.
	CountTokens func(string) int

	// Env is the environment of Bash commands; nil means os.Environ().
	// Provider API keys and GENCODE_* variables are removed from it.
	Env []string

	// Private are gencode's own config, data and state directories (and
	// a config file named with --config). They are outside every project,
	// also when they lie beneath WorkDir (a working directory of $HOME, a
	// dotfiles repository): Write and Edit into them are refused whatever
	// the permissions (a rule or a config written there would grant the
	// model more than the user did), Read of them asks as outside the
	// working directory does, and Grep's walks skip them.
	Private []string

	// Secrets are values replaced by [REDACTED:api-key] wherever they
	// appear in a result, before it is stored or sent: the configured API
	// key. Values shorter than 8 bytes are ignored.
	Secrets []string

	// Sandbox confines every Bash command (the model's and the user's
	// "!command"): nil or inactive, commands run unconfined. With its
	// auto-allow on, a Bash call that would ask runs without asking, and
	// without the network unless the sandbox allows it.
	Sandbox *sandbox.Sandbox

	// Extension adds the user's MCP servers' tools (nil: none); see
	// Extension and LateDefinitions.
	Extension Extension

	// Checkpoints, when set, keeps WorkDir's state before and after each
	// call that may change files, for a rewind (Meta.Checkpoint).
	Checkpoints Checkpointer
}

// Set is the tool registry of one session. It is safe for concurrent use.
type Set struct {
	workDir   string   // absolute, cleaned, symlinks resolved
	root      *os.Root // workDir, opened at New; nil if that failed (then opened per call)
	perms     Permissions
	asker     Asker
	project   ProjectRules
	yolo      bool
	capTokens int
	count     func(string) int
	env       []string
	secrets   []string
	privDirs  []string // Options.Private: absolute, clean, symlinks resolved
	sandbox   *sandbox.Sandbox
	ext       Extension

	checkpoints Checkpointer // Options.Checkpoints
	maxRecorded int          // maxRecordedPaths; a test lowers it

	mu      sync.Mutex
	extDefs map[string]ExtDefinition // extension tools called so far, by name
	grants  map[grantKey]bool        // AllowSession answers
	obs     *fschange.Observer       // Bash's view of WorkDir's changes; see observer
}

// New returns a Set for opts. A relative WorkDir is made absolute against
// the process's current directory.
func New(opts Options) *Set {
	wd := opts.WorkDir
	if abs, err := filepath.Abs(wd); err == nil {
		wd = abs
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	s := &Set{
		workDir:   filepath.Clean(wd),
		perms:     DefaultPermissions(),
		asker:     opts.Asker,
		project:   opts.Project,
		yolo:      opts.Yolo,
		capTokens: opts.OutputCapTokens,
		count:     opts.CountTokens,
		env:       opts.Env,
		sandbox:   opts.Sandbox,
		ext:       opts.Extension,
		extDefs:   map[string]ExtDefinition{},
		grants:    map[grantKey]bool{},
	}
	// Held for the Set's life (the finalizer closes it): the directory
	// stays the one resolved here even if its name is later taken over.
	s.root, _ = os.OpenRoot(s.workDir)
	s.checkpoints, s.maxRecorded = opts.Checkpoints, maxRecordedPaths
	for name, m := range opts.Permissions {
		s.perms[name] = m
	}
	if s.capTokens <= 0 {
		s.capTokens = DefaultOutputCapTokens
	}
	if s.count == nil {
		s.count = func(t string) int { return len(t) / 4 }
	}
	if s.env == nil {
		s.env = os.Environ()
	}
	for _, p := range opts.Private {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if real, err := evalSymlinksPrefix(filepath.Clean(p)); err == nil {
			p = real
		}
		s.privDirs = append(s.privDirs, filepath.Clean(p))
	}
	for _, v := range opts.Secrets {
		if len(v) >= minSecretLen {
			s.secrets = append(s.secrets, v)
		}
	}
	return s
}

// WorkDir returns the working directory the Set resolved at New.
func (s *Set) WorkDir() string { return s.workDir }

// Definitions returns the schemas of the tools the model may call, in a
// stable order: Read, Write, Edit, Bash, Glob, Grep, LS. Tools set to
// ModeDeny are left out. Under a sandbox, Bash's description says what it
// confines, so the model does not try what would be refused.
func (s *Set) Definitions() []Definition {
	var defs []Definition
	for _, t := range allTools() {
		if s.perms[t.def.Name] == ModeDeny {
			continue
		}
		if t.def.Name == ToolBash && s.sandbox.Active() {
			t.def.Description += bashSandboxNote // the same all session: the prompt's prefix stays put
			if auto, _ := s.sandbox.AutoAllow(); auto && !s.yolo && s.perms[ToolBash] != ModeAllow {
				t.def.Description += bashAutoNote
			}
		}
		defs = append(defs, t.def)
	}
	return defs
}

// output is what a tool's action returns before sanitizing and capping.
type output struct {
	text     string
	isError  bool
	denied   bool
	lift     Lift // for a denial: what would have allowed it
	exitCode *int
	meta     Meta
	// elided counts what the tool already dropped from the middle of text
	// (Bash keeps a bounded head and tail), so that a cap marker can say the
	// true amount.
	elidedLines, elidedBytes int64
}

func failf(format string, args ...any) output {
	return output{text: fmt.Sprintf(format, args...), isError: true}
}

// failf is a failure that still records what the call was about (the
// summarizer lists failed edits and searches too).
func (m Meta) failf(format string, args ...any) output { return failf(format, args...).withMeta(m) }

// withMeta returns o recording what its call was about.
func (o output) withMeta(m Meta) output {
	o.meta = m
	return o
}

// tool is one entry of the registry.
type tool struct {
	def Definition
	run func(ctx context.Context, s *Set, args json.RawMessage) output
	// live, when set, runs the tool instead of run, reporting its
	// progress (Call.Progress, nil when nobody listens).
	live func(ctx context.Context, s *Set, args json.RawMessage, progress func(Progress) bool) output
}

// allTools lists the tools in Definitions order.
func allTools() []tool {
	return []tool{
		{def: Definition{ToolRead, readDescription, json.RawMessage(readSchema)}, run: runRead},
		{def: Definition{ToolWrite, writeDescription, json.RawMessage(writeSchema)}, run: runWrite},
		{def: Definition{ToolEdit, editDescription, json.RawMessage(editSchema)}, run: runEdit},
		{def: Definition{ToolBash, bashDescription, json.RawMessage(bashSchema)}, live: runBash},
		{def: Definition{ToolGlob, globDescription, json.RawMessage(globSchema)}, run: runGlob},
		{def: Definition{ToolGrep, grepDescription, json.RawMessage(grepSchema)}, run: runGrep},
		{def: Definition{ToolLS, lsDescription, json.RawMessage(lsSchema)}, run: runLS},
	}
}

func lookup(name string) (tool, bool) {
	all := allTools()
	i := slices.IndexFunc(all, func(t tool) bool { return t.def.Name == name })
	if i < 0 {
		return tool{}, false
	}
	return all[i], true
}

// Run executes c and returns its result. It never returns a Go error: every
// failure, including a denied permission or a canceled ctx, is a Result
// with IsError set, whose Content tells the model what went wrong.
//
// Permission rules, checked after the arguments are valid:
//   - a tool set to ModeDeny is refused;
//   - Write and Edit into Options.Private are refused, Yolo included;
//   - with Yolo everything else runs without asking;
//   - Read, Glob, Grep, LS on a path outside WorkDir ask, even when the tool
//     is allowed; an AllowSession answer allows that tool outside WorkDir for
//     the rest of the session;
//   - Write and Edit outside WorkDir, or into a git directory inside it
//     (its config and hooks run code; see gitDirOf), always ask, whatever
//     the tool's mode, earlier answers or the project's rules;
//     AllowSession counts as AllowOnce there. With no Asker (print mode)
//     they are refused unless Yolo;
//   - otherwise ModeAllow runs, and ModeAsk asks unless the tool was allowed
//     for the session or a rule saved for the project allows the call (see
//     Rule; print mode honours these rules too);
//   - with no Asker, asking means denied, with a hint naming --allow or
//     --yolo where they would allow it (Result.Lift says which).
func (s *Set) Run(ctx context.Context, c Call) Result {
	t, ok := lookup(c.Name)
	var out output
	switch {
	case !ok && s.ext != nil && ctx.Err() == nil:
		args := strings.TrimSpace(c.Arguments)
		if args == "" {
			args = "{}"
		}
		if c.Name == ToolCallMcp {
			out, name := s.runProxy(ctx, args)
			return s.finish(name, out)
		}
		if d, found := s.ext.Lookup(ctx, c.Name); found {
			out = s.runExt(ctx, d, args)
		} else {
			out = failf("unknown tool %q; available tools: %s, and the MCP servers' (see /mcp)", c.Name, strings.Join(Names(), ", "))
		}
	case !ok:
		out = failf("unknown tool %q; available tools: %s", c.Name, strings.Join(Names(), ", "))
	case s.perms[c.Name] == ModeDeny:
		out = output{text: fmt.Sprintf("permission denied: %s is disabled by configuration", c.Name), isError: true, denied: true}
	case ctx.Err() != nil:
		out = failf("%s not run: %v", c.Name, ctx.Err())
	default:
		args := strings.TrimSpace(c.Arguments)
		if args == "" {
			args = "{}"
		}
		if t.live != nil {
			out = t.live(ctx, s, json.RawMessage(args), c.Progress)
		} else {
			out = t.run(ctx, s, json.RawMessage(args))
		}
	}
	return s.finish(c.Name, out)
}

// RunByUser is Run for a call the user typed themselves (a "!command" or
// an "@file" mention in the TUI): typing it is the approval a ModeAsk tool
// would ask for inside WorkDir. Everything else is Run's: a tool set to
// ModeDeny is refused, a path outside WorkDir asks, and the call keeps its
// confinement, environment, timeout and output cap.
func (s *Set) RunByUser(ctx context.Context, c Call) Result {
	return s.Run(context.WithValue(ctx, byUserKey{}, true), c)
}

// byUserKey marks the context of a RunByUser call.
type byUserKey struct{}

func byUser(ctx context.Context) bool {
	v, _ := ctx.Value(byUserKey{}).(bool)
	return v
}

// finish sanitizes, redacts and caps out into a Result.
func (s *Set) finish(name string, out output) Result {
	// Redact after sanitizing: an escape sequence inside a secret must not
	// hide it from the match and then vanish.
	full := s.redact(termtext.Sanitize(out.text))
	content, capped := s.capText(full, out.elidedLines, out.elidedBytes)
	r := Result{
		Content:  content,
		IsError:  out.isError || out.denied,
		Denied:   out.denied,
		Lift:     out.lift,
		ExitCode: out.exitCode,
		Meta:     out.meta,
	}
	if capped {
		r.Full = full
	}
	r.Meta.Tool = name
	r.Meta.FilePath = s.redact(termtext.Sanitize(r.Meta.FilePath))
	r.Meta.Command = s.redact(termtext.Sanitize(r.Meta.Command))
	r.Meta.Pattern = s.redact(termtext.Sanitize(r.Meta.Pattern))
	r.Meta.Success = !r.IsError
	return r
}
