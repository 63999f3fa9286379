package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/sashabaranov/go-openai"
)

// Flavor names a real server the fake can play (WithEmulation).
type Flavor string

// The servers the fake emulates, each as its own source behaves.
const (
	// Ollama: the OpenAI endpoint never refuses a long prompt. It drops whole
	// messages from the front until the prompt fits the loaded window
	// (server/prompt.go chatPrompt: system messages and the last message are
	// kept, a tool call may lose its result), then reports
	// usage.prompt_tokens of what it kept. It tells its loaded window in
	// GET /api/ps (only once the model is loaded), the trained length in
	// POST /api/show, and its version in GET /api/version. POST /api/create
	// makes a model from another with its own num_ctx, which is then the
	// window that model is loaded with.
	Ollama Flavor = "ollama"
	// LlamaCpp: llama-server refuses a prompt of n_ctx tokens or more with a
	// 400 exceed_context_size_error naming n_prompt_tokens and n_ctx. GET
	// /props gives default_generation_settings.n_ctx; GET /v1/models lists
	// the model with meta.n_ctx_train (the trained length, not the window).
	LlamaCpp Flavor = "llamacpp"
	// VLLM refuses a prompt plus max_tokens past max_model_len with a 400
	// "This model's maximum context length is N tokens. However, you
	// requested M tokens (...)"; GET /v1/models gives max_model_len.
	VLLM Flavor = "vllm"
	// LMStudio lists its models with loaded_context_length and
	// max_context_length (GET /api/v0/models) and loaded_instances[].config.
	// context_length (GET /api/v1/models). What it does past the window is
	// not documented: the fake serves the request.
	LMStudio Flavor = "lmstudio"
	// OpenRouter lists its models with context_length and
	// top_provider.context_length (GET /api/v1/models, also GET /v1/models
	// here); past the window it refuses as OpenAI does.
	OpenRouter Flavor = "openrouter"
)

// Emulation is a real server the fake plays: its window endpoints, and
// what it does with a prompt larger than its window.
type Emulation struct {
	Flavor Flavor `json:"flavor"`
	// Window is the loaded context window in tokens (Ollama's num_ctx,
	// llama.cpp's n_ctx, vLLM's max_model_len).
	Window int `json:"window"`
	// Trained is the model's trained context length (Ollama's /api/show,
	// llama.cpp's n_ctx_train, LM Studio's max_context_length); 0: Window.
	Trained int `json:"trained,omitempty"`
	// Preloaded lists the models in Ollama's /api/ps (and LM Studio's
	// loaded instances) before the first chat request; otherwise a model is
	// loaded by its first request.
	Preloaded bool `json:"preloaded,omitempty"`
	// Version is what Ollama's /api/version says (default "0.12.6"); before
	// 0.10 its /api/ps has no context_length.
	Version string `json:"version,omitempty"`
	// CreateError makes Ollama's POST /api/create fail with this message,
	// streamed after its first status line, as Ollama sends an error met
	// while it creates (a full disk, say).
	CreateError string `json:"create_error,omitempty"`
}

// derived is a model made by Ollama's POST /api/create: the model it was
// made from and the num_ctx it sets.
type derived struct {
	from   string
	numCtx int
}

// WithEmulation makes the server play a real one (see Flavor). The models
// it serves are WithModels'.
func WithEmulation(e Emulation) Option {
	return func(s *Server) {
		if e.Trained <= 0 {
			e.Trained = e.Window
		}
		if e.Version == "" {
			e.Version = "0.12.6"
		}
		s.emu = &e
	}
}

// Loaded reports the models an emulated Ollama or LM Studio has loaded.
func (s *Server) Loaded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.loaded...)
}

