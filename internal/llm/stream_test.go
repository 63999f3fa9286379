package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
)

// expectation is one entry of shared/testdata/openai/streams/expected.json.
type expectation struct {
	ContentChars   int    `json:"content_chars"`
	ContentHead    string `json:"content_head"`
	ReasoningChars int    `json:"reasoning_chars"`
	ToolCalls      []struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"tool_calls"`
	FinishReason string `json:"finish_reason"`
	Usage        struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

// TestStreamRecordedProviders replays every recorded provider stream and
// checks the reassembled answer against expected.json.
func TestStreamRecordedProviders(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(openaitest.SharedTestdata(t), "openai", "streams")
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	require.NoError(t, err)
	var expected map[string]expectation
	require.NoError(t, json.Unmarshal(b, &expected))
	files, err := filepath.Glob(filepath.Join(dir, "*.sse"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	var wantNames []string
	for name := range expected {
		wantNames = append(wantNames, name)
	}
	sort.Strings(wantNames)
	require.Equal(t, wantNames, names, "every recorded stream has an expectation and the reverse")

	for _, f := range files {
		want := expected[filepath.Base(f)]
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t)
			srv.Enqueue(openaitest.SSEFile(f))
			client, _ := newClient(t, srv.URL())
			var deltaContent, deltaReasoning strings.Builder
			var started []string
			got, err := client.Stream(context.Background(), llm.Request{Model: "m", Messages: userMsg("hi")}, func(d llm.Delta) {
				deltaContent.WriteString(d.Content)
				deltaReasoning.WriteString(d.Reasoning)
				if d.ToolCall != "" {
					started = append(started, d.ToolCall)
				}
			})
			require.NoError(t, err)

			if !strings.HasPrefix(got.Content, want.ContentHead) {
				t.Errorf("Content = %q, want prefix %q", got.Content, want.ContentHead)
			}
			require.Equal(t, want.ContentChars, utf8.RuneCountInString(got.Content), "content characters")
			require.Equal(t, want.ReasoningChars, utf8.RuneCountInString(got.Reasoning), "reasoning characters")
			require.Equal(t, got.Content, deltaContent.String(), "deltas add up to the content")
			require.Equal(t, got.Reasoning, deltaReasoning.String(), "deltas add up to the reasoning")
			require.Len(t, got.ToolCalls, len(want.ToolCalls))
			var wantStarted []string
			for i, wc := range want.ToolCalls {
				gc := got.ToolCalls[i]
				require.Equal(t, wc.ID, gc.ID)
				require.Equal(t, wc.Name, gc.Function.Name)
				require.Equal(t, wc.Arguments, gc.Function.Arguments)
				require.Equal(t, openai.ToolTypeFunction, gc.Type)
				require.Nil(t, gc.Index, "history tool calls carry no stream index")
				wantStarted = append(wantStarted, wc.Name)
			}
			require.Equal(t, wantStarted, started, "a delta announces each call")
			require.Equal(t, want.FinishReason, got.FinishReason)
			require.NotNil(t, got.Usage)
			require.Equal(t, want.Usage.PromptTokens, got.Usage.PromptTokens)
			require.Equal(t, want.Usage.CompletionTokens, got.Usage.CompletionTokens)
			require.Equal(t, want.Usage.TotalTokens, got.Usage.TotalTokens)
			require.NotEmpty(t, got.Model)
		})
	}
}

func TestStreamGeneratedReplies(t *testing.T) {
	t.Parallel()
	type call struct{ id, name, args string }
	tests := []struct {
		name        string
		reply       openaitest.Reply
		wantContent string
		wantReason  string
		wantCalls   []call // id "" means: any "call_" id
		wantStarts  []string
		wantFinish  string
		wantUsage   bool
	}{
		{
			name:        "text",
			reply:       openaitest.Reply{Content: "Hello, how can I help?", Chunks: 5},
			wantContent: "Hello, how can I help?",
			wantFinish:  "stop",
			wantUsage:   true,
		},
		{
			name: "parallel calls interleaved across chunks",
			reply: openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				{ID: "call_a", Name: "Read", Arguments: `{"file_path":"main.go","offset":10}`},
				{ID: "call_b", Name: "Grep", Arguments: `{"pattern":"func \\w+","include":"*.go"}`},
				{ID: "call_c", Name: "LS", Arguments: `{}`},
			}, Chunks: 4, Interleave: true},
			wantCalls: []call{
				{"call_a", "Read", `{"file_path":"main.go","offset":10}`},
				{"call_b", "Grep", `{"pattern":"func \\w+","include":"*.go"}`},
				{"call_c", "LS", `{}`},
			},
			wantStarts: []string{"Read", "Grep", "LS"},
			wantFinish: "tool_calls",
			wantUsage:  true,
		},
		{
			name: "whole calls in one delta, usage on finish",
			reply: openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				{ID: "tk85n1k4m", Name: "LS", Arguments: `{"path":"."}`}, {ID: "tk2", Name: "Glob", Arguments: `{"pattern":"*"}`},
			}, WholeToolCalls: true, UsageOnFinish: true},
			wantCalls:  []call{{"tk85n1k4m", "LS", `{"path":"."}`}, {"tk2", "Glob", `{"pattern":"*"}`}},
			wantStarts: []string{"LS", "Glob"},
			wantFinish: "tool_calls",
			wantUsage:  true,
		},
		{
			name:        "reasoning, text and a call",
			reply:       openaitest.Reply{Reasoning: "Let me look.", Content: "Reading it.", ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "Read", Arguments: `{"file_path":"a"}`}}},
			wantReason:  "Let me look.",
			wantContent: "Reading it.",
			wantCalls:   []call{{"c1", "Read", `{"file_path":"a"}`}},
			wantStarts:  []string{"Read"},
			wantFinish:  "tool_calls",
			wantUsage:   true,
		},
		{
			name: "index missing, ids tell the calls apart",
			reply: openaitest.Reply{SSE: sse(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x1","type":"function","function":{"name":"LS","arguments":"{\"pa"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"th\":\"a\"}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x2","type":"function","function":{"name":"LS","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			)},
			wantCalls:  []call{{"x1", "LS", `{"path":"a"}`}, {"x2", "LS", `{}`}},
			wantStarts: []string{"LS", "LS"},
			wantFinish: "tool_calls",
		},
		{
			name: "two calls sharing index 0",
			reply: openaitest.Reply{SSE: sse(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"LS","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"Read","arguments":"{\"file_path\":\"x\"}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			)},
			wantCalls:  []call{{"a", "LS", `{}`}, {"b", "Read", `{"file_path":"x"}`}},
			wantStarts: []string{"LS", "Read"},
			wantFinish: "tool_calls",
		},
		{
			name: "no ids, name repeated, empty arguments",
			reply: openaitest.Reply{SSE: sse(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"LS","arguments":""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"LS","arguments":""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"Read","arguments":"{\"file_path\":"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"Read","arguments":"\"y\"}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			)},
			wantCalls:  []call{{"", "LS", `{}`}, {"", "Read", `{"file_path":"y"}`}},
			wantStarts: []string{"LS", "Read"},
			wantFinish: "tool_calls",
		},
		{
			name: "finish without [DONE] is complete",
			reply: openaitest.Reply{SSE: "data: " + `{"choices":[{"index":0,"delta":{"content":"ok"}}]}` + "\n\n" +
				"data: " + `{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\n"},
			wantContent: "ok",
			wantFinish:  "length",
		},
		{
			name:        "keep-alive comments between events",
			reply:       openaitest.Reply{SSE: ": PROCESSING\n\n: PROCESSING\n\n" + sse(`{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`)},
			wantContent: "hi",
			wantFinish:  "stop",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t)
			srv.Enqueue(tt.reply)
			client, _ := newClient(t, srv.URL())
			var starts []string
			got, err := client.Stream(context.Background(), llm.Request{Model: "m", Messages: userMsg("go")}, func(d llm.Delta) {
				if d.ToolCall != "" {
					starts = append(starts, d.ToolCall)
				}
			})
			require.NoError(t, err)
			require.Equal(t, tt.wantContent, got.Content)
			require.Equal(t, tt.wantReason, got.Reasoning)
			require.Equal(t, tt.wantFinish, got.FinishReason)
			require.Equal(t, tt.wantStarts, starts)
			require.Equal(t, tt.wantUsage, got.Usage != nil)
			require.Len(t, got.ToolCalls, len(tt.wantCalls))
			ids := map[string]bool{}
			for i, want := range tt.wantCalls {
				gc := got.ToolCalls[i]
				if want.id == "" {
					require.True(t, strings.HasPrefix(gc.ID, "call_"), "made-up id %q", gc.ID)
				} else {
					require.Equal(t, want.id, gc.ID)
				}
				require.False(t, ids[gc.ID], "duplicate id %q", gc.ID)
				ids[gc.ID] = true
				require.Equal(t, want.name, gc.Function.Name)
				require.Equal(t, want.args, gc.Function.Arguments)
			}
			msg := got.Message()
			require.Equal(t, openai.ChatMessageRoleAssistant, msg.Role)
			require.Equal(t, got.ToolCalls, msg.ToolCalls)
		})
	}
}

