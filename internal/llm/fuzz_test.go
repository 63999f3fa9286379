package llm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
)

// fuzzCap is the answer cap of FuzzStream's client.
const fuzzCap = 2048

// FuzzStream feeds arbitrary server-sent events to the real client through
// the fake server: recorded provider streams, broken JSON, tool-call
// fragments with duplicate ids, and deltas far larger than the answer cap.
// Whatever arrives, Stream returns (no panic, no hang), a successful answer
// stays within the cap, and a failure is one of the kinds callers handle.
//
//	go test ./internal/llm -run '^$' -fuzz FuzzStream -fuzztime 5m
func FuzzStream(f *testing.F) {
	// The recorded provider streams are seeds when the shared test data is
	// there (GENCODE_TESTDATA, or beside the repository); the inline seeds
	// below are enough without them.
	dir, err := openaitest.FindSharedTestdata()
	if err != nil {
		f.Fatal(err)
	}
	var files []string
	if dir != "" {
		files, _ = filepath.Glob(filepath.Join(dir, "openai", "streams", "*.sse"))
	}
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(string(b))
		}
	}
	chunk := func(delta string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `}]}` + "\n\n"
	}
	finish := `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	f.Add(chunk(`{"role":"assistant","content":"hi"}`) + finish)
	f.Add(chunk(`{"content":"`+strings.Repeat("x", 10*fuzzCap)+`"}`) + finish)
	f.Add(chunk(`{"content":"`+strings.Repeat("y", 100<<10)+`"}`) + finish)
	f.Add(strings.Repeat(chunk(`{"content":"0123456789"}`), 300) + finish)
	f.Add(chunk(`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"Read","arguments":"{\"fi"}}]}`) +
		chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"le_path\":1"}}]}`) +
		chunk(`{"tool_calls":[{"index":0,"id":"b","function":{"name":"Bash","arguments":"not json"}}]}`) +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
	f.Add(chunk(`{"content":"cut`) + "\n\n")
	f.Add(`data: {"error":{"message":"overloaded","type":"server_error"}}` + "\n\n")
	f.Add(": keep-alive\n\n" + chunk(`{"reasoning_content":"hmm"}`) + finish)
	f.Add("<html>nope</html>")

	srv := openaitest.NewServer(f)
	client := llm.New(llm.Config{
		BaseURL: srv.URL(), APIKey: "k", MaxRetries: -1,
		MaxAnswerBytes: fuzzCap, HeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second,
	})
	f.Fuzz(func(t *testing.T, sse string) {
		if sse == "" {
			return // an empty SSE field means a generated answer, not a replay
		}
		srv.Enqueue(openaitest.Reply{SSE: sse})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := client.Stream(ctx, llm.Request{Model: "m", Messages: userMsg("hi")}, nil)
		size := len(resp.Content) + len(resp.Reasoning)
		for _, c := range resp.ToolCalls {
			size += len(c.Function.Arguments)
			if c.ID == "" || c.Function.Arguments == "" {
				t.Fatalf("tool call without id or arguments: %+v", c)
			}
		}
		if err == nil {
			if size > fuzzCap {
				t.Fatalf("a %d-byte answer passed the %d-byte cap", size, fuzzCap)
			}
			if resp.FinishReason == "" {
				t.Fatal("an answer without a finish reason counted as complete")
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("Stream hung: %v", err)
		}
		var ae *llm.APIError
		known := errors.Is(err, llm.ErrInterrupted) || errors.Is(err, llm.ErrAnswerTooLarge) ||
			errors.Is(err, llm.ErrUnexpectedResponse) || errors.As(err, &ae) ||
			strings.Contains(err.Error(), "malformed stream chunk")
		if !known {
			t.Fatalf("Stream error of no known kind: %v", err)
		}
	})
}
