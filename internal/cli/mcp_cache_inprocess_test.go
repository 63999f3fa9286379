package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/mcp"
	"github.com/gencode/gencode/internal/mcp/mcptest"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/tools"
)

// mcpSession runs a 50-turn session against the fake provider, with or
// without 60 MCP tools (about 15k tokens of schemas, deferred), and
// returns its requests' prompt-cache bill. At the two turns of at the
// model loads one MCP tool and calls it through CallMcpTool (with MCP),
// or calls LS twice (without), so both sessions have the same shape.
func mcpSession(t *testing.T, withMCP bool, at [2]int) (openaitest.Bill, []openaitest.Request) {
	t.Helper()
	counter := tokenCache.Counter("gpt-4o-mini")
	loads := map[int]string{at[0]: "mcp__t__many_07", at[1]: "mcp__t__many_42"}
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithTokenizer(counter.Count),
		openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
			last := r.Messages[len(r.Messages)-1]
			turn := 0
			for _, m := range r.Messages {
				if m.Role == "user" {
					turn++
				}
			}
			name, load := loads[turn]
			switch {
			case !load:
			case last.Role == "user" && withMCP:
				return openaitest.Calls(openaitest.ToolCall{ID: fmt.Sprintf("s%d", turn), Name: mcp.ToolSearch, Arguments: `{"load":["` + name + `"]}`})
			case last.Role == "user":
				return openaitest.Calls(openaitest.ToolCall{ID: fmt.Sprintf("s%d", turn), Name: "LS", Arguments: `{}`})
			case last.ToolCallID == fmt.Sprintf("s%d", turn) && withMCP:
				return openaitest.Calls(openaitest.ToolCall{ID: fmt.Sprintf("c%d", turn), Name: mcp.ToolCall,
					Arguments: `{"tool":"` + name + `","arguments":{"field_0":"rec-1"}}`})
			case last.ToolCallID == fmt.Sprintf("s%d", turn):
				return openaitest.Calls(openaitest.ToolCall{ID: fmt.Sprintf("c%d", turn), Name: "LS", Arguments: `{}`})
			}
			// One delta for the answer's text: the stream's shape is not what this
			// test is about, and split at words its 80 deltas were each encoded by
			// the server and decoded by the client, race-instrumented, in this
			// process (a third of the test's CPU over 200 answers).
			answer := openaitest.Text(fmt.Sprintf("Answer %d: ", turn) + strings.Repeat("the handler keeps its state in the store ", 10))
			answer.Chunks = 1
			return answer
		}))
	store, sess := newStoreSession(t)
	opts := tools.Options{WorkDir: sess.Cwd, CountTokens: counter.Count}
	var late func() []tools.Definition
	if withMCP {
		m := mcp.New(mcp.Options{Servers: []mcp.ServerConfig{{Name: "t", Command: "in-process"}}, Window: 128000, Count: counter.Count,
			Connect: func(ctx context.Context, _ mcp.ServerConfig) (sdk.Transport, error) {
				cr, sw := io.Pipe()
				sr, cw := io.Pipe()
				if _, err := mcptest.NewServer(mcptest.Options{Many: 60}, nil).Connect(ctx, &sdk.IOTransport{Reader: sr, Writer: sw}, nil); err != nil {
					return nil, err
				}
				return &sdk.IOTransport{Reader: cr, Writer: cw}, nil
			}})
		m.Start(context.Background())
		t.Cleanup(m.Close)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		m.WaitStarted(ctx)
		cancel()
		perms := tools.DefaultPermissions()
		require.NoError(t, perms.Allow("mcp__t"))
		opts.Permissions, opts.Extension = perms, m
	}
	ts := tools.New(opts)
	if withMCP {
		late = ts.LateDefinitions
	}
	ag := agent.New(store, llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "k"}), ts, counter,
		agent.Options{Model: "gpt-4o-mini", WorkDir: sess.Cwd, MaxIterations: 10, Window: 128000, LateTools: late})
	for i := 1; i <= 50; i++ {
		var last agent.Event
		for ev := range ag.Start(context.Background(), sess.ID, fmt.Sprintf("Question %d: %s", i, strings.Repeat("how does the cache behave here? ", 8))) {
			last = ev
		}
		require.Equal(t, agent.EventDone, last.Kind, "turn %d: %v", i, last.Err)
	}
	return openaitest.Total(srv.Accounts()), srv.Requests()
}

// TestMCPKeepsThePrefixCached: a 50-turn session that loads two deferred
// MCP tools, early (turns 2 and 5) or late (turns 10 and 30), reuses its
// prompt prefix within 2 points of the same session without MCP, and no
// request carries more than 1k tokens of MCP schemas. Once deferred the
// tool list, which precedes every message, never changes: a loaded tool's
// schema comes in SearchMcpTools' result and the tool is called through
// CallMcpTool, so a load costs no re-read of the prompt however late.
func TestMCPKeepsThePrefixCached(t *testing.T) {
	t.Parallel()
	reuse := func(b openaitest.Bill) float64 { return 100 * float64(b.Cached) / float64(b.Prompt) }
	tests := []struct {
		name string
		at   [2]int
	}{
		{"loads at turns 2 and 5", [2]int{2, 5}},
		{"loads at turns 10 and 30", [2]int{10, 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			without, _ := mcpSession(t, false, tt.at)
			with, reqs := mcpSession(t, true, tt.at)
			t.Logf("prefix reuse: without MCP %.2f%% (%d/%d tokens), with MCP %.2f%% (%d/%d tokens): %.2f points",
				reuse(without), without.Cached, without.Prompt, reuse(with), with.Cached, with.Prompt, reuse(without)-reuse(with))
			require.InDelta(t, reuse(without), reuse(with), 2, "prefix reuse within 2 points")
			checkMCPTools(t, reqs)
		})
	}
}

// checkMCPTools: every request carries the same tools, of which at most
// 1k tokens are MCP's, and the proxied calls reached the server.
func checkMCPTools(t *testing.T, reqs []openaitest.Request) {
	t.Helper()
	counter := tokenCache.Counter("gpt-4o-mini")
	first := reqs[0]
	builtin := len(tools.Names()) // the fixed tools come first
	require.Equal(t, mcp.ToolSearch, first.Tools[builtin].Function.Name)
	require.Equal(t, mcp.ToolCall, first.Tools[builtin+1].Function.Name)
	mcpTok := 0
	for _, tl := range first.Tools[builtin:] {
		mcpTok += counter.Count(fmt.Sprintf("%s %s %s", tl.Function.Name, tl.Function.Description, tl.Function.Parameters))
	}
	require.LessOrEqual(t, mcpTok, 1000, "a request without a loaded MCP tool carries at most 1k tokens for MCP")
	for i, r := range reqs {
		require.Equal(t, first.Tools, r.Tools, "request %d: the tool list never changes", i)
	}
	var done []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" && strings.HasPrefix(m.ToolCallID, "s") {
			require.Contains(t, m.Content, "loaded: mcp__t__many_")
			require.Contains(t, m.Content, "input schema: ")
		}
		if m.Role == "tool" && strings.HasPrefix(m.ToolCallID, "c") {
			done = append(done, m.Content)
		}
	}
	require.Equal(t, []string{"many_07 done", "many_42 done"}, done)
}
