// Package config loads gencode's settings once, in a fixed order: defaults, then
// the TOML file, then environment variables, then command-line flags. The result
// is validated and passed down as a plain value; nothing here is global.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/gencode/gencode/internal/termtext"
)

// Config is the effective configuration.
type Config struct {
	Model         string `toml:"model"`
	BaseURL       string `toml:"base_url"`
	APIKey        string `toml:"api_key"`
	ContextWindow int    `toml:"context_window"`
	// MaxIterations bounds the model/tool round trips of one user turn.
	MaxIterations int `toml:"max_iterations"`
	// RequestHeaderTimeout bounds the wait for an answer to start (its
	// response headers; a summary's only come when it is complete), and
	// RequestIdleTimeout each silence within an answer. Reasoning models
	// can think for minutes, so both default to 300 s. 0: no bound.
	RequestHeaderTimeout Duration `toml:"request_header_timeout"`
	RequestIdleTimeout   Duration `toml:"request_idle_timeout"`
	// MaxAnswerBytes bounds what one answer may stream (text, reasoning and
	// tool-call arguments); past it the answer is cut and kept as far as it
	// came. 0: no bound.
	MaxAnswerBytes int `toml:"max_answer_bytes"`
	// DataDir holds the session database; empty means the XDG default.
	DataDir string `toml:"data_dir"`
	// Theme is the terminal's background: "dark", "light", or "auto"
	// (ask the terminal once, when gencode draws on it).
	Theme     string          `toml:"theme"`
	Tools     ToolsConfig     `toml:"tools"`
	Summarize SummarizeConfig `toml:"summarize"`
	Sandbox   SandboxConfig   `toml:"sandbox"`
	Rewind    RewindConfig    `toml:"rewind"`
	// Pricing adds models to the built-in price table, or overrides it,
	// keyed by model name ([pricing."gpt-4o"]).
	Pricing map[string]Price `toml:"pricing"`
	// Models holds per-model settings, keyed by the model's name as the
	// endpoint knows it ([models."qwen3:8b"]); see ModelSettings.
	Models map[string]ModelConfig `toml:"models"`
	// Hooks are the user's hook commands by event, as Claude Code names
	// the events ([[hooks.PreToolUse]]); see package hooks.
	Hooks map[string][]HookConfig `toml:"hooks"`
	// MCP holds the user's MCP servers, keyed by name ([mcp.github]).
	MCP map[string]MCPServer `toml:"mcp"`

	// Sources maps each dotted key to where its value came from:
	// "default", the config file path, "env NAME" or "flag --name".
	Sources map[string]string `toml:"-"`
	// Lines maps each key whose value came from File to the line that
	// assigns it, as go-toml's parser saw it.
	Lines map[string]int `toml:"-"`
	// File is the config file that was read, or "" if there was none.
	File string `toml:"-"`
	// Warnings are problems worth telling the user about once, that do not
	// stop gencode: an API key sent unencrypted, a key in a file others can
	// read.
	Warnings []string `toml:"-"`
	// BaseURLUserinfo is the user:password a base URL was given with
	// (http://admin:PASS@host/v1), taken out of BaseURL when loaded: the
	// API key goes as a bearer token and the client never sends these, so
	// they are kept only to be redacted wherever they show up. "" when none.
	BaseURLUserinfo string `toml:"-"`
}

// Price is one model's price in US dollars per million tokens. Input and
// Output are required; CachedInput (prompt tokens served from the
// provider's cache) defaults to Input.
type Price struct {
	Input       *float64 `toml:"input"`
	CachedInput *float64 `toml:"cached_input"`
	Output      *float64 `toml:"output"`
}

// Values returns the price's three rates, CachedInput defaulted.
func (p Price) Values() (input, cachedInput, output float64) {
	if p.Input != nil {
		input = *p.Input
	}
	cachedInput = input
	if p.CachedInput != nil {
		cachedInput = *p.CachedInput
	}
	if p.Output != nil {
		output = *p.Output
	}
	return input, cachedInput, output
}

// Duration is a time.Duration written as a string in TOML ("300s", "5m").
// It is a struct so that a bare number, which would mean nanoseconds, is
// refused rather than read as 300 ns.
type Duration struct{ time.Duration }

