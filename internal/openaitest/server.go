// Package openaitest is a fake OpenAI-compatible chat-completions server for tests.
//
// It runs on httptest (loopback only) and answers POST /v1/chat/completions with
// scripted replies, streamed as server-sent events or as plain JSON, and GET
// /v1/models with a model list. Point any OpenAI client at URL(). Every request is
// recorded; the server can also play a strict provider that rejects broken message
// sequences and prompts larger than a context window, with the providers' real
// error bodies.
//
//	srv := openaitest.NewServer(t)
//	srv.Enqueue(openaitest.Text("hello"), openaitest.Calls(openaitest.ToolCall{Name: "LS", Arguments: "{}"}))
//	client := llm.New(llm.Config{BaseURL: srv.URL()})
//
// The same server runs as a standalone process for end-to-end tests: see
// cmd/fakeopenai and Script.
package openaitest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/sashabaranov/go-openai"
)

// Request is a decoded chat-completions request received by the server.
type Request struct {
	Model               string                         `json:"model"`
	Messages            []openai.ChatCompletionMessage `json:"messages"`
	Tools               []openai.Tool                  `json:"tools,omitempty"`
	Stream              bool                           `json:"stream"`
	IncludeUsage        bool                           `json:"include_usage,omitempty"` // stream_options.include_usage
	MaxTokens           int                            `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                            `json:"max_completion_tokens,omitempty"`
	// ToolChoice is tool_choice: "none", "auto", "required", or an object's JSON.
	ToolChoice string `json:"tool_choice,omitempty"`

	// Header is the request's HTTP header (Authorization included).
	Header http.Header `json:"-"`
	// Body is the raw JSON body.
	Body []byte `json:"-"`
	// Seen is what the model saw: Messages, unless an emulated server cut
	// the prompt to its window (Ollama drops whole messages from the
	// front); Dropped is how many messages it dropped.
	Seen    []openai.ChatCompletionMessage `json:"-"`
	Dropped int                            `json:"-"`

	prompt, cached int // the server's token count, and what its cache served
	// toolsJSON is Tools marshalled again, as measure counts them (""
	// when the request was not decoded by the server).
	toolsJSON string
}

// wireRequest is the part of a request body the server reads.
type wireRequest struct {
	Model         string            `json:"model"`
	Messages      []json.RawMessage `json:"messages"`
	Tools         json.RawMessage   `json:"tools"`
	Stream        bool              `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
}

// decodeMessages decodes a request's messages, each kept decoded per raw
// text: a session's requests repeat the messages of the one before, and
// decoding every message of every request again (go-openai decodes each
// twice) under -race was a third of the fake server's CPU. The messages
// of two requests may share their slices (ToolCalls, MultiContent):
// nothing changes them. With each message it keeps its tokens as measure
// counts them with the server's tokenizer (which gives a text the same
// count every time), and returns them: counting looked every message's
// text up again in MemoTokenizer's map for every request.
func (s *Server) decodeMessages(raws []json.RawMessage) ([]openai.ChatCompletionMessage, []int, error) {
	if raws == nil {
		return nil, nil, nil
	}
	msgs := make([]openai.ChatCompletionMessage, len(raws))
	toks := make([]int, len(raws))
	for i, raw := range raws {
		s.mu.Lock()
		d, ok := s.decoded[string(raw)]
		s.mu.Unlock()
		if !ok {
			if err := json.Unmarshal(raw, &d.msg); err != nil {
				return nil, nil, err
			}
			d.tokens = messageTokens(d.msg, textCounter(s.tokenize))
			s.mu.Lock()
			s.decoded[string(raw)] = d
			s.mu.Unlock()
		}
		msgs[i], toks[i] = d.msg, d.tokens
	}
	return msgs, toks, nil
}

// decodedMessage is a message as decodeMessages keeps it.
type decodedMessage struct {
	msg    openai.ChatCompletionMessage
	tokens int
}

// wireTools is a request's tools decoded, and marshalled again as measure
// counts them (the text a provider is given), kept per raw text with
// their tokens: a session sends the same tools with every request, and
// decoding and marshalling a dozen schemas per request under -race was a
// sixth of an end-to-end test's own CPU.
type wireTools struct {
	list   []openai.Tool
	json   string
	tokens int
}

