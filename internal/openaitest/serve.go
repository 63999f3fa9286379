package openaitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"
)

// created is the fixed "created" timestamp of generated answers (deterministic output).
const created = 1700000000

func (s *Server) serve(w http.ResponseWriter, r *http.Request, req Request, rep Reply, seq int) {
	if !s.wait(r.Context(), rep.Delay, rep.Gate) {
		return
	}
	if rep.Hangup {
		hangup(w)
		return
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	switch {
	case rep.isVerbatim():
		s.serveVerbatim(w, r, rep)
	case rep.isRawSSE():
		raw := rep.SSE
		if rep.SSEFile != "" {
			b, err := os.ReadFile(rep.SSEFile)
			if err != nil {
				s.fail(w, fmt.Sprintf("openaitest: read SSE file: %v", err))
				return
			}
			raw = string(b)
		}
		s.stream(w, r, rep, splitEvents(raw))
	case req.Stream:
		s.stream(w, r, rep, s.chunks(req, rep, seq))
	default:
		s.serveCompletion(w, r, req, rep, seq)
	}
}

// fail reports a broken script: to the test when there is one, and to the client.
func (s *Server) fail(w http.ResponseWriter, msg string) {
	if s.t != nil {
		s.t.Errorf("%s", msg)
	}
	writeError(w, http.StatusInternalServerError, "openaitest_error", "", nil, msg)
}

// wait sleeps d, then waits for gate; false when the client or the server went away.
func (s *Server) wait(ctx context.Context, d time.Duration, gate <-chan struct{}) bool {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		case <-s.done:
			return false
		}
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return false
		case <-s.done:
			return false
		}
	}
	return true
}

func (s *Server) serveVerbatim(w http.ResponseWriter, r *http.Request, rep Reply) {
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	body := rep.Body
	if body == "" {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("openaitest: scripted error %d %s", status, http.StatusText(status)),
			"type":    "server_error", "param": nil, "code": nil,
		}})
		body = string(b)
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	s.writeBody(w, r, []byte(body), rep)
}