// UnmarshalText reads a duration such as "300s" or "1m30s".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration such as \"300s\" or \"5m\" (with its unit, in quotes)", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// HookConfig is one hook command: it runs for its event when matcher
// (a regular expression over the tool name, or the event's source;
// empty or "*": always) matches, and is killed after Timeout seconds
// (0: the default, 60).
type HookConfig struct {
	Matcher string `toml:"matcher"`
	Command string `toml:"command"`
	Timeout int    `toml:"timeout"`
}

// RewindConfig bounds the checkpoints a rewind restores files from (kept
// in a shadow git directory under DataDir/checkpoints, one per project).
type RewindConfig struct {
	// Enabled keeps checkpoints around every tool call that may change
	// files.
	Enabled bool `toml:"enabled"`
	// MaxFileBytes: larger files are not kept (listed as not restorable).
	MaxFileBytes int64 `toml:"max_file_bytes"`
	// MaxAge: older checkpoints are pruned.
	MaxAge Duration `toml:"max_age"`
	// MaxStoreBytes: past it, the oldest checkpoints are pruned (0: no
	// bound but age).
	MaxStoreBytes int64 `toml:"max_store_bytes"`
}

// ToolsConfig holds the agent tools' settings.
type ToolsConfig struct {
	// OutputCapTokens caps what one tool result sends to the model.
	OutputCapTokens int `toml:"output_cap_tokens"`
	// Allow lists tools that run without asking (e.g. ["Bash"]).
	Allow []string `toml:"allow"`
	// MaxCallsPerMessage bounds the tool calls run for one answer of the
	// model; the rest are answered as not run.
	MaxCallsPerMessage int `toml:"max_calls_per_message"`
	// MCPDeferRatio is the share of the context window MCP tool schemas
	// may take before they are deferred behind SearchMcpTools.
	MCPDeferRatio float64 `toml:"mcp_defer_ratio"`
}

// MCPServer is one [mcp.NAME] table: a command to run (stdio) or a URL
// (streamable HTTP; transport = "sse" for the older SSE transport).
type MCPServer struct {
	Command   string            `toml:"command"`
	Args      []string          `toml:"args"`
	Env       map[string]string `toml:"env"`
	URL       string            `toml:"url"`
	Headers   map[string]string `toml:"headers"`
	Transport string            `toml:"transport"`
	// Enabled: nil or true starts the server.
	Enabled *bool `toml:"enabled"`
	// Timeout bounds each call and the start (0: 60s).
	Timeout Duration `toml:"timeout"`
	// Tools are the server's tools that run without asking.
	Tools []string `toml:"tools"`
}

// SummarizeConfig holds the compaction settings. The names follow the
// original proposal (enabled, trigger_threshold, target_compression,
// preserve_recent, preserve_system, model); triggering is by tokens first.
type SummarizeConfig struct {
	Enabled              bool    `toml:"enabled"`
	SoftRatio            float64 `toml:"soft_ratio"`
	HardRatio            float64 `toml:"hard_ratio"`
	TriggerThreshold     int     `toml:"trigger_threshold"`
	TargetCompression    float64 `toml:"target_compression"`
	PreserveRecent       int     `toml:"preserve_recent"`
	PreserveSystem       bool    `toml:"preserve_system"`
	MaskToolOutputsAfter int     `toml:"mask_tool_outputs_after"`
	Model                string  `toml:"model"`
	RedactSecrets        bool    `toml:"redact_secrets"`
	DeleteOriginals      bool    `toml:"delete_originals"`
	SummaryBudgetRatio   float64 `toml:"summary_budget_ratio"`
}

// SandboxConfig holds the shell sandbox's settings (Linux: Landlock).
type SandboxConfig struct {
	// Enabled confines every Bash command and !command where the
	// operating system can.
	Enabled bool `toml:"enabled"`
	// Writable are more directories commands may write beneath, besides
	// the project and the temp dir: absolute, or ~/ for the home dir.
	Writable []string `toml:"writable"`
	// Network lets auto-allowed commands use the network (approved ones
	// always may).
	Network bool `toml:"network"`
	// AutoAllow runs Bash without the permission dialog while a sandbox
	// is in force.
	AutoAllow bool `toml:"auto_allow"`
}

