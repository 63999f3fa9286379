package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestMCPInTmux: an MCP tool call opens the same permission dialog as a
// built-in tool (server, tool and arguments shown); allowed once, its
// result reaches the model; then /mcp shows the server's card. The TUI
// is moving to Bubble Tea v2: this test only uses the dialog and the
// report box as they are.
func TestMCPInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	bin := buildMCPServer(t)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.writeConfig(fmt.Sprintf("[mcp.t]\ncommand = %q\n", bin))
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "m", Name: "mcp__t__echo", Arguments: `{"text":"from tmux"}`}),
		openaitest.Text("The server echoed."),
	)
	p := startTUI(t, sb)
	p.waitText("Message gencode")
	p.typeLine("call the server")
	s := p.waitText("Allow mcp__t__echo?")
	require.Contains(t, s, "MCP server t, tool echo")
	require.Contains(t, s, "from tmux")
	time.Sleep(700 * time.Millisecond) // the dialog takes keys once the user has seen it
	p.keys("y")
	p.waitText("The server echoed.")
	require.Equal(t, "echo: from tmux", toolResults(srv)["m"])
	p.typeLine("/mcp")
	s = p.waitText("MCP servers")
	require.Contains(t, s, "t  ready  stdio (config)  8 tools")
	// A server prompt is a slash command: its text goes to the model.
	srv.Enqueue(openaitest.Text("Reviewed it."))
	p.typeLine("/mcp__t__review main.go")
	p.waitText("Reviewed it.")
	reqs := srv.Requests()
	msgs := reqs[len(reqs)-1].Messages
	require.Equal(t, "Please review main.go carefully.", msgs[len(msgs)-1].Content)
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}

// TestMCPProjectApprovalInTmux: a server of the project's .mcp.json waits
// for approval; /mcp approve starts it and stores the approval with the
// project's permissions, so print mode starts it too; /mcp revoke takes
// it back.
func TestMCPProjectApprovalInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	bin := buildMCPServer(t)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, ".mcp.json"), []byte(fmt.Sprintf(`{"mcpServers":{"p":{"command":%q}}}`, bin)), 0o644))

	p := startTUI(t, sb)
	// The start notices reach the chat after the first frame (they count
	// tokens off it): wait for the notice itself, not the editor.
	p.waitText("Message gencode")
	p.waitText(`server "p" is not approved`)
	p.typeLine("/mcp approve p")
	p.waitText("Approved MCP server p")
	// /mcp is a snapshot: the chat says when the start the approval began
	// has ended, and the report then shows the server ready.
	p.waitText("MCP server p is ready: ")
	p.typeLine("/mcp")
	p.waitText("p  ready  stdio (.mcp.json)")
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())

	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "m", Name: "mcp__p__echo", Arguments: `{"text":"approved"}`}),
		openaitest.Text("Done."),
	)
	res := sb.run("-p", "use it", "--allow", "mcp__p")
	require.Equal(t, 0, res.code, res.stderr)
	require.NotContains(t, res.stderr, "not approved")
	require.Equal(t, "echo: approved", toolResults(srv)["m"])

	p = startTUI(t, sb)
	p.waitText("Message gencode")
	p.typeLine("/mcp revoke p")
	p.waitText("Revoked MCP server p")
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
	res = sb.run("mcp", "list")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "p  needs approval  stdio (.mcp.json)")
}

// TestMCPFailureShownLiveInTmux: a server that crashes mid-call is shown
// in the chat when it happens, once, and so is its return; the turn goes
// on to its answer.
func TestMCPFailureShownLiveInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	bin := buildMCPServer(t)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.writeConfig(fmt.Sprintf("[mcp.t]\ncommand = %q\ntools = [\"crash\"]\n", bin))
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "c", Name: "mcp__t__crash", Arguments: `{}`}),
		openaitest.Text("It crashed."),
	)
	p := startTUI(t, sb)
	p.waitText("Message gencode")
	p.typeLine("crash the server")
	p.waitText("It crashed.")
	s := p.waitText("MCP server t is running again")
	require.Contains(t, s, "MCP server t failed: server exited")
	require.Equal(t, 1, strings.Count(s, "MCP server t failed"), s)
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}

// TestMCPProxiedDialogInTmux: with the tools deferred, a CallMcpTool call
// asks as the tool it names, and the chat shows that tool, never the
// proxy.
func TestMCPProxiedDialogInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	bin := buildMCPServer(t)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.writeConfig(fmt.Sprintf("[tools]\nmcp_defer_ratio = 0.001\n[mcp.t]\ncommand = %q\n", bin))
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "s", Name: "SearchMcpTools", Arguments: `{"load":["mcp__t__echo"]}`}),
		openaitest.Calls(openaitest.ToolCall{ID: "m", Name: "CallMcpTool", Arguments: `{"tool":"mcp__t__echo","arguments":{"text":"through the proxy"}}`}),
		openaitest.Text("The server echoed."),
	)
	p := startTUI(t, sb)
	p.waitText("Message gencode")
	p.typeLine("call the server")
	s := p.waitText("Allow mcp__t__echo?")
	require.Contains(t, s, "MCP server t, tool echo")
	require.Contains(t, s, "through the proxy")
	time.Sleep(700 * time.Millisecond) // the dialog takes keys once the user has seen it
	p.keys("y")
	s = p.waitText("The server echoed.")
	require.Equal(t, "echo: through the proxy", toolResults(srv)["m"])
	require.Contains(t, s, "⏺ mcp__t__echo(through the proxy) ✓")
	require.NotContains(t, s, "⏺ CallMcpTool", "the call's line is the tool's (the search result names the proxy)")
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}
