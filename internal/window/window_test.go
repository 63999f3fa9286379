package window_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/window"
)

func read[T any](t *testing.T, name string) T {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var v T
	require.NoError(t, json.Unmarshal(b, &v), name)
	return v
}

func TestFromModelList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, model string
		want              window.Result
		wantKnown         string
		wantAsk           bool
	}{
		{"vLLM max_model_len", "vllm_models.json", "Qwen/Qwen2.5-Coder-7B-Instruct",
			window.Result{Tokens: 4096, Source: "vLLM", Server: "vLLM"}, "vLLM", false},
		{"llama.cpp upstream: trained length only, ask /props", "llamacpp_models.json", "whatever-it-is-called",
			window.Result{Server: "llama.cpp", Trained: 32768}, "llama.cpp", false},
		{"llama.cpp with meta.n_ctx", "llamacpp_models_nctx.json", "qwen2.5-coder-7b",
			window.Result{Tokens: 8192, Source: "llama.cpp", Server: "llama.cpp", Trained: 32768}, "llama.cpp", false},
		{"OpenRouter: the top provider's window", "openrouter_models.json", "qwen/qwen-2.5-coder-32b-instruct",
			window.Result{Tokens: 16384, Source: "OpenRouter", Server: "OpenRouter", Trained: 32768}, "OpenRouter", false},
		{"OpenRouter", "openrouter_models.json", "openai/gpt-4o-mini",
			window.Result{Tokens: 128000, Source: "OpenRouter", Server: "OpenRouter", Trained: 128000}, "OpenRouter", false},
		{"Ollama's list says nothing: ask", "ollama_models.json", "qwen2.5-coder:7b", window.Result{}, "", true},
		{"Ollama: a model not pulled, ask all the same", "ollama_models.json", "mistral", window.Result{}, "", true},
		{"LM Studio's list says nothing: ask", "lmstudio_models.json", "qwen2.5-coder-7b-instruct", window.Result{}, "", true},
		{"OpenAI: nothing to ask", "openai_models.json", "gpt-4o-mini", window.Result{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, known, ask := window.FromModelList(read[window.ModelList](t, tt.file), tt.model)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.wantKnown, known)
			require.Equal(t, tt.wantAsk, ask)
		})
	}
}

func TestFromOllama(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, ps, show, model string
		want                  window.Result
	}{
		{"loaded", "ollama_ps.json", "ollama_show.json", "qwen2.5-coder:7b",
			window.Result{Tokens: 4096, Source: "Ollama, loaded", Server: "Ollama", Trained: 32768}},
		{"not loaded: Ollama's default until the first answer", "ollama_ps_empty.json", "ollama_show.json", "qwen2.5-coder:7b",
			window.Result{Tokens: 4096, Source: "Ollama, default", Server: "Ollama", Trained: 32768, Pending: true}},
		{"not loaded, a derived model's num_ctx", "ollama_ps_empty.json", "ollama_show_derived.json", "qwen2.5-coder:7b",
			window.Result{Tokens: 16384, Source: "Ollama, num_ctx", Server: "Ollama", Trained: 32768, Pending: true}},
		{"before v0.10: no context_length in /api/ps", "ollama_ps_old.json", "ollama_show.json", "qwen2.5-coder:7b",
			window.Result{Tokens: 4096, Source: "Ollama, default", Server: "Ollama", Trained: 32768, Pending: true}},
		{"/api/show refused: no trained length", "ollama_ps.json", "ollama_show_error.json", "qwen2.5-coder:7b",
			window.Result{Tokens: 4096, Source: "Ollama, loaded", Server: "Ollama"}},
		{"another model loaded", "ollama_ps.json", "ollama_show.json", "llama3.2",
			window.Result{Tokens: 4096, Source: "Ollama, default", Server: "Ollama", Trained: 32768, Pending: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := window.FromOllama(read[window.OllamaPS](t, tt.ps), read[window.OllamaShow](t, tt.show), tt.model)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestFromLMStudioAndProps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  func(t *testing.T) window.Result
		want window.Result
	}{
		{"v0 loaded", func(t *testing.T) window.Result {
			return window.FromLMStudioV0(read[window.LMStudioV0](t, "lmstudio_v0.json"), "qwen2.5-coder-7b-instruct")
		}, window.Result{Tokens: 4096, Source: "LM Studio, loaded", Server: "LM Studio", Trained: 32768}},
		{"v0 not loaded", func(t *testing.T) window.Result {
			return window.FromLMStudioV0(read[window.LMStudioV0](t, "lmstudio_v0_unloaded.json"), "qwen2.5-coder-7b-instruct")
		}, window.Result{Server: "LM Studio", Trained: 32768, Pending: true}},
		{"v1 loaded instance", func(t *testing.T) window.Result {
			return window.FromLMStudioV1(read[window.LMStudioV1](t, "lmstudio_v1.json"), "qwen2.5-coder-7b-instruct")
		}, window.Result{Tokens: 8192, Source: "LM Studio, loaded", Server: "LM Studio", Trained: 32768}},
		{"llama.cpp /props", func(t *testing.T) window.Result {
			return window.FromProps(read[window.Props](t, "llamacpp_props.json"))
		}, window.Result{Tokens: 4096, Source: "llama.cpp", Server: "llama.cpp"}},
		{"/props without n_ctx", func(*testing.T) window.Result { return window.FromProps(window.Props{}) }, window.Result{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, tt.got(t))
		})
	}
}