// Default returns the built-in defaults.
func Default() Config {
	return Config{
		Model:                "gpt-4o-mini",
		MaxIterations:        50,
		RequestHeaderTimeout: Duration{300 * time.Second},
		RequestIdleTimeout:   Duration{300 * time.Second},
		MaxAnswerBytes:       8 << 20,
		Theme:                ThemeAuto,
		Tools:                ToolsConfig{OutputCapTokens: 8000, MaxCallsPerMessage: 25, MCPDeferRatio: 0.1},
		Rewind:               RewindConfig{Enabled: true, MaxFileBytes: 10 << 20, MaxAge: Duration{14 * 24 * time.Hour}, MaxStoreBytes: 2 << 30},
		Summarize: SummarizeConfig{
			Enabled:              true,
			SoftRatio:            0.6,
			HardRatio:            0.9,
			TriggerThreshold:     50,
			TargetCompression:    0.3,
			PreserveRecent:       6,
			PreserveSystem:       true,
			MaskToolOutputsAfter: 30,
			RedactSecrets:        true,
			SummaryBudgetRatio:   0.08,
		},
		Sandbox: SandboxConfig{Enabled: true},
	}
}

// The themes: the terminal's background, or ask the terminal.
const (
	ThemeAuto  = "auto"
	ThemeDark  = "dark"
	ThemeLight = "light"
)

// Env is the environment, injected so tests never read the real one.
type Env func(key string) string

// Flags are the command-line overrides; nil pointers were not given.
type Flags struct {
	Model   *string
	BaseURL *string
	DataDir *string
}

