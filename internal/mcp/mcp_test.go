package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/mcp"
	"github.com/gencode/gencode/internal/mcp/mcptest"
	"github.com/gencode/gencode/internal/tokens"
)

// inProcess connects each start of a server to a fresh in-process SDK
// server over in-memory transports; starts counts the connections.
type inProcess struct {
	opts   mcptest.Options
	stats  mcptest.Stats
	mu     sync.Mutex
	starts int
	block  chan struct{} // when set, a start waits for it
	down   bool          // a start fails
}

func (p *inProcess) connect(ctx context.Context, _ mcp.ServerConfig) (sdk.Transport, error) {
	p.mu.Lock()
	p.starts++
	block, down := p.block, p.down
	p.mu.Unlock()
	if down {
		return nil, errors.New("exec: \"srv\": executable file not found in $PATH")
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	// Pipes, as a process's stdin and stdout: a crash closes them under
	// the call, as a dying process does.
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	opts := p.opts
	opts.Crash = func(context.Context, *sdk.CallToolRequest) {
		_ = serverW.CloseWithError(errors.New("crashed"))
		_ = serverR.Close()
	}
	if _, err := mcptest.NewServer(opts, &p.stats).Connect(ctx, &sdk.IOTransport{Reader: serverR, Writer: serverW}, nil); err != nil {
		return nil, err
	}
	return &sdk.IOTransport{Reader: clientR, Writer: clientW}, nil
}

func (p *inProcess) startCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// start runs a Manager with one server "t" and waits for it to be ready.
func start(t *testing.T, p *inProcess, cfg mcp.ServerConfig, opts mcp.Options) *mcp.Manager {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "t"
	}
	if cfg.Command == "" && cfg.URL == "" {
		cfg.Command = "in-process"
	}
	opts.Servers = []mcp.ServerConfig{cfg}
	opts.Connect = p.connect
	if opts.Backoff == 0 {
		opts.Backoff = 20 * time.Millisecond
	}
	m := mcp.New(opts)
	m.Start(context.Background())
	t.Cleanup(m.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m.WaitStarted(ctx)
	return m
}

func call(t *testing.T, m *mcp.Manager, ctx context.Context, name, args string) (string, bool) {
	t.Helper()
	d, ok := m.Lookup(ctx, name)
	require.True(t, ok, "Lookup(%q)", name)
	r := m.Call(ctx, d.Name, json.RawMessage(args))
	return r.Text, r.IsError
}

func TestToolName(t *testing.T) {
	tests := []struct {
		name, server, tool, want string
	}{
		{"plain", "github", "create_issue", "mcp__github__create_issue"},
		{"dots and spaces", "my.server", "do it/now", "mcp__my_server__do_it_now"},
		{"unicode", "sérver", "töol", "mcp__s_rver__t_ol"},
		{"empty tool", "s", "", "mcp__s___"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mcp.ToolName(tt.server, tt.tool); got != tt.want {
				t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
			}
		})
	}
	long := mcp.ToolName(strings.Repeat("s", 40), strings.Repeat("t", 40))
	long2 := mcp.ToolName(strings.Repeat("s", 40), strings.Repeat("t", 39)+"u")
	require.Len(t, long, 64)
	require.NotEqual(t, long, long2, "two long names must stay apart")
	require.Regexp(t, `^[a-zA-Z0-9_-]{1,64}$`, long)
}

func TestCall(t *testing.T) {
	p := &inProcess{}
	m := start(t, p, mcp.ServerConfig{}, mcp.Options{})
	tests := []struct {
		name, tool, args string
		want             []string
		wantErr          bool
	}{
		{"text", "mcp__t__echo", `{"text":"hi"}`, []string{"echo: hi"}, false},
		{"isError becomes a tool error", "mcp__t__fail", `{}`, []string{"boom"}, true},
		{"rich content", "mcp__t__rich", `{}`, []string{"some text", "[image: image/png, 2.0 KB]", "[resource link: report file:///tmp/report.txt, text/plain]", "structured content:", `"count": 3`}, false},
		{"bad arguments", "mcp__t__echo", `[1]`, []string{"must be a JSON object"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, isErr := call(t, m, context.Background(), tt.tool, tt.args)
			for _, w := range tt.want {
				require.Contains(t, got, w)
			}
			require.Equal(t, tt.wantErr, isErr, "Call(%s) = %q", tt.tool, got)
		})
	}
	_, ok := m.Lookup(context.Background(), "mcp__t__nope")
	require.False(t, ok, "an unknown tool of a ready server is not found")
}

