// Package window asks an OpenAI-compatible endpoint's server how large
// the context window really is for a model: the window it loaded the
// model with, which local servers keep far below what the model was
// trained for (Ollama loads at 4096 by default). It recognises the server
// by what it serves, not by its port: the fields of its model list
// (vLLM's max_model_len, llama.cpp's meta, OpenRouter's context_length),
// then the endpoints only one server has (Ollama's /api/version and
// /api/ps, LM Studio's /api/v0/models, llama.cpp's /props). Every probe
// is bounded in time and its answer is kept for the run.
package window

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds one probe, all its requests together.
const DefaultTimeout = 2500 * time.Millisecond

// OllamaDefault is the window Ollama loads a model with when nothing sets
// num_ctx, on machines with less than 24 GiB of VRAM.
const OllamaDefault = 4096

// maxBody bounds what is read of one answer (OpenRouter's list is ~1 MB).
const maxBody = 8 << 20

// Result is what the server said of the model's window.
type Result struct {
	// Tokens is the window in use; 0: the server did not say.
	Tokens int
	// Source says where Tokens came from, as the status bar and /context
	// show it: "Ollama, loaded", "Ollama, default", "llama.cpp", "vLLM",
	// "LM Studio, loaded", "OpenRouter".
	Source string
	// Server is the server recognised ("Ollama", "llama.cpp", "vLLM", "LM
	// Studio", "OpenRouter"); "" when none was.
	Server string
	// Trained is what the model supports (Ollama's /api/show, LM Studio's
	// max_context_length, llama.cpp's n_ctx_train); 0: not said.
	Trained int
	// Pending says the model is not loaded yet (Ollama, LM Studio), so the
	// window it will get is not known: ask again after its first answer.
	Pending bool
	// Models are the models the server has (Ollama's /api/tags), for the
	// raise hint to name a larger-window model made before instead of
	// offering to make it again; nil: not asked.
	Models []string
}

// String is "4,096 (Ollama, loaded)", or "unknown".
func (r Result) String() string {
	if r.Tokens <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%s (%s)", thousands(r.Tokens), r.Source)
}

// RaiseHint says how to give an Ollama model the window it was trained
// for, when the one it is loaded with is far below it (at most a quarter
// of it); "" otherwise. command, when set, is the front end's slash
// command that creates the derived model on the user's word
// ("/ollama-window"), offered as the third way; print mode has none and
// gets the shell commands only.
func (r Result) RaiseHint(model, command string) string {
	if r.Server != "Ollama" || r.Tokens <= 0 || r.Trained < 4*r.Tokens {
		return ""
	}
	want := RaiseTo(r.Tokens, r.Trained)
	derived := DerivedName(model, want)
	if slices.Contains(r.Models, derived) {
		use := "use it: gencode --model " + derived
		if command != "" {
			use = "switch to it with /model " + derived
		}
		return fmt.Sprintf("Ollama runs %s with a %s-token window; the model supports %s, and the server has %s, "+
			"made with a %s-token window: %s.", model, thousands(r.Tokens), thousands(r.Trained), derived, thousands(want), use)
	}
	s := fmt.Sprintf("Ollama runs %s with a %s-token window; the model supports %s. "+
		"To raise it, restart the server with OLLAMA_CONTEXT_LENGTH=%d ollama serve, "+
		"or create a model with a larger window: a Modelfile with the lines \"FROM %s\" and \"PARAMETER num_ctx %d\", "+
		"then ollama create %s -f Modelfile, and use that model",
		model, thousands(r.Tokens), thousands(r.Trained), want, model, want, derived)
	if command == "" {
		return s + "."
	}
	return s + fmt.Sprintf(", or type %s %d and gencode creates %s on the server and switches to it "+
		"(%s alone says what it would do first).", command, want, derived, command)
}

// Prober asks servers for their windows. It keeps each answer for the run,
// per endpoint and model, except a pending one; it is safe for concurrent
// use.
type Prober struct {
	client  *http.Client
	timeout time.Duration

	mu    sync.Mutex
	cache map[key]Result
}

type key struct{ base, model string }

