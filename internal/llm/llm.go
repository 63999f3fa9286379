// Package llm is gencode's client for OpenAI-compatible chat-completions
// endpoints (OpenAI, DeepSeek, Groq, xAI, Azure, OpenRouter, Ollama, vLLM,
// llama.cpp), built on go-openai.
//
// Stream reassembles a streamed answer (text, reasoning, tool calls split in
// fragments, usage) and reports deltas for the UI; Complete makes a plain,
// non-streamed call (the summarizer uses it). Both retry what is worth
// retrying (429, 5xx, connections that fail before the answer starts) within a
// bounded time, and sort failures into kinds callers can act on with
// errors.Is: ErrContextOverflow, ErrRateLimited, ErrQuota, ErrAuth,
// ErrUnreachable, ErrInterrupted, ErrTimeout, ErrUnexpectedResponse,
// ErrAnswerTooLarge. An endpoint that stays silent (Config.HeaderTimeout,
// IdleTimeout), redirects, answers with an HTML page, or streams more than
// Config.MaxAnswerBytes gets a clear error instead of a wait without end or
// an answer that cannot be parsed.
//
// Callers declare their own small interface for the methods they use.
package llm

//lint:file-ignore SA1019 max_tokens is what OpenAI-compatible servers (Ollama, llama.cpp, vLLM) read; max_completion_tokens goes to the models that need it

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/sashabaranov/go-openai"
)

// Retry defaults: at most 4 retries, 20 s each, 45 s in all; a dead endpoint
// fails well under a minute.
const (
	DefaultMaxRetries  = 4
	DefaultMaxBackoff  = 20 * time.Second
	DefaultRetryBudget = 45 * time.Second
)

// Config configures a Client. The zero value talks to api.openai.com without a key.
type Config struct {
	// BaseURL of the API, including /v1 (e.g. http://localhost:11434/v1).
	// Empty: https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as a bearer token when not empty.
	APIKey string
	// HTTPClient is copied and its transport wrapped for retries.
	// Nil: a client with a 10 s dial timeout and no overall timeout (answers
	// can stream for minutes; cancel through the context).
	HTTPClient *http.Client
	// MaxRetries after the first attempt. 0: DefaultMaxRetries; negative: none.
	MaxRetries int
	// MaxBackoff caps each wait, including a provider's Retry-After. 0: DefaultMaxBackoff.
	MaxBackoff time.Duration
	// RetryBudget caps the time spent retrying (waits plus failed attempts).
	// 0: DefaultRetryBudget.
	RetryBudget time.Duration
	// Sleep waits d or until ctx is done. Nil: a timer. Tests inject a fake.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRetry, if set, is told about each retry before its wait (e.g. to show
	// "rate limited, retrying in 4s"), on the goroutine making the request.
	// attempt counts from 1; err is what the failed attempt returned.
	OnRetry func(attempt int, wait time.Duration, err error)

	// HeaderTimeout bounds the wait for an answer's headers, per attempt
	// (a non-streamed answer sends them when it is complete). A timeout is
	// retried like a failed connection. 0: DefaultHeaderTimeout; negative: none.
	HeaderTimeout time.Duration
	// IdleTimeout bounds each silence of the endpoint within an answer: until
	// its first byte (retried), and between any two reads after (the answer
	// breaks off with ErrTimeout and ErrInterrupted). 0: DefaultIdleTimeout;
	// negative: none.
	IdleTimeout time.Duration
	// MaxAnswerBytes bounds what one answer may hold: the streamed text,
	// reasoning and tool-call arguments together (past it the stream stops
	// with ErrAnswerTooLarge), and any one line of a response body (twice
	// this plus 64 KiB, for JSON escaping). 0: DefaultMaxAnswerBytes;
	// negative: none.
	MaxAnswerBytes int
	// Redact rewrites the text of every error the client returns (and
	// gives OnRetry): the provider's message and body, what a server sent
	// that was no answer, a URL. The configured APIKey is always replaced,
	// literally, before Redact runs. Nil: the key only. gencode passes its
	// secret rules (redact.Redact), as for the log.
	Redact func(string) string
}

