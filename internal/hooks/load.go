package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/gencode/gencode/internal/config"
)

// Files are where hooks are read from, besides config.toml.
type Files struct {
	// Home is the user's home directory: ~/.claude/settings.json
	// ("": not read).
	Home string
	// Project is the project directory: .claude/settings.json,
	// .claude/settings.local.json and .gencode/hooks.toml, which are the
	// repository's and need approval ("": not read).
	Project string
}

// Load gathers the hooks of config.toml (cfg, from file cfgFile) and of
// the settings files. A file that is missing has none; one that cannot be
// read or parsed gives none and a problem that says which file and why.
func Load(cfg map[string][]config.HookConfig, cfgFile string, f Files) ([]Hook, []string) {
	if cfgFile == "" {
		cfgFile = "config.toml"
	}
	var out []Hook
	var probs []string
	add := func(hs []Hook, err error) {
		out = append(out, hs...)
		if err != nil {
			probs = append(probs, err.Error())
		}
	}
	add(fromConfig(cfg, cfgFile, false))
	if f.Home != "" {
		add(claudeSettings(filepath.Join(f.Home, ".claude", "settings.json"), "~/.claude/settings.json", false))
	}
	if f.Project != "" {
		add(claudeSettings(filepath.Join(f.Project, ".claude", "settings.json"), ".claude/settings.json", true))
		add(claudeSettings(filepath.Join(f.Project, ".claude", "settings.local.json"), ".claude/settings.local.json", true))
		add(gencodeFile(filepath.Join(f.Project, ".gencode", "hooks.toml"), ".gencode/hooks.toml"))
	}
	return out, probs
}

// fromConfig turns [[hooks.EVENT]] tables into hooks, events in order.
func fromConfig(cfg map[string][]config.HookConfig, source string, project bool) ([]Hook, error) {
	var out []Hook
	var errs []error
	events := make([]string, 0, len(cfg))
	for ev := range cfg {
		events = append(events, ev)
	}
	sort.Strings(events)
	for _, ev := range events {
		if !known(Event(ev)) {
			errs = append(errs, fmt.Errorf("%s: hooks.%s: not an event gencode runs (%v)", source, ev, Events()))
			continue
		}
		for i, hc := range cfg[ev] {
			if hc.Command == "" {
				errs = append(errs, fmt.Errorf("%s: hooks.%s[%d]: no command", source, ev, i))
				continue
			}
			out = append(out, Hook{Event: Event(ev), Matcher: hc.Matcher, Command: hc.Command,
				Timeout: time.Duration(hc.Timeout) * time.Second, Source: source, Project: project})
		}
	}
	return out, errors.Join(errs...)
}

// claudeSettings reads the "hooks" of a Claude Code settings file:
// {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type":
// "command", "command": "...", "timeout": 30}]}]}}. Events gencode does
// not run (Notification, SubagentStop ...) are left out silently: the
// file is Claude Code's too.
func claudeSettings(path, source string, project bool) ([]Hook, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read hooks from %s: %w", source, err)
	}
	var s struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string  `json:"type"`
				Command string  `json:"command"`
				Timeout float64 `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("read hooks from %s: %w", source, err)
	}
	var out []Hook
	events := make([]string, 0, len(s.Hooks))
	for ev := range s.Hooks {
		events = append(events, ev)
	}
	sort.Strings(events)
	for _, ev := range events {
		if !known(Event(ev)) {
			continue
		}
		for _, m := range s.Hooks[ev] {
			for _, h := range m.Hooks {
				if h.Type != "command" || h.Command == "" {
					continue
				}
				out = append(out, Hook{Event: Event(ev), Matcher: m.Matcher, Command: h.Command,
					Timeout: time.Duration(h.Timeout * float64(time.Second)), Source: source, Project: project})
			}
		}
	}
	return out, nil
}

// gencodeFile reads a project's .gencode/hooks.toml: [[hooks.EVENT]]
// tables, as in config.toml.
func gencodeFile(path, source string) ([]Hook, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read hooks from %s: %w", source, err)
	}
	var f struct {
		Hooks map[string][]config.HookConfig `toml:"hooks"`
	}
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("read hooks from %s: %w", source, err)
	}
	return fromConfig(f.Hooks, source, true)
}