func (s *Server) decodeTools(raw json.RawMessage) (wireTools, error) {
	if len(raw) == 0 {
		return wireTools{}, nil
	}
	s.mu.Lock()
	w, ok := s.tools[string(raw)]
	s.mu.Unlock()
	if !ok {
		if err := json.Unmarshal(raw, &w.list); err != nil {
			return wireTools{}, err
		}
		if len(w.list) > 0 {
			if b, err := json.Marshal(w.list); err == nil {
				w.json = string(b)
			}
		}
		w.tokens = toolTokens(w.list, w.json, textCounter(s.tokenize))
		s.mu.Lock()
		s.tools[string(raw)] = w
		s.mu.Unlock()
	}
	if w.list != nil {
		w.list = append([]openai.Tool(nil), w.list...)
	}
	return w, nil
}

// toolChoice is tool_choice as Request holds it: a string's value, or the
// JSON of an object.
func (w wireRequest) toolChoice() string {
	if len(w.ToolChoice) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(w.ToolChoice, &s); err == nil {
		return s
	}
	return string(w.ToolChoice)
}

// Server is a running fake. Create it with NewServer; it is safe for concurrent use.
type Server struct {
	t         testing.TB
	hs        *httptest.Server
	done      chan struct{}
	closeOnce sync.Once

	// set by options, read-only afterwards
	responder func(Request) Reply
	rules     bool
	alternate bool
	window    int
	count     func(Request) int
	models    []string
	onRequest func(Request)
	onModels  func(ctx context.Context) bool
	modelsErr int // GET /v1/models's failing status; 0: it answers
	tokenize  func(string) int
	refusal   func(window, prompt, completion int) (int, string) // refusal.go
	emu       *Emulation                                         // a real server the fake plays (WithEmulation)

	respMu sync.Mutex // serializes responder calls

	mu        sync.Mutex
	queue     []Reply
	requests  []Request
	accounts  []Account
	lastAgent *measured // the prefix a provider's cache holds
	loaded    []string  // models an emulated server has loaded
	// derived are the models an emulated Ollama made (POST /api/create),
	// derivedOrder their names in the order made.
	derived      map[string]derived
	derivedOrder []string
	decoded      map[string]decodedMessage // decodeMessages, by raw text
	tools        map[string]wireTools      // decodeTools, by raw text
}

// Option configures a Server.
type Option func(*Server)

// WithResponder answers every request for which no queued reply matches.
// Calls are serialized, so f may keep unguarded state; to hold a reply open
// use Reply.Gate or Reply.Delay rather than blocking in f.
func WithResponder(f func(Request) Reply) Option {
	return func(s *Server) { s.responder = f }
}

// WithMessageRules makes the server reject, with a 400 invalid_request_error
// like a real provider, requests whose messages break CheckMessageRules.
func WithMessageRules() Option {
	return func(s *Server) { s.rules = true }
}

// WithRoleAlternation makes the server reject, like a strict local chat
// template, requests whose roles break CheckRoleAlternation.
func WithRoleAlternation() Option {
	return func(s *Server) { s.alternate = true }
}

// WithContextWindow makes the server reject, with a 400 context_length_exceeded
// body worded like OpenAI's, requests whose token count plus max tokens exceeds
// window. count estimates a request's prompt tokens; nil: the tokenizer's
// count (WithTokenizer), else len(body)/4.
func WithContextWindow(window int, count func(Request) int) Option {
	return func(s *Server) {
		s.window = window
		if count != nil {
			s.count = count
		}
	}
}

// WithTokenCounter sets how the server counts a request's prompt tokens:
// for the usage it reports and the window WithContextWindow enforces
// (default len(body)/4). Give it a real tokenizer to play a provider whose
// prompt_tokens a test can compare with its own figures.
func WithTokenCounter(count func(Request) int) Option {
	return func(s *Server) { s.count = count }
}

// WithModels sets the model ids listed by GET /v1/models (default: gpt-4o-mini).
func WithModels(ids ...string) Option {
	return func(s *Server) { s.models = ids }
}

