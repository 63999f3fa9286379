package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/gencode/gencode/internal/tools"
)

// maxSchemaText bounds a schema repeated in a tool error.
const maxSchemaText = 4000

// Resolve checks a CallMcpTool call of name with args before it is asked
// for and run (tools.Extension): name must be an MCP tool of a known
// server, the model must have its schema (loaded by SearchMcpTools, or in
// the tool list while nothing is deferred), and args must match the
// schema. A tool the model calls unloaded is loaded by the refusal, which
// gives its schema: the next call can be right.
func (m *Manager) Resolve(ctx context.Context, name string, args json.RawMessage) (tools.ExtDefinition, error) {
	if !tools.IsExtName(name) {
		return tools.ExtDefinition{}, fmt.Errorf("%q is not an MCP tool (mcp__SERVER__TOOL); call gencode's own tools directly", name)
	}
	d, ok := m.Lookup(ctx, name)
	if !ok {
		return tools.ExtDefinition{}, fmt.Errorf("no MCP server offers %s; %s finds the tools there are", name, ToolSearch)
	}
	s, t, known := m.entry(name)
	if !known {
		// Its server is not running: the call says why, as a direct one.
		return d, nil
	}
	m.mu.Lock()
	given := m.isExp[name] || m.loaded[name]
	m.loaded[name] = true
	m.mu.Unlock()
	if !given {
		return tools.ExtDefinition{}, fmt.Errorf("%s was not loaded, so its arguments were not checked and it did not run. It is loaded now; call it again with arguments that match:\n%s",
			name, schemaText(t.def.Definition, maxSchemaText))
	}
	if err := m.check(t, args); err != nil {
		return tools.ExtDefinition{}, fmt.Errorf("the arguments do not match the input schema of %s, so it did not run: %s\n%s",
			name, oneLine(err.Error()), schemaText(t.def.Definition, maxSchemaText))
	}
	m.opts.Logger.Debug("mcp proxied call", "server", s.cfg.Name, "tool", t.orig)
	return d, nil
}

// checkedSchema is a tool's input schema, resolved once for checking.
type checkedSchema struct {
	raw      string // the schema it was resolved from
	resolved *jsonschema.Resolved
}

// check validates args against t's input schema. A schema the validator
// cannot read checks nothing: the server checks its own arguments.
func (m *Manager) check(t toolEntry, args json.RawMessage) error {
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return fmt.Errorf("the arguments are not JSON: %w", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("the arguments must be a JSON object")
	}
	raw := string(t.def.Parameters)
	m.mu.Lock()
	c, ok := m.schemas[t.def.Name]
	m.mu.Unlock()
	if !ok || c.raw != raw {
		c = checkedSchema{raw: raw}
		var sch jsonschema.Schema
		err := json.Unmarshal(t.def.Parameters, &sch)
		if err == nil {
			c.resolved, err = sch.Resolve(nil)
		}
		if err != nil {
			m.opts.Logger.Debug("mcp input schema not checkable", "tool", t.def.Name, "err", err)
		}
		m.mu.Lock()
		m.schemas[t.def.Name] = c
		m.mu.Unlock()
	}
	if c.resolved == nil {
		return nil
	}
	return c.resolved.Validate(v)
}

// schemaText is a tool as the model reads it in a message: its name,
// description and input schema, the schema cut past max bytes (0: whole).
func schemaText(d tools.Definition, limit int) string {
	sch := string(d.Parameters)
	if limit > 0 && len(sch) > limit {
		sch = sch[:limit] + "... (cut)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\ninput schema: %s", d.Name, strings.TrimSpace(d.Description), sch)
	return b.String()
}
