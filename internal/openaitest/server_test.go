package openaitest_test

//lint:file-ignore SA1019 the fake server reads max_tokens, as the OpenAI-compatible servers do

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// post sends a raw chat request and returns the status, header and body.
// A body cut by the server comes back with the read error.
func post(t *testing.T, url string, body string) (int, http.Header, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url+"/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b), err
}

// chunk is the part of a streamed chunk the tests look at.
type chunk struct {
	Choices []struct {
		Delta struct {
			Role             string `json:"role"`
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *openai.Usage `json:"usage"`
}

// parseSSE decodes the data events of a stream; done reports a final [DONE].
func parseSSE(t *testing.T, body string) (chunks []chunk, rawChoices []string, done bool) {
	t.Helper()
	for _, ev := range strings.Split(body, "\n\n") {
		data, ok := strings.CutPrefix(strings.TrimSpace(ev), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var c chunk
		require.NoError(t, json.Unmarshal([]byte(data), &c), data)
		var raw map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(data), &raw))
		chunks = append(chunks, c)
		rawChoices = append(rawChoices, string(raw["choices"]))
	}
	return chunks, rawChoices, done
}

func TestServerStreamsReplies(t *testing.T) {
	t.Parallel()
	type call struct{ id, name, args string }
	tests := []struct {
		name         string
		reply        openaitest.Reply
		includeUsage bool
		wantContent  []string // content deltas
		wantReason   []string
		wantCalls    []call // reassembled by index
		wantFrags    int    // tool-call deltas
		wantFinish   string
		wantUsage    string // "": none; "finish": on the finish chunk; "last": in a choices:[] chunk
	}{
		{
			name:        "text split at words",
			reply:       openaitest.Text("Hello there, world"),
			wantContent: []string{"Hello ", "there, ", "world"},
			wantFinish:  "stop",
		},
		{
			name:         "text in n chunks with usage",
			reply:        openaitest.Reply{Content: "abcdefghi", Chunks: 3},
			includeUsage: true,
			wantContent:  []string{"abc", "def", "ghi"},
			wantFinish:   "stop",
			wantUsage:    "last",
		},
		{
			name:        "multibyte text is split on runes",
			reply:       openaitest.Reply{Content: "héllo→ü", Chunks: 7},
			wantContent: []string{"h", "é", "l", "l", "o", "→", "ü"},
			wantFinish:  "stop",
		},
		{
			name:         "reasoning then content, usage on finish",
			reply:        openaitest.Reply{Reasoning: "think hard", Content: "ok", UsageOnFinish: true},
			includeUsage: true,
			wantReason:   []string{"think ", "hard"},
			wantContent:  []string{"ok"},
			wantFinish:   "stop",
			wantUsage:    "finish",
		},
		{
			name:       "tool call with fragments",
			reply:      openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_a", Name: "Read", Arguments: `{"file_path":"x.go"}`}}, Chunks: 4},
			wantCalls:  []call{{"call_a", "Read", `{"file_path":"x.go"}`}},
			wantFrags:  5,
			wantFinish: "tool_calls",
		},
		{
			name: "parallel calls interleaved",
			reply: openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				{Name: "LS", Arguments: `{"path":"."}`}, {ID: "b", Name: "Glob", Arguments: `{"pattern":"*.go"}`},
			}, Interleave: true},
			wantCalls:  []call{{"call_openaitest_1_0", "LS", `{"path":"."}`}, {"b", "Glob", `{"pattern":"*.go"}`}},
			wantFrags:  8,
			wantFinish: "tool_calls",
		},
		{
			name: "whole calls in one delta",
			reply: openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				{ID: "tk1", Name: "LS", Arguments: "{}"}, {ID: "tk2", Name: "LS", Arguments: `{"path":"a"}`},
			}, WholeToolCalls: true, FinishReason: "length"},
			wantCalls:  []call{{"tk1", "LS", "{}"}, {"tk2", "LS", `{"path":"a"}`}},
			wantFrags:  2,
			wantFinish: "length",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t)
			srv.Enqueue(tt.reply)
			body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true`
			if tt.includeUsage {
				body += `,"stream_options":{"include_usage":true}`
			}
			status, hdr, out, err := post(t, srv.URL(), body+"}")
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status)
			require.Equal(t, "text/event-stream", hdr.Get("Content-Type"))
			chunks, rawChoices, done := parseSSE(t, out)
			require.True(t, done, "stream ends with [DONE]")

			var content, reason []string
			var calls []call
			frags, finish, usage := 0, "", ""
			for i, c := range chunks {
				if c.Usage != nil {
					switch {
					case rawChoices[i] == "[]":
						usage = "last"
					case len(c.Choices) == 1 && c.Choices[0].FinishReason != nil:
						usage = "finish"
					default:
						t.Fatalf("usage on chunk %d with choices %s", i, rawChoices[i])
					}
				}
				for _, ch := range c.Choices {
					if ch.Delta.Content != "" {
						content = append(content, ch.Delta.Content)
					}
					if ch.Delta.ReasoningContent != "" {
						reason = append(reason, ch.Delta.ReasoningContent)
					}
					for _, tc := range ch.Delta.ToolCalls {
						frags++
						for len(calls) <= tc.Index {
							calls = append(calls, call{})
						}
						if tc.ID != "" {
							calls[tc.Index].id = tc.ID
						}
						if tc.Function.Name != "" {
							calls[tc.Index].name = tc.Function.Name
						}
						calls[tc.Index].args += tc.Function.Arguments
					}
					if ch.FinishReason != nil {
						finish = *ch.FinishReason
					}
				}
			}
			require.Equal(t, "assistant", chunks[0].Choices[0].Delta.Role)
			require.Equal(t, tt.wantContent, content)
			require.Equal(t, tt.wantReason, reason)
			require.Equal(t, tt.wantCalls, calls)
			require.Equal(t, tt.wantFrags, frags)
			require.Equal(t, tt.wantFinish, finish)
			require.Equal(t, tt.wantUsage, usage)
		})
	}
}

func TestServerQueueAndRecording(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{ID: "call_1", Name: "Read", Arguments: `{"file_path":"a"}`}),
		openaitest.Text("second"),
	)
	client := openai.NewClientWithConfig(func() openai.ClientConfig {
		c := openai.DefaultConfig("sk-test")
		c.BaseURL = srv.URL()
		return c
	}())
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "Read", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	msgs := []openai.ChatCompletionMessage{sys("s"), user("read a")}
	resp, err := client.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "gpt-4o-mini", Messages: msgs, Tools: tools, MaxTokens: 100,
	})
	require.NoError(t, err)
	require.Len(t, resp.Choices, 1)
	require.Equal(t, openai.FinishReasonToolCalls, resp.Choices[0].FinishReason)
	require.Equal(t, "call_1", resp.Choices[0].Message.ToolCalls[0].ID)
	require.Positive(t, resp.Usage.TotalTokens)

	msgs = append(msgs, resp.Choices[0].Message, result("call_1"))
	resp, err = client.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "gpt-4o-mini", Messages: msgs, MaxCompletionTokens: 7,
	})
	require.NoError(t, err)
	require.Equal(t, "second", resp.Choices[0].Message.Content)
	require.Equal(t, 0, srv.Pending())

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	require.Equal(t, "gpt-4o-mini", reqs[0].Model)
	require.False(t, reqs[0].Stream)
	require.Equal(t, 100, reqs[0].MaxTokens)
	require.Equal(t, 7, reqs[1].MaxCompletionTokens)
	require.Equal(t, "Bearer sk-test", reqs[0].Header.Get("Authorization"))
	require.Len(t, reqs[0].Tools, 1)
	require.Equal(t, "Read", reqs[0].Tools[0].Function.Name)
	require.Len(t, reqs[1].Messages, 4)
	require.Equal(t, "call_1", reqs[1].Messages[2].ToolCalls[0].ID)
	require.Equal(t, "call_1", reqs[1].Messages[3].ToolCallID)
	require.NoError(t, openaitest.CheckMessageRules(reqs[1].Messages))
}

func TestServerForModelAndResponder(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
		return openaitest.Text("responder for " + r.Model)
	}))
	srv.Enqueue(openaitest.Reply{ForModel: "summarizer", Content: "summary"}, openaitest.Text("main"))

	ask := func(model string) string {
		_, _, out, err := post(t, srv.URL(), `{"model":"`+model+`","messages":[{"role":"user","content":"x"}]}`)
		require.NoError(t, err)
		var c openai.ChatCompletionResponse
		require.NoError(t, json.Unmarshal([]byte(out), &c), out)
		return c.Choices[0].Message.Content
	}
	require.Equal(t, "main", ask("big"))
	require.Equal(t, "responder for big", ask("big"))
	require.Equal(t, "summary", ask("summarizer"))
	require.Equal(t, "responder for summarizer", ask("summarizer"))

	// Concurrent requests: the responder is serialized, so unguarded state is fine.
	n := 0
	srv2 := openaitest.NewServer(t, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		n++
		return openaitest.Text(fmt.Sprint(n))
	}))
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			status, _, _, err := post(t, srv2.URL(), `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}`)
			if err != nil || status != http.StatusOK {
				t.Errorf("post = %d, %v", status, err)
			}
		})
	}
	wg.Wait()
	require.Len(t, srv2.Requests(), 20)
}

func TestServerErrorReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		reply      openaitest.Reply
		wantStatus int
		wantHeader map[string]string
		wantBody   string // substring
	}{
		{
			name:       "429 with Retry-After",
			reply:      openaitest.Reply{Status: 429, Header: map[string]string{"Retry-After": "1"}, Body: `{"error":{"message":"slow down","code":"rate_limit_exceeded"}}`},
			wantStatus: 429,
			wantHeader: map[string]string{"Retry-After": "1", "Content-Type": "application/json"},
			wantBody:   `{"error":{"message":"slow down","code":"rate_limit_exceeded"}}`,
		},
		{
			name:       "500 with a generic body",
			reply:      openaitest.Error(500, ""),
			wantStatus: 500,
			wantBody:   `"message":"openaitest: scripted error 500 Internal Server Error"`,
		},
		{
			name:       "verbatim 200 body",
			reply:      openaitest.Reply{Body: `{"choices":[]}`},
			wantStatus: 200,
			wantBody:   `{"choices":[]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t)
			srv.Enqueue(tt.reply)
			status, hdr, body, err := post(t, srv.URL(), `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}`)
			require.NoError(t, err)
			require.Equal(t, tt.wantStatus, status)
			for k, v := range tt.wantHeader {
				require.Equal(t, v, hdr.Get(k), k)
			}
			require.Contains(t, body, tt.wantBody)
		})
	}
}

