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