// sse makes a raw event stream of data events ending in [DONE].
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: " + e + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func TestStreamInterrupted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		reply       openaitest.Reply
		wantContent string
		wantCalls   int
		wantErr     string
		wantIs      []error
	}{
		{
			name:        "connection cut mid-stream",
			reply:       openaitest.Reply{Content: "one two three four", Cut: true, CutAfter: 3},
			wantContent: "one two ",
			wantErr:     "chat completion m: answer interrupted after 8 characters: unexpected EOF",
			wantIs:      []error{llm.ErrInterrupted, io.ErrUnexpectedEOF},
		},
		{
			name: "cut inside a tool call",
			reply: openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c", Name: "Write", Arguments: `{"file_path":"a","content":"xyz"}`}},
				Cut: true, CutAfter: 3},
			wantCalls: 0, // its arguments may be incomplete
			wantErr:   "answer interrupted after",
			wantIs:    []error{llm.ErrInterrupted},
		},
		{
			name:        "clean end without finish_reason",
			reply:       openaitest.Reply{SSE: "data: " + `{"choices":[{"index":0,"delta":{"content":"hal"}}]}` + "\n\n"},
			wantContent: "hal",
			wantErr:     "chat completion m: answer interrupted after 3 characters: the stream ended before the model finished",
			wantIs:      []error{llm.ErrInterrupted},
		},
		{
			name: "error event mid-stream",
			reply: openaitest.Reply{SSE: "data: " + `{"choices":[{"index":0,"delta":{"content":"par"}}]}` + "\n\n" +
				`data: {"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}` + "\n\n"},
			wantContent: "par",
			wantErr:     "chat completion m: context window exceeded: This model's maximum context length is 8192 tokens.",
			wantIs:      []error{llm.ErrContextOverflow},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t)
			srv.Enqueue(tt.reply)
			client, sl := newClient(t, srv.URL())
			got, err := client.Stream(context.Background(), llm.Request{Model: "m", Messages: userMsg("go")}, nil)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.wantErr)
			for _, target := range tt.wantIs {
				require.ErrorIs(t, err, target)
			}
			require.Equal(t, tt.wantContent, got.Content, "the partial answer is kept")
			require.Len(t, got.ToolCalls, tt.wantCalls)
			require.Empty(t, got.FinishReason)
			require.Empty(t, sl.all(), "a started stream is never retried")
			require.Len(t, srv.Requests(), 1)
		})
	}
}

