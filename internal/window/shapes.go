package window

import (
	"encoding/json"
	"strings"
)

// ModelList is GET {base}/models as the servers answer it: the OpenAI
// list, with each server's own fields.
type ModelList struct {
	Data []ListedModel `json:"data"`
}

// ListedModel is one entry of a model list.
type ListedModel struct {
	ID      string `json:"id"`
	OwnedBy string `json:"owned_by"`
	// MaxModelLen is vLLM's window.
	MaxModelLen int `json:"max_model_len"`
	// Meta is llama.cpp's: n_ctx_train is the trained length; some builds
	// add n_ctx, the window.
	Meta *struct {
		NCtx      int `json:"n_ctx"`
		NCtxTrain int `json:"n_ctx_train"`
	} `json:"meta"`
	// ContextLength and TopProvider are OpenRouter's.
	ContextLength int `json:"context_length"`
	TopProvider   *struct {
		ContextLength int `json:"context_length"`
	} `json:"top_provider"`
}

// FromModelList reads a model list. known names the server when the list
// tells it; ask says the list does not, and the server may have endpoints
// of its own to ask (false for OpenAI itself, which has none).
func FromModelList(l ModelList, model string) (r Result, known string, ask bool) {
	m, ok := find(l.Data, model)
	if !ok {
		return Result{}, "", len(l.Data) > 0 && !isOpenAI(l.Data)
	}
	switch {
	case m.MaxModelLen > 0:
		return Result{Tokens: m.MaxModelLen, Source: "vLLM", Server: "vLLM"}, "vLLM", false
	case m.OwnedBy == "llamacpp" || m.Meta != nil:
		r := Result{Server: "llama.cpp"}
		if m.Meta != nil {
			r.Trained = m.Meta.NCtxTrain
			if m.Meta.NCtx > 0 {
				r.Tokens, r.Source = m.Meta.NCtx, "llama.cpp"
			}
		}
		return r, "llama.cpp", false
	case m.TopProvider != nil || m.ContextLength > 0:
		r := Result{Tokens: m.ContextLength, Source: "OpenRouter", Server: "OpenRouter", Trained: m.ContextLength}
		if m.TopProvider != nil && m.TopProvider.ContextLength > 0 && (r.Tokens == 0 || m.TopProvider.ContextLength < r.Tokens) {
			r.Tokens = m.TopProvider.ContextLength
		}
		return r, "OpenRouter", false
	}
	return Result{}, "", !isOpenAI(l.Data)
}

// find is model's entry; a list of one model (llama.cpp serves one,
// whatever it is called) is that model's.
func find(data []ListedModel, model string) (ListedModel, bool) {
	for _, m := range data {
		if m.ID == model || ollamaName(m.ID) == ollamaName(model) {
			return m, true
		}
	}
	if len(data) == 1 && (data[0].OwnedBy == "llamacpp" || data[0].Meta != nil) {
		return data[0], true
	}
	return ListedModel{}, false
}

// isOpenAI says the list is OpenAI's own, whose models have no window
// field and whose server has no endpoint to ask.
func isOpenAI(data []ListedModel) bool {
	for _, m := range data {
		switch m.OwnedBy {
		case "openai", "system", "openai-internal":
			return true
		}
	}
	return false
}

// ollamaName is a model name as Ollama resolves it: ":latest" when no tag.
func ollamaName(name string) string {
	if name != "" && !strings.Contains(name, ":") {
		return name + ":latest"
	}
	return name
}

// Props is llama-server's GET /props.
type Props struct {
	DefaultGenerationSettings struct {
		NCtx int `json:"n_ctx"`
	} `json:"default_generation_settings"`
}

// FromProps reads llama.cpp's /props: the window each slot has.
func FromProps(p Props) Result {
	if n := p.DefaultGenerationSettings.NCtx; n > 0 {
		return Result{Tokens: n, Source: "llama.cpp", Server: "llama.cpp"}
	}
	return Result{}
}

// OllamaVersion is Ollama's GET /api/version.
type OllamaVersion struct {
	Version string `json:"version"`
}

// OllamaPS is Ollama's GET /api/ps (api.ProcessResponse): the models
// loaded now. context_length is there since v0.10.0.
type OllamaPS struct {
	Models []struct {
		Name          string `json:"name"`
		Model         string `json:"model"`
		ContextLength int    `json:"context_length"`
	} `json:"models"`
}

// OllamaTags is Ollama's GET /api/tags: the models the server has.
type OllamaTags struct {
	Models []struct {
		Name  string `json:"name"`
		Model string `json:"model"`
	} `json:"models"`
}

