package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/sashabaranov/go-openai"
)

// Reply is one scripted answer of the fake server.
//
// Which kind of answer is sent is decided in this order:
//   - Hangup: the connection is closed before any response byte.
//   - Status or Body set: Status (default 200), Header and Body are sent verbatim
//     (an HTTP error, or a hand-written JSON completion).
//   - SSEFile or SSE set: the raw server-sent events are replayed byte for byte.
//   - otherwise a completion is generated from Content, Reasoning and ToolCalls:
//     streamed as chat.completion.chunk events when the request has "stream": true,
//     else a single chat.completion JSON object.
//
// Delay and Gate apply to every kind; ChunkDelay, Cut and Stall to every kind that sends a body.
type Reply struct {
	// Content is the assistant's text.
	Content string `json:"content,omitempty"`
	// Reasoning is streamed as reasoning_content deltas before Content (DeepSeek, xAI style).
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the calls the model makes; an empty ID gets a unique "call_..." id.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// FinishReason defaults to "tool_calls" when ToolCalls is set, else "stop".
	FinishReason string `json:"finish_reason,omitempty"`
	// Usage defaults to an estimate (prompt: the server's token counter; completion:
	// generated characters / 4). It is streamed in a final chunk with "choices": []
	// only when the request asks for it (stream_options.include_usage), like OpenAI.
	Usage *openai.Usage `json:"usage,omitempty"`
	// UsageOnFinish puts the usage on the finish_reason chunk instead, always (DeepSeek style).
	UsageOnFinish bool `json:"usage_on_finish,omitempty"`
	// Model is the model name reported in the answer; default: the request's model.
	Model string `json:"model,omitempty"`

	// Chunks splits Content and Reasoning into that many deltas, and each call's
	// arguments into that many fragments. 0: text is split at word boundaries and
	// arguments into up to 3 fragments.
	Chunks int `json:"chunks,omitempty"`
	// WholeToolCalls sends each call (id, name and all arguments) in one delta (Groq style).
	WholeToolCalls bool `json:"whole_tool_calls,omitempty"`
	// Interleave sends the argument fragments of parallel calls round-robin by index
	// instead of one call after the other.
	Interleave bool `json:"interleave,omitempty"`

	// ForModel restricts this queued reply to requests for that model. A request
	// takes the first queued reply whose ForModel is empty or equal to its model.
	ForModel string `json:"for_model,omitempty"`

	// Status is the HTTP status to answer with (e.g. 429, 500).
	Status int `json:"status,omitempty"`
	// Header holds extra response headers, e.g. {"Retry-After": "1"}.
	Header map[string]string `json:"header,omitempty"`
	// Body is sent verbatim. With an error Status and no Body, a generic
	// OpenAI-style error body is sent.
	Body string `json:"body,omitempty"`

	// SSEFile is a recorded stream to replay byte for byte (see LoadScript for
	// relative paths).
	SSEFile string `json:"sse_file,omitempty"`
	// SSE is a raw event stream to replay byte for byte.
	SSE string `json:"sse,omitempty"`

	// Delay is waited before the first byte (headers included).
	Delay time.Duration `json:"-"`
	// ChunkDelay is waited before each streamed event after the first.
	ChunkDelay time.Duration `json:"-"`
	// Gate, when not nil, must be closed before the answer starts (after Delay).
	// Tests use it to hold a request open, e.g. a slow summarizer.
	Gate <-chan struct{} `json:"-"`

	// Cut closes the connection after CutAfter streamed events (0: right after the
	// headers), without the final chunk or "data: [DONE]". For a JSON answer
	// (verbatim or generated) CutAfter counts bytes of the body.
	Cut      bool `json:"cut,omitempty"`
	CutAfter int  `json:"cut_after,omitempty"`
	// Stall is Cut without the close: after CutAfter events (or bytes) the
	// server sends nothing more and holds the connection open until the
	// client gives up, like a server that hangs mid-answer. (A server that
	// never answers at all is a long Delay.)
	Stall bool `json:"stall,omitempty"`
	// Hangup closes the connection without sending anything.
	Hangup bool `json:"hangup,omitempty"`
}

// ToolCall is a tool call made by the fake model.
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Text returns a reply whose content is s.
func Text(s string) Reply { return Reply{Content: s} }

// Calls returns a reply that makes the given tool calls.
func Calls(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// Error returns a reply with an HTTP error status and a verbatim body
// (empty: a generic OpenAI-style error body).
func Error(status int, body string) Reply { return Reply{Status: status, Body: body} }

// ErrorFile returns a reply with an HTTP error status and the body read from path,
// such as shared/testdata/openai/errors/429_insufficient_quota.json.
func ErrorFile(status int, path string) (Reply, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Reply{}, fmt.Errorf("read error body: %w", err)
	}
	return Reply{Status: status, Body: string(b)}, nil
}

// SSEFile returns a reply that replays a recorded event stream byte for byte.
func SSEFile(path string) Reply { return Reply{SSEFile: path} }

// UnmarshalJSON reads a reply from a script. Durations are strings such as "250ms".
func (r *Reply) UnmarshalJSON(b []byte) error {
	type plain Reply // no methods: avoids recursion
	aux := struct {
		*plain
		Delay      string `json:"delay,omitempty"`
		ChunkDelay string `json:"chunk_delay,omitempty"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return fmt.Errorf("decode reply: %w", err)
	}
	var err error
	if aux.Delay != "" {
		if r.Delay, err = time.ParseDuration(aux.Delay); err != nil {
			return fmt.Errorf("reply delay: %w", err)
		}
	}
	if aux.ChunkDelay != "" {
		if r.ChunkDelay, err = time.ParseDuration(aux.ChunkDelay); err != nil {
			return fmt.Errorf("reply chunk_delay: %w", err)
		}
	}
	return nil
}

// MarshalJSON writes a reply in the script format read by UnmarshalJSON.
func (r Reply) MarshalJSON() ([]byte, error) {
	type plain Reply
	aux := struct {
		plain
		Delay      string `json:"delay,omitempty"`
		ChunkDelay string `json:"chunk_delay,omitempty"`
	}{plain: plain(r)}
	if r.Delay > 0 {
		aux.Delay = r.Delay.String()
	}
	if r.ChunkDelay > 0 {
		aux.ChunkDelay = r.ChunkDelay.String()
	}
	b, err := json.Marshal(aux)
	if err != nil {
		return nil, fmt.Errorf("encode reply: %w", err)
	}
	return b, nil
}

func (r Reply) isVerbatim() bool { return r.Body != "" || (r.Status != 0 && r.Status != http.StatusOK) }

func (r Reply) isRawSSE() bool { return r.SSEFile != "" || r.SSE != "" }
