package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/gencodetest"
	"github.com/gencode/gencode/internal/openaitest"
)

// buildMCPServer is the SDK test server's binary (internal/mcp/mcptest),
// built once per checkout like gencode's.
func buildMCPServer(t *testing.T) string {
	t.Helper()
	path, err := gencodetest.MCPTestServer()
	require.NoError(t, err)
	return path
}

// startHTTPServer runs the test server over streamable HTTP; it is killed
// when the test ends.
func startHTTPServer(t *testing.T, bin string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-http", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSpace(line)
}

// toolNames are the tools a request carried.
func toolNames(r openaitest.Request) []string {
	var out []string
	for _, tl := range r.Tools {
		out = append(out, tl.Function.Name)
	}
	return out
}

// TestMCPThroughTheBinary runs the built binary in print mode against
// real MCP server processes: the model calls mcp__NAME__TOOL and the
// result reaches its next request.
func TestMCPThroughTheBinary(t *testing.T) {
	t.Parallel()
	bin := buildMCPServer(t)
	url := startHTTPServer(t, bin)
	tests := []struct {
		name   string
		config string
	}{
		{"stdio", fmt.Sprintf("[mcp.t]\ncommand = %q\n", bin)},
		{"streamable http", fmt.Sprintf("[mcp.t]\nurl = %q\n", url)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithMessageRules())
			sb := newSandbox(t)
			sb.useServer(srv)
			sb.writeConfig(tt.config)
			srv.Enqueue(
				openaitest.Calls(openaitest.ToolCall{ID: "m", Name: "mcp__t__echo", Arguments: `{"text":"hello mcp"}`}),
				openaitest.Text("Echoed."),
			)
			res := sb.run("-p", "echo through mcp", "--allow", "mcp__t")
			require.Equal(t, 0, res.code, res.stderr)
			require.Equal(t, "Echoed.\n", res.stdout)
			require.Equal(t, "echo: hello mcp", toolResults(srv)["m"])
			reqs := srv.Requests()
			require.Contains(t, toolNames(reqs[len(reqs)-1]), "mcp__t__echo", "the server's tools reach the model once it is ready")
		})
	}
}

// TestMCPProxiedThroughTheBinary: with the tools deferred, the model
// loads one with SearchMcpTools and calls it through CallMcpTool; the
// --allow rule of the real tool applies, a PreToolUse hook matching the
// real tool sees the call as that tool's, and the result reaches the next
// request, whose tool list is the one the model had before the load.
func TestMCPProxiedThroughTheBinary(t *testing.T) {
	t.Parallel()
	bin := buildMCPServer(t)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	guard := sb.writeScript("guard.sh", `in=$(cat)
if grep -q '"tool_input":{"text":"forbidden"}' <<<"$in"; then echo "no forbidden echoes" >&2; exit 2; fi
exit 0
`)
	sb.writeConfig(fmt.Sprintf("[tools]\nmcp_defer_ratio = 0.001\n[mcp.t]\ncommand = %q\n[[hooks.PreToolUse]]\nmatcher = \"mcp__t__echo\"\ncommand = %q\n", bin, guard))
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "s", Name: "SearchMcpTools", Arguments: `{"load":["mcp__t__echo"]}`}),
		openaitest.Calls(openaitest.ToolCall{ID: "m", Name: "CallMcpTool", Arguments: `{"tool":"mcp__t__echo","arguments":{"text":"via proxy"}}`}),
		openaitest.Calls(openaitest.ToolCall{ID: "bad", Name: "CallMcpTool", Arguments: `{"tool":"mcp__t__echo","arguments":{"txt":"typo"}}`}),
		openaitest.Calls(openaitest.ToolCall{ID: "hook", Name: "CallMcpTool", Arguments: `{"tool":"mcp__t__echo","arguments":{"text":"forbidden"}}`}),
		openaitest.Text("Proxied."),
	)
	res := sb.run("-p", "echo through the proxy", "--allow", "mcp__t__echo")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "Proxied.\n", res.stdout)
	results := toolResults(srv)
	require.Contains(t, results["s"], "input schema: ")
	require.Equal(t, "echo: via proxy", results["m"])
	require.Contains(t, results["bad"], "do not match the input schema of mcp__t__echo")
	require.Equal(t, "blocked by a PreToolUse hook: no forbidden echoes", results["hook"])
	reqs := srv.Requests()
	last := toolNames(reqs[len(reqs)-1])
	require.Contains(t, last, "CallMcpTool")
	require.NotContains(t, last, "mcp__t__echo", "a loaded tool is not added to the list")
	require.Equal(t, toolNames(reqs[1]), last, "the list is the same after the load")
}