// Names are the models' names.
func (t OllamaTags) Names() []string {
	var out []string
	for _, m := range t.Models {
		if m.Name != "" {
			out = append(out, m.Name)
		}
	}
	return out
}

// OllamaShow is Ollama's POST /api/show: model_info holds
// "<architecture>.context_length", the trained length.
type OllamaShow struct {
	ModelInfo map[string]json.RawMessage `json:"model_info"`
	// Parameters is the Modelfile's parameters, one a line ("num_ctx 32768").
	Parameters string `json:"parameters"`
}

// trained is the trained length /api/show gives.
func (s OllamaShow) trained() int {
	var arch string
	if raw, ok := s.ModelInfo["general.architecture"]; ok {
		_ = json.Unmarshal(raw, &arch)
	}
	var n int
	if raw, ok := s.ModelInfo[arch+".context_length"]; ok && arch != "" {
		_ = json.Unmarshal(raw, &n)
		return n
	}
	for k, raw := range s.ModelInfo { // an architecture not named: any context_length
		if strings.HasSuffix(k, ".context_length") && json.Unmarshal(raw, &n) == nil && n > 0 {
			return n
		}
	}
	return 0
}

// numCtx is the num_ctx a derived model sets, 0 when none.
func (s OllamaShow) numCtx() int {
	for _, line := range strings.Split(s.Parameters, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "num_ctx" {
			var n int
			if err := json.Unmarshal([]byte(f[1]), &n); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// FromOllama reads Ollama's answers: the loaded window from /api/ps when
// the model is loaded; else it is pending (loaded by the first request)
// and the window assumed until then is the model's own num_ctx or
// Ollama's default, never more than the trained length.
func FromOllama(ps OllamaPS, show OllamaShow, model string) Result {
	r := Result{Server: "Ollama", Trained: show.trained()}
	for _, m := range ps.Models {
		if (ollamaName(m.Name) == ollamaName(model) || ollamaName(m.Model) == ollamaName(model)) && m.ContextLength > 0 {
			r.Tokens, r.Source = m.ContextLength, "Ollama, loaded"
			return r
		}
	}
	r.Pending = true
	r.Tokens, r.Source = OllamaDefault, "Ollama, default"
	if n := show.numCtx(); n > 0 {
		r.Tokens, r.Source = n, "Ollama, num_ctx"
	}
	if r.Trained > 0 && r.Trained < r.Tokens {
		r.Tokens = r.Trained
	}
	return r
}

// LMStudioV0 is LM Studio's GET /api/v0/models.
type LMStudioV0 struct {
	Data []struct {
		ID                  string `json:"id"`
		State               string `json:"state"`
		LoadedContextLength int    `json:"loaded_context_length"`
		MaxContextLength    int    `json:"max_context_length"`
	} `json:"data"`
}

// FromLMStudioV0 reads LM Studio's v0 list: loaded_context_length when
// the model is loaded, else pending.
func FromLMStudioV0(l LMStudioV0, model string) Result {
	for _, m := range l.Data {
		if m.ID != model {
			continue
		}
		r := Result{Server: "LM Studio", Trained: m.MaxContextLength}
		if m.LoadedContextLength > 0 {
			r.Tokens, r.Source = m.LoadedContextLength, "LM Studio, loaded"
		} else {
			r.Pending = true
		}
		return r
	}
	return Result{Server: "LM Studio", Pending: true}
}

// LMStudioV1 is LM Studio's GET /api/v1/models (0.4+).
type LMStudioV1 struct {
	Models []struct {
		Key             string `json:"key"`
		LoadedInstances []struct {
			ID     string `json:"id"`
			Config struct {
				ContextLength int `json:"context_length"`
			} `json:"config"`
		} `json:"loaded_instances"`
		MaxContextLength int `json:"max_context_length"`
	} `json:"models"`
}

// FromLMStudioV1 reads LM Studio's v1 list: the smallest window of the
// model's loaded instances.
func FromLMStudioV1(l LMStudioV1, model string) Result {
	for _, m := range l.Models {
		r := Result{Server: "LM Studio", Trained: m.MaxContextLength}
		match := m.Key == model
		for _, in := range m.LoadedInstances {
			if in.ID == model {
				match = true
			}
		}
		if !match {
			continue
		}
		for _, in := range m.LoadedInstances {
			if n := in.Config.ContextLength; n > 0 && (r.Tokens == 0 || n < r.Tokens) {
				r.Tokens, r.Source = n, "LM Studio, loaded"
			}
		}
		r.Pending = r.Tokens == 0
		return r
	}
	return Result{Server: "LM Studio", Pending: true}
}