func TestTimeoutAndCancel(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		cancel  time.Duration // cancel the call's context after this; 0: never
		want    string
	}{
		{"hanging server times out", 300 * time.Millisecond, 0, "timed out after 300ms"},
		{"cancelled call", time.Minute, 200 * time.Millisecond, "cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &inProcess{}
			m := start(t, p, mcp.ServerConfig{Timeout: tt.timeout}, mcp.Options{})
			ctx := context.Background()
			if tt.cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.cancel)
				defer cancel()
			}
			began := time.Now()
			got, isErr := call(t, m, ctx, "mcp__t__slow", `{"ms":0}`)
			require.True(t, isErr)
			require.Contains(t, got, tt.want)
			require.Less(t, time.Since(began), 5*time.Second)
			// The server was told over the protocol: its handler's context ended.
			require.Eventually(t, func() bool { return p.stats.Cancelled.Load() == 1 }, 5*time.Second, 10*time.Millisecond)
			got, isErr = call(t, m, context.Background(), "mcp__t__echo", `{"text":"after"}`)
			require.False(t, isErr, got)
		})
	}
}

func TestCrashRestart(t *testing.T) {
	p := &inProcess{}
	var mu sync.Mutex
	var events []mcp.Event
	m := start(t, p, mcp.ServerConfig{}, mcp.Options{Notify: func(e mcp.Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}})
	got, isErr := call(t, m, context.Background(), "mcp__t__crash", `{}`)
	require.True(t, isErr)
	require.Contains(t, got, "stopped during the call")
	require.Eventually(t, func() bool {
		got, isErr = call(t, m, context.Background(), "mcp__t__echo", `{"text":"back"}`)
		return !isErr
	}, 10*time.Second, 50*time.Millisecond, "after the restart: %s", got)
	require.Equal(t, "echo: back", got)
	require.GreaterOrEqual(t, p.startCount(), 2)
	st := m.Status().Servers[0]
	require.Equal(t, "ready", st.State)
	require.GreaterOrEqual(t, st.Restarts, 1)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, events)
	require.Equal(t, mcp.StateFailed, events[0].State, "the failure is told once: %+v", events)
}

// TestFailureToldOncePerEpisode: a server that keeps failing to restart
// is told once, its recovery once, and a later failure once again: the
// front ends show each as it happens, never once per retry.
func TestFailureToldOncePerEpisode(t *testing.T) {
	p := &inProcess{down: true}
	var mu sync.Mutex
	var events []string
	m := mcp.New(mcp.Options{Servers: []mcp.ServerConfig{{Name: "t", Command: "x"}}, Connect: p.connect, Backoff: 10 * time.Millisecond,
		MaxBackoff: 20 * time.Millisecond, Notify: func(e mcp.Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, e.String())
		}})
	m.Start(context.Background())
	defer m.Close()
	told := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), events...)
	}
	require.Eventually(t, func() bool { return p.startCount() >= 5 }, 10*time.Second, 5*time.Millisecond, "it keeps restarting")
	require.Equal(t, []string{`MCP server t failed: exec: "srv": executable file not found in $PATH; gencode restarts it (see /mcp)`}, told())
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
	require.Eventually(t, func() bool { return len(told()) == 2 }, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, "MCP server t is running again", told()[1])
	got, isErr := call(t, m, context.Background(), "mcp__t__crash", `{}`)
	require.True(t, isErr, got)
	require.Eventually(t, func() bool { return len(told()) == 4 }, 10*time.Second, 5*time.Millisecond, "the next episode: %v", told())
	require.Contains(t, told()[2], "MCP server t failed: server exited")
	require.Equal(t, "MCP server t is running again", told()[3])
}

