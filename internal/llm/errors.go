package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/sashabaranov/go-openai"

	"github.com/gencode/gencode/internal/termtext"
)

// Error kinds. Check them with errors.Is; the errors returned by Client wrap
// an *APIError (for provider answers) or a connection error that unwraps to them.
var (
	// ErrContextOverflow: the request does not fit the model's context window.
	// Compact the history and send again.
	ErrContextOverflow = errors.New("context window exceeded")
	// ErrRateLimited: the provider still answered 429 after the retries.
	ErrRateLimited = errors.New("rate limited")
	// ErrQuota: the account has no quota or credit left; retrying cannot help.
	ErrQuota = errors.New("quota exceeded")
	// ErrAuth: the API key is missing, wrong, or not allowed (401, 403).
	ErrAuth = errors.New("authentication failed")
	// ErrUnreachable: no answer from the endpoint (refused, reset, timed out, unknown host).
	ErrUnreachable = errors.New("endpoint unreachable")
	// ErrInterrupted: the answer broke off after it had started (a stream
	// ended before the model finished). Stream returns the partial Response with it.
	ErrInterrupted = errors.New("answer interrupted")
	// ErrTimeout: the endpoint was silent too long: no response headers
	// within Config.HeaderTimeout, or no data for Config.IdleTimeout. Before
	// the answer starts it is retried; after, it also wraps ErrInterrupted.
	ErrTimeout = errors.New("timed out")
	// ErrUnexpectedResponse: the endpoint answered with something no
	// OpenAI-compatible API sends (see ResponseError); the base URL is
	// probably wrong.
	ErrUnexpectedResponse = errors.New("unexpected response")
	// ErrAnswerTooLarge: the answer passed Config.MaxAnswerBytes; what came
	// before is returned with it, as with ErrInterrupted.
	ErrAnswerTooLarge = errors.New("answer too large")
)

// APIError is an error answer from the provider.
type APIError struct {
	Status int    // HTTP status; 0 for an error event inside a stream
	Code   string // provider code, e.g. "context_length_exceeded"; may be empty
	Type   string // provider type, e.g. "invalid_request_error"
	Param  string
	// Message is the provider's message, or the start of a non-JSON body;
	// Message, Code, Type, Param and Body have the configured key and the
	// secrets Config.Redact finds redacted.
	Message string
	Body    []byte // the raw body as received, redacted (nil for in-stream errors)
	// ContentType is the body's type, as the server said.
	ContentType string

	plain bool // Message is the start of a body that is not a JSON error
	// Window is the context window the provider named when it refused a
	// request as too large ("maximum context length is 4096 tokens"), 0
	// when it did not say. Local servers often hold far less than the
	// model's known window.
	Window int

	kind     error // one of the Err* kinds, or nil
	attempts int   // requests sent, when retried
	scrubbed bool  // its texts are redacted
}

// Error reads well on a terminal, e.g. "context window exceeded: This model's
// maximum context length is 8192 tokens...".
func (e *APIError) Error() string {
	var b strings.Builder
	if e.kind != nil {
		b.WriteString(e.kind.Error())
	} else {
		b.WriteString("provider error")
		if e.Status != 0 {
			fmt.Fprintf(&b, " %d", e.Status)
		}
		if e.Code != "" {
			fmt.Fprintf(&b, " (%s)", e.Code)
		}
		if e.plain && e.ContentType != "" {
			fmt.Fprintf(&b, ", %s", termtext.OneLine(e.ContentType, 100))
		}
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.attempts > 1 {
		fmt.Fprintf(&b, " (gave up after %d attempts)", e.attempts)
	}
	return b.String()
}

// Unwrap returns the error's kind (ErrContextOverflow, ErrRateLimited, ErrQuota,
// ErrAuth) or nil.
func (e *APIError) Unwrap() error { return e.kind }

// newAPIError decodes an error body. It understands OpenAI's
// {"error": {"message", "type", "param", "code"}}, {"error": "text"} (Ollama),
// a top-level {"message", "code"}, a list of those (Gemini) and, failing
// those, plain text.
func newAPIError(status int, body []byte) *APIError {
	e := &APIError{Status: status, Body: body}
	var list []json.RawMessage
	if json.Unmarshal(body, &list) == nil && len(list) > 0 {
		body = list[0]
	}
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    any             `json:"code"`
	}
	var inner struct {
		Message any    `json:"message"`
		Type    string `json:"type"`
		Param   any    `json:"param"`
		Code    any    `json:"code"`
		NCtx    int    `json:"n_ctx"` // llama.cpp's window, on its overflow error
	}
	switch {
	case json.Unmarshal(body, &env) != nil:
		e.Message, e.plain = snippet(body), true
	case json.Unmarshal(env.Error, &inner) == nil && inner.Message != nil:
		e.Message, e.Type, e.Param, e.Code = text(inner.Message), inner.Type, text(inner.Param), text(inner.Code)
	case len(env.Error) > 0 && json.Unmarshal(env.Error, &e.Message) == nil:
	case env.Message != "":
		e.Message, e.Type, e.Code = env.Message, env.Type, text(env.Code)
	default:
		e.Message, e.plain = snippet(body), true
	}
	if e.Message == "" {
		e.Message, e.plain = http.StatusText(status), false
	}
	e.kind = classify(e)
	if e.kind == ErrContextOverflow {
		e.Window = windowIn(e.Message)
		if e.Window == 0 && inner.NCtx > 0 {
			e.Window = inner.NCtx
		}
	}
	return e
}

