package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gencode/gencode/internal/termtext"
)

// MCPServers are the user's MCP servers as /mcp shows and manages them
// (package mcp, through the CLI).
type MCPServers interface {
	// Lines describe each server: state, transport, tools, schema tokens,
	// the last error; then whether the tools are deferred.
	Lines() []string
	// Schemas are each server's tool schema tokens, and what the MCP
	// tools the model has cost per request (the late tools, after the
	// fixed ones), and whether they are deferred behind SearchMcpTools.
	Schemas() (servers []ServerSchema, sent int, deferred bool)
	// Approve starts a project server (.mcp.json) and stores the
	// approval; Revoke stops it and takes the approval back.
	Approve(name string) error
	Revoke(name string) error
	// Prompt expands a server prompt command (mcp__SERVER__PROMPT, no
	// slash) with its arguments; ok is false when there is no such prompt.
	Prompt(ctx context.Context, command, args string) (text string, ok bool, err error)
	// PromptCommands are the prompt commands of the ready servers
	// (mcp__SERVER__PROMPT, no slash), for completion.
	PromptCommands() []string
}

// ServerSchema is one server's share of /context.
type ServerSchema struct {
	Name   string
	State  string
	Tokens int
}

// mcpContextSection is /context's MCP part: the schemas' tokens per
// server, and what each request carries of them.
func mcpContextSection(m MCPServers, window int) Section {
	servers, sent, deferred := m.Schemas()
	sec := Section{Title: "MCP tool schemas (sent after the fixed tools)"}
	for _, s := range servers {
		sec.Lines = append(sec.Lines, fmt.Sprintf("%-28s %9s  %5s  %s", termtext.Sanitize(s.Name), termtext.Thousands(s.Tokens), pct(s.Tokens, window), s.State))
	}
	how := "the MCP tools given this run (a list that only grows)"
	if deferred {
		how = "deferred: SearchMcpTools, CallMcpTool, resources"
	}
	sec.Lines = append(sec.Lines, fmt.Sprintf("%-28s %9s  %5s  %s", "Sent with each request", termtext.Thousands(sent), pct(sent, window), how))
	return sec
}

// runMCP shows the servers (/mcp), or approves or revokes a project
// server: /mcp approve NAME, /mcp revoke NAME.
func runMCP(_ context.Context, r *Registry, _ State, in Invocation) (Result, error) {
	m := r.deps.MCP
	if m == nil {
		return Result{Text: "No MCP servers configured. Add [mcp.NAME] to config.toml, or a project's .mcp.json."}, nil
	}
	switch {
	case len(in.Args) == 0:
	case len(in.Args) == 2 && in.Args[0] == "approve":
		if err := m.Approve(in.Args[1]); err != nil {
			return Result{}, err
		}
		return Result{Text: fmt.Sprintf("Approved MCP server %s for this project; it is starting. /mcp revoke %s takes it back.", in.Args[1], in.Args[1])}, nil
	case len(in.Args) == 2 && in.Args[0] == "revoke":
		if err := m.Revoke(in.Args[1]); err != nil {
			return Result{}, err
		}
		return Result{Text: fmt.Sprintf("Revoked MCP server %s: it is stopped and will not start again until /mcp approve %s.", in.Args[1], in.Args[1])}, nil
	default:
		return Result{}, errors.New("usage: /mcp [approve NAME | revoke NAME]")
	}
	sec := Section{}
	for _, l := range m.Lines() {
		sec.Lines = append(sec.Lines, termtext.Sanitize(l))
	}
	return Result{Report: &Report{Title: "MCP servers", Sections: []Section{sec},
		Footer: "/mcp approve NAME starts a project server; /mcp__SERVER__PROMPT runs a server's prompt"}}, nil
}

// runMCPPrompt runs /mcp__SERVER__PROMPT [args]: the prompt's text goes
// to the model as the user's message.
func (r *Registry) runMCPPrompt(ctx context.Context, name, line string) (Result, bool, error) {
	if r.deps.MCP == nil || !strings.HasPrefix(name, "mcp__") {
		return Result{}, false, nil
	}
	_, args, _ := strings.Cut(strings.TrimSpace(line), " ")
	text, ok, err := r.deps.MCP.Prompt(ctx, name, strings.TrimSpace(args))
	if !ok || err != nil {
		return Result{}, ok, err
	}
	return Result{Action: ActionPrompt, Prompt: text}, true, nil
}
