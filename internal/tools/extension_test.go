package tools_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/mcp"
	"github.com/gencode/gencode/internal/mcp/mcptest"
	"github.com/gencode/gencode/internal/tools"
)

// mcpServer starts a real in-process MCP server "srv" behind a Manager.
func mcpServer(t *testing.T, cfg mcp.ServerConfig) *mcp.Manager {
	t.Helper()
	cfg.Name, cfg.Command = "srv", "in-process"
	m := mcp.New(mcp.Options{Servers: []mcp.ServerConfig{cfg}, Window: 128000,
		Connect: func(ctx context.Context, _ mcp.ServerConfig) (sdk.Transport, error) {
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			if _, err := mcptest.NewServer(mcptest.Options{}, nil).Connect(ctx, &sdk.IOTransport{Reader: sr, Writer: sw}, nil); err != nil {
				return nil, err
			}
			return &sdk.IOTransport{Reader: cr, Writer: cw}, nil
		}})
	m.Start(context.Background())
	t.Cleanup(m.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m.WaitStarted(ctx)
	return m
}

// asked records the requests an Asker saw and answers with d.
type asked struct {
	mu   sync.Mutex
	reqs []tools.Request
	d    tools.Decision
}

func (a *asked) Ask(_ context.Context, r tools.Request) (tools.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reqs = append(a.reqs, r)
	return a.d, nil
}

func TestExtensionPermissions(t *testing.T) {
	tests := []struct {
		name     string
		allow    []string
		cfgTools []string
		asker    *asked
		call     string
		want     string
		wantErr  bool
		wantAsk  int
	}{
		{"print mode denies and names both flags", nil, nil, nil, "mcp__srv__echo", "--allow mcp__srv__echo (or --allow mcp__srv)", true, 0},
		{"--allow the tool", []string{"mcp__srv__echo"}, nil, nil, "mcp__srv__echo", "echo: hi", false, 0},
		{"--allow the server", []string{"mcp__srv"}, nil, nil, "mcp__srv__echo", "echo: hi", false, 0},
		{"the config's tools allow-list", nil, []string{"echo"}, nil, "mcp__srv__echo", "echo: hi", false, 0},
		{"the dialog allows once", nil, nil, &asked{d: tools.AllowOnce}, "mcp__srv__echo", "echo: hi", false, 1},
		{"the dialog denies", nil, nil, &asked{d: tools.Deny}, "mcp__srv__echo", "declined", true, 1},
		{"isError is a tool error", []string{"mcp__srv"}, nil, nil, "mcp__srv__fail", "boom", true, 0},
		{"unknown tool", []string{"mcp__srv"}, nil, nil, "mcp__srv__nope", "unknown tool", true, 0},
		{"unknown server", nil, nil, nil, "mcp__other__x", "unknown tool", true, 0},
		{"the search tool needs no approval", nil, nil, nil, "SearchMcpTools", "mcp__srv__echo", false, 0},
		{"the resource tools need no approval", nil, nil, nil, "ListMcpResources", "srv: mem://notes", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mcpServer(t, mcp.ServerConfig{Tools: tt.cfgTools})
			perms := tools.DefaultPermissions()
			require.NoError(t, perms.Allow(tt.allow...))
			opts := tools.Options{WorkDir: t.TempDir(), Permissions: perms, Extension: m}
			if tt.asker != nil {
				opts.Asker = tt.asker
			}
			s := tools.New(opts)
			r := s.Run(context.Background(), tools.Call{ID: "1", Name: tt.call, Arguments: `{"text":"hi"}`})
			require.Contains(t, r.Content, tt.want)
			require.Equal(t, tt.wantErr, r.IsError, r.Content)
			require.Equal(t, tt.call, r.Meta.Tool)
			if tt.asker != nil && tt.wantAsk > 0 {
				require.Len(t, tt.asker.reqs, tt.wantAsk)
				require.Contains(t, tt.asker.reqs[0].Summary, "MCP server srv, tool echo")
				require.JSONEq(t, `{"text":"hi"}`, tt.asker.reqs[0].Args)
			}
		})
	}
}

