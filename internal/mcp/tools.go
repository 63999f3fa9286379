package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gencode/gencode/internal/tools"
)

// Names of gencode's own MCP tools.
const (
	ToolSearch        = "SearchMcpTools"
	ToolCall          = tools.ToolCallMcp
	ToolListResources = "ListMcpResources"
	ToolReadResource  = "ReadMcpResource"
)

// maxDescription bounds a tool's description as the model sees it.
const maxDescription = 1024

// toolEntry is one server tool as the model sees it.
type toolEntry struct {
	server string // the config name
	orig   string // the server's name for it
	def    tools.ExtDefinition
	tokens int
}

// exposedTool is a tool the model has in its list.
type exposedTool struct {
	def    tools.ExtDefinition
	tokens int
}

// listTools lists c's tools as definitions.
func (m *Manager) listTools(ctx context.Context, c ServerConfig, cs *sdk.ClientSession) ([]toolEntry, error) {
	caps := cs.InitializeResult().Capabilities
	if caps != nil && caps.Tools == nil {
		return nil, nil
	}
	var out []toolEntry
	seen := map[string]bool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		name := ToolName(c.Name, t.Name)
		if seen[name] { // two names that sanitise alike ("a.b", "a_b") stay apart
			name = hashed(name, c.Name+"\x00"+t.Name)
		}
		seen[name] = true
		desc := strings.TrimSpace(t.Description)
		if desc == "" {
			desc = t.Title
		}
		if len(desc) > maxDescription {
			desc = desc[:maxDescription] + "..."
		}
		mode := tools.ModeAsk
		if slices.Contains(c.Tools, t.Name) || slices.Contains(c.Tools, name) {
			mode = tools.ModeAllow
		}
		d := tools.ExtDefinition{
			Definition: tools.Definition{Name: name, Description: desc, Parameters: normalizeSchema(t.InputSchema)},
			Group:      GroupName(c.Name), Mode: mode,
			Observe: c.transport() == "stdio",
			Summary: fmt.Sprintf("MCP server %s, tool %s", c.Name, t.Name),
		}
		out = append(out, toolEntry{server: c.Name, orig: t.Name, def: d, tokens: m.defTokens(d.Definition)})
	}
	return out, nil
}

// normalizeSchema makes an input schema one every provider takes: an
// object with properties, without the $schema keyword some reject.
func normalizeSchema(s any) json.RawMessage {
	var obj map[string]any
	if b, err := json.Marshal(s); err == nil {
		_ = json.Unmarshal(b, &obj) // not an object: replaced below
	}
	if obj == nil {
		obj = map[string]any{}
	}
	delete(obj, "$schema")
	obj["type"] = "object"
	if _, ok := obj["properties"]; !ok {
		obj["properties"] = map[string]any{}
	}
	b, _ := json.Marshal(obj) // decoded from JSON: marshals
	return b
}

// wireTool is a tool as a chat request sends it, its fields in the
// order the agent sends them.
type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

func toWire(d tools.Definition) wireTool {
	return wireTool{"function", wireFunction{d.Name, d.Description, d.Parameters}}
}

// defTokens is what d costs in a request, as sent.
func (m *Manager) defTokens(d tools.Definition) int {
	b, _ := json.Marshal(toWire(d)) // plain values: marshals
	return m.opts.Count(string(b))
}

// budget is how many tokens MCP schemas may take before they are deferred.
func (m *Manager) budget() int {
	if m.opts.DeferRatio < 0 {
		return int(^uint(0) >> 1)
	}
	w := m.opts.Window
	if w <= 0 {
		w = 8192
	}
	return int(float64(w) * m.opts.DeferRatio)
}

// readyTools are the tools of the ready servers, in config order.
func (m *Manager) readyTools() (all []toolEntry, resources bool) {
	for _, s := range m.servers {
		s.mu.Lock()
		if s.state == StateReady {
			all = append(all, s.tools...)
			resources = resources || s.resources
		}
		s.mu.Unlock()
	}
	return all, resources
}