// WithModelsHook calls f with each GET /v1/models request's context before
// the list is sent; f may block (until ctx ends, when the client gives up)
// to play a server that is slow to answer. When f returns false the server
// sends nothing, as one that hangs and is then abandoned.
func WithModelsHook(f func(ctx context.Context) bool) Option {
	return func(s *Server) { s.onModels = f }
}

// WithModelsError makes GET /v1/models fail with status and an OpenAI
// error body, as an endpoint that does not serve the list (or is down).
func WithModelsError(status int) Option {
	return func(s *Server) { s.modelsErr = status }
}

// WithRequestHook calls f with every recorded chat request, before it is answered.
func WithRequestHook(f func(Request)) Option {
	return func(s *Server) { s.onRequest = f }
}

// NewServer starts a fake server. With a non-nil t, the server is closed by
// t.Cleanup and a request that no reply answers fails the test; with a nil t
// (standalone use) such a request gets a 400 naming the problem.
func NewServer(t testing.TB, opts ...Option) *Server {
	s := &Server{
		t:       t,
		done:    make(chan struct{}),
		models:  []string{"gpt-4o-mini"},
		decoded: map[string]decodedMessage{},
		tools:   map[string]wireTools{},
	}
	for _, o := range opts {
		o(s)
	}
	if s.emu != nil && s.emu.Preloaded {
		s.loaded = append(s.loaded, s.models...)
	}
	if s.tokenize != nil {
		s.tokenize = MemoTokenizer(s.tokenize)
	}
	if s.count == nil {
		s.count = estimateTokens
		if s.tokenize != nil {
			s.count = func(r Request) int { return r.prompt }
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	s.routes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "", nil,
			fmt.Sprintf("openaitest: unknown endpoint %s %s", r.Method, r.URL.Path))
	})
	s.hs = httptest.NewServer(mux)
	if t != nil {
		t.Cleanup(s.Close)
	}
	return s
}

// URL returns the base URL to give an OpenAI client, ending in /v1.
func (s *Server) URL() string { return s.hs.URL + "/v1" }

// Close stops the server. Replies waiting on a Delay or Gate are abandoned.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.hs.Close()
	})
}

// Enqueue appends replies to the FIFO; each chat request takes the first
// queued reply whose ForModel matches it.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Pending returns how many queued replies have not been used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns a copy of the chat requests received so far, in arrival
// order, including those the server rejected.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func estimateTokens(r Request) int { return len(r.Body) / 4 }

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	if s.onModels != nil && !s.onModels(r.Context()) {
		return
	}
	if s.modelsErr != 0 {
		writeError(w, s.modelsErr, "server_error", "", nil, "openaitest: the model list is not available")
		return
	}
	if body := s.modelsBody(); body != nil {
		writeJSON(w, http.StatusOK, body)
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range s.models {
		list.Data = append(list.Data, model{ID: id, Object: "model", Created: created, OwnedBy: "openaitest"})
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away
	}
	var msgs []openai.ChatCompletionMessage
	var msgTok []int
	var tools wireTools
	wire, fast := splitRequest(body)
	if !fast {
		err = json.Unmarshal(body, &wire)
	}
	if err == nil {
		msgs, msgTok, err = s.decodeMessages(wire.Messages)
	}
	if err == nil {
		tools, err = s.decodeTools(wire.Tools)
	}
	if err != nil && fast {
		// Say what json.Unmarshal says of a body that is not JSON, as
		// without splitRequest; of a JSON body it is the error above.
		var full wireRequest
		if uerr := json.Unmarshal(body, &full); uerr != nil {
			err = uerr
		}
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", nil,
			fmt.Sprintf("We could not parse the JSON body of your request. (%v)", err))
		return
	}
	req := Request{
		Model:               wire.Model,
		Messages:            msgs,
		Tools:               tools.list,
		toolsJSON:           tools.json,
		Stream:              wire.Stream,
		IncludeUsage:        wire.StreamOptions != nil && wire.StreamOptions.IncludeUsage,
		MaxTokens:           wire.MaxTokens,
		MaxCompletionTokens: wire.MaxCompletionTokens,
		ToolChoice:          wire.toolChoice(),
		Header:              r.Header.Clone(),
		Body:                body,
		Seen:                msgs,
	}
	m := measured{model: req.Model, tools: req.Tools, toolsJSON: req.toolsJSON, toolTok: tools.tokens,
		msgs: req.Messages, msgTok: msgTok, priming: replyPriming} // as measure counts them
	req.prompt = m.prompt()
	rejected := s.reject(w, req, wire)
	if rejected == "" && s.emulateWindow(w, &req, m) {
		rejected = RejectWindow
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	seq := len(s.requests)
	s.mu.Unlock()
	if s.onRequest != nil {
		s.onRequest(req)
	}

	acct := s.account(req, m, rejected)
	if rejected != "" {
		return
	}
	req.cached = acct.Cached
	rep, ok := s.pick(req)
	if !ok {
		msg := fmt.Sprintf("openaitest: no reply scripted for request %d (model %q)", seq, req.Model)
		if s.t != nil {
			s.t.Errorf("%s", msg)
		}
		writeError(w, http.StatusBadRequest, "openaitest_error", "", nil, msg)
		return
	}
	s.serve(w, r, req, rep, seq)
}