func TestResourcesAndPrompts(t *testing.T) {
	p := &inProcess{}
	m := start(t, p, mcp.ServerConfig{}, mcp.Options{})
	defs := m.Definitions()
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	require.Contains(t, names, mcp.ToolListResources)
	require.Contains(t, names, mcp.ToolReadResource)
	got, isErr := call(t, m, context.Background(), mcp.ToolListResources, `{}`)
	require.False(t, isErr, got)
	require.Contains(t, got, "t: mem://notes (notes, text/plain)")
	got, isErr = call(t, m, context.Background(), mcp.ToolReadResource, `{"server":"t","uri":"mem://notes"}`)
	require.False(t, isErr, got)
	require.Contains(t, got, "the notes say hello")
	got, isErr = call(t, m, context.Background(), mcp.ToolReadResource, `{"server":"nope","uri":"x"}`)
	require.True(t, isErr, got)

	prompts := m.Prompts()
	require.Len(t, prompts, 1)
	require.Equal(t, "mcp__t__review", prompts[0].Command)
	text, err := m.GetPrompt(context.Background(), "mcp__t__review", "main.go")
	require.NoError(t, err)
	require.Equal(t, "Please review main.go carefully.", text)
}

// TestDeferral: 60 tools of about 15k tokens are deferred behind
// SearchMcpTools and CallMcpTool. Loading two gives their schemas in the
// search's result and leaves the tool list as it was: it never changes
// once deferred.
func TestDeferral(t *testing.T) {
	count := tokens.New("gpt-4o").Count
	p := &inProcess{opts: mcptest.Options{Many: 60}}
	m := start(t, p, mcp.ServerConfig{}, mcp.Options{Window: 128000, Count: count})
	st := m.Status()
	require.Equal(t, 68, st.Servers[0].Tools)
	total := st.Servers[0].SchemaTokens
	require.Greater(t, total, 14000, "the schema set is about 15k tokens")
	defs := m.Definitions()
	require.True(t, m.Deferred())
	before := m.ExposedTokens()
	require.LessOrEqual(t, before, 1000, "a request without a loaded MCP tool carries at most 1k tokens for MCP")
	t.Logf("MCP schemas %d tokens; deferred: %d tokens per request (saved %d, %.1f%%)", total, before, total-before, 100*float64(total-before)/float64(total))
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	require.Equal(t, []string{mcp.ToolSearch, mcp.ToolCall, mcp.ToolListResources, mcp.ToolReadResource}, names)

	got, isErr := call(t, m, context.Background(), mcp.ToolSearch, `{"query":"records kind 7"}`)
	require.False(t, isErr, got)
	require.Contains(t, got, "mcp__t__many_07")
	got, isErr = call(t, m, context.Background(), mcp.ToolSearch, `{"load":["mcp__t__many_07","echo","nope"]}`)
	require.False(t, isErr, got)
	require.Contains(t, got, "loaded: mcp__t__many_07, mcp__t__echo. Call them with CallMcpTool")
	require.Contains(t, got, `mcp__t__echo: Echo the text back.`+"\ninput schema: "+`{"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}`,
		"the schema comes in the result, a message")
	require.Contains(t, got, `"field_4":{"description":"Field 4 of record kind 7`)
	require.Contains(t, got, "no such MCP tool: nope")
	require.Equal(t, defs, m.Definitions(), "loading never changes the tool list")
	require.Equal(t, before, m.ExposedTokens())
}

// TestResolve: a CallMcpTool call is checked before it is asked for: the
// tool must exist and have been loaded, and its arguments must match its
// schema; each refusal says what to do.
func TestResolve(t *testing.T) {
	p := &inProcess{opts: mcptest.Options{Many: 60}}
	m := start(t, p, mcp.ServerConfig{}, mcp.Options{Window: 128000})
	m.Definitions() // the first request's
	require.True(t, m.Deferred())
	ctx := context.Background()
	tests := []struct {
		name, tool, args string
		wantErr          []string // "": resolves
	}{
		{"never loaded: refused with its schema, and loaded", "mcp__t__echo", `{"text":"hi"}`,
			[]string{"mcp__t__echo was not loaded", "It is loaded now", `input schema: {"properties":{"text"`}},
		{"loaded by that refusal", "mcp__t__echo", `{"text":"hi"}`, nil},
		{"missing required argument", "mcp__t__echo", `{}`, []string{"do not match the input schema of mcp__t__echo", "text", `"required":["text"]`}},
		{"wrong type", "mcp__t__echo", `{"text":3}`, []string{"do not match the input schema", "string"}},
		{"not an object", "mcp__t__echo", `[1]`, []string{"must be a JSON object"}},
		{"unknown tool", "mcp__t__nope", `{}`, []string{"no MCP server offers mcp__t__nope", "SearchMcpTools"}},
		{"unknown server", "mcp__zz__x", `{}`, []string{"no MCP server offers mcp__zz__x"}},
		{"not an MCP tool", "Bash", `{"command":"ls"}`, []string{`"Bash" is not an MCP tool`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := m.Resolve(ctx, tt.tool, json.RawMessage(tt.args))
			if len(tt.wantErr) == 0 {
				require.NoError(t, err)
				require.Equal(t, tt.tool, d.Name)
				require.Equal(t, "mcp__t", d.Group)
				require.Contains(t, d.Summary, "MCP server t, tool echo")
				return
			}
			require.Error(t, err)
			for _, w := range tt.wantErr {
				require.Contains(t, err.Error(), w)
			}
		})
	}
	_, isErr := call(t, m, ctx, mcp.ToolSearch, `{"load":["mcp__t__many_42"]}`)
	require.False(t, isErr)
	_, err := m.Resolve(ctx, "mcp__t__many_42", json.RawMessage(`{"field_1":"a"}`))
	require.NoError(t, err, "a tool SearchMcpTools loaded resolves")
}