// Client talks to one endpoint. It is safe for concurrent use.
type Client struct {
	api       *openai.Client
	maxAnswer int                 // 0: no limit
	redact    func(string) string // the key, then Config.Redact
}

// New returns a Client for cfg.
func New(cfg Config) *Client {
	retries := cfg.MaxRetries
	switch {
	case retries == 0:
		retries = DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	redact := newRedactor(cfg.APIKey, cfg.Redact)
	rt := &retryTransport{
		redact:     redact,
		maxRetries: retries,
		maxBackoff: orDefault(cfg.MaxBackoff, DefaultMaxBackoff),
		budget:     orDefault(cfg.RetryBudget, DefaultRetryBudget),
		sleep:      cfg.Sleep,
		onRetry:    cfg.OnRetry,
	}
	if rt.sleep == nil {
		rt.sleep = sleepCtx
	}
	rt.headerTimeout = timeout(cfg.HeaderTimeout, DefaultHeaderTimeout)
	rt.idleTimeout = timeout(cfg.IdleTimeout, DefaultIdleTimeout)
	maxAnswer := cfg.MaxAnswerBytes
	switch {
	case maxAnswer == 0:
		maxAnswer = DefaultMaxAnswerBytes
	case maxAnswer < 0:
		maxAnswer = 0
	}
	if maxAnswer > 0 {
		rt.maxLine = 2*maxAnswer + 64<<10
	}
	var hc http.Client
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
		rt.base = hc.Transport
	}
	if rt.base == nil {
		rt.base = Transport()
	}
	hc.Transport = extraTransport{base: rt}

	oc := openai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		oc.BaseURL = cfg.BaseURL
	}
	oc.HTTPClient = &hc
	// Non-data lines (keep-alive comments) between two events; some providers
	// send them for minutes while a model thinks.
	oc.EmptyMessagesLimit = 100000
	return &Client{api: openai.NewClientWithConfig(oc), maxAnswer: maxAnswer, redact: redact}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// timeout is d, def for 0, and 0 (none) for a negative d.
func timeout(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// Transport is the process's one HTTP transport to model servers: every
// Client made without Config.HTTPClient sends through it, and the window
// probe asks through it (window.New), so the first request of a run reuses
// a connection the probe left open instead of dialing the server again.
// It is http.DefaultTransport's settings with a 10 s dial timeout.
var Transport = sync.OnceValue(func() http.RoundTripper {
	dt, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t := dt.Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return t
})

// Request is one chat completion request.
type Request struct {
	Model    string
	Messages []openai.ChatCompletionMessage
	Tools    []openai.Tool
	// ToolChoice is sent as tool_choice when set: "none" makes a request
	// that carries the tools (and so the conversation's cached prefix)
	// answer in text only.
	ToolChoice string
	// MaxTokens bounds the answer; 0: the provider's default. It is sent as
	// max_tokens, or max_completion_tokens for the models go-openai knows to
	// require it (o1, o3, gpt-5 ...); a provider that refuses max_tokens
	// (unsupported_parameter) gets the request once more with max_completion_tokens.
	MaxTokens int
	// ReasoningEffort is sent as reasoning_effort when set ("low", "high"
	// ...). The caller decides which models take it.
	ReasoningEffort string
	// Extra fields are set in the request body as given, after everything
	// else (a field of the same name is replaced): a server's or router's
	// own options, such as top_k or chat_template_kwargs. Each value must
	// encode as JSON.
	Extra map[string]any
	// OnRetry, if set, is told of each retry of this request before its
	// wait, on the goroutine making the request (a front end shows "rate
	// limited, retrying in 3 s (2/5)" meanwhile).
	OnRetry func(Retry)
}

// Response is a complete (or, with ErrInterrupted, partial) answer.
type Response struct {
	Content   string
	Reasoning string // reasoning_content (DeepSeek, xAI, ...), not meant to be sent back
	// ToolCalls in index order, each with an id ("call_..." made up when the
	// provider sent none) and JSON arguments ("{}" when the provider sent none).
	ToolCalls    []openai.ToolCall
	FinishReason string        // "stop", "tool_calls", "length", "content_filter"; "" if cut
	Usage        *openai.Usage // nil when the provider reported none
	Model        string        // the model that answered, as reported
}

// Message returns the assistant message to append to the history
// (reasoning left out: providers reject it or ignore it in requests).
func (r Response) Message() openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: r.Content, ToolCalls: r.ToolCalls}
}

