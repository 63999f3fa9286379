package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/session"
)

// TestStreamJSONNamesTheProxiedTool: a CallMcpTool call is reported as
// the MCP tool it called, with that tool's arguments, as the chat shows it.
func TestStreamJSONNamesTheProxiedTool(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	j := newJSONRun(&out, true, "s1", "m")
	j.event(agent.Event{Kind: agent.EventToolRun, Call: &session.ToolCall{ID: "c", Name: "CallMcpTool",
		Arguments: `{"tool":"mcp__gh__create_issue","arguments":{"title":"Crash"}}`}})
	j.event(agent.Event{Kind: agent.EventMessage, Message: &session.Message{Role: session.RoleTool, ToolCallID: "c",
		Name: "CallMcpTool", Content: "created", Meta: session.Meta{Tool: "mcp__gh__create_issue"}}})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	var call toolCallEvent
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &call))
	require.Equal(t, "mcp__gh__create_issue", call.Name)
	require.JSONEq(t, `{"title":"Crash"}`, call.Arguments)
	var res toolResultEvent
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &res))
	require.Equal(t, "mcp__gh__create_issue", res.Name)
	require.Equal(t, "mcp__gh__create_issue", j.res.ToolCalls[0].Name)
}
