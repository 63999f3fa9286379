package commands

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/config"
)

// fakeMCP is a hand-written MCPServers with canned answers.
type fakeMCP struct {
	approved, revoked []string
}

func (f *fakeMCP) Lines() []string {
	return []string{"github  ready  http (config)  12 tools, 4100 schema tokens", "fs  needs approval  stdio (.mcp.json)"}
}

func (f *fakeMCP) PromptCommands() []string { return []string{"mcp__fs__review"} }

func (f *fakeMCP) Schemas() ([]ServerSchema, int, bool) {
	return []ServerSchema{{Name: "github", State: "ready", Tokens: 15200}, {Name: "fs", State: "needs approval"}}, 265, true
}

func (f *fakeMCP) Approve(name string) error {
	if name != "fs" {
		return errors.New("no server \"" + name + "\" in the project's .mcp.json")
	}
	f.approved = append(f.approved, name)
	return nil
}

func (f *fakeMCP) Revoke(name string) error {
	f.revoked = append(f.revoked, name)
	return nil
}

func (f *fakeMCP) Prompt(_ context.Context, command, args string) (string, bool, error) {
	if command != "mcp__fs__review" {
		return "", false, nil
	}
	return "Please review " + args, true, nil
}

func TestMCPCommand(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		noServers  bool
		wantText   string
		wantLines  []string
		wantPrompt string
		wantErr    string
	}{
		{name: "report", line: "/mcp", wantLines: []string{"github  ready  http (config)  12 tools, 4100 schema tokens", "fs  needs approval  stdio (.mcp.json)"}},
		{name: "approve", line: "/mcp approve fs", wantText: "Approved MCP server fs"},
		{name: "approve unknown", line: "/mcp approve web", wantErr: "no server \"web\""},
		{name: "revoke", line: "/mcp revoke fs", wantText: "Revoked MCP server fs: it is stopped and will not start again until /mcp approve fs."},
		{name: "usage", line: "/mcp frobnicate", wantErr: "usage: /mcp"},
		{name: "none configured", line: "/mcp", noServers: true, wantText: "No MCP servers configured"},
		{name: "prompt", line: "/mcp__fs__review main.go", wantPrompt: "Please review main.go"},
		{name: "unknown prompt", line: "/mcp__fs__nope", wantErr: "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deps := Deps{Config: config.Default()}
			if !tt.noServers {
				deps.MCP = &fakeMCP{}
			}
			res, err := New(deps).Run(context.Background(), State{}, tt.line)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if tt.wantText != "" {
				require.Contains(t, res.Text, tt.wantText)
			}
			if tt.wantLines != nil {
				require.NotNil(t, res.Report)
				require.Equal(t, "MCP servers", res.Report.Title)
				require.Equal(t, tt.wantLines, res.Report.Sections[0].Lines)
			}
			if tt.wantPrompt != "" {
				require.Equal(t, ActionPrompt, res.Action)
				require.Equal(t, tt.wantPrompt, res.Prompt)
			}
		})
	}
}

func TestMCPContextSection(t *testing.T) {
	sec := mcpContextSection(&fakeMCP{}, 128000)
	require.Equal(t, []string{
		"github                          15,200    12%  ready",
		"fs                                   0     0%  needs approval",
		"Sent with each request             265     0%  deferred: SearchMcpTools, CallMcpTool, resources",
	}, sec.Lines)
}

func TestMCPPromptCompletion(t *testing.T) {
	reg := New(Deps{Config: config.Default(), MCP: &fakeMCP{}})
	tests := []struct {
		prefix string
		want   []string
	}{
		{"/mcp__f", []string{"/mcp__fs__review"}},
		{"/mcp", []string{"/mcp"}}, // the prompts only once the prefix names them
		{"/mcp__x", nil},
	}
	for _, tt := range tests {
		if got := reg.Complete(tt.prefix); !slices.Equal(got, tt.want) {
			t.Errorf("Complete(%q) = %v, want %v", tt.prefix, got, tt.want)
		}
	}
}