// reject answers requests a real provider would refuse, and says why it did
// (RejectWindow, RejectRules, RejectOther), or "" when it did not.
func (s *Server) reject(w http.ResponseWriter, req Request, wire wireRequest) string {
	switch {
	case req.Model == "":
		writeError(w, http.StatusBadRequest, "invalid_request_error", "model", nil,
			"you must provide a model parameter")
	case len(req.Messages) == 0:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "messages", "empty_array",
			"Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	case wire.StreamOptions != nil && !req.Stream:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "stream_options", "invalid_value",
			"The 'stream_options' parameter is only allowed when 'stream' is enabled.")
	default:
		if s.rules {
			if err := CheckMessageRules(req.Messages); err != nil {
				writeError(w, http.StatusBadRequest, "invalid_request_error", "messages", nil,
					"Invalid 'messages': "+err.Error())
				return RejectRules
			}
		}
		if s.alternate {
			if err := CheckRoleAlternation(req.Messages); err != nil {
				writeError(w, http.StatusBadRequest, "invalid_request_error", "messages", nil,
					"Conversation roles must alternate user/assistant/user/assistant/...: "+err.Error())
				return RejectRules
			}
		}
		if s.window > 0 {
			prompt := s.count(req)
			completion := max(req.MaxTokens, req.MaxCompletionTokens)
			if prompt+completion > s.window {
				if s.refusal != nil {
					status, body := s.refusal(s.window, prompt, completion)
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(status)
					_, _ = io.WriteString(w, body)
					return RejectWindow
				}
				msg := fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", s.window, prompt)
				if completion > 0 {
					msg = fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", s.window, prompt+completion, prompt, completion)
				}
				writeError(w, http.StatusBadRequest, "invalid_request_error", "messages", "context_length_exceeded", msg)
				return RejectWindow
			}
		}
		return ""
	}
	return RejectOther
}

// pick takes the first queued reply for req, else asks the responder.
func (s *Server) pick(req Request) (Reply, bool) {
	s.mu.Lock()
	for i, rep := range s.queue {
		if rep.ForModel == "" || rep.ForModel == req.Model {
			s.queue = append(s.queue[:i:i], s.queue[i+1:]...)
			s.mu.Unlock()
			return rep, true
		}
	}
	s.mu.Unlock()
	if s.responder == nil {
		return Reply{}, false
	}
	s.respMu.Lock()
	defer s.respMu.Unlock()
	return s.responder(req), true
}

// writeError sends an OpenAI-style error body; code is a string or nil.
func writeError(w http.ResponseWriter, status int, typ, param string, code any, msg string) {
	type apiError struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    any     `json:"code"`
	}
	e := apiError{Message: msg, Type: typ, Code: code}
	if param != "" {
		e.Param = &param
	}
	writeJSON(w, status, struct {
		Error apiError `json:"error"`
	}{e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