func TestExtensionOutputCapAndRedaction(t *testing.T) {
	m := mcpServer(t, mcp.ServerConfig{})
	perms := tools.DefaultPermissions()
	require.NoError(t, perms.Allow("mcp__srv"))
	s := tools.New(tools.Options{WorkDir: t.TempDir(), Permissions: perms, Extension: m, OutputCapTokens: 1000,
		Secrets: []string{"echo: sk-secret-value"}})
	r := s.Run(context.Background(), tools.Call{ID: "1", Name: "mcp__srv__big", Arguments: `{"bytes":5000000}`})
	require.False(t, r.IsError)
	require.Less(t, len(r.Content), 10000, "capped like a built-in tool's output")
	require.Len(t, r.Full, 5000000, "the log keeps it whole")
	r = s.Run(context.Background(), tools.Call{ID: "2", Name: "mcp__srv__echo", Arguments: `{"text":"sk-secret-value \u001b[31mred"}`})
	require.NotContains(t, r.Content, "sk-secret-value")
	require.NotContains(t, r.Content, "\x1b")
}

func TestExtensionObservesFileChanges(t *testing.T) {
	m := mcpServer(t, mcp.ServerConfig{})
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	perms := tools.DefaultPermissions()
	require.NoError(t, perms.Allow("mcp__srv"))
	s := tools.New(tools.Options{WorkDir: dir, Permissions: perms, Extension: m})
	r := s.Run(context.Background(), tools.Call{ID: "1", Name: "mcp__srv__write",
		Arguments: `{"path":"` + filepath.Join(dir, "made.txt") + `","content":"x"}`})
	require.False(t, r.IsError, r.Content)
	require.NotNil(t, r.Meta.Changes)
	require.True(t, r.Meta.Changes.Observed, r.Meta.Changes.Reason)
	require.Equal(t, []string{"made.txt"}, r.Meta.Changes.Created)
	_, err = os.Stat(filepath.Join(dir, "made.txt"))
	require.NoError(t, err)
}

func TestExtensionDefinitionsAndRules(t *testing.T) {
	m := mcpServer(t, mcp.ServerConfig{})
	perms := tools.DefaultPermissions()
	perms["mcp__srv__fail"] = tools.ModeDeny
	s := tools.New(tools.Options{WorkDir: t.TempDir(), Permissions: perms, Extension: m})
	var names []string
	for _, d := range s.LateDefinitions() {
		names = append(names, d.Name)
	}
	require.Contains(t, names, "mcp__srv__echo")
	require.NotContains(t, names, "mcp__srv__fail", "a denied tool is left out")
	require.Equal(t, len(s.Definitions()), len(tools.Names()), "the built-in list is unchanged")

	rule, ok := tools.ProjectRule(tools.Request{Tool: "mcp__srv__echo", Args: `{}`})
	require.True(t, ok)
	require.NoError(t, rule.Validate(t.TempDir()))
	require.Error(t, tools.Rule{Tool: "mcp__x", Command: []string{"a"}}.Validate(t.TempDir()))
	require.True(t, strings.HasPrefix(rule.String(), "mcp__srv__echo"))
}

// proxied is a CallMcpTool call of tool with args.
func proxied(id, tool, args string) tools.Call {
	return tools.Call{ID: id, Name: tools.ToolCallMcp, Arguments: `{"tool":"` + tool + `","arguments":` + args + `}`}
}