// Error is a configuration problem with its location.
type Error struct {
	File string
	Line int // 0 when unknown
	Key  string
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config")
	if e.File != "" {
		b.WriteString(" " + e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
	}
	if e.Key != "" {
		b.WriteString(": " + e.Key)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// DefaultPath is where the config file lives unless --config names another.
func DefaultPath(env Env) string {
	base := env("XDG_CONFIG_HOME")
	if base == "" {
		base = filepath.Join(env("HOME"), ".config")
	}
	return filepath.Join(base, "gencode", "config.toml")
}

// DefaultDataDir is where sessions are stored: GENCODE_HOME, else
// $XDG_DATA_HOME/gencode, else ~/.local/share/gencode.
func DefaultDataDir(env Env) string {
	if v := env("GENCODE_HOME"); v != "" {
		return v
	}
	base := env("XDG_DATA_HOME")
	if base == "" {
		base = filepath.Join(env("HOME"), ".local", "share")
	}
	return filepath.Join(base, "gencode")
}

// StateDir is where the log goes: $XDG_STATE_HOME/gencode, else
// ~/.local/state/gencode. It is "" when neither is known (a relative
// XDG_STATE_HOME is ignored, as the XDG spec says).
func StateDir(env Env) string {
	base := env("XDG_STATE_HOME")
	if !filepath.IsAbs(base) {
		home := env("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "gencode")
}

// Load builds the effective configuration. file is the --config value
// ("" for the default path, which may be absent; a named file must exist).
func Load(file string, env Env, flags Flags) (Config, error) {
	cfg := Default()
	cfg.Sources, cfg.Lines = map[string]string{}, map[string]int{}
	explicit := file != ""
	if !explicit {
		file = DefaultPath(env)
	}
	data, err := os.ReadFile(file)
	switch {
	case err == nil:
		cfg.File = file
		if err := decodeFile(file, data, &cfg); err != nil {
			return Config{}, err
		}
	case errors.Is(err, os.ErrNotExist) && !explicit:
	default:
		return Config{}, &Error{File: file, Msg: "cannot read file", Err: err}
	}

	setStr := func(key, envName string, dst *string) {
		if v := env(envName); v != "" {
			*dst = v
			cfg.Sources[key] = "env " + envName
		}
	}
	setStr("api_key", "OPENAI_API_KEY", &cfg.APIKey)
	setStr("base_url", "OPENAI_BASE_URL", &cfg.BaseURL)
	setStr("model", "GENCODE_MODEL", &cfg.Model)
	setStr("summarize.model", "GENCODE_SUMMARY_MODEL", &cfg.Summarize.Model)
	setStr("data_dir", "GENCODE_HOME", &cfg.DataDir)
	setStr("theme", "GENCODE_THEME", &cfg.Theme)

	if flags.Model != nil {
		cfg.Model = *flags.Model
		cfg.Sources["model"] = "flag --model"
	}
	if flags.BaseURL != nil {
		cfg.BaseURL = *flags.BaseURL
		cfg.Sources["base_url"] = "flag --base-url"
	}
	if flags.DataDir != nil {
		cfg.DataDir = *flags.DataDir
		cfg.Sources["data_dir"] = "flag --data-dir"
	}
	if cfg.DataDir == "" {
		cfg.DataDir = DefaultDataDir(env)
	}
	cfg.BaseURL, cfg.BaseURLUserinfo = SplitUserinfo(cfg.BaseURL)
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	cfg.Warnings = warnings(cfg)
	return cfg, nil
}

// warnings lists what is risky in an otherwise valid configuration.
func warnings(cfg Config) []string {
	var out []string
	if cfg.BaseURLUserinfo != "" {
		src := cfg.Sources["base_url"]
		if src == "" {
			src = "base_url"
		}
		out = append(out, fmt.Sprintf("base_url (%s) holds a user name and password: gencode never sends them (the API key goes as a bearer token), so it uses %s and keeps them out of commands, logs and the screen; remove them there",
			src, cfg.BaseURL))
	}
	if u, err := url.Parse(cfg.BaseURL); err == nil && u.Scheme == "http" && !isLoopback(u.Hostname()) {
		out = append(out, fmt.Sprintf("base_url %s is plain http to another machine: the API key and the whole conversation cross the network unencrypted (use https://)", cfg.BaseURL))
	}
	// Whenever the file holds a key, in use or not (OPENAI_API_KEY may
	// override it in this run, not in the next): others can read it.
	if _, inFile := cfg.Lines["api_key"]; cfg.File != "" && (inFile || cfg.Sources["api_key"] == cfg.File) {
		if fi, err := os.Stat(cfg.File); err == nil && fi.Mode().Perm()&0o077 != 0 {
			out = append(out, fmt.Sprintf("%s holds api_key and other users can read it (mode %04o): run chmod 600 %s", cfg.File, fi.Mode().Perm(), cfg.File))
		}
	}
	return out
}

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func decodeFile(file string, data []byte, cfg *Config) error {
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		return decodeError(file, data, err)
	}
	as, err := assignments(data)
	if err != nil { // the decoder accepted it: not expected
		return &Error{File: file, Msg: err.Error(), Err: err}
	}
	for _, a := range as {
		// A table's line too (its header, or an inline table's key): an
		// error about the whole table, or /config, can name it.
		cfg.Lines[a.key] = a.line
		if !a.table {
			cfg.Sources[a.key] = file
		}
	}
	return nil
}

// decodeError says where a decode error is: file, line, and the whole
// dotted key, which go-toml's own error only has in part for a key inside
// an inline table.
func decodeError(file string, data []byte, err error) error {
	var (
		strict *toml.StrictMissingError
		de     *toml.DecodeError
		msg    string
	)
	switch {
	case errors.As(err, &strict) && len(strict.Errors) > 0:
		de, msg = &strict.Errors[0], "unknown key"
	case errors.As(err, &de):
		msg = strings.TrimPrefix(de.Error(), "toml: ")
	default: // go-toml gives no position for some (a number for a duration)
		return &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "toml: "), Err: err}
	}
	line, col := de.Position()
	key := strings.Join(de.Key(), ".")
	as, _ := assignments(data) // after a syntax error: what came before it
	if a, ok := assignmentAt(as, line, col); ok {
		key = a.key
	}
	if msg == "unknown key" {
		if near, ok := nearestKey(key); ok {
			msg += " (did you mean " + near + "?)"
		}
	}
	return &Error{File: file, Line: line, Key: key, Msg: msg, Err: err}
}

// nearestKey is the documented key (or table) closest to key, when it is
// near enough to be a typo of it: modle -> model.
func nearestKey(key string) (string, bool) {
	seen := map[string]bool{}
	best, bestD := "", 1<<30
	for _, st := range Default().Settings() {
		parts := strings.Split(st.Key, ".")
		for i := range parts {
			c := strings.Join(parts[:i+1], ".")
			if seen[c] {
				continue
			}
			seen[c] = true
			if d := termtext.EditDistance(key, c); d < bestD {
				best, bestD = c, d
			}
		}
	}
	return best, best != "" && bestD > 0 && bestD <= max(2, len(key)/4)
}

// assignment is a key a TOML document assigns (or a table it opens), with
// where it is, as go-toml's parser saw it.
type assignment struct {
	key        string // dotted, unquoted: summarize.soft_ratio
	line       int    // of the key
	table      bool   // a [table] header or an inline table, not a value
	start, end unstable.Position
}

// assignments lists the keys and tables a TOML document assigns, in order:
// table headers, dotted keys, quoted keys and inline tables (whose own
// keys follow it) all resolve to the full dotted key. On a syntax error it
// returns what came before it, and the error.
func assignments(data []byte) ([]assignment, error) {
	var p unstable.Parser
	p.Reset(data)
	var out []assignment
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			var first, last *unstable.Node
			table, first, last = splitKey(e.Key())
			out = append(out, assignment{key: strings.Join(table, "."), line: p.Shape(first.Raw).Start.Line, table: true,
				start: p.Shape(first.Raw).Start, end: p.Shape(last.Raw).End})
		case unstable.KeyValue:
			out = appendKeyValue(&p, out, table, e)
		}
	}
	return out, p.Error()
}