// routes adds the emulated server's own endpoints.
func (s *Server) routes(mux *http.ServeMux) {
	if s.emu == nil {
		return
	}
	switch s.emu.Flavor {
	case Ollama:
		mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, map[string]string{"version": s.emu.Version})
		})
		mux.HandleFunc("GET /api/ps", s.ollamaPS)
		mux.HandleFunc("POST /api/show", s.ollamaShow)
		mux.HandleFunc("GET /api/tags", s.ollamaTags)
		mux.HandleFunc("POST /api/create", s.ollamaCreate)
	case LlamaCpp:
		mux.HandleFunc("GET /props", s.llamaProps)
		mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		})
	case LMStudio:
		mux.HandleFunc("GET /api/v0/models", s.lmstudioV0)
		mux.HandleFunc("GET /api/v1/models", s.lmstudioV1)
	case OpenRouter:
		mux.HandleFunc("GET /api/v1/models", s.openrouterModels)
		mux.HandleFunc("POST /api/v1/chat/completions", s.handleChat)
	}
}

// modelsBody is GET /v1/models as the emulated server answers it; nil:
// the plain OpenAI list.
func (s *Server) modelsBody() any {
	if s.emu == nil {
		return nil
	}
	switch s.emu.Flavor {
	case LlamaCpp:
		var data, models []map[string]any
		for _, id := range s.models {
			data = append(data, map[string]any{"id": id, "object": "model", "created": created, "owned_by": "llamacpp",
				"meta": map[string]any{"vocab_type": 2, "n_vocab": 152064, "n_ctx_train": s.emu.Trained, "n_embd": 3584,
					"n_params": 7615616512, "size": 4677120000}})
			models = append(models, map[string]any{"name": id, "model": id, "modified_at": "", "size": "", "digest": "",
				"type": "model", "description": "", "tags": []string{""}, "capabilities": []string{"completion"},
				"parameters": "", "details": map[string]any{"parent_model": "", "format": "gguf", "family": "",
					"families": []string{""}, "parameter_size": "", "quantization_level": ""}})
		}
		return map[string]any{"models": models, "object": "list", "data": data}
	case VLLM:
		var data []map[string]any
		for _, id := range s.models {
			data = append(data, map[string]any{"id": id, "object": "model", "created": created, "owned_by": "vllm",
				"root": id, "parent": nil, "max_model_len": s.emu.Window,
				"permission": []map[string]any{{"id": "modelperm-openaitest", "object": "model_permission", "created": created,
					"allow_create_engine": false, "allow_sampling": true, "allow_logprobs": true, "allow_search_indices": false,
					"allow_view": true, "allow_fine_tuning": false, "organization": "*", "group": nil, "is_blocking": false}}})
		}
		return map[string]any{"object": "list", "data": data}
	case Ollama:
		var data []map[string]any
		for _, id := range s.modelIDs() {
			data = append(data, map[string]any{"id": id, "object": "model", "created": created, "owned_by": "library"})
		}
		return map[string]any{"object": "list", "data": data}
	case LMStudio:
		var data []map[string]any
		for _, id := range s.models {
			data = append(data, map[string]any{"id": id, "object": "model", "owned_by": "organization_owner"})
		}
		return map[string]any{"object": "list", "data": data}
	case OpenRouter:
		return s.openrouterList()
	}
	return nil
}

func (s *Server) isLoaded(model string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.loaded, model)
}

func (s *Server) load(model string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.loaded, model) {
		s.loaded = append(s.loaded, model)
	}
}

func ollamaDetails() map[string]any {
	return map[string]any{"parent_model": "", "format": "gguf", "family": "qwen2", "families": []string{"qwen2"},
		"parameter_size": "7.6B", "quantization_level": "Q4_K_M"}
}

