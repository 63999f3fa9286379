// Package sandbox confines the shell commands gencode runs (the Bash tool
// and the TUI's "!command") with the operating system: on Linux with
// Landlock, writes only beneath the working directory, the temp dir and
// the directories the user adds, never in gencode's own config, data and
// state directories; with the network off where a command runs without
// the user's approval. Reads stay open.
//
// The sandbox restricts the command's process only, never gencode: the
// command is started through a helper, the gencode binary itself run with
// the hidden first argument HelperArg, which restricts itself and then
// executes the shell (see confine.Main). A Sandbox says which sandbox is in force,
// in words, and what a command line to run becomes (Command).
package sandbox

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// HelperArg is the hidden first argument that makes the gencode binary the
// sandbox helper: gencode __sandbox-exec SPEC PATH ARGV0 ARGS...
const HelperArg = "__sandbox-exec"

// IsHelper reports whether args (os.Args without the program name) ask
// for the helper.
func IsHelper(args []string) bool { return len(args) > 0 && args[0] == HelperArg }

// Config is what the user asked for ([sandbox] in the config file) and
// where this run stands.
type Config struct {
	Enabled bool
	// Writable are more directories commands may write beneath.
	Writable []string
	// Network lets auto-allowed commands use the network.
	Network bool
	// AutoAllow runs Bash without asking while a sandbox is in force.
	AutoAllow bool

	// WorkDir is the project (absolute), TempDir the system temp dir.
	WorkDir, TempDir string
	// Protected are gencode's own config, data and state directories
	// (and a --config file): never writable from a command.
	Protected []string
	// Executable is the helper: the gencode binary (or a test binary
	// whose TestMain calls confine.Main).
	Executable string
}

// Support is what the kernel offers.
type Support struct {
	// ABI is the Landlock ABI version; 0: none.
	ABI int
	// Why says why there is none ("" when ABI > 0).
	Why string
}

// Sandbox is the sandbox of one run. The zero value and nil are "none".
type Sandbox struct {
	cfg   Config
	abi   int    // in force when > 0
	why   string // why none is in force
	roots []string
	prot  []string
	// inside are the protected paths beneath a root, relative to it.
	inside []string
	// skipped are roots not writable at all (inside a protected path).
	skipped []string
}

// New returns the sandbox for c on a kernel offering sup.
func New(c Config, sup Support) *Sandbox {
	s := &Sandbox{cfg: c}
	switch {
	case !c.Enabled:
		s.why = "[sandbox] enabled = false"
		return s
	case sup.ABI <= 0:
		s.why = sup.Why
		return s
	case c.Executable == "":
		s.why = "the helper (the gencode binary) cannot be found"
		return s
	}
	s.abi = sup.ABI
	var prot []string
	for _, p := range c.Protected {
		if p != "" {
			prot = append(prot, Resolve(p, c.WorkDir))
		}
	}
	for i, p := range prot {
		// One inside another (a config file in the config dir) is
		// protected by it already.
		if !slices.ContainsFunc(prot, func(q string) bool { return q != p && within(p, q) }) && !slices.Contains(prot[:i], p) {
			s.prot = append(s.prot, p)
		}
	}
	for _, r := range append([]string{c.WorkDir, c.TempDir}, c.Writable...) {
		if r == "" {
			continue
		}
		r = Resolve(r, c.WorkDir)
		if !slices.Contains(s.roots, r) {
			s.roots = append(s.roots, r)
		}
	}
	for _, r := range s.roots {
		if slices.ContainsFunc(s.prot, func(p string) bool { return within(r, p) }) {
			s.skipped = append(s.skipped, r)
		}
	}
	work := Resolve(c.WorkDir, c.WorkDir)
	for _, p := range s.prot {
		if p != work && within(p, work) {
			rel, _ := filepath.Rel(work, p)
			s.inside = append(s.inside, rel)
		}
	}
	return s
}

// Active reports whether commands run confined.
func (s *Sandbox) Active() bool { return s != nil && s.abi > 0 }

// ABI is the Landlock ABI version in force (0: none).
func (s *Sandbox) ABI() int {
	if s == nil {
		return 0
	}
	return s.abi
}

// Limits are how one command is confined beyond the sandbox's writable
// roots and gencode's own directories, which hold for every command.
type Limits struct {
	// Auto: the command runs without the user's decision (auto-allowed).
	Auto bool
	// Network: it may use the network.
	Network bool
	// GitDirs are the git directories of the project it may not write
	// (see GitDirs): set for an auto-allowed command.
	GitDirs []string
}

