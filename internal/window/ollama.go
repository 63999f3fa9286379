package window

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Ollama is an Ollama server's native API (/api/...), beside the OpenAI
// endpoint gencode talks to: what it says of a model's window, and the
// one change gencode makes on it, on the user's word only: a model derived
// from another with a larger num_ctx (POST /api/create).
type Ollama struct {
	client *http.Client
	root   string
	key    string
}

// NewOllama returns the native API of the server whose OpenAI base URL is
// base (".../v1"). A nil client is a plain one; apiKey, when set, goes
// with each request as a bearer token (a proxy in front of Ollama may want
// it).
func NewOllama(client *http.Client, base, apiKey string) *Ollama {
	if client == nil {
		client = &http.Client{}
	}
	q := probe{base: strings.TrimRight(base, "/")}
	return &Ollama{client: client, root: q.root(), key: apiKey}
}

// ErrNotOllama says the endpoint's server is not Ollama (it has no
// /api/version that answers a version).
var ErrNotOllama = errors.New("the endpoint is not Ollama")

// OllamaError is an error Ollama answered with: its HTTP status (200 for
// one sent within a streamed answer) and its message, as sent (not
// sanitized: the caller shows it).
type OllamaError struct {
	Status  int
	Message string
}

func (e *OllamaError) Error() string {
	if e.Status == http.StatusOK {
		return "Ollama: " + e.Message
	}
	return fmt.Sprintf("Ollama: %s (HTTP %d)", e.Message, e.Status)
}

// OllamaModel is what an Ollama server says of one model.
type OllamaModel struct {
	Name string
	// Found says the server has the model (POST /api/show answered).
	Found bool
	// NumCtx is the num_ctx the model's Modelfile sets; 0: none.
	NumCtx int
	// Trained is the length the model supports (/api/show); 0: not said.
	Trained int
	// Loaded is the window it is loaded with now (/api/ps); 0: not loaded
	// (or an Ollama before 0.10, which does not say).
	Loaded int
}

// Window is the window the model runs with: the loaded one, else the one
// it will get when loaded (its num_ctx, else Ollama's default, never more
// than the trained length), with the source as Result names it.
func (m OllamaModel) Window() (int, string) {
	if m.Loaded > 0 {
		return m.Loaded, "Ollama, loaded"
	}
	n, src := OllamaDefault, "Ollama, default"
	if m.NumCtx > 0 {
		n, src = m.NumCtx, "Ollama, num_ctx"
	}
	if m.Trained > 0 && m.Trained < n {
		n = m.Trained
	}
	return n, src
}

// Version is the server's version (GET /api/version); ErrNotOllama when
// the server does not answer one.
func (o *Ollama) Version(ctx context.Context) (string, error) {
	var v OllamaVersion
	status, err := o.do(ctx, http.MethodGet, "/api/version", nil, &v)
	switch {
	case err != nil && status == 0:
		return "", fmt.Errorf("%w: %v", ErrNotOllama, err)
	case err != nil || v.Version == "":
		return "", ErrNotOllama
	}
	return v.Version, nil
}

// Model asks /api/show and /api/ps about name. A model the server does not
// have is Found false, not an error.
func (o *Ollama) Model(ctx context.Context, name string) (OllamaModel, error) {
	m := OllamaModel{Name: name}
	var show OllamaShow
	status, err := o.do(ctx, http.MethodPost, "/api/show", map[string]string{"model": name}, &show)
	switch {
	case status == http.StatusNotFound:
		return m, nil
	case err != nil:
		return m, err
	}
	m.Found, m.NumCtx, m.Trained = true, show.numCtx(), show.trained()
	var ps OllamaPS
	if _, err := o.do(ctx, http.MethodGet, "/api/ps", nil, &ps); err != nil {
		return m, err
	}
	if r := FromOllama(ps, show, name); !r.Pending {
		m.Loaded = r.Tokens
	}
	return m, nil
}

