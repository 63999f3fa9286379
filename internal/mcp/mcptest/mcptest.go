// Package mcptest builds a real MCP server with the official SDK for
// gencode's tests: tools that echo, fail, hang, crash, return megabytes or
// rich content, write a file; a resource; a prompt; and optionally many
// tools with large schemas (the deferral case).
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options shape a test server.
type Options struct {
	// Many adds this many extra tools (many_00 ...) with large schemas.
	Many int
	// Crash ends the server when the crash tool is called; nil closes
	// the calling session (in-process), the stdio binary exits.
	Crash func(ctx context.Context, req *sdk.CallToolRequest)
}

// Stats count what a server saw, for assertions.
type Stats struct {
	Calls     atomic.Int64
	Cancelled atomic.Int64 // slow calls whose context ended before they did
}

// NewServer returns a server offering the test tools.
func NewServer(opts Options, st *Stats) *sdk.Server {
	if st == nil {
		st = &Stats{}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "mcptest", Version: "1"}, nil)
	text := func(t string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: t}}}
	}
	obj := func(props string, req ...string) json.RawMessage {
		r, _ := json.Marshal(req)
		if len(req) == 0 {
			r = []byte("[]")
		}
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(r) + `}`)
	}
	add := func(name, desc string, schema json.RawMessage, h func(ctx context.Context, req *sdk.CallToolRequest, args map[string]any) *sdk.CallToolResult) {
		s.AddTool(&sdk.Tool{Name: name, Description: desc, InputSchema: schema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			st.Calls.Add(1)
			var args map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &args) // a test tool: bad arguments read as none
			return h(ctx, req, args), nil
		})
	}
	add("echo", "Echo the text back.", obj(`"text":{"type":"string"}`, "text"), func(_ context.Context, _ *sdk.CallToolRequest, a map[string]any) *sdk.CallToolResult {
		return text(fmt.Sprint("echo: ", a["text"]))
	})
	add("fail", "Always fails.", obj(``), func(context.Context, *sdk.CallToolRequest, map[string]any) *sdk.CallToolResult {
		r := text("boom: the tool failed")
		r.IsError = true
		return r
	})
	add("slow", "Sleep ms milliseconds (forever when 0).", obj(`"ms":{"type":"number"}`), func(ctx context.Context, _ *sdk.CallToolRequest, a map[string]any) *sdk.CallToolResult {
		ms, _ := a["ms"].(float64)
		d := time.Duration(ms) * time.Millisecond
		if d == 0 {
			d = time.Hour
		}
		select {
		case <-time.After(d):
			return text("slept")
		case <-ctx.Done():
			st.Cancelled.Add(1)
			return text("cancelled")
		}
	})
	add("crash", "Crash the server mid-call.", obj(``), func(ctx context.Context, req *sdk.CallToolRequest, _ map[string]any) *sdk.CallToolResult {
		if opts.Crash != nil {
			opts.Crash(ctx, req)
		} else {
			_ = req.Session.Close() // the connection ends under the call
		}
		<-ctx.Done()
		return text("unreachable")
	})
	add("big", "Return bytes bytes of text.", obj(`"bytes":{"type":"number"}`), func(_ context.Context, _ *sdk.CallToolRequest, a map[string]any) *sdk.CallToolResult {
		n, _ := a["bytes"].(float64)
		line := strings.Repeat("x", 99) + "\n"
		return text(strings.Repeat(line, int(n)/100+1)[:int(n)])
	})
	add("rich", "Return every kind of content.", obj(``), func(context.Context, *sdk.CallToolRequest, map[string]any) *sdk.CallToolResult {
		size := int64(42)
		return &sdk.CallToolResult{
			Content: []sdk.Content{
				&sdk.TextContent{Text: "some text"},
				&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 2048)},
				&sdk.ResourceLink{URI: "file:///tmp/report.txt", Name: "report", MIMEType: "text/plain", Size: &size},
			},
			StructuredContent: map[string]any{"count": 3},
		}
	})
	add("write", "Write content to the file at path (relative to the server's directory).", obj(`"path":{"type":"string"},"content":{"type":"string"}`, "path", "content"), func(_ context.Context, _ *sdk.CallToolRequest, a map[string]any) *sdk.CallToolResult {
		p, _ := a["path"].(string)
		c, _ := a["content"].(string)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			r := text(err.Error())
			r.IsError = true
			return r
		}
		return text("wrote " + p)
	})
	add("grow", "Add the tool grown to the server (its tool list changes).", obj(``), func(context.Context, *sdk.CallToolRequest, map[string]any) *sdk.CallToolResult {
		s.AddTool(&sdk.Tool{Name: "grown", Description: "A tool added at run time.", InputSchema: obj(``)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return text("grown here"), nil
			})
		return text("grew")
	})
	for i := range opts.Many {
		props := make([]string, 0, 5)
		for j := range 5 {
			props = append(props, fmt.Sprintf(`"field_%d":{"type":"string","description":"Field %d of record kind %d: an identifier, a free-text note or a filter expression in the service's own query language, as described in its documentation."}`, j, j, i))
		}
		add(fmt.Sprintf("many_%02d", i), fmt.Sprintf("Operation %d of a large service API: fetches, filters and updates records of kind %d; returns the matching records as JSON with their identifiers, owners, timestamps and status.", i, i),
			obj(strings.Join(props, ",")), func(context.Context, *sdk.CallToolRequest, map[string]any) *sdk.CallToolResult {
				return text(fmt.Sprintf("many_%02d done", i))
			})
	}
	s.AddResource(&sdk.Resource{URI: "mem://notes", Name: "notes", MIMEType: "text/plain", Description: "Project notes."},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "the notes say hello"}}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "review", Description: "Review a file.", Arguments: []*sdk.PromptArgument{{Name: "file", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Please review " + req.Params.Arguments["file"] + " carefully."}}}}, nil
		})
	return s
}