// Approved are the limits of a command the user decided on (approved,
// allowed, typed): the network, and the project's git directories as
// writable as the rest of it (an approved `git commit` works).
func Approved() Limits { return Limits{Network: true} }

// AutoLimits are the limits of an auto-allowed command: no network
// unless [sandbox] network, and the project's git directories read-only:
// git runs code from their config and hooks, which the user's own,
// unconfined git would run later. An error says why that cannot be
// promised for this command (a project too large to search, a project
// inside a git directory): the command must not run without asking.
func (s *Sandbox) AutoLimits() (Limits, error) {
	if !s.Active() {
		return Limits{}, fmt.Errorf("no sandbox is in force")
	}
	work := Resolve(s.cfg.WorkDir, s.cfg.WorkDir)
	gits, err := GitDirs(work, maxGitWalkDirs)
	if err != nil {
		return Limits{}, fmt.Errorf("its git directories cannot be kept read-only: %w", err)
	}
	// The helper makes the same plan; a plan it would refuse is refused here.
	grants, _, err := Plan(s.roots, append(slices.Clone(s.prot), gits...))
	if err != nil {
		return Limits{}, fmt.Errorf("its git directories cannot be kept read-only: %w", err)
	}
	if len(grants) > MaxGrants {
		return Limits{}, fmt.Errorf("keeping its git directories read-only takes %d rules, more than the %d gencode gives one command", len(grants), MaxGrants)
	}
	return Limits{Auto: true, Network: s.cfg.Network, GitDirs: gits}, nil
}

// AutoAllow reports whether Bash commands may run without asking, and
// when they may not although auto_allow is set, why ("" when it is not set).
func (s *Sandbox) AutoAllow() (bool, string) {
	if s == nil || !s.cfg.AutoAllow {
		return false, ""
	}
	work := Resolve(s.cfg.WorkDir, s.cfg.WorkDir)
	switch {
	case !s.Active():
		return false, "auto_allow does nothing: no sandbox is in force (" + s.why + "), so every command asks"
	case slices.Contains(s.skipped, work):
		return false, "auto_allow is off here: the project lies inside gencode's own directories, which commands may never write, so every command asks"
	case !s.cfg.Network && s.abi < 4:
		return false, fmt.Sprintf("auto_allow is off: this kernel's Landlock (ABI %d) cannot take the network away (ABI 4 can), so every command asks; set [sandbox] network = true to allow commands the network without asking", s.abi)
	}
	return true, ""
}

// Status is one line saying which sandbox is in force, or that none is
// and why.
func (s *Sandbox) Status() string {
	if !s.Active() {
		why := "this system has none"
		if s != nil && s.why != "" {
			why = s.why
		}
		return "no sandbox: Bash and !commands run with your full rights (" + why + ")"
	}
	return fmt.Sprintf("Landlock ABI %d: writes confined to %s; gencode's config, data and state dirs read-only; reads open", s.abi, s.where())
}

