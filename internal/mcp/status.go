package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gencode/gencode/internal/termtext"
)

// ServerStatus is one line of /mcp and `gencode mcp list`.
type ServerStatus struct {
	Name         string   `json:"name"`
	State        string   `json:"state"`
	Transport    string   `json:"transport"`
	Source       string   `json:"source"` // "config" or ".mcp.json"
	Tools        int      `json:"tools"`
	ToolNames    []string `json:"tool_names,omitempty"`
	SchemaTokens int      `json:"schema_tokens"`
	Prompts      int      `json:"prompts"`
	Resources    bool     `json:"resources"`
	Restarts     int      `json:"restarts"`
	LastError    string   `json:"last_error,omitempty"`
	// Runs is what a project server waiting for approval would run (its
	// command and arguments, or its URL): what the user approves.
	Runs string `json:"runs,omitempty"`
}

// Report is the state of all servers.
type Report struct {
	Servers []ServerStatus `json:"servers"`
	// Deferred: the MCP tools are reached through SearchMcpTools.
	Deferred bool `json:"deferred"`
	// Budget is the tokens MCP schemas may take before they are deferred.
	Budget int `json:"budget"`
	// ExposedTokens is what the MCP tools the model has cost per request:
	// the one figure of /mcp, /context's MCP section and `gencode mcp
	// list` (the servers' SchemaTokens are their tools' alone, sent or not).
	ExposedTokens int `json:"exposed_tokens"`
}

// Status reports every configured server. The tools of servers that
// became ready are exposed as the next request would expose them, so
// that ExposedTokens is what that request carries.
func (m *Manager) Status() Report {
	m.Definitions()
	r := Report{Deferred: m.Deferred(), Budget: m.budget(), ExposedTokens: m.ExposedTokens()}
	for _, s := range m.servers {
		s.mu.Lock()
		st := ServerStatus{Name: s.cfg.Name, State: s.state.String(), Transport: s.cfg.transport(), Source: "config",
			Tools: len(s.tools), Prompts: len(s.prompts), Resources: s.resources, Restarts: s.restarts, LastError: s.lastErr}
		for _, t := range s.tools {
			st.SchemaTokens += t.tokens
			st.ToolNames = append(st.ToolNames, t.def.Name)
		}
		s.mu.Unlock()
		if s.cfg.Project {
			st.Source = ProjectFile
			if st.State == StateUnapproved.String() {
				st.Runs = s.cfg.runs()
			}
		}
		r.Servers = append(r.Servers, st)
	}
	return r
}

// WaitStarted waits within ctx until no server is starting (for `gencode
// mcp list`, which reports what the servers offer).
func (m *Manager) WaitStarted(ctx context.Context) {
	for _, s := range m.servers {
		s.mu.Lock()
		ready, state := s.ready, s.state
		s.mu.Unlock()
		if state != StateStarting {
			continue // ready, failed (a restart is due), off or unapproved
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return
		}
	}
}

// Text renders r for a terminal: one block per server.
func (r Report) Text() string {
	if len(r.Servers) == 0 {
		return "No MCP servers configured. Add [mcp.NAME] to config.toml, or a project's .mcp.json."
	}
	var b strings.Builder
	for _, s := range r.Servers {
		fmt.Fprintf(&b, "%s  %s  %s (%s)", s.Name, s.State, s.Transport, s.Source)
		if s.State == "ready" || s.Tools > 0 {
			fmt.Fprintf(&b, "  %s, %d schema tokens", termtext.Count(s.Tools, "tool", "tools"), s.SchemaTokens)
			if s.Prompts > 0 {
				b.WriteString(", " + termtext.Count(s.Prompts, "prompt", "prompts"))
			}
			if s.Resources {
				b.WriteString(", resources")
			}
		}
		if s.Restarts > 0 {
			fmt.Fprintf(&b, "  restarts: %d", s.Restarts)
		}
		b.WriteString("\n")
		if s.Runs != "" {
			fmt.Fprintf(&b, "  runs: %s\n", termtext.OneLine(termtext.Sanitize(s.Runs), 200))
		}
		if s.LastError != "" {
			fmt.Fprintf(&b, "  last error: %s\n", s.LastError)
		}
	}
	if r.Deferred {
		fmt.Fprintf(&b, "Tools deferred: the model finds them with %s and calls them through %s (%d tokens per request, whatever it loads; budget %d).\n",
			ToolSearch, ToolCall, r.ExposedTokens, r.Budget)
	} else {
		with := ""
		if slices.ContainsFunc(r.Servers, func(s ServerStatus) bool { return s.Resources && s.State == StateReady.String() }) {
			with = "with the resource tools; "
		}
		fmt.Fprintf(&b, "MCP schemas: %d tokens per request (%sdeferred above %d).\n", r.ExposedTokens, with, r.Budget)
	}
	return strings.TrimRight(b.String(), "\n")
}

// JSON renders r for scripts.
func (r Report) JSON() string {
	b, _ := json.MarshalIndent(r, "", "  ") // plain values: marshals
	return string(b)
}

// Prompt is a server prompt offered as a slash command.
type Prompt struct {
	Command     string // mcp__SERVER__PROMPT, without the slash
	Server      string
	Name        string
	Description string
	Args        []string // argument names, in order
}

// Prompts lists the ready servers' prompts.
func (m *Manager) Prompts() []Prompt {
	var out []Prompt
	for _, s := range m.servers {
		s.mu.Lock()
		for _, p := range s.prompts {
			pr := Prompt{Command: ToolName(s.cfg.Name, p.Name), Server: s.cfg.Name, Name: p.Name, Description: p.Description}
			for _, a := range p.Arguments {
				pr.Args = append(pr.Args, a.Name)
			}
			out = append(out, pr)
		}
		s.mu.Unlock()
	}
	return out
}

// GetPrompt expands a prompt slash command: args are the words after it,
// given to the prompt's arguments in order (the last takes the rest).
// It returns the text to send as the user's message.
func (m *Manager) GetPrompt(ctx context.Context, command, args string) (string, error) {
	var p *Prompt
	for _, x := range m.Prompts() {
		if x.Command == command {
			p = &x
			break
		}
	}
	if p == nil {
		return "", fmt.Errorf("no mcp prompt %s", command)
	}
	s := m.byName(p.Server)
	ctx, cancel := context.WithTimeout(ctx, min(s.cfg.timeout(), 30*time.Second))
	defer cancel()
	cs, err := s.awaitReady(ctx)
	if err != nil {
		return "", err
	}
	vals := map[string]string{}
	words := strings.Fields(args)
	for i, name := range p.Args {
		if i >= len(words) {
			break
		}
		if i == len(p.Args)-1 {
			vals[name] = strings.Join(words[i:], " ")
		} else {
			vals[name] = words[i]
		}
	}
	res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: p.Name, Arguments: vals})
	if err != nil {
		return "", fmt.Errorf("get prompt %s from %s: %w", p.Name, p.Server, err)
	}
	var b strings.Builder
	for _, msg := range res.Messages {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		switch c := msg.Content.(type) {
		case *sdk.TextContent:
			b.WriteString(c.Text)
		case *sdk.EmbeddedResource:
			writeContents(&b, c.Resource)
		default:
			b.WriteString(toResult(&sdk.CallToolResult{Content: []sdk.Content{c}}).Text)
		}
	}
	return b.String(), nil
}

// Configs are the servers the Manager was made with.
func (m *Manager) Configs() []ServerConfig { return append([]ServerConfig(nil), m.opts.Servers...) }
