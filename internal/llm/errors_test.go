package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
)

// TestErrorFixtures answers with every recorded provider error body and checks
// how the client classifies it and whether it retried.
func TestErrorFixtures(t *testing.T) {
	t.Parallel()
	const retries = 2
	tests := []struct {
		file      string
		wantKind  error // nil: a plain *APIError
		wantTries int
		wantCode  string
		window    int // the window the provider named
	}{
		{file: "400_context_length_exceeded__gpt-4_8192.json", wantKind: llm.ErrContextOverflow, wantTries: 1, wantCode: "context_length_exceeded", window: 8192},
		{file: "400_context_length_exceeded__messages_resulted.json", wantKind: llm.ErrContextOverflow, wantTries: 1, wantCode: "context_length_exceeded", window: 4097},
		{file: "400_context_length_exceeded__requested_with_completion.json", wantKind: llm.ErrContextOverflow, wantTries: 1, wantCode: "context_length_exceeded", window: 4097},
		{file: "400_context_overflow__deepseek_nonstandard_code.json", wantKind: llm.ErrContextOverflow, wantTries: 1, wantCode: "invalid_request_error", window: 131072},
		{file: "400_unsupported_parameter__vercel-ai-fixture.json", wantKind: nil, wantTries: 1, wantCode: "unsupported_parameter"},
		{file: "429_insufficient_quota.json", wantKind: llm.ErrQuota, wantTries: 1, wantCode: "insufficient_quota"},
		{file: "429_rate_limit_exceeded__request_too_large_tpm.json", wantKind: llm.ErrRateLimited, wantTries: 1 + retries, wantCode: "rate_limit_exceeded"},
		{file: "429_rate_limit_exceeded__tpm_try_again__envelope_inferred.json", wantKind: llm.ErrRateLimited, wantTries: 1 + retries, wantCode: "rate_limit_exceeded"},
	}
	dir := filepath.Join(openaitest.SharedTestdata(t), "openai", "errors")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	var got, want []string
	for _, f := range files {
		got = append(got, filepath.Base(f))
	}
	for _, tt := range tests {
		want = append(want, tt.file)
	}
	sort.Strings(want)
	require.Equal(t, want, got, "every recorded error is classified here")

	kinds := []error{llm.ErrContextOverflow, llm.ErrRateLimited, llm.ErrQuota, llm.ErrAuth, llm.ErrUnreachable, llm.ErrInterrupted}
	for _, tt := range tests {
		for _, method := range []string{"Stream", "Complete"} {
			t.Run(method+"/"+tt.file, func(t *testing.T) {
				t.Parallel()
				body, err := os.ReadFile(filepath.Join(dir, tt.file))
				require.NoError(t, err)
				status, err := strconv.Atoi(tt.file[:3])
				require.NoError(t, err)
				var provider struct {
					Error struct {
						Message string `json:"message"`
					} `json:"error"`
				}
				require.NoError(t, json.Unmarshal(body, &provider))

				srv := openaitest.NewServer(t, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
					return openaitest.Error(status, string(body))
				}))
				client, sl := newClient(t, srv.URL(), func(c *llm.Config) { c.MaxRetries = retries })
				req := llm.Request{Model: "gpt-4", Messages: userMsg("hi")}
				if method == "Stream" {
					_, err = client.Stream(context.Background(), req, nil)
				} else {
					_, err = client.Complete(context.Background(), req)
				}
				require.Error(t, err)
				for _, k := range kinds {
					if errors.Is(err, k) != (k == tt.wantKind) {
						t.Errorf("%s() error %q: errors.Is(%v) = %t", method, err, k, !(k == tt.wantKind))
					}
				}
				var ae *llm.APIError
				require.True(t, errors.As(err, &ae), "%T", err)
				require.Equal(t, status, ae.Status)
				require.Equal(t, tt.wantCode, ae.Code)
				require.Equal(t, provider.Error.Message, ae.Message)
				require.Equal(t, body, ae.Body, "the provider's body is kept as is")
				require.Equal(t, tt.window, ae.Window, "the window the provider named")
				require.Equal(t, tt.window, llm.WindowOf(err))

				msg := err.Error()
				require.True(t, strings.HasPrefix(msg, "chat completion gpt-4: "), msg)
				require.Contains(t, msg, provider.Error.Message, "the user sees the provider's words")
				if tt.wantKind != nil {
					require.Contains(t, msg, tt.wantKind.Error()+": "+provider.Error.Message)
				}
				require.Len(t, srv.Requests(), tt.wantTries)
				require.Len(t, sl.all(), tt.wantTries-1)
			})
		}
	}
}

func TestAPIErrorMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		status   int
		body     string
		wantKind error
		wantMsg  string
		window   int
	}{
		{
			name:     "openai overflow",
			status:   400,
			body:     `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			wantKind: llm.ErrContextOverflow,
			wantMsg:  "chat completion m: context window exceeded: This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens.",
			window:   8192,
		},
		{
			name:     "llama.cpp overflow",
			status:   400,
			body:     `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`,
			wantKind: llm.ErrContextOverflow,
			wantMsg:  "chat completion m: context window exceeded: the request exceeds the available context size, try increasing it",
			window:   8192,
		},
		{
			name:     "anthropic-compatible overflow",
			status:   400,
			body:     `{"error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`,
			wantKind: llm.ErrContextOverflow,
			wantMsg:  "chat completion m: context window exceeded: prompt is too long: 210000 tokens > 200000 maximum",
			window:   200000,
		},
		{
			name:     "gemini-compatible overflow",
			status:   400,
			body:     `[{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]`,
			wantKind: llm.ErrContextOverflow,
			window:   1048576,
		},
		{
			name:     "llama.cpp overflow, newer wording",
			status:   400,
			body:     `{"error":{"code":400,"message":"request (4476 tokens) exceeds the available context size (4096 tokens)","type":"exceed_context_size_error","n_prompt_tokens":4476,"n_ctx":4096}}`,
			wantKind: llm.ErrContextOverflow,
			window:   4096,
		},
		{
			name:     "lm studio overflow",
			status:   400,
			body:     `{"error":"Trying to keep the first 5812 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}`,
			wantKind: llm.ErrContextOverflow,
			window:   4096,
		},
		{
			name:     "mistral overflow",
			status:   400,
			body:     `{"object":"error","message":"Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_error","param":null,"code":null}`,
			wantKind: llm.ErrContextOverflow,
			window:   32768,
		},
		{
			name:     "ollama overflow names no window",
			status:   400,
			body:     `{"error":"the input length exceeds the context length"}`,
			wantKind: llm.ErrContextOverflow,
		},
		{
			name:     "proxy says 413",
			status:   413,
			body:     `<html><body><h1>413 Request Entity Too Large</h1></body></html>`,
			wantKind: llm.ErrContextOverflow,
			wantMsg:  "chat completion m: context window exceeded: <html><body><h1>413 Request Entity Too Large</h1></body></html>",
		},
		{
			name:     "bad key",
			status:   401,
			body:     `{"error":{"message":"Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			wantKind: llm.ErrAuth,
			wantMsg:  "chat completion m: authentication failed: Incorrect API key provided: sk-abc.",
		},
		{
			name:     "forbidden region",
			status:   403,
			body:     `{"error":{"code":"unsupported_country_region_territory","message":"Country, region, or territory not supported","param":null,"type":"request_forbidden"}}`,
			wantKind: llm.ErrAuth,
		},
		{
			name:    "ollama unknown model",
			status:  404,
			body:    `{"error":"model \"llama9\" not found, try pulling it first"}`,
			wantMsg: `chat completion m: provider error 404: model "llama9" not found, try pulling it first`,
		},
		{
			name:    "empty body",
			status:  400,
			body:    "\n",
			wantMsg: "chat completion m: provider error 400: Bad Request",
		},
		{
			name:    "top-level message",
			status:  422,
			body:    `{"message":"Invalid tool schema","code":"invalid_schema"}`,
			wantMsg: "chat completion m: provider error 422 (invalid_schema): Invalid tool schema",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t)
			srv.Enqueue(openaitest.Error(tt.status, tt.body))
			client, _ := newClient(t, srv.URL())
			_, err := client.Stream(context.Background(), llm.Request{Model: "m", Messages: userMsg("hi")}, nil)
			require.Error(t, err)
			if tt.wantKind != nil {
				require.ErrorIs(t, err, tt.wantKind)
			} else {
				for _, k := range []error{llm.ErrContextOverflow, llm.ErrRateLimited, llm.ErrQuota, llm.ErrAuth} {
					require.NotErrorIs(t, err, k)
				}
			}
			if tt.wantMsg != "" && !strings.HasPrefix(err.Error(), tt.wantMsg) {
				t.Errorf("Stream() error = %q, want prefix %q", err, tt.wantMsg)
			}
			require.Len(t, srv.Requests(), 1, "not retried")
			require.Equal(t, tt.window, llm.WindowOf(err), "the window the provider named")
		})
	}
}