func TestServerRejectsLikeAProvider(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 100)
	tests := []struct {
		name     string
		opts     []openaitest.Option
		body     string
		wantCode string
		wantMsg  string
	}{
		{
			name:    "orphan tool message",
			opts:    []openaitest.Option{openaitest.WithMessageRules()},
			body:    `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c1","content":"r"}]}`,
			wantMsg: "Invalid 'messages': message 1: tool message",
		},
		{
			name:    "roles out of turn for a strict chat template",
			opts:    []openaitest.Option{openaitest.WithRoleAlternation()},
			body:    `{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"summary"},{"role":"user","content":"x"}]}`,
			wantMsg: "Conversation roles must alternate user/assistant/user/assistant/...: message 2: user message after a user message",
		},
		{
			name:     "over the window",
			opts:     []openaitest.Option{openaitest.WithContextWindow(50, nil)},
			body:     `{"model":"m","messages":[{"role":"user","content":"` + long + `"}]}`,
			wantCode: "context_length_exceeded",
			wantMsg:  "This model's maximum context length is 50 tokens. However, your messages resulted in",
		},
		{
			name:     "over the window with the completion",
			opts:     []openaitest.Option{openaitest.WithContextWindow(100, func(openaitest.Request) int { return 90 })},
			body:     `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":20}`,
			wantCode: "context_length_exceeded",
			wantMsg:  "However, you requested 110 tokens (90 in the messages, 20 in the completion).",
		},
		{
			name:    "stream_options without stream",
			body:    `{"model":"m","messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true}}`,
			wantMsg: "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
		},
		{
			name:    "no messages",
			body:    `{"model":"m","messages":[]}`,
			wantMsg: "Invalid 'messages': empty array",
		},
		{
			name:    "not JSON",
			body:    `{"model":`,
			wantMsg: "We could not parse the JSON body of your request.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, tt.opts...)
			srv.Enqueue(openaitest.Text("kept for the next request"))
			status, _, body, err := post(t, srv.URL(), tt.body)
			require.NoError(t, err)
			require.Equal(t, http.StatusBadRequest, status, body)
			var e struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Code    *string `json:"code"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &e))
			require.Equal(t, "invalid_request_error", e.Error.Type)
			require.Contains(t, e.Error.Message, tt.wantMsg)
			if tt.wantCode != "" {
				require.NotNil(t, e.Error.Code)
				require.Equal(t, tt.wantCode, *e.Error.Code)
			}
			require.Equal(t, 1, srv.Pending(), "a rejected request consumes no reply")
		})
	}
}

func TestServerReplaysRecordedStreams(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(openaitest.SharedTestdata(t), "openai", "streams", "*.sse"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(f)
			require.NoError(t, err)
			srv := openaitest.NewServer(t)
			srv.Enqueue(openaitest.SSEFile(f))
			status, _, got, err := post(t, srv.URL(), `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}`)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status)
			require.True(t, string(want) == got, "replay differs from %s", f)
		})
	}
}

func TestServerBrokenConnections(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		reply      openaitest.Reply
		stream     bool
		wantEvents int    // complete data events received
		wantDone   bool   // [DONE] received
		wantErr    bool   // the read fails
		wantBody   string // for JSON answers
	}{
		{name: "cut after two events", reply: openaitest.Reply{Content: "a b c d", Cut: true, CutAfter: 2}, stream: true, wantEvents: 2, wantErr: true},
		{name: "cut right after the headers", reply: openaitest.Reply{Content: "a b", Cut: true}, stream: true, wantEvents: 0, wantErr: true},
		{name: "cut a recorded stream", reply: openaitest.Reply{SSE: "data: {\"choices\":[]}\n\ndata: {\"choices\":[]}\n\ndata: [DONE]\n\n", Cut: true, CutAfter: 1}, stream: true, wantEvents: 1, wantErr: true},
		{name: "cut a JSON answer", reply: openaitest.Reply{Content: "abc", Cut: true, CutAfter: 10}, wantBody: `{"id":"cha`, wantErr: true},
		{name: "cut a verbatim body", reply: openaitest.Reply{Body: `{"choices":[]}`, Cut: true, CutAfter: 4}, wantBody: `{"ch`, wantErr: true},
		{name: "complete", reply: openaitest.Text("a b"), stream: true, wantEvents: 4, wantDone: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t)
			srv.Enqueue(tt.reply)
			_, _, body, err := post(t, srv.URL(), fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"x"}],"stream":%t}`, tt.stream))
			if tt.wantErr {
				require.ErrorIs(t, err, io.ErrUnexpectedEOF)
			} else {
				require.NoError(t, err)
			}
			if !tt.stream {
				require.Equal(t, tt.wantBody, body)
			} else {
				chunks, _, done := parseSSE(t, body)
				require.Len(t, chunks, tt.wantEvents)
				require.Equal(t, tt.wantDone, done)
			}
		})
	}

	t.Run("hangup", func(t *testing.T) {
		t.Parallel()
		srv := openaitest.NewServer(t)
		srv.Enqueue(openaitest.Reply{Hangup: true})
		_, _, _, err := post(t, srv.URL(), `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
		require.Error(t, err)
		require.True(t, errors.Is(err, io.EOF) || strings.Contains(err.Error(), "EOF"), "err = %v", err)
	})
}