// TestOverflowBodies: the refusals of llama.cpp and vLLM name the window
// the agent learns from (llm reads them).
func TestOverflowBodies(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"llamacpp_error.json", "vllm_error.json"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(filepath.Join("testdata", file))
			require.NoError(t, err)
			srv := openaitest.NewServer(t)
			srv.Enqueue(openaitest.Reply{Status: http.StatusBadRequest, Body: string(body)})
			_, err = llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "x", MaxRetries: -1}).Complete(context.Background(),
				llm.Request{Model: "m", Messages: llmUser("hi")})
			require.ErrorIs(t, err, llm.ErrContextOverflow)
			require.Equal(t, 4096, llm.WindowOf(err))
		})
	}
}

// TestProbeEmulatedServers asks the fake server playing each real one, as
// gencode does before its first request.
func TestProbeEmulatedServers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		model string
		emu   openaitest.Emulation
		want  window.Result
	}{
		{"Ollama loaded", "qwen2.5-coder:7b", openaitest.Emulation{Flavor: openaitest.Ollama, Window: 4096, Trained: 32768, Preloaded: true},
			window.Result{Tokens: 4096, Source: "Ollama, loaded", Server: "Ollama", Trained: 32768, Models: []string{"qwen2.5-coder:7b"}}},
		{"Ollama not loaded yet", "qwen2.5-coder:7b", openaitest.Emulation{Flavor: openaitest.Ollama, Window: 8192, Trained: 32768},
			window.Result{Tokens: 4096, Source: "Ollama, default", Server: "Ollama", Trained: 32768, Pending: true, Models: []string{"qwen2.5-coder:7b"}}},
		{"llama.cpp", "qwen2.5-coder-7b", openaitest.Emulation{Flavor: openaitest.LlamaCpp, Window: 4096, Trained: 32768},
			window.Result{Tokens: 4096, Source: "llama.cpp", Server: "llama.cpp", Trained: 32768}},
		{"vLLM", "Qwen/Qwen2.5-Coder-7B-Instruct", openaitest.Emulation{Flavor: openaitest.VLLM, Window: 4096},
			window.Result{Tokens: 4096, Source: "vLLM", Server: "vLLM"}},
		{"LM Studio loaded", "qwen2.5-coder-7b-instruct", openaitest.Emulation{Flavor: openaitest.LMStudio, Window: 4096, Trained: 32768, Preloaded: true},
			window.Result{Tokens: 4096, Source: "LM Studio, loaded", Server: "LM Studio", Trained: 32768}},
		{"LM Studio not loaded", "qwen2.5-coder-7b-instruct", openaitest.Emulation{Flavor: openaitest.LMStudio, Window: 4096, Trained: 32768},
			window.Result{Server: "LM Studio", Trained: 32768, Pending: true}},
		{"OpenRouter", "qwen/qwen-2.5-coder-32b-instruct", openaitest.Emulation{Flavor: openaitest.OpenRouter, Window: 16384, Trained: 32768},
			window.Result{Tokens: 16384, Source: "OpenRouter", Server: "OpenRouter", Trained: 32768}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithModels(tt.model), openaitest.WithEmulation(tt.emu))
			p := window.New(nil, 0)
			require.Equal(t, tt.want, p.Probe(context.Background(), srv.URL(), tt.model, "key"))
		})
	}
}