// ollamaPS is GET /api/ps (api/types.go ProcessModelResponse): the models
// loaded now, with the window they were loaded with (v0.10.0+).
func (s *Server) ollamaPS(w http.ResponseWriter, _ *http.Request) {
	models := []map[string]any{}
	for _, id := range s.Loaded() {
		m := map[string]any{"name": id, "model": id, "size": 6654289920,
			"digest":  "dae161e27b0e90dd1856c8bb3209201fd6736d8eb66298e75ed87571486f4364",
			"details": ollamaDetails(), "expires_at": "2026-12-01T20:05:00.000000000Z", "size_vram": 6654289920}
		if !versionBefore(s.emu.Version, 0, 10) {
			m["context_length"] = s.windowOf(id) // since v0.10.0
		}
		models = append(models, m)
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}

// versionBefore says version ("0.9.6") is before major.minor.
func versionBefore(version string, major, minor int) bool {
	var ma, mi int
	if _, err := fmt.Sscanf(version, "%d.%d", &ma, &mi); err != nil {
		return false
	}
	return ma < major || ma == major && mi < minor
}

// ollamaShow is POST /api/show: the model's trained length in
// model_info["<arch>.context_length"], not the window it is loaded with.
func (s *Server) ollamaShow(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"` // before v0.5
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid request body"})
		return
	}
	name := req.Model
	if name == "" {
		name = req.Name
	}
	d, isDerived := s.derivedModel(name)
	if !isDerived && !slices.Contains(s.models, name) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model '%s' not found", name)})
		return
	}
	modelfile, params := "# Modelfile generated by \"ollama show\"\nFROM "+name+"\n", ""
	if isDerived {
		modelfile = fmt.Sprintf("# Modelfile generated by \"ollama show\"\nFROM %s\nPARAMETER num_ctx %d\n", d.from, d.numCtx)
		params = fmt.Sprintf("num_ctx                        %d", d.numCtx)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"license":    "Apache License 2.0",
		"modelfile":  modelfile,
		"parameters": params,
		"template":   "{{- if .Messages }}...{{ end }}",
		"details":    ollamaDetails(),
		"model_info": map[string]any{
			"general.architecture":    "qwen2",
			"general.parameter_count": 7615616512,
			"qwen2.block_count":       28,
			"qwen2.context_length":    s.emu.Trained,
			"qwen2.embedding_length":  3584,
		},
		"capabilities": []string{"completion", "tools", "insert"},
		"modified_at":  "2026-11-02T10:00:00.000000000Z",
	})
}