// appendKeyValue adds a key = value under prefix, and the keys of an
// inline table value after it.
func appendKeyValue(p *unstable.Parser, out []assignment, prefix []string, kv *unstable.Node) []assignment {
	parts, first, _ := splitKey(kv.Key())
	full := append(append([]string(nil), prefix...), parts...)
	v := kv.Value()
	whole := p.Shape(kv.Raw)
	out = append(out, assignment{key: strings.Join(full, "."), line: p.Shape(first.Raw).Start.Line,
		table: v.Kind == unstable.InlineTable, start: whole.Start, end: whole.End})
	if v.Kind == unstable.InlineTable {
		for it := v.Children(); it.Next(); {
			if n := it.Node(); n.Kind == unstable.KeyValue {
				out = appendKeyValue(p, out, full, n)
			}
		}
	}
	return out
}

// splitKey returns a (dotted) key's parts, unquoted, and its first and last
// part's nodes.
func splitKey(it unstable.Iterator) (parts []string, first, last *unstable.Node) {
	for it.Next() {
		n := it.Node()
		if first == nil {
			first = n
		}
		last = n
		parts = append(parts, string(n.Data))
	}
	return parts, first, last
}

// assignmentAt returns the innermost assignment whose text holds the
// 1-based line and column (a decode error's position).
func assignmentAt(as []assignment, line, col int) (assignment, bool) {
	before := func(l1, c1, l2, c2 int) bool { return l1 < l2 || (l1 == l2 && c1 < c2) }
	var found assignment
	ok := false
	for _, a := range as {
		if !before(line, col, a.start.Line, a.start.Column) && before(line, col, a.end.Line, a.end.Column) {
			found, ok = a, true // later ones are inside earlier ones
		}
	}
	return found, ok
}