// TestProbeOllamaAgainAfterLoad: a model Ollama has not loaded yet is
// asked again (not from the cache), and the answer after its first
// request is the loaded window, kept from then on.
func TestProbeOllamaAgainAfterLoad(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithModels("qwen2.5-coder:7b"),
		openaitest.WithEmulation(openaitest.Emulation{Flavor: openaitest.Ollama, Window: 8192, Trained: 32768}))
	srv.Enqueue(openaitest.Text("hi"))
	p := window.New(nil, 0)
	ctx := context.Background()
	require.True(t, p.Probe(ctx, srv.URL(), "qwen2.5-coder:7b", "").Pending)
	_, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "x"}).Complete(ctx, llm.Request{Model: "qwen2.5-coder:7b",
		Messages: llmUser("hello")})
	require.NoError(t, err)
	want := window.Result{Tokens: 8192, Source: "Ollama, loaded", Server: "Ollama", Trained: 32768, Models: []string{"qwen2.5-coder:7b"}}
	require.Equal(t, want, p.Probe(ctx, srv.URL(), "qwen2.5-coder:7b", ""))
	srv.Close()
	require.Equal(t, want, p.Probe(ctx, srv.URL(), "qwen2.5-coder:7b", ""), "kept for the run")
}

// TestProbeBounded: a server that accepts and never answers costs the
// probe's timeout, once, and gives nothing; a plain OpenAI-style fake
// gives nothing either.
func TestProbeBounded(t *testing.T) {
	t.Parallel()
	hang := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(hang.Close)
	p := window.New(nil, 300*time.Millisecond)
	start := time.Now()
	require.Equal(t, window.Result{}, p.Probe(context.Background(), hang.URL+"/v1", "m", ""))
	require.Less(t, time.Since(start), 2*time.Second)

	plain := openaitest.NewServer(t)
	require.Equal(t, window.Result{}, p.Probe(context.Background(), plain.URL(), "gpt-4o-mini", ""))
}

func TestResultWords(t *testing.T) {
	t.Parallel()
	r := window.Result{Tokens: 4096, Source: "Ollama, loaded", Server: "Ollama", Trained: 32768}
	require.Equal(t, "4,096 (Ollama, loaded)", r.String())
	hint := r.RaiseHint("qwen2.5-coder:7b", "")
	require.Contains(t, hint, "OLLAMA_CONTEXT_LENGTH=32768 ollama serve")
	require.Contains(t, hint, "PARAMETER num_ctx 32768")
	require.Contains(t, hint, "ollama create qwen2.5-coder:7b-32k -f Modelfile")
	require.NotContains(t, hint, "/ollama-window", "print mode has no slash commands")
	tui := r.RaiseHint("qwen2.5-coder:7b", "/ollama-window")
	require.Contains(t, tui, "OLLAMA_CONTEXT_LENGTH=32768 ollama serve")
	require.Contains(t, tui, "ollama create qwen2.5-coder:7b-32k -f Modelfile")
	require.Contains(t, tui, "or type /ollama-window 32768 and gencode creates qwen2.5-coder:7b-32k on the server and switches to it")
	made := r
	made.Models = []string{"qwen2.5-coder:7b", "qwen2.5-coder:7b-32k"}
	again := made.RaiseHint("qwen2.5-coder:7b", "/ollama-window")
	require.Contains(t, again, "the server has qwen2.5-coder:7b-32k, made with a 32,768-token window: switch to it with /model qwen2.5-coder:7b-32k.")
	require.NotContains(t, again, "creates", "a model made before is not offered again")
	require.Contains(t, made.RaiseHint("qwen2.5-coder:7b", ""), "use it: gencode --model qwen2.5-coder:7b-32k")
	require.Empty(t, window.Result{Tokens: 16384, Server: "Ollama", Trained: 32768}.RaiseHint("m", ""), "not far below")
	require.Empty(t, window.Result{Tokens: 4096, Server: "vLLM", Trained: 32768}.RaiseHint("m", ""), "Ollama only")
}

func TestDerivedName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		model  string
		tokens int
		want   string
	}{
		{"qwen2.5-coder:7b", 32768, "qwen2.5-coder:7b-32k"},
		{"qwen2.5-coder:7b-32k", 65536, "qwen2.5-coder:7b-64k"},
		{"llama3", 32768, "llama3:32k"},
		{"llama3:latest", 16384, "llama3:16k"},
		{"llama3:32k", 65536, "llama3:64k"},
		{"hf.co/bartowski/Qwen2.5-7B-GGUF:Q4_K_M", 32768, "hf.co/bartowski/Qwen2.5-7B-GGUF:Q4_K_M-32k"},
		{"localhost:5000/m", 8192, "localhost:5000/m:8k"},
		{"qwen3:8b", 30000, "qwen3:8b-30000"},
	} {
		require.Equal(t, tt.want, window.DerivedName(tt.model, tt.tokens), tt.model)
	}
}

