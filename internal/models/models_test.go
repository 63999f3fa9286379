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