// New returns a Prober. A nil client is a plain one; timeout <= 0 is
// DefaultTimeout.
func New(client *http.Client, timeout time.Duration) *Prober {
	if client == nil {
		client = &http.Client{}
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Prober{client: client, timeout: timeout, cache: map[key]Result{}}
}

// Probe asks the server at base (an OpenAI base URL, ".../v1") for model's
// window, or returns the answer kept from before. apiKey, when set, goes
// with each request as a bearer token. A server that does not answer in
// time, or answers nothing this package reads, gives a zero Result.
func (p *Prober) Probe(ctx context.Context, base, model, apiKey string) Result {
	k := key{strings.TrimRight(base, "/"), model}
	p.mu.Lock()
	r, ok := p.cache[k]
	p.mu.Unlock()
	if ok {
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	r = (&probe{p: p, ctx: ctx, base: k.base, model: model, key: apiKey}).run()
	if !r.Pending {
		p.mu.Lock()
		p.cache[k] = r
		p.mu.Unlock()
	}
	return r
}

// probe is one Probe's requests.
type probe struct {
	p     *Prober
	ctx   context.Context
	base  string
	model string
	key   string
}

// root is the server's address without the OpenAI path (".../v1").
func (q *probe) root() string {
	r := strings.TrimSuffix(q.base, "/v1")
	return strings.TrimSuffix(r, "/api") // OpenRouter: .../api/v1
}

// do sends one request and decodes its JSON answer into v; false when
// it failed or was not a 200.
func (q *probe) do(method, url string, body any, v any) bool {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return false
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(q.ctx, method, url, rd)
	if err != nil {
		return false
	}
	if q.key != "" {
		req.Header.Set("Authorization", "Bearer "+q.key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := q.p.client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return false
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return false
	}
	return json.Unmarshal(b, v) == nil
}

func (q *probe) run() Result {
	var list ModelList
	if q.do(http.MethodGet, q.base+"/models", nil, &list) {
		r, known, ask := FromModelList(list, q.model)
		switch {
		case known == "llama.cpp":
			var props Props
			if q.do(http.MethodGet, q.root()+"/props", nil, &props) {
				if pr := FromProps(props); pr.Tokens > 0 {
					pr.Trained = max(pr.Trained, r.Trained)
					return pr
				}
			}
			return r
		case known != "":
			return r
		case !ask:
			return Result{}
		}
	}
	return q.unknown()
}

// unknown asks the endpoints only one server has, at once, and reads the
// first that answers in this order: Ollama, LM Studio, llama.cpp.
func (q *probe) unknown() Result {
	var (
		wg            sync.WaitGroup
		version       OllamaVersion
		v0            LMStudioV0
		props         Props
		okV, ok0, okP bool
	)
	wg.Add(3)
	go func() { defer wg.Done(); okV = q.do(http.MethodGet, q.root()+"/api/version", nil, &version) }()
	go func() { defer wg.Done(); ok0 = q.do(http.MethodGet, q.root()+"/api/v0/models", nil, &v0) }()
	go func() { defer wg.Done(); okP = q.do(http.MethodGet, q.root()+"/props", nil, &props) }()
	wg.Wait()
	switch {
	case okV && version.Version != "":
		return q.ollama()
	case ok0 && len(v0.Data) > 0:
		r := FromLMStudioV0(v0, q.model)
		if r.Pending || r.Tokens == 0 {
			var v1 LMStudioV1
			if q.do(http.MethodGet, q.root()+"/api/v1/models", nil, &v1) {
				if r1 := FromLMStudioV1(v1, q.model); r1.Tokens > 0 {
					r1.Trained = max(r1.Trained, r.Trained)
					return r1
				}
			}
		}
		return r
	case okP:
		return FromProps(props)
	}
	return Result{}
}

// ollama asks /api/ps for the loaded window and /api/show for the trained
// length, at once.
func (q *probe) ollama() Result {
	var (
		wg        sync.WaitGroup
		ps        OllamaPS
		show      OllamaShow
		tags      OllamaTags
		okPS, okS bool
		okT       bool
	)
	wg.Add(3)
	go func() { defer wg.Done(); okT = q.do(http.MethodGet, q.root()+"/api/tags", nil, &tags) }()
	go func() { defer wg.Done(); okPS = q.do(http.MethodGet, q.root()+"/api/ps", nil, &ps) }()
	go func() {
		defer wg.Done()
		okS = q.do(http.MethodPost, q.root()+"/api/show", map[string]string{"model": q.model}, &show)
	}()
	wg.Wait()
	if !okPS {
		ps = OllamaPS{}
	}
	if !okS {
		show = OllamaShow{}
	}
	r := FromOllama(ps, show, q.model)
	if okT {
		r.Models = tags.Names()
	}
	return r
}

// thousands is n with comma separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