// Validate checks ranges and relations between values. An error about a
// value from the config file names its line (Lines).
func (c *Config) Validate() error {
	bad := func(key, msg string) error {
		e := &Error{Key: key, Msg: msg}
		if src := c.Sources[key]; c.File != "" && (src == c.File || src == "" && c.Lines[key] > 0) {
			e.File = c.File
			e.Line = c.Lines[key]
		} else if src != "" {
			e.Msg += " (from " + src + ")"
		}
		return e
	}
	s := c.Summarize
	switch {
	case strings.TrimSpace(c.Model) == "":
		return bad("model", "must not be empty")
	case c.ContextWindow < 0:
		return bad("context_window", "must be 0 (auto) or a positive number of tokens")
	case c.ContextWindow > 0 && c.ContextWindow < 1024:
		return bad("context_window", "must be at least 1024 tokens")
	case c.MaxIterations < 1:
		return bad("max_iterations", "must be at least 1")
	case c.RequestHeaderTimeout.Duration < 0:
		return bad("request_header_timeout", "must be 0 (no bound) or positive")
	case c.RequestIdleTimeout.Duration < 0:
		return bad("request_idle_timeout", "must be 0 (no bound) or positive")
	case c.MaxAnswerBytes < 0:
		return bad("max_answer_bytes", "must be 0 (no bound) or positive")
	case c.Tools.OutputCapTokens < 256:
		return bad("tools.output_cap_tokens", "must be at least 256")
	case c.Tools.MaxCallsPerMessage < 1:
		return bad("tools.max_calls_per_message", "must be at least 1")
	case c.Rewind.MaxFileBytes < 1:
		return bad("rewind.max_file_bytes", "must be at least 1")
	case c.Rewind.MaxAge.Duration < time.Hour:
		return bad("rewind.max_age", "must be at least 1h")
	case c.Rewind.MaxStoreBytes < 0:
		return bad("rewind.max_store_bytes", "must be 0 (no bound) or positive")
	case c.Tools.MCPDeferRatio <= 0 || c.Tools.MCPDeferRatio > 1:
		return bad("tools.mcp_defer_ratio", "must be above 0 and at most 1 (1: defer only past the whole window)")
	case s.SoftRatio <= 0 || s.SoftRatio >= 1:
		return bad("summarize.soft_ratio", "must be between 0 and 1")
	case s.HardRatio <= 0 || s.HardRatio > 1:
		return bad("summarize.hard_ratio", "must be between 0 and 1")
	case s.SoftRatio >= s.HardRatio:
		return bad("summarize.soft_ratio", fmt.Sprintf("must be below hard_ratio (%.2f)", s.HardRatio))
	case s.TriggerThreshold < 0:
		return bad("summarize.trigger_threshold", "must be 0 (off) or positive")
	case s.TargetCompression <= 0 || s.TargetCompression >= 1:
		return bad("summarize.target_compression", "must be between 0 and 1")
	case s.PreserveRecent < 0:
		return bad("summarize.preserve_recent", "must not be negative")
	case s.MaskToolOutputsAfter < 0:
		return bad("summarize.mask_tool_outputs_after", "must not be negative")
	case s.SummaryBudgetRatio <= 0 || s.SummaryBudgetRatio >= 1:
		return bad("summarize.summary_budget_ratio", "must be between 0 and 1")
	}
	for _, model := range sortedKeys(c.Pricing) {
		p := c.Pricing[model]
		for _, f := range []struct {
			name     string
			v        *float64
			required bool
		}{{"input", p.Input, true}, {"cached_input", p.CachedInput, false}, {"output", p.Output, true}} {
			key := "pricing." + model + "." + f.name
			switch {
			case f.v == nil && f.required:
				// Said at the line of a rate the table does set.
				for _, k := range []string{"input", "cached_input", "output"} {
					if at := "pricing." + model + "." + k; c.Sources[at] != "" {
						key = at
						break
					}
				}
				e := bad(key, fmt.Sprintf("the price of %q needs %s too (US dollars per million tokens)", model, f.name))
				e.(*Error).Key = "pricing." + model + "." + f.name
				return e
			case f.v != nil && (*f.v < 0 || *f.v != *f.v):
				return bad(key, "must be a price in US dollars per million tokens, 0 or more")
			}
		}
	}
	if err := c.validateModels(bad); err != nil {
		return err
	}
	for _, name := range sortedKeys(c.MCP) {
		m := c.MCP[name]
		switch {
		case m.Command == "" && m.URL == "":
			return bad("mcp."+name, "set command (a stdio server) or url (streamable HTTP)")
		case m.Command != "" && m.URL != "":
			return bad("mcp."+name, "set command or url, not both")
		case m.Transport != "" && m.Transport != "stdio" && m.Transport != "http" && m.Transport != "sse":
			return bad("mcp."+name+".transport", "must be stdio, http or sse")
		case m.Timeout.Duration < 0:
			return bad("mcp."+name+".timeout", "must be 0 (the default, 60s) or positive")
		}
	}
	for _, w := range c.Sandbox.Writable {
		if !filepath.IsAbs(w) && w != "~" && !strings.HasPrefix(w, "~/") {
			return bad("sandbox.writable", fmt.Sprintf("%q must be an absolute directory or start with ~/", w))
		}
	}
	if c.Theme != ThemeAuto && c.Theme != ThemeDark && c.Theme != ThemeLight {
		return bad("theme", fmt.Sprintf("must be %q, %q or %q, not %q", ThemeDark, ThemeLight, ThemeAuto, c.Theme))
	}
	if c.BaseURL != "" && !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		return bad("base_url", "must start with http:// or https://")
	}
	return nil
}

// SummaryModel is the model the summarizer uses.
func (c Config) SummaryModel() string {
	if c.Summarize.Model != "" {
		return c.Summarize.Model
	}
	return c.Model
}

// Setting is one effective value and where it came from, for /config.
type Setting struct{ Key, Value, Source string }

