package models

import "testing"

func TestWindow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		model     string
		want      int
		wantKnown bool
	}{
		{"gpt-4o-mini", 128_000, true},
		{"gpt-4", 8_192, true},
		{"gpt-4-turbo-2024-04-09", 128_000, true},
		{"openai/gpt-4.1-nano", 1_047_576, true},
		{"llama3.1:8b", 128_000, true},
		{"llama3:8b", 8_192, true},
		{"my-local-model", DefaultWindow, false},
	}
	for _, tt := range tests {
		got, known := Window(tt.model)
		if got != tt.want || known != tt.wantKnown {
			t.Errorf("Window(%q) = %d, %v, want %d, %v", tt.model, got, known, tt.want, tt.wantKnown)
		}
	}
}

func TestTakesReasoningEffort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		model string
		want  bool
	}{
		{"o1", true},
		{"o1-2024-12-17", true},
		{"o1-mini", false},
		{"o1-preview", false},
		{"o3-mini", true},
		{"o4-mini", true},
		{"openai/o3", true},
		{"gpt-5", true},
		{"gpt-5-mini", true},
		{"GPT-5.1-codex", true},
		{"gpt-5-chat-latest", false},
		{"gpt-5.2-chat-latest", false},
		{"gpt-oss:20b", true},
		{"openai/gpt-oss-120b", true},
		{"grok-3-mini", true},
		{"grok-4", false},
		{"gemini-2.5-flash", true},
		{"gemini-2.0-flash", false},
		{"gpt-4o-mini", false},
		{"gpt-4.1", false},
		{"gpt-6-sol", false},
		{"qwen3:8b", false},
		{"deepseek-reasoner", false},
		{"my-o1-finetune", false},
	}
	for _, tt := range tests {
		if got := TakesReasoningEffort(tt.model); got != tt.want {
			t.Errorf("TakesReasoningEffort(%q) = %v, want %v", tt.model, got, tt.want)
		}
	}
}