// Create makes the model name from the model from, with num_ctx set to
// numCtx (POST /api/create {"model", "from", "parameters"}: its form since
// Ollama 0.5). Ollama streams its progress as JSON lines ({"status": ...})
// and ends with {"status": "success"}; an error comes as {"error": ...},
// with an HTTP error status when nothing was sent before it. Each status
// goes to progress (may be nil).
func (o *Ollama) Create(ctx context.Context, name, from string, numCtx int, progress func(string)) error {
	body := map[string]any{"model": name, "from": from, "parameters": map[string]any{"num_ctx": numCtx}}
	resp, err := o.send(ctx, http.MethodPost, "/api/create", body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errorOf(resp)
	}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, maxBody))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	last := ""
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var st struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		}
		if err := json.Unmarshal(line, &st); err != nil {
			//lint:ignore ST1005 Ollama is a name, and the error is shown as it stands
			return fmt.Errorf("Ollama's answer to /api/create is not JSON lines: %w", err)
		}
		if st.Error != "" {
			return &OllamaError{Status: http.StatusOK, Message: st.Error}
		}
		if st.Status != "" {
			last = st.Status
			if progress != nil {
				progress(st.Status)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read Ollama's answer to /api/create: %w", err)
	}
	if last != "success" {
		//lint:ignore ST1005 Ollama is a name, and the error is shown as it stands
		return fmt.Errorf("Ollama's answer to /api/create ended before it said success (last: %q)", last)
	}
	return nil
}

func (o *Ollama) send(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, o.root+path, rd)
	if err != nil {
		return nil, err
	}
	if o.key != "" {
		req.Header.Set("Authorization", "Bearer "+o.key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return o.client.Do(req)
}

// do sends one request and decodes its JSON answer into v. It returns the
// HTTP status (0 when none came) and, for any other than 200, the
// server's error.
func (o *Ollama) do(ctx context.Context, method, path string, body, v any) (int, error) {
	resp, err := o.send(ctx, method, path, body)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, errorOf(resp)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return resp.StatusCode, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: the answer is not JSON: %w", method, path, err)
	}
	return resp.StatusCode, nil
}

// errorOf reads an error answer: Ollama's {"error": "..."}, else the
// first of its text.
func errorOf(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var e struct {
		Error string `json:"error"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &OllamaError{Status: resp.StatusCode, Message: msg}
}

// RaiseTo is the window to offer for a model loaded with loaded tokens
// and trained for trained (0: not known): 32,768, or the trained length
// when smaller, or when the loaded window already reaches 32,768; 0 when
// there is nothing to raise.
func RaiseTo(loaded, trained int) int {
	want := 32768
	if trained > 0 {
		want = min(trained, want)
		if want <= loaded {
			want = trained
		}
	}
	if want <= loaded {
		return 0
	}
	return want
}

// trailingK is a tag's "-32k" (or a whole tag "32k"): the window a derived
// name already carries.
var trailingK = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|-)\d+k$`) })

// DerivedName is the name of the model derived from model with a window
// of tokens: the same name with the window in its tag, so the family
// stays visible: "qwen2.5-coder:7b" -> "qwen2.5-coder:7b-32k", "llama3"
// (tag latest) -> "llama3:32k"; a tag that already ends in one
// ("7b-32k") has it replaced. A window that is not a whole number of
// 1,024 tokens is written out ("7b-30000").
func DerivedName(model string, tokens int) string {
	size := strconv.Itoa(tokens)
	if tokens%1024 == 0 {
		size = strconv.Itoa(tokens/1024) + "k"
	}
	name, tag := model, ""
	if i := strings.LastIndexByte(model, ':'); i >= 0 && !strings.Contains(model[i:], "/") {
		name, tag = model[:i], model[i+1:]
	}
	tag = trailingK().ReplaceAllString(tag, "")
	if tag == "" || tag == "latest" {
		return name + ":" + size
	}
	return name + ":" + tag + "-" + size
}