func TestServerDelayAndGate(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	gate := make(chan struct{})
	srv.Enqueue(openaitest.Reply{Content: "late", Delay: 50 * time.Millisecond, Gate: gate})

	done := make(chan time.Time)
	start := time.Now()
	go func() {
		_, _, _, err := post(t, srv.URL(), `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
		if err != nil {
			t.Errorf("post: %v", err)
		}
		done <- time.Now()
	}()
	select {
	case <-done:
		t.Fatal("answered before the gate opened")
	case <-time.After(100 * time.Millisecond):
	}
	close(gate)
	end := <-done
	require.GreaterOrEqual(t, end.Sub(start), 100*time.Millisecond)
}

func TestServerCloseReleasesWaitingReplies(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(nil)
	srv.Enqueue(openaitest.Reply{Content: "never", Gate: make(chan struct{})})
	errc := make(chan error, 1)
	go func() {
		_, _, _, err := post(t, srv.URL(), `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
		errc <- err
	}()
	require.Eventually(t, func() bool { return len(srv.Requests()) == 1 }, 5*time.Second, 5*time.Millisecond)
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked on a gated reply")
	}
	<-errc
}

func TestServerModels(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithModels("llama3.2", "qwen2.5-coder"))
	c := openai.DefaultConfig("")
	c.BaseURL = srv.URL()
	list, err := openai.NewClientWithConfig(c).ListModels(context.Background())
	require.NoError(t, err)
	var ids []string
	for _, m := range list.Models {
		ids = append(ids, m.ID)
	}
	require.Equal(t, []string{"llama3.2", "qwen2.5-coder"}, ids)
	require.Empty(t, srv.Requests(), "only chat requests are recorded")

	// An endpoint whose list fails: the client gets the status.
	down := openaitest.NewServer(t, openaitest.WithModelsError(http.StatusServiceUnavailable))
	c.BaseURL = down.URL()
	_, err = openai.NewClientWithConfig(c).ListModels(context.Background())
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusServiceUnavailable, apiErr.HTTPStatusCode)
}

