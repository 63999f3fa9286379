package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Extension supplies tools beyond the built-in ones: the user's MCP
// servers (package mcp). Its tools go through Run like the built-in ones:
// the same permission rules, sanitizing, secret redaction and output cap.
type Extension interface {
	// Definitions are the extension's tools the model sees now. The list
	// only grows, at its end, and is never reordered: the request prefix
	// a provider caches stays byte-stable.
	Definitions() []ExtDefinition
	// Lookup finds any tool the extension can run by name, exposed or
	// not, waiting within ctx for a server that is still starting.
	Lookup(ctx context.Context, name string) (ExtDefinition, bool)
	// Call runs the tool. A failure is an ExtResult with IsError set.
	Call(ctx context.Context, name string, args json.RawMessage) ExtResult
}

// ExtDefinition is one tool of an Extension.
type ExtDefinition struct {
	Definition
	// Group is a permission name that also covers the tool ("mcp__SERVER"
	// for each tool of that server); "" for none.
	Group string
	// Mode applies when neither the tool nor its Group has one in
	// Permissions (a server's tools allow-list, or a read-only helper).
	Mode Mode
	// Observe compares WorkDir before and after the call, as for Bash:
	// the tool runs code that may write files.
	Observe bool
	// Summary is the one line the permission dialog shows.
	Summary string
}

// ExtResult is what an extension tool returned, before sanitizing and
// capping.
type ExtResult struct {
	Text    string
	IsError bool
}

// validExtName is what an extension tool may be called: a valid OpenAI
// function name that cannot be taken for a built-in tool.
var validExtName = regexp.MustCompile(`^mcp__[a-zA-Z0-9_-]{1,59}$`)

// IsExtName reports whether name is an extension tool's or group's name
// (mcp__SERVER or mcp__SERVER__TOOL).
func IsExtName(name string) bool { return validExtName.MatchString(name) }

// LateDefinitions are the extension's tools the model may call now, after
// Definitions' built-in ones; the list grows only at its end. Tools set to
// ModeDeny are left out.
func (s *Set) LateDefinitions() []Definition {
	if s.ext == nil {
		return nil
	}
	var out []Definition
	for _, d := range s.ext.Definitions() {
		if s.modeOf(d.Name) == ModeDeny {
			continue
		}
		out = append(out, d.Definition)
	}
	return out
}

// modeOf is a tool's mode: its own in Permissions, else its extension
// group's, else the extension's default for it, else ModeAsk.
func (s *Set) modeOf(name string) Mode {
	if m, ok := s.perms[name]; ok {
		return m
	}
	if s.ext == nil {
		return s.perms[name]
	}
	s.mu.Lock()
	d, ok := s.extDefs[name]
	s.mu.Unlock()
	if !ok {
		return ModeAsk
	}
	if m, ok := s.perms[d.Group]; ok && d.Group != "" {
		return m
	}
	return d.Mode
}

// runExt runs an extension tool's call: permission, then the call, with
// WorkDir observed around it when the tool may write files.
func (s *Set) runExt(ctx context.Context, d ExtDefinition, args string) output {
	s.mu.Lock()
	s.extDefs[d.Name] = d
	s.mu.Unlock()
	meta := Meta{Tool: d.Name}
	if !json.Valid([]byte(args)) {
		return meta.failf("%s: the arguments are not a JSON object: %s", d.Name, clip(args, 200))
	}
	if s.modeOf(d.Name) == ModeDeny {
		return denied(fmt.Sprintf("permission denied: %s is disabled by configuration", d.Name), meta)
	}
	summary := d.Summary
	if summary == "" {
		summary = d.Name
	}
	if den := s.authorize(ctx, Request{Tool: d.Name, Summary: summary, Args: args, Path: s.workDir}); den != nil {
		o := den.output(meta)
		if o.lift == LiftAllow && d.Group != "" {
			o.text = strings.Replace(o.text, "--allow "+d.Name, "--allow "+d.Name+" (or --allow "+d.Group+")", 1)
		}
		return o
	}
	if !d.Observe {
		r := s.ext.Call(ctx, d.Name, json.RawMessage(args))
		return output{text: r.Text, isError: r.IsError, meta: meta}
	}
	cp := s.checkpointBefore(ctx)
	snap, serr := s.observeBefore(ctx)
	r := s.ext.Call(ctx, d.Name, json.RawMessage(args))
	meta.Changes = observeAfter(ctx, snap, serr)
	meta.Checkpoint = s.checkpointAfterChanges(ctx, cp, meta.Changes)
	return output{text: r.Text, isError: r.IsError, meta: meta}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:runeStart(s, n)] + "..."
}