// Delta is a piece of a streamed answer, for display.
type Delta struct {
	Content   string // text to append
	Reasoning string // reasoning text to append
	ToolCall  string // name of a tool call that just started
}

// Stream sends req with stream:true and stream_options.include_usage, calls
// onDelta (if not nil) for each piece as it arrives, and returns the
// reassembled answer. If the stream breaks off (error wrapping ErrInterrupted,
// context.Canceled, or an error event), the partial Response is returned with
// the error: its text so far, without tool calls, whose arguments may be cut.
func (c *Client) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	op := "chat completion " + req.Model
	ctx = withRetryObserver(ctx, req.OnRetry)
	ctx, err := withExtraFields(ctx, req.Extra)
	if err != nil {
		return Response{}, fmt.Errorf("%s: %w", op, err)
	}
	cr := chatRequest(req, true)
	stream, err := c.api.CreateChatCompletionStream(ctx, cr)
	if err != nil && switchMaxTokens(&cr, err) {
		stream, err = c.api.CreateChatCompletionStream(ctx, cr)
	}
	if err != nil {
		return Response{}, scrub(failure(ctx, op, err), c.redact)
	}
	defer stream.Close()
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	var acc accumulator
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if acc.finish == "" {
				// Without a finish_reason the answer is incomplete, [DONE] or not.
				return acc.partial(), fmt.Errorf("%s: %w after %d characters: the stream ended before the model finished",
					op, ErrInterrupted, acc.size())
			}
			return acc.response(), nil
		}
		if err != nil {
			return acc.partial(), scrub(streamFailure(ctx, op, err, acc.size()), c.redact)
		}
		acc.add(chunk, onDelta)
		if c.maxAnswer > 0 && acc.size() > c.maxAnswer {
			return acc.partial(), fmt.Errorf("%s: %w", op, &tooLargeError{limit: c.maxAnswer})
		}
	}
}

// Complete sends req without streaming and returns the answer. A body that
// breaks off once started gives an error wrapping ErrInterrupted; it is not
// retried.
func (c *Client) Complete(ctx context.Context, req Request) (Response, error) {
	op := "chat completion " + req.Model
	ctx = withRetryObserver(ctx, req.OnRetry)
	ctx, err := withExtraFields(ctx, req.Extra)
	if err != nil {
		return Response{}, fmt.Errorf("%s: %w", op, err)
	}
	cr := chatRequest(req, false)
	resp, err := c.api.CreateChatCompletion(ctx, cr)
	if err != nil && switchMaxTokens(&cr, err) {
		resp, err = c.api.CreateChatCompletion(ctx, cr)
	}
	if err != nil {
		return Response{}, scrub(failure(ctx, op, err), c.redact)
	}
	if len(resp.Choices) == 0 {
		return Response{}, fmt.Errorf("%s: the answer has no choices", op)
	}
	ch := resp.Choices[0]
	out := Response{
		Content:      ch.Message.Content,
		Reasoning:    ch.Message.ReasoningContent,
		FinishReason: string(ch.FinishReason),
		Model:        resp.Model,
	}
	for _, tc := range ch.Message.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, finishCall(tc.ID, string(tc.Type), tc.Function.Name, tc.Function.Arguments))
	}
	if resp.Usage != (openai.Usage{}) {
		u := resp.Usage
		out.Usage = &u
	}
	return out, nil
}