// ollamaCreate is POST /api/create (server/create.go CreateHandler, its
// form since v0.5): {"model", "from", "parameters"} makes a model from another one
// with its own parameters. The answer streams JSON lines, {"status": ...}
// each, ending with {"status": "success"}; an error is a line
// {"error": ...}, or an HTTP error when it comes before anything was sent.
// The model made is listed (/api/tags, /v1/models), shown with its num_ctx
// (/api/show) and loaded with that window by its first request (/api/ps).
func (s *Server) ollamaCreate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model      string         `json:"model"`
		Name       string         `json:"name"` // before v0.5
		From       string         `json:"from"`
		Parameters map[string]any `json:"parameters"`
		Stream     *bool          `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	name := req.Model
	if name == "" {
		name = req.Name
	}
	if name == "" || strings.ContainsAny(name, " \t\n") {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid model name"})
		return
	}
	if req.From == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "neither 'from' or 'files' was specified"})
		return
	}
	numCtx := 0
	if v, ok := req.Parameters["num_ctx"].(float64); ok {
		numCtx = int(v)
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	line := func(v any) {
		b, _ := json.Marshal(v)
		_, _ = w.Write(append(b, '\n'))
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	_, fromDerived := s.derivedModel(req.From)
	if !fromDerived && !slices.Contains(s.models, req.From) {
		// Ollama tries to pull a model it does not have.
		line(map[string]string{"status": "pulling manifest"})
		line(map[string]string{"error": "pull model manifest: file does not exist"})
		return
	}
	line(map[string]string{"status": "using existing layer sha256:60e05f2100071479f596b964f89f510f057ce397ea22f2833a0cfe029bfc2463"})
	if s.emu.CreateError != "" {
		line(map[string]string{"error": s.emu.CreateError})
		return
	}
	line(map[string]string{"status": "using existing layer sha256:66b9ea09bd5b7099cbb4fc820f31b575c0366fa439b08245566692c6784e281e"})
	line(map[string]string{"status": "creating new layer sha256:d9bb33f2786931fea42f50936a2424818aa2f14500638af2f01861eb2c8fb446"})
	line(map[string]string{"status": "writing manifest"})
	s.mu.Lock()
	if s.derived == nil {
		s.derived = map[string]derived{}
	}
	if _, ok := s.derived[name]; !ok {
		s.derivedOrder = append(s.derivedOrder, name)
	}
	s.derived[name] = derived{from: req.From, numCtx: numCtx}
	s.mu.Unlock()
	line(map[string]string{"status": "success"})
}

// Created reports the models an emulated Ollama made (POST /api/create)
// and the num_ctx each sets.
func (s *Server) Created() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for name, d := range s.derived {
		out[name] = d.numCtx
	}
	return out
}

func (s *Server) derivedModel(name string) (derived, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.derived[name]
	return d, ok
}

// modelIDs are the models served: WithModels', then those made since.
func (s *Server) modelIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(slices.Clone(s.models), s.derivedOrder...)
}

// windowOf is the window an emulated server loads model with: its num_ctx
// for a model made with one, else the emulation's Window.
func (s *Server) windowOf(model string) int {
	if d, ok := s.derivedModel(model); ok && d.numCtx > 0 {
		return d.numCtx
	}
	return s.emu.Window
}

func (s *Server) ollamaTags(w http.ResponseWriter, _ *http.Request) {
	models := []map[string]any{}
	for _, id := range s.modelIDs() {
		models = append(models, map[string]any{"name": id, "model": id, "size": 4683087332,
			"digest": "dae161e27b0e90dd1856c8bb3209201fd6736d8eb66298e75ed87571486f4364", "details": ollamaDetails()})
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}

// llamaProps is llama-server's GET /props.
func (s *Server) llamaProps(w http.ResponseWriter, _ *http.Request) {
	model := ""
	if len(s.models) > 0 {
		model = s.models[0]
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"default_generation_settings": map[string]any{"id": 0, "id_task": -1, "n_ctx": s.emu.Window, "speculative": false,
			"is_processing": false, "params": map[string]any{"n_predict": -1, "temperature": 0.8}},
		"total_slots":   1,
		"model_alias":   model,
		"model_path":    "models/" + model + ".gguf",
		"modalities":    map[string]bool{"vision": false, "audio": false},
		"chat_template": "{% for message in messages %}...{% endfor %}",
		"build_info":    "b6673-openaitest",
	})
}

func (s *Server) lmstudioV0(w http.ResponseWriter, _ *http.Request) {
	data := []map[string]any{}
	for _, id := range s.models {
		m := map[string]any{"id": id, "object": "model", "type": "llm", "publisher": "lmstudio-community", "arch": "qwen2",
			"compatibility_type": "gguf", "quantization": "Q4_K_M", "state": "not-loaded", "max_context_length": s.emu.Trained}
		if s.isLoaded(id) {
			m["state"], m["loaded_context_length"] = "loaded", s.emu.Window
		}
		data = append(data, m)
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) lmstudioV1(w http.ResponseWriter, _ *http.Request) {
	models := []map[string]any{}
	for _, id := range s.models {
		inst := []map[string]any{}
		if s.isLoaded(id) {
			inst = append(inst, map[string]any{"id": id, "config": map[string]any{"context_length": s.emu.Window,
				"eval_batch_size": 512, "flash_attention": false, "offload_kv_cache_to_gpu": true}})
		}
		models = append(models, map[string]any{"type": "llm", "publisher": "lmstudio-community", "key": id,
			"display_name": id, "architecture": "qwen2", "quantization": map[string]any{"name": "Q4_K_M", "bits_per_weight": 4},
			"size_bytes": 4683087332, "params_string": "7B", "loaded_instances": inst, "max_context_length": s.emu.Trained,
			"format": "gguf", "capabilities": map[string]any{"vision": false, "trained_for_tool_use": true}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}

func (s *Server) openrouterList() any {
	data := []map[string]any{}
	for _, id := range s.models {
		data = append(data, map[string]any{"id": id, "canonical_slug": id, "name": id, "created": created,
			"description": "", "context_length": s.emu.Trained,
			"architecture": map[string]any{"modality": "text->text", "input_modalities": []string{"text"},
				"output_modalities": []string{"text"}, "tokenizer": "Other", "instruct_type": nil},
			"pricing":            map[string]string{"prompt": "0.00000015", "completion": "0.0000006"},
			"top_provider":       map[string]any{"context_length": s.emu.Window, "max_completion_tokens": 16384, "is_moderated": true},
			"per_request_limits": nil, "supported_parameters": []string{"max_tokens", "temperature", "tools"}})
	}
	return map[string]any{"data": data}
}

func (s *Server) openrouterModels(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.openrouterList())
}

// emulateWindow applies the emulated server's window to a request: Ollama
// cuts it (req.Seen, req.Dropped, the prompt count after the cut);
// llama.cpp and vLLM refuse it with their own error bodies. It reports
// whether the request was refused.
func (s *Server) emulateWindow(w http.ResponseWriter, req *Request, m measured) bool {
	if s.emu == nil || s.emu.Window <= 0 {
		return false
	}
	prompt := s.count(*req)
	switch s.emu.Flavor {
	case Ollama:
		s.load(req.Model)
		window := s.windowOf(req.Model)
		if prompt <= window {
			return false
		}
		s.ollamaCut(req, m, window)
	case LlamaCpp:
		if prompt < s.emu.Window {
			return false
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"code": 400, "message": "the request exceeds the available context size, try increasing it",
			"type": "exceed_context_size_error", "n_prompt_tokens": prompt, "n_ctx": s.emu.Window}})
		return true
	case VLLM:
		completion := max(req.MaxTokens, req.MaxCompletionTokens)
		if prompt+completion <= s.emu.Window {
			return false
		}
		msg := fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens in the messages, Please reduce the length of the messages.", s.emu.Window, prompt)
		if completion > 0 {
			msg = fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", s.emu.Window, prompt+completion, prompt, completion)
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"object": "error", "message": msg,
			"type": "BadRequestError", "param": nil, "code": http.StatusBadRequest})
		return true
	case LMStudio:
		s.load(req.Model)
	}
	return false
}

// ollamaCut drops whole messages from the front, as Ollama's chatPrompt
// does, until the rest fits the window: system messages and the last
// message are always kept (a tool result may lose its call).
func (s *Server) ollamaCut(req *Request, m measured, window int) {
	fixed := m.toolTok + m.priming
	last := len(req.Messages) - 1
	for i, msg := range req.Messages {
		if msg.Role == openai.ChatMessageRoleSystem || i == last {
			fixed += m.msgTok[i]
		}
	}
	// start is the first non-system message kept.
	start, rest := 0, 0
	for i := range last {
		if req.Messages[i].Role != openai.ChatMessageRoleSystem {
			rest += m.msgTok[i]
		}
	}
	for start < last && fixed+rest > window {
		if req.Messages[start].Role != openai.ChatMessageRoleSystem {
			rest -= m.msgTok[start]
		}
		start++
	}
	var seen []openai.ChatCompletionMessage
	var tok []int
	dropped := 0
	for i, msg := range req.Messages {
		if i < start && msg.Role != openai.ChatMessageRoleSystem {
			dropped++
			continue
		}
		seen = append(seen, msg)
		tok = append(tok, m.msgTok[i])
	}
	req.Seen, req.Dropped = seen, dropped
	cut := measured{model: m.model, tools: m.tools, toolTok: m.toolTok, msgs: seen, msgTok: tok, priming: m.priming}
	req.prompt = cut.prompt()
}

// SeenText is everything the model saw of a request, for a responder that
// answers from it (a recall): the messages' contents and call arguments.
func (r Request) SeenText() string {
	var b strings.Builder
	for _, m := range r.Seen {
		b.WriteString(m.Content)
		b.WriteByte('\n')
		for _, tc := range m.ToolCalls {
			b.WriteString(tc.Function.Arguments)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
