package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
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
	// Resolve finds the tool a ToolCallMcp call names and checks the call
	// before it is asked for: the model must have been given the tool's
	// schema, and args must match it. The error is the tool error the
	// model reads.
	Resolve(ctx context.Context, name string, args json.RawMessage) (ExtDefinition, error)
}

// ToolCallMcp is the extension's proxy tool. Its arguments name one of the
// extension's tools ("tool") and hold that tool's arguments ("arguments"):
// the tool list a request carries stays the same when the model starts
// using a tool (its schema came in a message, SearchMcpTools' result), so
// the provider's cached prefix survives. A proxied call is checked, asked
// for, run, capped and recorded as a call of the tool it names.
const ToolCallMcp = "CallMcpTool"

// Unwrap is the call a ToolCallMcp call stands for: the tool it names,
// with that tool's arguments; any other call as it is. ok is false for a
// proxy call whose arguments do not name a tool.
func Unwrap(c Call) (Call, bool) {
	if c.Name != ToolCallMcp {
		return c, true
	}
	inner, err := unwrapArgs(c.Arguments)
	if err != nil {
		return c, false
	}
	c.Name, c.Arguments = inner.Name, inner.Arguments
	return c, true
}

// unwrapArgs reads a ToolCallMcp call's arguments. Its "arguments" may
// also be a string holding the JSON object (models write either).
func unwrapArgs(args string) (Call, error) {
	var a struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return Call{}, fmt.Errorf("the arguments must be a JSON object {\"tool\": \"mcp__SERVER__TOOL\", \"arguments\": {...}}: %w", err)
	}
	if a.Tool == "" {
		return Call{}, errors.New(`"tool" is missing: name the MCP tool to call, e.g. "mcp__github__create_issue" (SearchMcpTools finds them)`)
	}
	raw := strings.TrimSpace(string(a.Arguments))
	var s string
	if json.Unmarshal(a.Arguments, &s) == nil {
		raw = strings.TrimSpace(s)
	}
	if raw == "" || raw == "null" {
		raw = "{}"
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(raw), &obj); err != nil || obj == nil {
		return Call{}, fmt.Errorf(`"arguments" must be the JSON object of %s's arguments, not %s`, a.Tool, clip(raw, 200))
	}
	return Call{Name: a.Tool, Arguments: raw}, nil
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
	// Refused says why the tool cannot run now whatever the user allows
	// (its server is not approved for the project, or disabled): the
	// call's tool error, before any permission is asked.
	Refused string
}

// ExtResult is what an extension tool returned, before sanitizing and
// capping.
type ExtResult struct {
	Text    string
	IsError bool
}

// validExtName is what an extension tool may be called: a valid OpenAI
// function name that cannot be taken for a built-in tool.
var validExtName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^mcp__[a-zA-Z0-9_-]{1,59}$`) })

// IsExtName reports whether name is an extension tool's or group's name
// (mcp__SERVER or mcp__SERVER__TOOL).
func IsExtName(name string) bool { return validExtName().MatchString(name) }

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

// runProxy runs a ToolCallMcp call as a call of the tool it names: the
// extension checks it, then it is asked for and run as runExt does. name
// is the tool the result is recorded under: the named one once known.
func (s *Set) runProxy(ctx context.Context, args string) (out output, name string) {
	inner, err := unwrapArgs(args)
	if err != nil {
		return Meta{Tool: ToolCallMcp}.failf("%s: %v", ToolCallMcp, err), ToolCallMcp
	}
	d, err := s.ext.Resolve(ctx, inner.Name, json.RawMessage(inner.Arguments))
	if err != nil {
		return Meta{Tool: inner.Name}.failf("%s: %v", ToolCallMcp, err), inner.Name
	}
	return s.runExt(ctx, d, inner.Arguments), d.Name
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
	if d.Refused != "" {
		return meta.failf("%s: not run: %s", d.Name, d.Refused)
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