func TestRaiseTo(t *testing.T) {
	t.Parallel()
	require.Equal(t, 32768, window.RaiseTo(4096, 131072))
	require.Equal(t, 16384, window.RaiseTo(4096, 16384), "never past the trained length")
	require.Equal(t, 131072, window.RaiseTo(32768, 131072), "already at 32k: the trained length")
	require.Equal(t, 0, window.RaiseTo(32768, 32768), "nothing to raise")
	require.Equal(t, 32768, window.RaiseTo(4096, 0), "trained length not known")
	require.Equal(t, 0, window.RaiseTo(65536, 0))
}

func llmUser(text string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}}
}

// TestMemory: a window a cut showed is recalled by the next run while
// the server still reports what it did then, and not once it reports
// something else (restarted with another window).
func TestMemory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "data", "windows.json")
	now := func() time.Time { return time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC) }
	m := window.OpenMemory(path, now)
	_, ok := m.Recall("http://h/v1", "m", 4096)
	require.False(t, ok, "nothing kept yet")
	require.NoError(t, m.Keep("http://h/v1", "m", window.Remembered{Tokens: 1964, Source: "server, cut", Told: 4096}))
	require.NoError(t, m.Keep("http://h/v1", "other", window.Remembered{Tokens: 3000, Source: "server, cut"}))

	again := window.OpenMemory(path, nil)
	tests := []struct {
		name, model string
		told        int
		want        int
	}{
		{"the same server", "m", 4096, 1964},
		{"the server reports another window now", "m", 8192, 0},
		{"another model", "other", 0, 3000},
		{"unknown", "nope", 0, 0},
	}
	for _, tt := range tests {
		r, ok := again.Recall("http://h/v1", tt.model, tt.told)
		require.Equal(t, tt.want > 0, ok, tt.name)
		require.Equal(t, tt.want, r.Tokens, tt.name)
	}
	require.NoError(t, os.WriteFile(path, []byte("{damaged"), 0o600))
	_, ok = again.Recall("http://h/v1", "m", 4096)
	require.False(t, ok, "a damaged file is an empty memory")
	require.NoError(t, again.Keep("http://h/v1", "m", window.Remembered{Tokens: 1000, Source: "server, cut"}), "and is written anew")
}

// TestOllamaAPI: the native API against the emulated Ollama: what it says
// of a model before and after it is loaded, a model it does not have,
// creating a derived model (its stream read to success), and the errors
// Ollama sends, before the stream and within it.
func TestOllamaAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const base, made = "qwen2.5-coder:7b", "qwen2.5-coder:7b-32k"
	srv := openaitest.NewServer(t, openaitest.WithModels(base),
		openaitest.WithEmulation(openaitest.Emulation{Flavor: openaitest.Ollama, Window: 4096, Trained: 32768, Preloaded: true}))
	o := window.NewOllama(nil, srv.URL(), "")
	v, err := o.Version(ctx)
	require.NoError(t, err)
	require.Equal(t, "0.12.6", v)
	m, err := o.Model(ctx, base)
	require.NoError(t, err)
	require.Equal(t, window.OllamaModel{Name: base, Found: true, Trained: 32768, Loaded: 4096}, m)
	n, src := m.Window()
	require.Equal(t, 4096, n)
	require.Equal(t, "Ollama, loaded", src)
	m, err = o.Model(ctx, made)
	require.NoError(t, err)
	require.False(t, m.Found)

	var statuses []string
	require.NoError(t, o.Create(ctx, made, base, 32768, func(s string) { statuses = append(statuses, s) }))
	require.Equal(t, "success", statuses[len(statuses)-1])
	m, err = o.Model(ctx, made)
	require.NoError(t, err)
	require.Equal(t, window.OllamaModel{Name: made, Found: true, NumCtx: 32768, Trained: 32768}, m)
	n, src = m.Window()
	require.Equal(t, 32768, n)
	require.Equal(t, "Ollama, num_ctx", src)

	err = o.Create(ctx, "x:1b", "nope:1b", 8192, nil)
	var oe *window.OllamaError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "pull model manifest: file does not exist", oe.Message)
	err = o.Create(ctx, "bad name", base, 8192, nil)
	require.ErrorAs(t, err, &oe)
	require.Equal(t, http.StatusBadRequest, oe.Status)
	require.Equal(t, "invalid model name", oe.Message)

	plain := openaitest.NewServer(t)
	_, err = window.NewOllama(nil, plain.URL(), "").Version(ctx)
	require.ErrorIs(t, err, window.ErrNotOllama)

	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"status":"writing manifest"}` + "\n"))
	}))
	t.Cleanup(cut.Close)
	err = window.NewOllama(nil, cut.URL+"/v1", "").Create(ctx, made, base, 32768, nil)
	require.ErrorContains(t, err, "ended before it said success")
}