// Models lists the model ids the endpoint serves (GET /models); local servers
// answer it too, which makes it a cheap probe.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	list, err := c.api.ListModels(ctx)
	if err != nil {
		return nil, scrub(failure(ctx, "list models", err), c.redact)
	}
	ids := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		ids = append(ids, m.ID)
	}
	return ids, nil
}

func chatRequest(req Request, stream bool) openai.ChatCompletionRequest {
	cr := openai.ChatCompletionRequest{Model: req.Model, Messages: req.Messages, Tools: req.Tools}
	if req.ToolChoice != "" {
		cr.ToolChoice = req.ToolChoice
	}
	cr.ReasoningEffort = req.ReasoningEffort
	if req.MaxTokens > 0 {
		if needsCompletionTokens(req.Model) {
			cr.MaxCompletionTokens = req.MaxTokens
		} else {
			cr.MaxTokens = req.MaxTokens
		}
	}
	if stream {
		cr.Stream = true
		cr.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	return cr
}

// needsCompletionTokens reports the models (o1, o3, gpt-5 ...) that refuse
// max_tokens, as go-openai knows them: it rejects such a request itself.
func needsCompletionTokens(model string) bool {
	err := openai.NewReasoningValidator().Validate(openai.ChatCompletionRequest{Model: model, MaxTokens: 1})
	return errors.Is(err, openai.ErrReasoningModelMaxTokensDeprecated)
}

// switchMaxTokens moves the limit to max_completion_tokens when the provider
// refused max_tokens (newer OpenAI models), and reports whether to send again.
func switchMaxTokens(cr *openai.ChatCompletionRequest, err error) bool {
	var ae *APIError
	if cr.MaxTokens == 0 || !errors.As(err, &ae) || ae.Code != "unsupported_parameter" || ae.Param != "max_tokens" {
		return false
	}
	cr.MaxCompletionTokens, cr.MaxTokens = cr.MaxTokens, 0
	return true
}

// failure wraps an error from a request with op, keeping its kind.
func failure(ctx context.Context, op string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%s: %w", op, cerr)
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return fmt.Errorf("%s: %w", op, ae)
	}
	var re *ResponseError
	if errors.As(err, &re) {
		return fmt.Errorf("%s: %w", op, re)
	}
	var te *timeoutError
	if errors.As(err, &te) {
		return fmt.Errorf("%s: %w", op, te)
	}
	var tl *tooLargeError
	if errors.As(err, &tl) {
		return fmt.Errorf("%s: %w", op, tl)
	}
	var ne *netError
	if errors.As(err, &ne) {
		return fmt.Errorf("%s: %w", op, ne)
	}
	var oe *openai.APIError
	if errors.As(err, &oe) {
		return fmt.Errorf("%s: %w", op, fromOpenAI(oe))
	}
	var rqe *openai.RequestError
	if errors.As(err, &rqe) {
		return fmt.Errorf("%s: %w", op, newAPIError(rqe.HTTPStatusCode, rqe.Body))
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		// The body broke off: the transport only retries before its first byte.
		return fmt.Errorf("%s: %w: %w", op, ErrInterrupted, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// streamFailure wraps an error met while reading a stream after n characters.
func streamFailure(ctx context.Context, op string, err error, n int) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%s: %w", op, cerr)
	}
	var oe *openai.APIError
	if errors.As(err, &oe) { // an error event in the stream
		return fmt.Errorf("%s: %w", op, fromOpenAI(oe))
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	if errors.As(err, &se) || errors.As(err, &te) {
		return fmt.Errorf("%s: malformed stream chunk after %d characters: %w", op, n, err)
	}
	return fmt.Errorf("%s: %w after %d characters: %w", op, ErrInterrupted, n, err)
}