func TestSmallSetNotDeferred(t *testing.T) {
	p := &inProcess{}
	m := start(t, p, mcp.ServerConfig{Tools: []string{"echo"}}, mcp.Options{Window: 128000})
	defs := m.Definitions()
	require.False(t, m.Deferred())
	byName := map[string]int{}
	for i, d := range defs {
		byName[d.Name] = i
	}
	echo, fail := defs[byName["mcp__t__echo"]], defs[byName["mcp__t__fail"]]
	require.Equal(t, "mcp__t", echo.Group)
	require.Equal(t, "allow", echo.Mode.String(), "the tools allow-list runs without asking")
	require.Equal(t, "ask", fail.Mode.String())
	require.JSONEq(t, `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, string(echo.Parameters))
}

// TestStartNeverWaits: a server that takes its time to start holds
// neither Start nor the tool list. SearchMcpTools is not offered (the
// tools are not deferred): the server's tools are appended once it is
// ready; a call to the search tool still waits for it.
func TestStartNeverWaits(t *testing.T) {
	p := &inProcess{block: make(chan struct{})}
	m := mcp.New(mcp.Options{Servers: []mcp.ServerConfig{{Name: "t", Command: "x"}}, Connect: p.connect, Window: 128000})
	began := time.Now()
	m.Start(context.Background())
	defer m.Close()
	defs := m.Definitions()
	require.Less(t, time.Since(began), 500*time.Millisecond)
	require.Empty(t, defs, "nothing is deferred: no search tool")
	require.Equal(t, "starting", m.Status().Servers[0].State)
	close(p.block)
	got, isErr := call(t, m, context.Background(), mcp.ToolSearch, `{"query":"echo"}`)
	require.False(t, isErr, got)
	require.Contains(t, got, "mcp__t__echo")
	defs = m.Definitions()
	require.NotEmpty(t, defs)
	for _, d := range defs {
		require.NotEqual(t, mcp.ToolSearch, d.Name, "not deferred: the search tool never appears")
	}
}

func TestProjectServerNeedsApproval(t *testing.T) {
	tests := []struct {
		name      string
		approved  bool
		wantState string
	}{
		{"unapproved never starts", false, "needs approval"},
		{"approved starts", true, "ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &inProcess{}
			told := make(chan string, 4)
			var changed atomic.Int32
			m := start(t, p, mcp.ServerConfig{Project: true}, mcp.Options{Approved: func(mcp.ServerConfig) bool { return tt.approved },
				Notify: func(e mcp.Event) { told <- e.String() }, Changed: func() { changed.Add(1) }})
			require.Equal(t, tt.wantState, m.Status().Servers[0].State)
			if !tt.approved {
				require.Zero(t, p.startCount())
				d, ok := m.Lookup(context.Background(), "mcp__t__echo")
				require.True(t, ok)
				r := m.Call(context.Background(), d.Name, json.RawMessage(`{}`))
				require.True(t, r.IsError)
				require.Contains(t, r.Text, "not approved")
				require.NoError(t, m.Approve("t"), "approving starts it")
				// The user was told it is starting: its readiness is told too.
				select {
				case got := <-told:
					require.Regexp(t, `^MCP server t is ready: \d+ tools$`, got)
				case <-time.After(10 * time.Second):
					t.Fatal("the approved server's start was never told")
				}
				got, isErr := call(t, m, context.Background(), "mcp__t__echo", `{"text":"now"}`)
				require.False(t, isErr, got)
				require.Eventually(t, func() bool { return changed.Load() == 1 }, 10*time.Second, 5*time.Millisecond, "the start changed what the model is given")
				require.NoError(t, m.Unapprove("t"), "revoking stops it")
				require.Equal(t, int32(2), changed.Load(), "and so did the revoke")
				require.Equal(t, "needs approval", m.Status().Servers[0].State)
				require.Empty(t, told, "nothing else is told")
				require.Error(t, m.Approve("nope"))
			}
		})
	}
}

func TestReadProjectFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers":{
		"web":{"type":"http","url":"https://example.com/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}},
		"fs":{"command":"npx","args":["-y","server-fs","${ROOT:-.}"],"env":{"A":"b"}}}}`), 0o644))
	got, err := mcp.ReadProjectFile(dir)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "fs", got[0].Name)
	require.True(t, got[0].Project)
	require.Equal(t, []string{"-y", "server-fs", "${ROOT:-.}"}, got[0].Args)
	require.Equal(t, "web", got[1].Name)
	require.Equal(t, "http", got[1].Transport)
	none, err := mcp.ReadProjectFile(t.TempDir())
	require.NoError(t, err)
	require.Empty(t, none)
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     mcp.ServerConfig
		wantErr string
	}{
		{"stdio", mcp.ServerConfig{Name: "a", Command: "x"}, ""},
		{"http", mcp.ServerConfig{Name: "a", URL: "http://x"}, ""},
		{"neither", mcp.ServerConfig{Name: "a"}, "set command"},
		{"both", mcp.ServerConfig{Name: "a", Command: "x", URL: "http://x"}, "not both"},
		{"bad transport", mcp.ServerConfig{Name: "a", URL: "http://x", Transport: "ws"}, "unknown transport"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// TestToolListChanged: a server that adds a tool tells the client, whose
// tool list grows at its end.
func TestToolListChanged(t *testing.T) {
	p := &inProcess{}
	m := start(t, p, mcp.ServerConfig{}, mcp.Options{Window: 128000})
	before := m.Definitions()
	got, isErr := call(t, m, context.Background(), "mcp__t__grow", `{}`)
	require.False(t, isErr, got)
	require.Eventually(t, func() bool {
		d, ok := m.Lookup(context.Background(), "mcp__t__grown")
		return ok && d.Name == "mcp__t__grown"
	}, 5*time.Second, 20*time.Millisecond)
	got, isErr = call(t, m, context.Background(), "mcp__t__grown", `{}`)
	require.False(t, isErr, got)
	require.Equal(t, "grown here", got)
	after := m.Definitions()
	require.Equal(t, before, after[:len(before)], "the tools before stay as they were")
	require.Equal(t, "mcp__t__grown", after[len(after)-1].Name)
}

// TestOneMCPFigure: the TUI, whose first request came while the server
// was starting, and `gencode mcp list`, which waits for it first, report
// the same tokens per request (they once said 622 and 495: the TUI had
// SearchMcpTools in its list for good), and /mcp's text says that figure.
func TestOneMCPFigure(t *testing.T) {
	count := tokens.New("gpt-4o").Count
	tui := &inProcess{block: make(chan struct{})}
	m := mcp.New(mcp.Options{Servers: []mcp.ServerConfig{{Name: "t", Command: "x"}}, Connect: tui.connect, Window: 128000, Count: count})
	m.Start(context.Background())
	defer m.Close()
	require.Empty(t, m.Definitions(), "the first request, the server still starting")
	close(tui.block)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m.WaitStarted(ctx)

	list := start(t, &inProcess{}, mcp.ServerConfig{}, mcp.Options{Window: 128000, Count: count})
	got, want := m.Status(), list.Status()
	require.False(t, got.Deferred)
	require.Equal(t, want.ExposedTokens, got.ExposedTokens)
	require.Equal(t, want.Servers[0].SchemaTokens, got.Servers[0].SchemaTokens)
	require.Greater(t, got.ExposedTokens, got.Servers[0].SchemaTokens, "the resource tools come with the server's")
	require.Contains(t, got.Text(), fmt.Sprintf("MCP schemas: %d tokens per request (with the resource tools; deferred above", got.ExposedTokens))
	for _, d := range m.Definitions() {
		require.NotEqual(t, mcp.ToolSearch, d.Name)
	}
}