func TestStreamCancel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reply  openaitest.Reply
		onText bool // cancel on the first text delta, else after 100 ms
		real   bool // really sleep between retries
	}{
		{name: "mid-stream", reply: openaitest.Reply{Content: strings.Repeat("word ", 50), ChunkDelay: 500 * time.Millisecond}, onText: true},
		{name: "before the first byte", reply: openaitest.Reply{Content: "late", Delay: time.Minute}},
		{name: "while waiting to retry", reply: openaitest.Reply{Status: 429, Header: map[string]string{"Retry-After": "15"}}, real: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t)
			srv.Enqueue(tt.reply)
			client, _ := newClient(t, srv.URL(), func(c *llm.Config) {
				if tt.real {
					c.Sleep = nil
				}
			})
			ctx, cancelCtx := context.WithCancel(context.Background())
			defer cancelCtx()
			canceled := make(chan time.Time, 1)
			cancel := func() {
				canceled <- time.Now()
				cancelCtx()
			}
			if !tt.onText {
				timer := time.AfterFunc(100*time.Millisecond, cancel)
				defer timer.Stop()
			}
			got, err := client.Stream(ctx, llm.Request{Model: "m", Messages: userMsg("go")}, func(d llm.Delta) {
				if d.Content != "" && tt.onText {
					cancel()
				}
			})
			returned := time.Now()
			require.ErrorIs(t, err, context.Canceled)
			require.Less(t, returned.Sub(<-canceled), 250*time.Millisecond, "Stream returns promptly after cancel")
			if tt.onText {
				require.Equal(t, "word ", got.Content, "the partial answer is kept")
			}
		})
	}
}

