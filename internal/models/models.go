// Package models knows the context windows of common models, so that
// compaction triggers on tokens against the right limit. Config's
// context_window overrides it; unknown models get DefaultWindow.
package models

import "strings"

// DefaultWindow is assumed for models the table does not know: small enough
// to be safe with local models.
const DefaultWindow = 8192

// known maps a model-name prefix to its context window in tokens; the
// longest matching prefix wins.
var known = []struct {
	prefix string
	window int
}{
	{"gpt-4o", 128_000},
	{"gpt-4.1", 1_047_576},
	{"gpt-4.5", 128_000},
	{"gpt-4-turbo", 128_000},
	{"gpt-4-32k", 32_768},
	{"gpt-4", 8_192},
	{"gpt-3.5-turbo", 16_385},
	{"gpt-5", 400_000},
	{"o1", 200_000},
	{"o3", 200_000},
	{"o4", 200_000},
	{"claude", 200_000},
	{"deepseek", 128_000},
	{"grok-3", 131_072},
	{"grok-4", 256_000},
	{"gemini", 1_048_576},
	{"llama-3.1", 128_000},
	{"llama-3.2", 128_000},
	{"llama-3.3", 128_000},
	{"llama3.1", 128_000},
	{"llama3.2", 128_000},
	{"llama3.3", 128_000},
	{"llama3", 8_192},
	{"qwen2.5-coder", 32_768},
	{"qwen3", 40_960},
	{"mistral", 32_768},
	{"codestral", 256_000},
}

// Window returns the context window for model and whether the table knew it.
// A provider prefix ("openai/gpt-4o") and an Ollama tag (":7b") are ignored.
func Window(model string) (int, bool) {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	best, window := 0, 0
	for _, k := range known {
		if strings.HasPrefix(m, k.prefix) && len(k.prefix) > best {
			best, window = len(k.prefix), k.window
		}
	}
	if best == 0 {
		return DefaultWindow, false
	}
	return window, true
}

// TakesReasoningEffort reports whether model is known to accept the
// reasoning_effort field of a chat completion: OpenAI's reasoning models
// (o1, o3, o4-mini, gpt-5 and later, but not o1-mini, o1-preview or the
// gpt-5 "chat" models), gpt-oss on the servers that run it, xAI's
// grok-3-mini and Google's Gemini 2.5 and 3 on their OpenAI-compatible
// endpoint. Other models refuse the field or ignore it; a user who knows
// better sends it with a model's extra fields. A provider prefix
// ("openai/o3") and an Ollama tag (":20b") are ignored.
//
// gpt-6 is left out: through chat completions it takes a reasoning effort
// only in requests without tools (go-openai refuses the others), and every
// request of the agent carries its tools.
func TakesReasoningEffort(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	if strings.HasPrefix(m, "gpt-5") && strings.Contains(m, "chat") {
		return false // gpt-5-chat-latest and the like: no reasoning
	}
	// The longest matching prefix decides.
	table := []struct {
		prefix string
		takes  bool
	}{
		{"o1", true}, {"o1-mini", false}, {"o1-preview", false},
		{"o3", true}, {"o4", true},
		{"gpt-5", true},
		{"gpt-oss", true},
		{"grok-3-mini", true},
		{"gemini-2.5", true}, {"gemini-3", true},
	}
	best, takes := 0, false
	for _, e := range table {
		if strings.HasPrefix(m, e.prefix) && len(e.prefix) > best {
			best, takes = len(e.prefix), e.takes
		}
	}
	return takes
}