// windowWordings are how providers name their window when they refuse a
// request as too large: OpenAI, vLLM, DeepSeek and OpenRouter; llama.cpp;
// LM Studio; Mistral; Anthropic; Gemini; Hugging Face TGI. Compiled on the
// first refusal read, not in every process's initialisation.
var windowWordings = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?i)maximum context length is (\d[\d,]*) tokens`),
		regexp.MustCompile(`(?i)available context size \((\d+) tokens\)`),
		regexp.MustCompile(`(?i)context length of only (\d+) tokens`),
		regexp.MustCompile(`(?i)too large for model with (\d+) maximum context length`),
		regexp.MustCompile(`(?i)tokens > (\d+) maximum`),
		regexp.MustCompile(`(?i)maximum number of tokens allowed \((\d+)\)`),
		regexp.MustCompile(`(?i)must be <= (\d+)`),
	}
})

// windowIn reads the window a provider named in an overflow message.
func windowIn(msg string) int {
	for _, re := range windowWordings() {
		if m := re.FindStringSubmatch(msg); m != nil {
			if n, err := strconv.Atoi(strings.ReplaceAll(m[1], ",", "")); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// WindowOf is the context window a provider named in an overflow error,
// or 0.
func WindowOf(err error) int {
	var ae *APIError
	if errors.As(err, &ae) && errors.Is(ae, ErrContextOverflow) {
		return ae.Window
	}
	return 0
}

// fromOpenAI converts an error event decoded by go-openai (in a stream).
func fromOpenAI(oe *openai.APIError) *APIError {
	e := &APIError{Status: oe.HTTPStatusCode, Code: text(oe.Code), Type: oe.Type, Message: oe.Message}
	if oe.Param != nil {
		e.Param = *oe.Param
	}
	e.kind = classify(e)
	if e.kind == ErrContextOverflow {
		e.Window = windowIn(e.Message)
	}
	return e
}

func classify(e *APIError) error {
	code, typ := strings.ToLower(e.Code), strings.ToLower(e.Type)
	msg := strings.ToLower(e.Message)
	switch {
	case code == "insufficient_quota" || typ == "insufficient_quota" ||
		strings.Contains(msg, "exceeded your current quota"):
		return ErrQuota
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden ||
		code == "invalid_api_key" || typ == "authentication_error":
		return ErrAuth
	case e.Status == http.StatusTooManyRequests || code == "rate_limit_exceeded":
		return ErrRateLimited
	case e.Status == http.StatusRequestEntityTooLarge:
		return ErrContextOverflow
	}
	// How providers say a prompt is too large for the model (OpenAI, DeepSeek,
	// vLLM, Mistral, OpenRouter, Anthropic, Gemini, llama.cpp, Ollama).
	overflow := []string{
		"context_length_exceeded",
		"maximum context length",
		"context length",
		"context window",
		"context size", // llama.cpp: "the request exceeds the available context size"
		"exceed_context_size",
		"too many tokens",
		"prompt is too long",
		"input is too long",
		"exceeds the maximum number of tokens",
		"reduce the length of the messages",
	}
	for _, s := range overflow {
		if strings.Contains(code, s) || strings.Contains(typ, s) || strings.Contains(msg, s) {
			return ErrContextOverflow
		}
	}
	return nil
}

// text renders a JSON string or number field; null is "".
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return fmt.Sprintf("%g", v)
	default:
		return fmt.Sprint(v)
	}
}

// snippet is the start of a non-JSON body (an HTML proxy page, plain text).
func snippet(body []byte) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "..."
	}
	return s
}

// netError is a failure to get an answer from the endpoint.
type netError struct {
	host     string
	attempts int
	err      error
}

func (e *netError) Error() string {
	if e.attempts > 1 {
		return fmt.Sprintf("cannot reach %s after %d attempts: %v", e.host, e.attempts, e.err)
	}
	return fmt.Sprintf("cannot reach %s: %v", e.host, e.err)
}

func (e *netError) Unwrap() []error { return []error{ErrUnreachable, e.err} }