// Settings lists every key with its effective value and source, sorted; a
// value from the config file says its line (path:line). The API key is never shown, only whether it is set.
func (c Config) Settings() []Setting {
	vals := map[string]string{
		"model":                             c.Model,
		"base_url":                          c.BaseURL,
		"api_key":                           mask(c.APIKey),
		"context_window":                    strconv.Itoa(c.ContextWindow),
		"max_iterations":                    strconv.Itoa(c.MaxIterations),
		"request_header_timeout":            c.RequestHeaderTimeout.String(),
		"request_idle_timeout":              c.RequestIdleTimeout.String(),
		"max_answer_bytes":                  strconv.Itoa(c.MaxAnswerBytes),
		"data_dir":                          c.DataDir,
		"theme":                             c.Theme,
		"tools.output_cap_tokens":           strconv.Itoa(c.Tools.OutputCapTokens),
		"tools.max_calls_per_message":       strconv.Itoa(c.Tools.MaxCallsPerMessage),
		"tools.allow":                       strings.Join(c.Tools.Allow, ","),
		"tools.mcp_defer_ratio":             ftoa(c.Tools.MCPDeferRatio),
		"summarize.enabled":                 strconv.FormatBool(c.Summarize.Enabled),
		"summarize.soft_ratio":              ftoa(c.Summarize.SoftRatio),
		"summarize.hard_ratio":              ftoa(c.Summarize.HardRatio),
		"summarize.trigger_threshold":       strconv.Itoa(c.Summarize.TriggerThreshold),
		"summarize.target_compression":      ftoa(c.Summarize.TargetCompression),
		"summarize.preserve_recent":         strconv.Itoa(c.Summarize.PreserveRecent),
		"summarize.preserve_system":         strconv.FormatBool(c.Summarize.PreserveSystem),
		"summarize.mask_tool_outputs_after": strconv.Itoa(c.Summarize.MaskToolOutputsAfter),
		"summarize.model":                   c.Summarize.Model,
		"summarize.redact_secrets":          strconv.FormatBool(c.Summarize.RedactSecrets),
		"summarize.delete_originals":        strconv.FormatBool(c.Summarize.DeleteOriginals),
		"summarize.summary_budget_ratio":    ftoa(c.Summarize.SummaryBudgetRatio),
		"sandbox.enabled":                   strconv.FormatBool(c.Sandbox.Enabled),
		"sandbox.writable":                  strings.Join(c.Sandbox.Writable, ","),
		"sandbox.network":                   strconv.FormatBool(c.Sandbox.Network),
		"sandbox.auto_allow":                strconv.FormatBool(c.Sandbox.AutoAllow),
	}
	for model, p := range c.Pricing {
		in, cached, out := p.Values()
		vals["pricing."+model+".input"] = ftoa(in)
		vals["pricing."+model+".cached_input"] = ftoa(cached)
		vals["pricing."+model+".output"] = ftoa(out)
	}
	c.modelSettings(vals)
	for name, m := range c.MCP {
		k := "mcp." + name + "."
		if m.Command != "" {
			vals[k+"command"] = strings.Join(append([]string{m.Command}, m.Args...), " ")
		}
		if m.URL != "" {
			vals[k+"url"] = m.URL
		}
		vals[k+"enabled"] = strconv.FormatBool(m.Enabled == nil || *m.Enabled)
		vals[k+"timeout"] = m.Timeout.String()
		vals[k+"tools"] = strings.Join(m.Tools, ",")
		for h := range m.Headers {
			vals[k+"headers."+h] = "(set)" // often a token: never shown
		}
		for e := range m.Env {
			vals[k+"env."+e] = "(set)"
		}
	}
	out := make([]Setting, 0, len(vals))
	for k, v := range vals {
		out = append(out, Setting{Key: k, Value: v, Source: c.source(k)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func mask(s string) string {
	if s == "" {
		return "(not set)"
	}
	return "(set)"
}

// SplitUserinfo takes the user name and password out of a URL:
// "http://admin:PASS@host/v1" gives "http://host/v1" and "admin:PASS".
// A text without them is returned as is, with "".
func SplitUserinfo(raw string) (clean, userinfo string) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw, ""
	}
	rest := raw[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return raw, ""
	}
	return raw[:i+3] + rest[at+1:], rest[:at]
}