// Definitions are the MCP tools the model has now (tools.Extension): the
// tools of the ready servers while their schemas fit the budget; once they
// do not, SearchMcpTools, CallMcpTool and the resource tools, and nothing
// more for the rest of the session: a tool the model loads comes as a
// message (its schema in SearchMcpTools' result) and is called through
// CallMcpTool, so the tool list, which precedes every message, never
// changes and the provider's cached prefix survives. The list only grows
// at its end.
func (m *Manager) Definitions() []tools.ExtDefinition {
	all, resources := m.readyTools()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.servers) == 0 {
		return nil
	}
	total := 0
	for _, e := range m.exposed {
		total += e.tokens
	}
	for _, t := range all {
		if !m.isExp[t.def.Name] {
			total += t.tokens
		}
	}
	if !m.deferred && total > m.budget() {
		m.deferred = true
	}
	// The deferred set only once deferred (sticky, so it appears once):
	// a server still starting is not waited for, its tools are appended
	// when it is ready, if they fit the budget. Once deferred the resource
	// tools come with it whether or not a ready server has resources yet:
	// a server that starts later must not change the list.
	if m.deferred {
		m.expose(m.searchDef())
		m.expose(m.callDef())
		resources = true
	}
	if !m.deferred {
		for _, t := range all {
			m.expose(exposedTool{def: t.def, tokens: t.tokens})
		}
	}
	if resources {
		for _, d := range resourceDefs() {
			m.expose(exposedTool{def: d, tokens: m.defTokens(d.Definition)})
		}
	}
	out := make([]tools.ExtDefinition, len(m.exposed))
	for i, e := range m.exposed {
		out[i] = e.def
	}
	return out
}

// expose appends e to the model's list unless it is there. Call with mu held.
func (m *Manager) expose(e exposedTool) {
	if m.isExp[e.def.Name] {
		return
	}
	m.isExp[e.def.Name] = true
	m.exposed = append(m.exposed, e)
}

// Deferred reports whether MCP tools are reached through SearchMcpTools.
func (m *Manager) Deferred() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.deferred
}

// ExposedTokens is what the MCP tools the model has add to a request:
// their list counted as it goes on the wire, as the agent counts the
// request's tools (recounted when the list grows). /mcp, /context and
// `gencode mcp list` show it.
func (m *Manager) ExposedTokens() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.exposed) == 0 {
		return 0
	}
	if m.countedN != len(m.exposed) {
		list := make([]wireTool, len(m.exposed))
		for i, e := range m.exposed {
			list[i] = toWire(e.def.Definition)
		}
		b, _ := json.Marshal(list) // plain values: marshals
		m.countedN, m.counted = len(m.exposed), m.opts.Count(string(b))
	}
	return m.counted
}

const searchDescription = "Find tools of the user's MCP servers (named mcp__SERVER__TOOL) by keywords in their names and descriptions, and load them. " +
	"Pass query to list matches; pass load with exact tool names to get their descriptions and input schemas, then call them with " + ToolCall + " (they stay loaded). " +
	"Servers still starting are waited for briefly."

const searchSchema = `{"type":"object","properties":{"query":{"type":"string","description":"keywords, e.g. \"github issue\""},"load":{"type":"array","items":{"type":"string"},"description":"tool names to load"}}}`

func (m *Manager) searchDef() exposedTool {
	d := tools.ExtDefinition{Definition: tools.Definition{Name: ToolSearch, Description: searchDescription,
		Parameters: json.RawMessage(searchSchema)}, Mode: tools.ModeAllow, Summary: "search MCP tools"}
	return exposedTool{def: d, tokens: m.defTokens(d.Definition)}
}

const callDescription = "Call a tool of the user's MCP servers that " + ToolSearch + " loaded: tool is its full name (mcp__SERVER__TOOL), " +
	"arguments the object its input schema describes. It runs, and asks the user, exactly as that tool would."

const callSchema = `{"type":"object","properties":{"tool":{"type":"string","description":"the MCP tool, e.g. \"mcp__github__create_issue\""},"arguments":{"type":"object","description":"its arguments, as its input schema says"}},"required":["tool","arguments"]}`

// callDef is CallMcpTool. Its own mode does not matter: tools.Set checks
// a call of it as a call of the tool it names (Resolve).
func (m *Manager) callDef() exposedTool {
	d := tools.ExtDefinition{Definition: tools.Definition{Name: ToolCall, Description: callDescription,
		Parameters: json.RawMessage(callSchema)}, Mode: tools.ModeAsk, Summary: "call an MCP tool"}
	return exposedTool{def: d, tokens: m.defTokens(d.Definition)}
}