// where names the writable roots as a user reads them.
func (s *Sandbox) where() string {
	work := Resolve(s.cfg.WorkDir, s.cfg.WorkDir)
	var names []string
	for _, r := range s.roots {
		if slices.Contains(s.skipped, r) {
			continue
		}
		if r == work {
			names = append(names, "the project")
			continue
		}
		names = append(names, r)
	}
	switch len(names) {
	case 0:
		return "nowhere"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Notices are what gencode says once at start: the status, what it costs
// when the project holds gencode's own directories, and why auto_allow
// does nothing when it is set but cannot apply.
func (s *Sandbox) Notices() []string {
	out := s.head()
	switch ok, why := s.AutoAllow(); {
	case ok:
		out = append(out, autoGitLine)
	case why != "":
		out = append(out, why)
	}
	return out
}

// autoGitLine is what auto-allowed commands may not do that approved
// ones may.
const autoGitLine = "auto-allowed commands also get .git read-only (git runs code from its config and hooks, and your own git commands would run it) and cannot create, remove or rename entries at the project's top level (nor beside a nested .git); commands you approve can"

// head is the status and what the layout of the directories costs.
func (s *Sandbox) head() []string {
	out := []string{s.Status()}
	if !s.Active() {
		return out
	}
	if len(s.inside) > 0 {
		out = append(out, fmt.Sprintf("the project holds gencode's %s: they stay read-only; the project's other entries are writable, but no new entry can be created at its top level or beside them", strings.Join(s.inside, ", ")))
	}
	for _, r := range s.skipped {
		out = append(out, r+" is not writable: it lies inside gencode's own directories")
	}
	return out
}

// Lines are what /config and /permissions show of the sandbox: the
// status, then what follows from it (auto-allow, the network, what this
// ABI cannot confine).
func (s *Sandbox) Lines() []string {
	if !s.Active() {
		return s.Notices()
	}
	out := s.head()
	switch ok, why := s.AutoAllow(); {
	case ok && s.cfg.Network:
		out = append(out, "auto_allow: Bash runs without asking; writes stay confined; the network is open ([sandbox] network = true)", autoGitLine)
	case ok:
		out = append(out, "auto_allow: Bash runs without asking, with no network ("+s.netWords()+"); commands you approve keep the network", autoGitLine)
	case why != "":
		out = append(out, why)
	default:
		out = append(out, "auto_allow = false: Bash asks as usual; the sandbox holds what you approve")
	}
	if s.abi < 2 {
		out = append(out, "ABI 1: moving or linking a file between directories is refused, also inside the project")
	}
	if s.abi < 3 {
		out = append(out, fmt.Sprintf("ABI %d: truncating a file by name (truncate(2)) is not confined", s.abi))
	}
	out = append(out, "not confined: reads, and what a daemon the command talks to does for it (docker, systemd)")
	return out
}

// netWords says what "no network" holds at this ABI.
func (s *Sandbox) netWords() string {
	if s.abi >= 10 {
		return "TCP and UDP refused by the kernel"
	}
	return "TCP connect and bind refused by the kernel; UDP stays open below ABI 10"
}

// Spec is what the helper (sandbox/confine) is told: the restriction to
// apply before it runs the command.
type Spec struct {
	ABI       int      `json:"abi"`
	Writable  []string `json:"writable"`
	Protected []string `json:"protected"`
	Network   bool     `json:"network"`
	// GitDirs are protected too (an auto-allowed command's, see Limits).
	GitDirs []string `json:"git_dirs,omitempty"`
}

// Command returns the program and arguments that run argv (argv[0] looked
// up in PATH, as exec.Command does) under the sandbox, within lim (see
// Approved, AutoLimits). Without a sandbox it returns argv as it is.
func (s *Sandbox) Command(argv []string, lim Limits) (path string, args []string, err error) {
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		return "", nil, err
	}
	if !s.Active() {
		return bin, argv, nil
	}
	b, err := json.Marshal(Spec{ABI: s.abi, Writable: s.roots, Protected: s.prot, Network: lim.Network, GitDirs: lim.GitDirs})
	if err != nil {
		return "", nil, fmt.Errorf("sandbox spec: %w", err)
	}
	return s.cfg.Executable, append([]string{s.cfg.Executable, HelperArg, string(b), bin}, argv...), nil
}

// deniedPattern is how a refused write or connection reads in a
// command's output: EACCES and EPERM as programs print them.
var deniedPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)permission denied|operation not permitted|\beacces\b|\beperm\b`)
})

// gitPattern finds a git directory named in a command's output: .git as
// a path component (not .gitignore, .github, .git-credentials).
var gitPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[^A-Za-z0-9_.-])\.git([^A-Za-z0-9_.-]|$)`) })

// Blocked is the note added to the result of a command that ran confined
// within lim, failed, and printed a permission error (""): most likely
// the sandbox refused it, and the model should ask rather than retry.
// An auto-allowed command whose error names a .git is told that git
// directories are read-only for it.
func (s *Sandbox) Blocked(output string, exitCode int, lim Limits) string {
	if !s.Active() || exitCode == 0 || !deniedPattern().MatchString(output) {
		return ""
	}
	if lim.Auto && gitPattern().MatchString(output) {
		return fmt.Sprintf("[blocked by the sandbox: .git is read-only for commands that ran without asking. Landlock (ABI %d) refused the write: git runs code from its config and hooks, so a command nobody approved may not change them. Do not retry it or work around it: tell the user what you meant to do there; they can run it themselves (a !command) or allow Bash, which keeps .git writable.]", s.abi)
	}
	extra := ""
	if !lim.Network {
		extra = "; this command had no network (auto-allowed)"
	}
	if lim.Auto {
		extra += "; as it ran without asking, .git is read-only and no entry can be created, removed or renamed at the project's top level nor beside a nested .git"
	}
	return fmt.Sprintf("[blocked by the sandbox? The command ran under Landlock (ABI %d): writes only beneath %s, never in gencode's own dirs%s. A permission error here is most likely the sandbox (write outside the project). Do not retry it or work around it: ask the user.]", s.abi, s.where(), extra)
}
