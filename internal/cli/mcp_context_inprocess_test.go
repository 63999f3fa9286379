package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/mcp"
	"github.com/gencode/gencode/internal/mcp/mcptest"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/tools"
)

// inProcessMCP starts a manager with one in-process mcptest server "t"
// (8 tools and resources, not deferred at 128k; with many more, deferred)
// and waits for it.
func inProcessMCP(t *testing.T, count func(string) int, many int) *mcp.Manager {
	t.Helper()
	m := mcp.New(mcp.Options{Servers: []mcp.ServerConfig{{Name: "t", Command: "in-process"}}, Window: 128000, Count: count,
		Connect: func(ctx context.Context, _ mcp.ServerConfig) (sdk.Transport, error) {
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			if _, err := mcptest.NewServer(mcptest.Options{Many: many}, nil).Connect(ctx, &sdk.IOTransport{Reader: sr, Writer: sw}, nil); err != nil {
				return nil, err
			}
			return &sdk.IOTransport{Reader: cr, Writer: cw}, nil
		}})
	m.Start(context.Background())
	t.Cleanup(m.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m.WaitStarted(ctx)
	require.Equal(t, "ready", m.Status().Servers[0].State)
	return m
}

var sentWithEachRequest = regexp.MustCompile(`Sent with each request\s+([\d,]+)`)

// TestMCPContextTotalIsTheNextRequest: with an MCP server configured and
// ready, /context's total (and the status bar's MeasureContext) plus the
// message typed next is what the provider counts for the next request,
// whose tool list carries the MCP tools. /context once left the MCP
// schemas out (1,375 shown; 2,234 counted): the policy's fixed cost was
// the fixed tools' alone. Deferred, after the model loaded and called a
// tool, the figure is the same fixed one.
func TestMCPContextTotalIsTheNextRequest(t *testing.T) {
	t.Parallel()
	for _, many := range []int{0, 60} {
		t.Run(fmt.Sprintf("%d extra tools", many), func(t *testing.T) {
			t.Parallel()
			mcpContextTotal(t, many)
		})
	}
}

func mcpContextTotal(t *testing.T, many int) {
	counter := tokenCache.Counter("gpt-4o-mini")
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithTokenCounter(promptTokens(counter)))
	store, sess := newStoreSession(t)
	m := inProcessMCP(t, counter.Count, many)
	perms := tools.DefaultPermissions()
	require.NoError(t, perms.Allow("mcp__t"))
	ts := tools.New(tools.Options{WorkDir: sess.Cwd, Permissions: perms, CountTokens: counter.Count, Extension: m})
	fixed := len(ts.Definitions())
	ag := agent.New(store, llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "k"}), ts, counter, agent.Options{
		Model: "gpt-4o-mini", WorkDir: sess.Cwd, MaxIterations: 10, Window: 128000, LateTools: ts.LateDefinitions})
	h := &harness{t: t, srv: srv, store: store, sess: sess, agent: ag}

	if many > 0 {
		srv.Enqueue(
			openaitest.Calls(openaitest.ToolCall{ID: "s", Name: mcp.ToolSearch, Arguments: `{"load":["mcp__t__echo"]}`}),
			openaitest.Calls(openaitest.ToolCall{ID: "c", Name: mcp.ToolCall, Arguments: `{"tool":"mcp__t__echo","arguments":{"text":"hi"}}`}),
		)
	}
	srv.Enqueue(openaitest.Reply{ForModel: "gpt-4o-mini", Content: "Hello; what shall we do?"})
	h.turn("hello")
	require.Equal(t, many > 0, m.Deferred())
	if many > 0 {
		reqs := srv.Requests()
		msgs := reqs[len(reqs)-1].Messages
		require.Equal(t, "echo: hi", msgs[len(msgs)-1].Content, "the proxied call ran")
	}

	cfg := config.Default()
	reg := commands.New(commands.Deps{Store: store, Config: cfg, Window: func(string) int { return ag.Window() },
		MCP: mcpControl{m: m, cfgs: m.Configs()}})
	res, err := reg.Run(context.Background(), commands.State{SessionID: sess.ID, Model: ag.Model(), View: ag.Policy()}, "/context")
	require.NoError(t, err)
	report := res.Report.Plain()
	got := contextTotal.FindStringSubmatch(report)
	require.NotNil(t, got, report)
	total, err := strconv.Atoi(strings.ReplaceAll(got[1], ",", ""))
	require.NoError(t, err)
	measured, err := ag.MeasureContext(context.Background(), store, sess.ID)
	require.NoError(t, err)
	require.Equal(t, total, measured.Tokens, "the status bar's ctx is /context's total")

	// /context's MCP section says what /mcp and `gencode mcp list` say.
	sent := sentWithEachRequest.FindStringSubmatch(report)
	require.NotNil(t, sent, report)
	st := m.Status()
	require.Equal(t, termThousands(st.ExposedTokens), sent[1])
	if many > 0 {
		require.Contains(t, st.Text(), "calls them through CallMcpTool ("+strconv.Itoa(st.ExposedTokens)+" tokens per request")
	} else {
		require.Contains(t, st.Text(), "MCP schemas: "+strconv.Itoa(st.ExposedTokens)+" tokens per request")
	}

	next := "and now?"
	srv.Enqueue(openaitest.Reply{ForModel: "gpt-4o-mini", Content: "Nothing more."})
	evs, _ := h.turn(next)
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	require.Greater(t, len(last.Tools), fixed, "the request carries the MCP tools")
	all, err := json.Marshal(last.Tools)
	require.NoError(t, err)
	own, err := json.Marshal(last.Tools[:fixed])
	require.NoError(t, err)
	added := counter.Count(string(all)) - counter.Count(string(own))
	t.Logf("MCP adds %d tokens to the request; /mcp, /context and mcp list say %d", added, st.ExposedTokens)
	require.InDelta(t, added, st.ExposedTokens, 3, "the MCP figure is what MCP adds to the request")
	var usage *agent.Usage
	for _, e := range evs {
		if e.Kind == agent.EventUsage {
			usage = e.Usage
		}
	}
	require.NotNil(t, usage)
	typed := agent.MessageTokens(counter, session.Message{Role: session.RoleUser, Content: next})
	require.Equal(t, usage.PromptTokens, total+typed, "the provider counted the request /context described\n%s", report)
	require.Equal(t, usage.PromptTokens, usage.ContextTokens, "the agent's own figure for the request")
}

func termThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