func resourceDefs() []tools.ExtDefinition {
	return []tools.ExtDefinition{
		{Definition: tools.Definition{Name: ToolListResources,
			Description: "List the resources (files, records, documents) the user's MCP servers offer: uri, name, type. Optional server limits it to one server.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"server":{"type":"string"}}}`)}, Mode: tools.ModeAllow, Summary: "list MCP resources"},
		{Definition: tools.Definition{Name: ToolReadResource,
			Description: "Read one resource of an MCP server by its uri (from ListMcpResources); text comes back as is, binary as its type and size.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"server":{"type":"string"},"uri":{"type":"string"}},"required":["server","uri"]}`)}, Mode: tools.ModeAllow, Summary: "read an MCP resource"},
	}
}

// Lookup finds a tool by its model name (tools.Extension), waiting within
// ctx (at most the server's timeout) for servers still starting.
func (m *Manager) Lookup(ctx context.Context, name string) (tools.ExtDefinition, bool) {
	switch name {
	case ToolSearch:
		return m.searchDef().def, true
	case ToolCall:
		return m.callDef().def, true
	case ToolListResources, ToolReadResource:
		for _, d := range resourceDefs() {
			if d.Name == name {
				return d, true
			}
		}
	}
	for _, s := range m.servers {
		if !strings.HasPrefix(name, GroupName(s.cfg.Name)+"__") {
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
		_, _ = s.awaitReady(wctx) // not ready: Call says why
		cancel()
		s.mu.Lock()
		for _, t := range s.tools {
			if t.def.Name == name {
				s.mu.Unlock()
				return t.def, true
			}
		}
		state, last := s.state, s.lastErr
		s.mu.Unlock()
		if state != StateReady {
			// Its tools are not known: the call gets the server's state.
			// One the user has not approved (or turned off) is refused
			// before any permission is asked: allowing it changes nothing.
			d := tools.ExtDefinition{Definition: tools.Definition{Name: name}, Group: GroupName(s.cfg.Name),
				Summary: fmt.Sprintf("MCP server %s (%s: %s)", s.cfg.Name, state, last)}
			if state == StateUnapproved || state == StateDisabled {
				d.Refused = s.refusal(state)
			}
			return d, true
		}
	}
	return tools.ExtDefinition{}, false
}

// entry finds a ready server's tool.
func (m *Manager) entry(name string) (*server, toolEntry, bool) {
	for _, s := range m.servers {
		s.mu.Lock()
		for _, t := range s.tools {
			if t.def.Name == name {
				s.mu.Unlock()
				return s, t, true
			}
		}
		s.mu.Unlock()
	}
	return nil, toolEntry{}, false
}

// Call runs one tool call (tools.Extension). Every failure is a result
// the model reads: a server down, a timeout, a crash mid-call.
func (m *Manager) Call(ctx context.Context, name string, args json.RawMessage) tools.ExtResult {
	switch name {
	case ToolSearch:
		return m.search(ctx, args)
	case ToolCall:
		// The permission step is tools.Set's: it runs a proxied call as
		// the tool it names (Resolve), never through here.
		return errResult("%s is run by the tool set, as the tool it names", ToolCall)
	case ToolListResources:
		return m.listResources(ctx, args)
	case ToolReadResource:
		return m.readResource(ctx, args)
	}
	s, t, ok := m.entry(name)
	if !ok {
		for _, srv := range m.servers {
			if strings.HasPrefix(name, GroupName(srv.cfg.Name)+"__") {
				if _, err := srv.awaitReady(ctx); err != nil {
					return errResult("%s not run: %v", name, err)
				}
			}
		}
		return errResult("unknown tool %s: no MCP server offers it (see /mcp)", name)
	}
	var arguments map[string]any
	if err := json.Unmarshal(args, &arguments); err != nil {
		return errResult("%s: the arguments must be a JSON object: %v", name, err)
	}
	timeout := s.cfg.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cs, err := s.awaitReady(ctx)
	if err != nil {
		return errResult("%s not run: %v", name, err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: t.orig, Arguments: arguments})
	switch {
	case err == nil:
		return toResult(res)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return errResult("%s timed out after %s: the MCP server %s did not answer (the call was cancelled)", name, timeout, s.cfg.Name)
	case ctx.Err() != nil:
		return errResult("%s cancelled: %v", name, context.Cause(ctx))
	case s.lost(cs, err):
		return errResult("%s failed: the MCP server %s stopped during the call (%s); gencode restarts it", name, s.cfg.Name, oneLine(err.Error()))
	default:
		return errResult("%s failed: %s", name, oneLine(err.Error()))
	}
}

// lost reports whether a call's error came from the connection ending
// (the server crashed or exited) rather than from the server's answer.
func (s *server) lost(cs *sdk.ClientSession, err error) bool {
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		return false // the server answered with an error
	}
	if errors.Is(err, sdk.ErrConnectionClosed) {
		return true
	}
	// The run loop notices the end of the connection a moment later.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		gone := s.session != cs
		s.mu.Unlock()
		if gone {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func errResult(format string, args ...any) tools.ExtResult {
	return tools.ExtResult{Text: fmt.Sprintf(format, args...), IsError: true}
}

// toResult turns a tool's result into the text the model reads.
func toResult(r *sdk.CallToolResult) tools.ExtResult {
	var b strings.Builder
	texts := map[string]bool{}
	for _, c := range r.Content {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		switch c := c.(type) {
		case *sdk.TextContent:
			b.WriteString(c.Text)
			texts[strings.TrimSpace(c.Text)] = true
		case *sdk.ImageContent:
			fmt.Fprintf(&b, "[image: %s, %s]", orUnknown(c.MIMEType), size(len(c.Data)))
		case *sdk.AudioContent:
			fmt.Fprintf(&b, "[audio: %s, %s]", orUnknown(c.MIMEType), size(len(c.Data)))
		case *sdk.ResourceLink:
			fmt.Fprintf(&b, "[resource link: %s %s", c.Name, c.URI)
			if c.MIMEType != "" {
				fmt.Fprintf(&b, ", %s", c.MIMEType)
			}
			if c.Description != "" {
				fmt.Fprintf(&b, ": %s", c.Description)
			}
			b.WriteString("]")
		case *sdk.EmbeddedResource:
			writeContents(&b, c.Resource)
		default:
			raw, _ := json.Marshal(c)
			fmt.Fprintf(&b, "[content: %s]", raw)
		}
	}
	if r.StructuredContent != nil {
		raw, err := json.Marshal(r.StructuredContent)
		if err == nil && !texts[strings.TrimSpace(string(raw))] {
			var pretty any
			if json.Unmarshal(raw, &pretty) == nil {
				raw, _ = json.MarshalIndent(pretty, "", " ")
			}
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString("structured content:\n")
			b.Write(raw)
		}
	}
	text := b.String()
	if text == "" {
		text = "(no output)"
	}
	return tools.ExtResult{Text: text, IsError: r.IsError}
}

func writeContents(b *strings.Builder, rc *sdk.ResourceContents) {
	if rc == nil {
		b.WriteString("[empty resource]")
		return
	}
	if rc.Text != "" || len(rc.Blob) == 0 {
		fmt.Fprintf(b, "[resource %s%s]\n%s", rc.URI, typeNote(rc.MIMEType), rc.Text)
		return
	}
	fmt.Fprintf(b, "[resource %s: %s, %s]", rc.URI, orUnknown(rc.MIMEType), size(len(rc.Blob)))
}

func typeNote(t string) string {
	if t == "" {
		return ""
	}
	return ", " + t
}

func orUnknown(t string) string {
	if t == "" {
		return "unknown type"
	}
	return t
}

// size says n bytes the way a person reads it.
func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// searchWait bounds how long SearchMcpTools waits for starting servers.
const searchWait = 10 * time.Second

// search is SearchMcpTools: match tools by words, and load the named ones.
func (m *Manager) search(ctx context.Context, raw json.RawMessage) tools.ExtResult {
	var a struct {
		Query string   `json:"query"`
		Load  []string `json:"load"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return errResult("%s: arguments must be {\"query\": string, \"load\": [names]}: %v", ToolSearch, err)
	}
	wctx, cancel := context.WithTimeout(ctx, searchWait)
	for _, s := range m.servers {
		_, _ = s.awaitReady(wctx) // not ready: left out, and said below
	}
	cancel()
	all, _ := m.readyTools()
	var b strings.Builder
	if len(a.Load) > 0 {
		var loaded []toolEntry
		var unknown []string
		m.mu.Lock()
		for _, n := range a.Load {
			i := slices.IndexFunc(all, func(t toolEntry) bool { return t.def.Name == n || t.orig == n })
			if i < 0 {
				unknown = append(unknown, n)
				continue
			}
			m.loaded[all[i].def.Name] = true
			loaded = append(loaded, all[i])
		}
		m.mu.Unlock()
		if len(loaded) > 0 {
			names := make([]string, len(loaded))
			for i, t := range loaded {
				names[i] = t.def.Name
			}
			fmt.Fprintf(&b, "loaded: %s. Call them with %s: {\"tool\": NAME, \"arguments\": {...}}, the arguments as each input schema says.\n",
				strings.Join(names, ", "), ToolCall)
			for _, t := range loaded {
				b.WriteString("\n" + schemaText(t.def.Definition, 0) + "\n")
			}
		}
		if len(unknown) > 0 {
			fmt.Fprintf(&b, "no such MCP tool: %s\n", strings.Join(unknown, ", "))
		}
	}
	if q := strings.TrimSpace(a.Query); q != "" || len(a.Load) == 0 {
		words := strings.Fields(strings.ToLower(strings.NewReplacer("_", " ", "-", " ").Replace(q)))
		type hit struct {
			t     toolEntry
			score int
		}
		var hits []hit
		for _, t := range all {
			hay := strings.ToLower(strings.NewReplacer("_", " ", "-", " ").Replace(t.orig + " " + t.server + " " + t.def.Description))
			score := 0
			for _, w := range words {
				if strings.Contains(strings.ToLower(t.orig), w) {
					score += 3
				}
				if strings.Contains(hay, w) {
					score++
				}
			}
			if score > 0 || len(words) == 0 {
				hits = append(hits, hit{t, score})
			}
		}
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
		if len(hits) > 10 {
			hits = hits[:10]
		}
		if len(hits) == 0 {
			fmt.Fprintf(&b, "no MCP tool matches %q\n", q)
		}
		for _, h := range hits {
			fmt.Fprintf(&b, "%s: %s\n", h.t.def.Name, firstSentence(h.t.def.Description))
		}
		if len(hits) > 0 {
			b.WriteString("call again with load: [names] to use them\n")
		}
	}
	for _, s := range m.servers {
		s.mu.Lock()
		if s.state == StateStarting || s.state == StateFailed {
			fmt.Fprintf(&b, "(server %s is %s; its tools are not listed)\n", s.cfg.Name, s.state)
		}
		s.mu.Unlock()
	}
	return tools.ExtResult{Text: strings.TrimSpace(b.String())}
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i+1]
	}
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

// listResources is ListMcpResources.
func (m *Manager) listResources(ctx context.Context, raw json.RawMessage) tools.ExtResult {
	var a struct {
		Server string `json:"server"`
	}
	_ = json.Unmarshal(raw, &a) // optional argument
	var b strings.Builder
	for _, s := range m.servers {
		if a.Server != "" && s.cfg.Name != a.Server {
			continue
		}
		s.mu.Lock()
		cs, has := s.session, s.resources && s.state == StateReady
		s.mu.Unlock()
		if !has {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
		n := 0
		for r, err := range cs.Resources(cctx, nil) {
			if err != nil {
				fmt.Fprintf(&b, "%s: listing failed: %s\n", s.cfg.Name, oneLine(err.Error()))
				break
			}
			fmt.Fprintf(&b, "%s: %s (%s%s)", s.cfg.Name, r.URI, r.Name, typeNote(r.MIMEType))
			if r.Description != "" {
				fmt.Fprintf(&b, " %s", firstSentence(r.Description))
			}
			b.WriteString("\n")
			n++
		}
		cancel()
		if n == 0 {
			fmt.Fprintf(&b, "%s: no resources\n", s.cfg.Name)
		}
	}
	if b.Len() == 0 {
		if a.Server != "" {
			return errResult("no ready MCP server %q offers resources", a.Server)
		}
		return tools.ExtResult{Text: "no ready MCP server offers resources"}
	}
	return tools.ExtResult{Text: strings.TrimSpace(b.String())}
}

// readResource is ReadMcpResource.
func (m *Manager) readResource(ctx context.Context, raw json.RawMessage) tools.ExtResult {
	var a struct {
		Server string `json:"server"`
		URI    string `json:"uri"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.URI == "" || a.Server == "" {
		return errResult("%s needs server and uri (see %s)", ToolReadResource, ToolListResources)
	}
	s := m.byName(a.Server)
	if s == nil {
		return errResult("no MCP server %q", a.Server)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	cs, err := s.awaitReady(ctx)
	if err != nil {
		return errResult("%v", err)
	}
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: a.URI})
	if err != nil {
		return errResult("read %s from %s: %s", a.URI, a.Server, oneLine(err.Error()))
	}
	var b strings.Builder
	for i, c := range res.Contents {
		if i > 0 {
			b.WriteString("\n")
		}
		writeContents(&b, c)
	}
	return tools.ExtResult{Text: b.String()}
}