func TestRequestShape(t *testing.T) {
	t.Parallel()
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "Read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}}}`),
	}}}
	history := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You are gencode."},
		{Role: openai.ChatMessageRoleUser, Content: "read a"},
		{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{ID: "call_1", Type: "function", Function: openai.FunctionCall{Name: "Read", Arguments: `{"file_path":"a"}`}}}},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "call_1", Content: "package a"},
	}
	tests := []struct {
		name          string
		stream        bool
		model         string
		apiKey        string
		maxTokens     int
		toolChoice    string
		wantMax       int
		wantMaxCompl  int
		wantAuthorize string
	}{
		{name: "stream", stream: true, model: "gpt-4o-mini", apiKey: "sk-1", maxTokens: 100, wantMax: 100, wantAuthorize: "Bearer sk-1"},
		{name: "stream to a reasoning model", stream: true, model: "o3-mini", maxTokens: 100, wantMaxCompl: 100},
		{name: "stream to gpt-5", stream: true, model: "gpt-5-nano", maxTokens: 50, wantMaxCompl: 50},
		{name: "complete", model: "qwen2.5-coder:7b", apiKey: "k", wantAuthorize: "Bearer k"},
		{name: "complete with the tools, calling none", model: "gpt-4o-mini", toolChoice: "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithMessageRules())
			srv.Enqueue(openaitest.Text("ok"))
			client, _ := newClient(t, srv.URL(), func(c *llm.Config) { c.APIKey = tt.apiKey })
			req := llm.Request{Model: tt.model, Messages: history, Tools: tools, MaxTokens: tt.maxTokens, ToolChoice: tt.toolChoice}
			var got llm.Response
			var err error
			if tt.stream {
				got, err = client.Stream(context.Background(), req, nil)
			} else {
				got, err = client.Complete(context.Background(), req)
			}
			require.NoError(t, err)
			require.Equal(t, "ok", got.Content)
			require.Equal(t, "stop", got.FinishReason)
			require.NotNil(t, got.Usage)
			require.Equal(t, tt.model, got.Model)

			reqs := srv.Requests()
			require.Len(t, reqs, 1)
			r := reqs[0]
			require.Equal(t, tt.model, r.Model)
			require.Equal(t, tt.stream, r.Stream)
			require.Equal(t, tt.stream, r.IncludeUsage, "usage is asked for when streaming")
			require.Equal(t, tt.wantMax, r.MaxTokens)
			require.Equal(t, tt.wantMaxCompl, r.MaxCompletionTokens)
			require.Equal(t, tt.wantAuthorize, r.Header.Get("Authorization"))
			require.Equal(t, history, r.Messages)
			require.Len(t, r.Tools, 1)
			require.Equal(t, "Read", r.Tools[0].Function.Name)
			require.Equal(t, tt.toolChoice, r.ToolChoice, "tool_choice is sent only when set")
		})
	}
}