// recordingTB catches the errors the server reports to its test.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestServerUnscriptedRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		tb      func(t *testing.T) *recordingTB
		wantErr string
	}{
		{name: "with a test", tb: func(t *testing.T) *recordingTB { return &recordingTB{TB: t} }, wantErr: `openaitest: no reply scripted for request 1 (model "m")`},
		{name: "standalone", tb: func(*testing.T) *recordingTB { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := tt.tb(t)
			var srv *openaitest.Server
			if rec != nil {
				srv = openaitest.NewServer(rec)
			} else {
				srv = openaitest.NewServer(nil)
				defer srv.Close()
			}
			status, _, body, err := post(t, srv.URL(), `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
			require.NoError(t, err)
			require.Equal(t, http.StatusBadRequest, status)
			require.Contains(t, body, "no reply scripted")
			if rec != nil {
				rec.mu.Lock()
				defer rec.mu.Unlock()
				require.Equal(t, []string{tt.wantErr}, rec.errs)
			}
		})
	}
}

func TestScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.sse"), []byte("data: {\"choices\":[]}\n\ndata: [DONE]\n\n"), 0o600))
	script := `{
	  "replies": [
	    {"sse_file": "s.sse"},
	    {"content": "slow", "delay": "30ms", "chunks": 2},
	    {"status": 429, "header": {"Retry-After": "2"}}
	  ],
	  "fallback": {"content": "fallback"},
	  "models": ["local"],
	  "message_rules": true,
	  "context_window": 100000
	}`
	path := filepath.Join(dir, "script.json")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o600))
	sc, err := openaitest.LoadScript(path)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "s.sse"), sc.Replies[0].SSEFile)
	require.Equal(t, 30*time.Millisecond, sc.Replies[1].Delay)

	// The script round-trips through JSON.
	b, err := json.Marshal(sc)
	require.NoError(t, err)
	var again openaitest.Script
	require.NoError(t, json.Unmarshal(b, &again))
	require.Equal(t, sc, again)

	srv := openaitest.NewServer(t, openaitest.WithScript(sc))
	req := `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}`
	_, _, body, err := post(t, srv.URL(), req)
	require.NoError(t, err)
	require.Equal(t, "data: {\"choices\":[]}\n\ndata: [DONE]\n\n", body)
	start := time.Now()
	_, _, body, err = post(t, srv.URL(), req)
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
	require.Contains(t, body, `"content":"sl"`)
	status, hdr, _, err := post(t, srv.URL(), req)
	require.NoError(t, err)
	require.Equal(t, 429, status)
	require.Equal(t, "2", hdr.Get("Retry-After"))
	_, _, body, err = post(t, srv.URL(), req)
	require.NoError(t, err)
	require.Contains(t, body, `"content":"fallback"`)
	status, _, _, err = post(t, srv.URL(), `{"model":"m","messages":[{"role":"system","content":"x"},{"role":"system","content":"x"}]}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, status, "message rules are on")
}

func TestSharedTestdata(t *testing.T) {
	t.Parallel()
	dir := openaitest.SharedTestdata(t)
	for _, sub := range []string{"openai/streams", "openai/errors"} {
		fi, err := os.Stat(filepath.Join(dir, sub))
		require.NoError(t, err)
		require.True(t, fi.IsDir())
	}
}

// TestSharedTestdataAbsentOrNamed: without shared/testdata a test that
// needs it is skipped, not failed (a clone without ../shared still runs
// the rest); GENCODE_TESTDATA names it, and naming a missing directory
// is an error.
func TestSharedTestdataAbsentOrNamed(t *testing.T) {
	named := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.Mkdir(named, 0o700))
	t.Chdir(t.TempDir())             // no shared/testdata here nor above (/tmp, /)
	t.Setenv("GENCODE_TESTDATA", "") // nor named by the caller's environment

	// A recording TB, not a subtest that skips: a skip in the suite's
	// report is a check not made (make ci fails on one it does not allow).
	rec := &skipRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		openaitest.SharedTestdata(rec)
		rec.reached = true
	}()
	<-done
	require.False(t, rec.reached, "not skipped")
	require.Contains(t, rec.skipped, "no shared/testdata in ")
	require.Contains(t, rec.skipped, "(set GENCODE_TESTDATA to its path)")

	t.Setenv("GENCODE_TESTDATA", named)
	require.Equal(t, named, openaitest.SharedTestdata(t))
	t.Setenv("GENCODE_TESTDATA", filepath.Join(named, "missing"))
	_, err := openaitest.FindSharedTestdata()
	require.ErrorContains(t, err, "is not a directory")
}

