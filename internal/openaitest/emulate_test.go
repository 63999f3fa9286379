package openaitest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// get fetches path from the server's root (not its /v1 base).
func get(t *testing.T, srv *openaitest.Server, method, path, body string) (int, map[string]any) {
	t.Helper()
	root := strings.TrimSuffix(srv.URL(), "/v1")
	req, err := http.NewRequestWithContext(context.Background(), method, root+path, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(b, &v), "%s", b)
	return resp.StatusCode, v
}

// chatOf is a request of n user/assistant turns of about size bytes each
// after a system message.
func chatOf(n, size int) string {
	msgs := []map[string]string{{"role": "system", "content": "You are a helper."}}
	for i := range n {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]string{"role": role, "content": fmt.Sprintf("turn %d ", i) + strings.Repeat("word ", size/5)})
	}
	b, _ := json.Marshal(map[string]any{"model": "qwen2.5-coder:7b", "messages": msgs})
	return string(b)
}

func TestEmulatedWindowEndpoints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		emu    openaitest.Emulation
		method string
		path   string
		body   string
		want   func(t *testing.T, v map[string]any)
	}{
		{"ollama version", openaitest.Emulation{Flavor: openaitest.Ollama, Window: 4096}, "GET", "/api/version", "",
			func(t *testing.T, v map[string]any) { require.Equal(t, "0.12.6", v["version"]) }},
		{"ollama ps before a request", openaitest.Emulation{Flavor: openaitest.Ollama, Window: 4096}, "GET", "/api/ps", "",
			func(t *testing.T, v map[string]any) { require.Empty(t, v["models"]) }},
		{"ollama ps preloaded", openaitest.Emulation{Flavor: openaitest.Ollama, Window: 4096, Preloaded: true}, "GET", "/api/ps", "",
			func(t *testing.T, v map[string]any) {
				m := v["models"].([]any)[0].(map[string]any)
				require.Equal(t, "qwen2.5-coder:7b", m["name"])
				require.Equal(t, "qwen2.5-coder:7b", m["model"])
				require.EqualValues(t, 4096, m["context_length"])
			}},
		{"ollama before 0.10: no context_length", openaitest.Emulation{Flavor: openaitest.Ollama, Window: 2048, Preloaded: true, Version: "0.9.6"}, "GET", "/api/ps", "",
			func(t *testing.T, v map[string]any) {
				m := v["models"].([]any)[0].(map[string]any)
				require.Equal(t, "qwen2.5-coder:7b", m["name"])
				require.NotContains(t, m, "context_length")
			}},
		{"ollama show", openaitest.Emulation{Flavor: openaitest.Ollama, Window: 4096, Trained: 32768}, "POST", "/api/show", `{"model":"qwen2.5-coder:7b"}`,
			func(t *testing.T, v map[string]any) {
				info := v["model_info"].(map[string]any)
				require.Equal(t, "qwen2", info["general.architecture"])
				require.EqualValues(t, 32768, info["qwen2.context_length"])
			}},
		{"llama.cpp props", openaitest.Emulation{Flavor: openaitest.LlamaCpp, Window: 4096, Trained: 32768}, "GET", "/props", "",
			func(t *testing.T, v map[string]any) {
				require.EqualValues(t, 4096, v["default_generation_settings"].(map[string]any)["n_ctx"])
			}},
		{"llama.cpp models", openaitest.Emulation{Flavor: openaitest.LlamaCpp, Window: 4096, Trained: 32768}, "GET", "/v1/models", "",
			func(t *testing.T, v map[string]any) {
				m := v["data"].([]any)[0].(map[string]any)
				require.Equal(t, "llamacpp", m["owned_by"])
				require.EqualValues(t, 32768, m["meta"].(map[string]any)["n_ctx_train"])
			}},
		{"vllm models", openaitest.Emulation{Flavor: openaitest.VLLM, Window: 4096}, "GET", "/v1/models", "",
			func(t *testing.T, v map[string]any) {
				require.EqualValues(t, 4096, v["data"].([]any)[0].(map[string]any)["max_model_len"])
			}},
		{"lm studio v0 preloaded", openaitest.Emulation{Flavor: openaitest.LMStudio, Window: 4096, Trained: 32768, Preloaded: true}, "GET", "/api/v0/models", "",
			func(t *testing.T, v map[string]any) {
				m := v["data"].([]any)[0].(map[string]any)
				require.EqualValues(t, 4096, m["loaded_context_length"])
				require.EqualValues(t, 32768, m["max_context_length"])
			}},
		{"lm studio v1 preloaded", openaitest.Emulation{Flavor: openaitest.LMStudio, Window: 4096, Preloaded: true}, "GET", "/api/v1/models", "",
			func(t *testing.T, v map[string]any) {
				inst := v["models"].([]any)[0].(map[string]any)["loaded_instances"].([]any)[0].(map[string]any)
				require.EqualValues(t, 4096, inst["config"].(map[string]any)["context_length"])
			}},
		{"openrouter", openaitest.Emulation{Flavor: openaitest.OpenRouter, Window: 4096, Trained: 128000}, "GET", "/api/v1/models", "",
			func(t *testing.T, v map[string]any) {
				m := v["data"].([]any)[0].(map[string]any)
				require.EqualValues(t, 128000, m["context_length"])
				require.EqualValues(t, 4096, m["top_provider"].(map[string]any)["context_length"])
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithModels("qwen2.5-coder:7b"), openaitest.WithEmulation(tt.emu))
			status, v := get(t, srv, tt.method, tt.path, tt.body)
			require.Equal(t, http.StatusOK, status, "%v", v)
			tt.want(t, v)
		})
	}
}