// TestProxiedCallIsTheToolItNames: a CallMcpTool call is asked for, allowed,
// refused, capped, redacted, observed and recorded as a direct call of the
// MCP tool it names; the dialog shows that tool and its own arguments.
func TestProxiedCallIsTheToolItNames(t *testing.T) {
	tests := []struct {
		name    string
		allow   []string
		asker   *asked
		call    tools.Call
		want    string
		wantErr bool
		wantAsk bool
	}{
		{"print mode denies and names the tool's flags", nil, nil, proxied("1", "mcp__srv__echo", `{"text":"hi"}`), "--allow mcp__srv__echo (or --allow mcp__srv)", true, false},
		{"--allow the tool", []string{"mcp__srv__echo"}, nil, proxied("1", "mcp__srv__echo", `{"text":"hi"}`), "echo: hi", false, false},
		{"--allow the server", []string{"mcp__srv"}, nil, proxied("1", "mcp__srv__echo", `{"text":"hi"}`), "echo: hi", false, false},
		{"the dialog shows the tool", nil, &asked{d: tools.AllowOnce}, proxied("1", "mcp__srv__echo", `{"text":"hi"}`), "echo: hi", false, true},
		{"the dialog denies", nil, &asked{d: tools.Deny}, proxied("1", "mcp__srv__echo", `{"text":"hi"}`), "declined", true, true},
		{"arguments as a JSON string", []string{"mcp__srv"}, nil, proxied("1", "mcp__srv__echo", `"{\"text\":\"hi\"}"`), "echo: hi", false, false},
		{"wrong arguments: never asked", nil, &asked{d: tools.AllowOnce}, proxied("1", "mcp__srv__echo", `{"txt":"hi"}`), "do not match the input schema of mcp__srv__echo", true, false},
		{"unknown tool", []string{"mcp__srv"}, nil, proxied("1", "mcp__srv__nope", `{}`), "no MCP server offers mcp__srv__nope", true, false},
		{"no tool named", []string{"mcp__srv"}, nil, tools.Call{ID: "1", Name: tools.ToolCallMcp, Arguments: `{"arguments":{}}`}, `"tool" is missing`, true, false},
		{"not an MCP tool", nil, nil, proxied("1", "Bash", `{"command":"rm -rf x"}`), `"Bash" is not an MCP tool`, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mcpServer(t, mcp.ServerConfig{})
			perms := tools.DefaultPermissions()
			require.NoError(t, perms.Allow(tt.allow...))
			opts := tools.Options{WorkDir: t.TempDir(), Permissions: perms, Extension: m}
			if tt.asker != nil {
				opts.Asker = tt.asker
			}
			s := tools.New(opts)
			r := s.Run(context.Background(), tools.Call{ID: "0", Name: mcp.ToolSearch, Arguments: `{"load":["mcp__srv__echo"]}`})
			require.False(t, r.IsError, r.Content)
			r = s.Run(context.Background(), tt.call)
			require.Contains(t, r.Content, tt.want)
			require.Equal(t, tt.wantErr, r.IsError, r.Content)
			if inner, ok := tools.Unwrap(tt.call); ok && strings.HasPrefix(inner.Name, "mcp__") {
				require.Equal(t, inner.Name, r.Meta.Tool, "recorded as the tool it names")
			}
			if tt.asker != nil {
				if !tt.wantAsk {
					require.Empty(t, tt.asker.reqs)
					return
				}
				require.Len(t, tt.asker.reqs, 1)
				require.Equal(t, "mcp__srv__echo", tt.asker.reqs[0].Tool)
				require.Contains(t, tt.asker.reqs[0].Summary, "MCP server srv, tool echo")
				require.JSONEq(t, `{"text":"hi"}`, tt.asker.reqs[0].Args)
			}
		})
	}
}

// TestProxiedCallOutput: a proxied call's result is capped and redacted,
// and a stdio server's file changes observed, as a direct call's.
func TestProxiedCallOutput(t *testing.T) {
	m := mcpServer(t, mcp.ServerConfig{})
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	perms := tools.DefaultPermissions()
	require.NoError(t, perms.Allow("mcp__srv"))
	s := tools.New(tools.Options{WorkDir: dir, Permissions: perms, Extension: m, OutputCapTokens: 1000,
		Secrets: []string{"echo: sk-secret-value"}})
	r := s.Run(context.Background(), tools.Call{ID: "0", Name: mcp.ToolSearch, Arguments: `{"load":["mcp__srv__big","mcp__srv__echo","mcp__srv__write"]}`})
	require.False(t, r.IsError, r.Content)
	r = s.Run(context.Background(), proxied("1", "mcp__srv__big", `{"bytes":5000000}`))
	require.False(t, r.IsError, r.Content)
	require.Less(t, len(r.Content), 10000, "capped like a built-in tool's output")
	require.Len(t, r.Full, 5000000, "the log keeps it whole")
	r = s.Run(context.Background(), proxied("2", "mcp__srv__echo", `{"text":"sk-secret-value \u001b[31mred"}`))
	require.NotContains(t, r.Content, "sk-secret-value")
	require.NotContains(t, r.Content, "\x1b")
	r = s.Run(context.Background(), proxied("3", "mcp__srv__write", `{"path":"`+filepath.Join(dir, "made.txt")+`","content":"x"}`))
	require.False(t, r.IsError, r.Content)
	require.NotNil(t, r.Meta.Changes)
	require.Equal(t, []string{"made.txt"}, r.Meta.Changes.Created)
}

func TestDescribeProxiedCall(t *testing.T) {
	d := tools.Describe(proxied("1", "mcp__fs__write_file", `{"path":"a.txt","content":"x"}`))
	require.Equal(t, "mcp__fs__write_file", d.Name)
	require.Equal(t, tools.CallModify, d.Kind)
	require.Equal(t, []string{"a.txt"}, d.Paths)
	require.Equal(t, "a.txt", d.Summary)
}