// skipRecorder records a Skipf and ends its goroutine, as testing.T's does.
type skipRecorder struct {
	testing.TB
	skipped string
	reached bool
}

func (r *skipRecorder) Helper() {}

func (r *skipRecorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *skipRecorder) Fatal(args ...any) {
	r.skipped = "FATAL: " + fmt.Sprint(args...)
	runtime.Goexit()
}

// TestServerStall: a stalled reply sends its first events (or bytes) and
// then nothing, keeping the connection open, until the client gives up.
func TestServerStall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reply  openaitest.Reply
		stream bool
		want   string // what arrives before the stall (a prefix for streams)
	}{
		{name: "stream after two events", reply: openaitest.Reply{Content: "a b c d", Stall: true, CutAfter: 2}, stream: true},
		{name: "stream after the headers", reply: openaitest.Reply{Content: "a b", Stall: true}, stream: true},
		{name: "JSON answer", reply: openaitest.Reply{Content: "abc", Stall: true, CutAfter: 10}, want: `{"id":"cha`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t)
			srv.Enqueue(tt.reply)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"x"}],"stream":%t}`, tt.stream)
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/chat/completions", strings.NewReader(body))
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			got, err := io.ReadAll(resp.Body)
			require.ErrorIs(t, err, context.DeadlineExceeded, "the server held the connection open")
			if tt.stream {
				chunks, _, done := parseSSE(t, string(got))
				require.Len(t, chunks, tt.reply.CutAfter)
				require.False(t, done)
			} else {
				require.Equal(t, tt.want, string(got))
			}
		})
	}
}