// TestEmulatedOllamaCutsSilently: past its window Ollama answers 200,
// having dropped whole messages from the front (the system message and
// the last message kept), and reports prompt_tokens after the cut; the
// model shows in /api/ps once a request loaded it.
func TestEmulatedOllamaCutsSilently(t *testing.T) {
	t.Parallel()
	var seen openaitest.Request
	srv := openaitest.NewServer(t, openaitest.WithModels("qwen2.5-coder:7b"),
		openaitest.WithEmulation(openaitest.Emulation{Flavor: openaitest.Ollama, Window: 1000, Trained: 32768}),
		openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply { seen = r; return openaitest.Text("ok") }))
	status, _, body, err := post(t, srv.URL(), chatOf(20, 400))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, body)
	var resp struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &resp))
	require.LessOrEqual(t, resp.Usage.PromptTokens, 1000)
	require.Positive(t, seen.Dropped)
	require.Len(t, seen.Messages, 21, "recorded as sent")
	require.Len(t, seen.Seen, 21-seen.Dropped)
	require.Equal(t, "system", seen.Seen[0].Role)
	require.Contains(t, seen.Seen[len(seen.Seen)-1].Content, "turn 19 ")
	require.NotContains(t, seen.SeenText(), "turn 0 ")
	acct := srv.Accounts()[0]
	require.Equal(t, seen.Dropped, acct.Dropped)
	require.Equal(t, resp.Usage.PromptTokens, acct.Prompt)
	require.Equal(t, 1, openaitest.Total(srv.Accounts()).Cut)

	_, ps := get(t, srv, "GET", "/api/ps", "")
	require.Len(t, ps["models"], 1, "loaded by the first request")
}

func TestEmulatedRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		emu  openaitest.Emulation
		want []string
	}{
		{"llama.cpp", openaitest.Emulation{Flavor: openaitest.LlamaCpp, Window: 1000},
			[]string{`"type":"exceed_context_size_error"`, `"n_ctx":1000`, `"n_prompt_tokens":`}},
		{"vllm", openaitest.Emulation{Flavor: openaitest.VLLM, Window: 1000},
			[]string{`This model's maximum context length is 1000 tokens. However, you requested `, `"type":"BadRequestError"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithModels("qwen2.5-coder:7b"), openaitest.WithEmulation(tt.emu),
				openaitest.WithResponder(func(openaitest.Request) openaitest.Reply { return openaitest.Text("ok") }))
			status, _, body, err := post(t, srv.URL(), chatOf(2, 100))
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status, "a small prompt is served: %s", body)
			status, _, body, err = post(t, srv.URL(), chatOf(20, 400))
			require.NoError(t, err)
			require.Equal(t, http.StatusBadRequest, status)
			for _, w := range tt.want {
				require.Contains(t, body, w)
			}
			require.Equal(t, 1, openaitest.Total(srv.Accounts()).OverWindow)
		})
	}
}

// TestScriptEmulates: the standalone fake (cmd/fakeopenai) plays a real
// server from its script.
func TestScriptEmulates(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/script.json"
	require.NoError(t, os.WriteFile(path, []byte(`{"models": ["qwen2.5-coder:7b"],
		"emulate": {"flavor": "ollama", "window": 4096, "trained": 32768, "preloaded": true}}`), 0o600))
	sc, err := openaitest.LoadScript(path)
	require.NoError(t, err)
	srv := openaitest.NewServer(t, openaitest.WithScript(sc))
	_, v := get(t, srv, "GET", "/api/ps", "")
	require.EqualValues(t, 4096, v["models"].([]any)[0].(map[string]any)["context_length"])
}

// TestEmulatedOllamaCreate: POST /api/create streams its status lines and
// ends with success; the model made is listed, shown with its num_ctx and
// loaded with it as its window by its first request. Errors as Ollama
// sends them: before anything was sent (an HTTP error) and within the
// stream (an error line).
func TestEmulatedOllamaCreate(t *testing.T) {
	t.Parallel()
	const base, made = "qwen2.5-coder:7b", "qwen2.5-coder:7b-32k"
	srv := openaitest.NewServer(t, openaitest.WithModels(base),
		openaitest.WithEmulation(openaitest.Emulation{Flavor: openaitest.Ollama, Window: 4096, Trained: 32768, Preloaded: true}))
	root := strings.TrimSuffix(srv.URL(), "/v1")
	create := func(body string) (int, []string) {
		resp, err := http.Post(root+"/api/create", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	status, lines := create(`{"model":"` + made + `","from":"` + base + `","parameters":{"num_ctx":32768}}`)
	require.Equal(t, http.StatusOK, status)
	require.Greater(t, len(lines), 2)
	require.JSONEq(t, `{"status":"writing manifest"}`, lines[len(lines)-2])
	require.JSONEq(t, `{"status":"success"}`, lines[len(lines)-1])
	require.Equal(t, map[string]int{made: 32768}, srv.Created())

	_, tags := get(t, srv, "GET", "/api/tags", "")
	var names []string
	for _, m := range tags["models"].([]any) {
		names = append(names, m.(map[string]any)["name"].(string))
	}
	require.Equal(t, []string{base, made}, names)
	_, show := get(t, srv, "POST", "/api/show", `{"model":"`+made+`"}`)
	require.Contains(t, show["parameters"], "num_ctx")
	require.Contains(t, show["parameters"], "32768")
	require.Contains(t, show["modelfile"], "FROM "+base)
	_, ps := get(t, srv, "GET", "/api/ps", "")
	require.Len(t, ps["models"], 1, "not loaded before its first request")
	srv.Enqueue(openaitest.Text("hello"))
	chat, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"`+made+`","messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	chat.Body.Close()
	_, ps = get(t, srv, "GET", "/api/ps", "")
	loaded := map[string]float64{}
	for _, m := range ps["models"].([]any) {
		mm := m.(map[string]any)
		loaded[mm["name"].(string)] = mm["context_length"].(float64)
	}
	require.Equal(t, map[string]float64{base: 4096, made: 32768}, loaded)

	status, lines = create(`{"model":"x","from":"nope:1b"}`)
	require.Equal(t, http.StatusOK, status)
	require.JSONEq(t, `{"error":"pull model manifest: file does not exist"}`, lines[len(lines)-1])
	status, lines = create(`{"model":"bad name","from":"` + base + `"}`)
	require.Equal(t, http.StatusBadRequest, status)
	require.JSONEq(t, `{"error":"invalid model name"}`, lines[0])

	failing := openaitest.NewServer(t, openaitest.WithModels(base),
		openaitest.WithEmulation(openaitest.Emulation{Flavor: openaitest.Ollama, Window: 4096, CreateError: "no space left on device"}))
	resp, err := http.Post(strings.TrimSuffix(failing.URL(), "/v1")+"/api/create", "application/json",
		strings.NewReader(`{"model":"`+made+`","from":"`+base+`","parameters":{"num_ctx":32768}}`))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(b), `{"error":"no space left on device"}`)
	require.Empty(t, failing.Created())
}