func TestMaxTokensFallsBackToMaxCompletionTokens(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile(filepath.Join(openaitest.SharedTestdata(t), "openai", "errors", "400_unsupported_parameter__vercel-ai-fixture.json"))
	require.NoError(t, err)
	for _, stream := range []bool{true, false} {
		srv := openaitest.NewServer(t)
		srv.Enqueue(openaitest.Error(400, string(body)), openaitest.Text("ok"))
		client, sl := newClient(t, srv.URL())
		req := llm.Request{Model: "some-new-model", Messages: userMsg("hi"), MaxTokens: 64}
		var got llm.Response
		if stream {
			got, err = client.Stream(context.Background(), req, nil)
		} else {
			got, err = client.Complete(context.Background(), req)
		}
		require.NoError(t, err)
		require.Equal(t, "ok", got.Content)
		reqs := srv.Requests()
		require.Len(t, reqs, 2)
		require.Equal(t, 64, reqs[0].MaxTokens)
		require.Equal(t, 0, reqs[1].MaxTokens)
		require.Equal(t, 64, reqs[1].MaxCompletionTokens)
		require.Empty(t, sl.all())
	}
}

func TestStrictProvider(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    []openaitest.Option
		msgs    []openai.ChatCompletionMessage
		wantIs  error
		wantErr string
	}{
		{
			name:    "context window",
			opts:    []openaitest.Option{openaitest.WithContextWindow(20, nil)},
			msgs:    userMsg(strings.Repeat("lorem ipsum ", 20)),
			wantIs:  llm.ErrContextOverflow,
			wantErr: "chat completion m: context window exceeded: This model's maximum context length is 20 tokens.",
		},
		{
			name:    "orphan tool message",
			opts:    []openaitest.Option{openaitest.WithMessageRules()},
			msgs:    append(userMsg("hi"), openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: "c9", Content: "x"}),
			wantErr: `chat completion m: provider error 400: Invalid 'messages': message 1: tool message (tool_call_id "c9") without a preceding assistant tool call`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, tt.opts...)
			client, sl := newClient(t, srv.URL())
			_, err := client.Stream(context.Background(), llm.Request{Model: "m", Messages: tt.msgs}, nil)
			require.Error(t, err)
			if !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("Stream() error = %q, want prefix %q", err, tt.wantErr)
			}
			if tt.wantIs != nil {
				require.ErrorIs(t, err, tt.wantIs)
			}
			var ae *llm.APIError
			require.True(t, errors.As(err, &ae))
			require.Equal(t, 400, ae.Status)
			require.Empty(t, sl.all(), "a 400 is not retried")
		})
	}
}

func TestModels(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithModels("llama3.2:3b", "qwen2.5-coder:7b"))
	client, _ := newClient(t, srv.URL())
	got, err := client.Models(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"llama3.2:3b", "qwen2.5-coder:7b"}, got)
}

func TestCompleteInterrupted(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	srv.Enqueue(openaitest.Reply{Content: "a long summary", Cut: true, CutAfter: 20})
	client, sl := newClient(t, srv.URL())
	_, err := client.Complete(context.Background(), llm.Request{Model: "m", Messages: userMsg("summarize")})
	require.ErrorIs(t, err, llm.ErrInterrupted)
	require.Equal(t, "chat completion m: answer interrupted: unexpected EOF", err.Error())
	require.Empty(t, sl.all(), "the body had started: not retried")
}

// countingTransport counts the requests it carries.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func TestCallerHTTPClient(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	srv.Enqueue(openaitest.Error(503, ""), openaitest.Text("ok"))
	ct := &countingTransport{}
	hc := &http.Client{Transport: ct}
	client, sl := newClient(t, srv.URL(), func(c *llm.Config) { c.HTTPClient = hc })
	got, err := client.Stream(context.Background(), llm.Request{Model: "m", Messages: userMsg("hi")}, nil)
	require.NoError(t, err)
	require.Equal(t, "ok", got.Content)
	require.Equal(t, int32(2), ct.n.Load(), "requests go through the caller's transport")
	require.Len(t, sl.all(), 1)
	require.Same(t, ct, hc.Transport, "the caller's client is not modified")
}
