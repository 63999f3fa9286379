package openaitest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Script is a server setup read from JSON, for the standalone fake
// (cmd/fakeopenai) and for tests that share scripts with it:
//
//	{
//	  "replies": [
//	    {"tool_calls": [{"name": "LS", "arguments": "{}"}]},
//	    {"content": "Done.", "chunks": 3},
//	    {"status": 429, "header": {"Retry-After": "1"}, "body": "{\"error\": {...}}"},
//	    {"sse_file": "../shared/testdata/openai/streams/groq_llama-3.3-70b_tool_call_stream.sse"},
//	    {"for_model": "summarizer", "content": "## Goal\n...", "delay": "200ms"}
//	  ],
//	  "fallback": {"content": "fallback answer"},
//	  "models": ["gpt-4o-mini"],
//	  "message_rules": true,
//	  "context_window": 8192
//	}
//
// Replies use Reply's JSON form (durations as strings: "delay", "chunk_delay").
type Script struct {
	// Replies are queued in order (see Server.Enqueue).
	Replies []Reply `json:"replies"`
	// Fallback answers every request no queued reply matches.
	Fallback *Reply `json:"fallback,omitempty"`
	// Models are listed by GET /v1/models.
	Models []string `json:"models,omitempty"`
	// MessageRules turns on WithMessageRules.
	MessageRules bool `json:"message_rules,omitempty"`
	// ContextWindow turns on WithContextWindow with the default len(body)/4 estimate.
	ContextWindow int `json:"context_window,omitempty"`
	// Emulate plays a real server (WithEmulation): {"flavor": "ollama",
	// "window": 4096, "trained": 32768}.
	Emulate *Emulation `json:"emulate,omitempty"`
}

// LoadScript reads a Script from a JSON file. Relative sse_file paths are
// resolved against the file's directory.
func LoadScript(path string) (Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("read script: %w", err)
	}
	var sc Script
	if err := json.Unmarshal(b, &sc); err != nil {
		return Script{}, fmt.Errorf("decode script %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	resolve := func(r *Reply) {
		if r.SSEFile != "" && !filepath.IsAbs(r.SSEFile) {
			r.SSEFile = filepath.Join(dir, r.SSEFile)
		}
	}
	for i := range sc.Replies {
		resolve(&sc.Replies[i])
	}
	if sc.Fallback != nil {
		resolve(sc.Fallback)
	}
	return sc, nil
}

// WithScript applies a Script: queues its replies and sets its options.
func WithScript(sc Script) Option {
	return func(s *Server) {
		s.queue = append(s.queue, sc.Replies...)
		if sc.Fallback != nil {
			fb := *sc.Fallback
			s.responder = func(Request) Reply { return fb }
		}
		if len(sc.Models) > 0 {
			s.models = sc.Models
		}
		if sc.MessageRules {
			s.rules = true
		}
		if sc.ContextWindow > 0 {
			s.window = sc.ContextWindow
		}
		if sc.Emulate != nil {
			WithEmulation(*sc.Emulate)(s)
		}
	}
}