// TestMCPFailuresEndInToolResults: a hanging call, a 5 MB result and a
// crash mid-call each end in a clear tool result within the timeout, and
// the turn goes on to its answer.
func TestMCPFailuresEndInToolResults(t *testing.T) {
	t.Parallel()
	bin := buildMCPServer(t)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	// The hang gets a server of its own with a short timeout; the 5 MB
	// result a long one, as a loaded machine may take seconds to pass it.
	sb.writeConfig(fmt.Sprintf("[mcp.t]\ncommand = %q\ntimeout = \"60s\"\n[mcp.h]\ncommand = %q\ntimeout = \"2s\"\n", bin, bin))
	srv.Enqueue(
		openaitest.Calls(
			openaitest.ToolCall{ID: "big", Name: "mcp__t__big", Arguments: `{"bytes":5000000}`},
			openaitest.ToolCall{ID: "hang", Name: "mcp__h__slow", Arguments: `{"ms":0}`},
			openaitest.ToolCall{ID: "crash", Name: "mcp__t__crash", Arguments: `{}`},
		),
		openaitest.Calls(openaitest.ToolCall{ID: "after", Name: "mcp__t__echo", Arguments: `{"text":"still here"}`}),
		openaitest.Text("Survived."),
	)
	res := sb.run("-p", "stress the server", "--allow", "mcp__t", "--allow", "mcp__h")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "Survived.\n", res.stdout)
	require.Less(t, res.took, 60*time.Second)
	reqs := srv.Requests()
	results := map[string]string{}
	for _, r := range reqs {
		for _, m := range r.Messages {
			if m.Role == "tool" {
				results[m.ToolCallID] = m.Content
			}
		}
	}
	require.Less(t, len(results["big"]), 100000, "the 5 MB result is capped like a built-in tool's")
	require.Contains(t, results["big"], "xxxx")
	require.Contains(t, results["hang"], "timed out after 2s")
	require.Contains(t, results["crash"], "stopped during the call")
	require.Equal(t, "echo: still here", results["after"], "the server was restarted")
	require.Contains(t, res.stderr, "gencode: MCP server t failed: server exited", "the failure is reported when it happens")
	require.Equal(t, 1, strings.Count(res.stderr, "MCP server t failed"), "once")
	require.Contains(t, res.stderr, "gencode: MCP server t is running again", "and so is the recovery")
	require.Less(t, strings.Index(res.stderr, "MCP server t failed"), strings.Index(res.stderr, "MCP server t is running again"))
}

// TestMCPProjectServerNeedsApproval: print mode never starts a server of
// the project's .mcp.json that the user has not approved, and says so.
func TestMCPProjectServerNeedsApproval(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	marker := filepath.Join(sb.home, "started")
	mcpJSON := fmt.Sprintf(`{"mcpServers":{"p":{"command":"sh","args":["-c","touch %s"]}}}`, marker)
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, ".mcp.json"), []byte(mcpJSON), 0o644))
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "m", Name: "mcp__p__anything", Arguments: `{}`}),
		openaitest.Text("Could not."),
	)
	res := sb.run("-p", "use the project server", "--allow", "mcp__p")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stderr, `server "p" is not approved, so it is not started`)
	require.Contains(t, toolResults(srv)["m"], "not approved")
	// Without --allow the call is refused as unapproved, not denied with
	// a hint that --allow would run it (it would not).
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "m2", Name: "mcp__p__anything", Arguments: `{}`}),
		openaitest.Text("Could not."),
	)
	res = sb.run("-p", "use the project server")
	require.Equal(t, 0, res.code, "a tool error, not a denial: %s", res.stderr)
	require.NotContains(t, res.stderr, "--allow")
	require.Contains(t, toolResults(srv)["m2"], "not approved; the user can approve it in the TUI with /mcp approve p")
	_, err := os.Stat(marker)
	require.True(t, os.IsNotExist(err), "the unapproved server never ran")
}

func TestMCPListJSON(t *testing.T) {
	t.Parallel()
	bin := buildMCPServer(t)
	sb := newSandbox(t)
	sb.writeConfig(fmt.Sprintf("[mcp.t]\ncommand = %q\n\n[mcp.off]\ncommand = \"nope\"\nenabled = false\n", bin))
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, ".mcp.json"), []byte(`{"mcpServers":{"p":{"command":"x","args":["--db","my notes.db"],"env":{"TOKEN":"sk-secret"}}}}`), 0o644))
	res := sb.run("mcp", "list", "--json")
	require.Equal(t, 0, res.code, res.stderr)
	var got struct {
		Servers []struct {
			Name, State, Transport, Source, Runs string
			Tools                                int
			SchemaTokens                         int `json:"schema_tokens"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &got), res.stdout)
	require.Len(t, got.Servers, 3)
	require.Equal(t, "off", got.Servers[0].Name)
	require.Equal(t, "disabled", got.Servers[0].State)
	require.Equal(t, "t", got.Servers[1].Name)
	require.Equal(t, "ready", got.Servers[1].State)
	require.Equal(t, "stdio", got.Servers[1].Transport)
	require.Equal(t, 8, got.Servers[1].Tools)
	require.Positive(t, got.Servers[1].SchemaTokens)
	require.Equal(t, "p", got.Servers[2].Name)
	require.Equal(t, "needs approval", got.Servers[2].State)
	require.Equal(t, ".mcp.json", got.Servers[2].Source)
	// What the user would approve, never its environment.
	require.Equal(t, `x --db "my notes.db" (env: TOKEN)`, got.Servers[2].Runs)
	require.Empty(t, got.Servers[1].Runs, "only a server waiting for approval says it")

	res = sb.run("mcp", "list")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "t  ready  stdio (config)  8 tools")
	require.Contains(t, res.stdout, "p  needs approval  stdio (.mcp.json)\n  runs: x --db \"my notes.db\" (env: TOKEN)\n")
	require.NotContains(t, res.stdout, "sk-secret")
}

// TestMCPSlowServerNeverHoldsATurn: a server that never finishes starting
// holds neither a print-mode turn that calls no MCP tool nor gencode's exit.
func TestMCPSlowServerNeverHoldsATurn(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.writeConfig("[mcp.slow]\ncommand = \"sleep\"\nargs = [\"60\"]\n")
	srv.Enqueue(openaitest.Text("No tools needed."))
	res := sb.run("-p", "just answer")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "No tools needed.\n", res.stdout)
	require.Less(t, res.took, 10*time.Second, "the turn and the exit did not wait for the server")
	reqs := srv.Requests()
	require.NotContains(t, toolNames(reqs[0]), "SearchMcpTools", "the search tool is sent only when the tools are deferred")
}