func (s *Server) serveCompletion(w http.ResponseWriter, r *http.Request, req Request, rep Reply, seq int) {
	type message struct {
		Role             string         `json:"role"`
		Content          *string        `json:"content"`
		ReasoningContent string         `json:"reasoning_content,omitempty"`
		ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	}
	type choice struct {
		Index        int     `json:"index"`
		Message      message `json:"message"`
		FinishReason string  `json:"finish_reason"`
	}
	msg := message{Role: "assistant", ReasoningContent: rep.Reasoning}
	if rep.Content != "" || len(rep.ToolCalls) == 0 {
		msg.Content = &rep.Content
	}
	for i, tc := range rep.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{
			Index: nil, ID: callID(tc, seq, i), Type: "function",
			Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments},
		})
	}
	body, err := json.Marshal(struct {
		ID      string       `json:"id"`
		Object  string       `json:"object"`
		Created int64        `json:"created"`
		Model   string       `json:"model"`
		Choices []choice     `json:"choices"`
		Usage   openai.Usage `json:"usage"`
	}{
		ID: completionID(seq), Object: "chat.completion", Created: created, Model: replyModel(req, rep),
		Choices: []choice{{Message: msg, FinishReason: finishReason(rep)}},
		Usage:   s.usage(req, rep),
	})
	if err != nil {
		s.fail(w, fmt.Sprintf("openaitest: encode completion: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	s.writeBody(w, r, body, rep)
}

// writeBody writes a JSON body, or its first CutAfter bytes and cuts or stalls.
func (s *Server) writeBody(w http.ResponseWriter, r *http.Request, body []byte, rep Reply) {
	switch {
	case rep.Cut:
		_, _ = w.Write(body[:min(rep.CutAfter, len(body))])
		abort(w)
	case rep.Stall:
		_, _ = w.Write(body[:min(rep.CutAfter, len(body))])
		s.stall(w, r)
		return
	}
	_, _ = w.Write(body)
}

// stall flushes what was written and waits until the client or the server
// goes away, sending nothing.
func (s *Server) stall(w http.ResponseWriter, r *http.Request) {
	_ = http.NewResponseController(w).Flush()
	select {
	case <-r.Context().Done():
	case <-s.done:
	}
}

// stream sends events one by one, flushing each, honouring ChunkDelay, Cut and Stall.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, rep Reply, events []string) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	for i, ev := range events {
		if rep.Cut && i == rep.CutAfter {
			abort(w)
		}
		if rep.Stall && i == rep.CutAfter {
			s.stall(w, r)
			return
		}
		if i > 0 && !s.wait(r.Context(), rep.ChunkDelay, nil) {
			return
		}
		if _, err := w.Write([]byte(ev)); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
	if rep.Cut {
		abort(w)
	}
	if rep.Stall {
		s.stall(w, r)
	}
}

// abort closes the connection mid-response: the client sees a truncated body.
func abort(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
	panic(http.ErrAbortHandler)
}

// hangup closes the connection without writing a response.
func hangup(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// splitEvents splits a raw event stream after each blank line; joined, the parts
// are the input byte for byte.
func splitEvents(raw string) []string {
	var events []string
	for raw != "" {
		i := strings.Index(raw, "\n\n")
		if i < 0 {
			events = append(events, raw)
			break
		}
		events = append(events, raw[:i+2])
		raw = raw[i+2:]
	}
	return events
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireDelta struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type wireChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []wireChoice  `json:"choices"`
	Usage   *openai.Usage `json:"usage,omitempty"`
}

// chunks renders rep as the SSE events of a streamed completion, ending in [DONE].
func (s *Server) chunks(req Request, rep Reply, seq int) []string {
	var events []string
	add := func(c wireChunk) {
		c.ID, c.Object, c.Created, c.Model = completionID(seq), "chat.completion.chunk", created, replyModel(req, rep)
		if c.Choices == nil {
			c.Choices = []wireChoice{}
		}
		b, err := json.Marshal(c)
		if err != nil {
			panic(fmt.Sprintf("openaitest: encode chunk: %v", err)) // plain values: cannot happen
		}
		events = append(events, "data: "+string(b)+"\n\n")
	}
	delta := func(d wireDelta) { add(wireChunk{Choices: []wireChoice{{Delta: d}}}) }

	empty := ""
	delta(wireDelta{Role: "assistant", Content: &empty})
	for _, p := range splitText(rep.Reasoning, rep.Chunks) {
		delta(wireDelta{ReasoningContent: p})
	}
	for _, p := range splitText(rep.Content, rep.Chunks) {
		delta(wireDelta{Content: &p})
	}
	if rep.WholeToolCalls && len(rep.ToolCalls) > 0 {
		var calls []wireToolCall
		for i, tc := range rep.ToolCalls {
			calls = append(calls, wireToolCall{
				Index: &i, ID: callID(tc, seq, i), Type: "function",
				Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments},
			})
		}
		delta(wireDelta{ToolCalls: calls})
	} else {
		// parts[i] holds call i's header delta followed by its argument fragments.
		parts := make([][]wireToolCall, len(rep.ToolCalls))
		for i, tc := range rep.ToolCalls {
			parts[i] = append(parts[i], wireToolCall{
				Index: &i, ID: callID(tc, seq, i), Type: "function",
				Function: wireFunction{Name: tc.Name},
			})
			n := rep.Chunks
			if n <= 0 {
				n = 3
			}
			for _, frag := range splitText(tc.Arguments, n) {
				parts[i] = append(parts[i], wireToolCall{Index: &i, Function: wireFunction{Arguments: frag}})
			}
		}
		if rep.Interleave {
			for k := 0; ; k++ {
				sent := false
				for i := range parts {
					if k < len(parts[i]) {
						delta(wireDelta{ToolCalls: []wireToolCall{parts[i][k]}})
						sent = true
					}
				}
				if !sent {
					break
				}
			}
		} else {
			for i := range parts {
				for _, p := range parts[i] {
					delta(wireDelta{ToolCalls: []wireToolCall{p}})
				}
			}
		}
	}
	finish := finishReason(rep)
	last := wireChunk{Choices: []wireChoice{{FinishReason: &finish}}}
	usage := s.usage(req, rep)
	if rep.UsageOnFinish {
		last.Usage = &usage
	}
	add(last)
	if req.IncludeUsage && !rep.UsageOnFinish {
		add(wireChunk{Usage: &usage})
	}
	return append(events, "data: [DONE]\n\n")
}

// usage returns rep.Usage or an estimate.
func (s *Server) usage(req Request, rep Reply) openai.Usage {
	if rep.Usage != nil {
		return *rep.Usage
	}
	n := len(rep.Content) + len(rep.Reasoning)
	for _, tc := range rep.ToolCalls {
		n += len(tc.Name) + len(tc.Arguments)
	}
	prompt := s.count(req)
	if req.Dropped > 0 {
		prompt = req.prompt // what the server kept after its cut
	}
	u := openai.Usage{PromptTokens: prompt, CompletionTokens: max(1, (n+3)/4)}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	if req.cached > 0 {
		// As OpenAI reports it: the part of the prompt served from its cache.
		u.PromptTokensDetails = &openai.PromptTokensDetails{CachedTokens: min(req.cached, u.PromptTokens)}
	}
	return u
}

// splitText splits s into n pieces of about equal length in runes, or at word
// boundaries when n <= 0.
func splitText(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n <= 0 {
		var out []string
		for _, p := range strings.SplitAfter(s, " ") {
			if p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	runes := []rune(s)
	n = min(n, len(runes))
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, string(runes[i*len(runes)/n:(i+1)*len(runes)/n]))
	}
	return out
}

func finishReason(rep Reply) string {
	switch {
	case rep.FinishReason != "":
		return rep.FinishReason
	case len(rep.ToolCalls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}

func replyModel(req Request, rep Reply) string {
	if rep.Model != "" {
		return rep.Model
	}
	return req.Model
}

func completionID(seq int) string { return fmt.Sprintf("chatcmpl-openaitest-%d", seq) }

func callID(tc ToolCall, seq, i int) string {
	if tc.ID != "" {
		return tc.ID
	}
	return fmt.Sprintf("call_openaitest_%d_%d", seq, i)
}
