package view

import "testing"

// TestPolicyWindowSources: one window, whoever told it. The server's own
// report replaces the table's figure but not a smaller configured one;
// a refusal or a cut only shrinks it; each says where it came from.
func TestPolicyWindowSources(t *testing.T) {
	t.Parallel()
	type step struct {
		tell, learn, cut int
		source           string
	}
	tests := []struct {
		name       string
		window     int
		configured bool
		steps      []step
		want       int
		wantSource string
	}{
		{"nothing told: the table", 32768, false, nil, 32768, ""},
		{"the server's window replaces the table's", 32768, false, []step{{tell: 4096, source: "Ollama, loaded"}}, 4096, "Ollama, loaded"},
		{"larger than the table's too", 8192, false, []step{{tell: 32768, source: "vLLM"}}, 32768, "vLLM"},
		{"a smaller configured window wins", 3000, true, []step{{tell: 4096, source: "Ollama, loaded"}}, 3000, ""},
		{"a larger configured one does not", 16000, true, []step{{tell: 4096, source: "llama.cpp"}}, 4096, "llama.cpp"},
		{"a later report replaces the default", 32768, false, []step{{tell: 4096, source: "Ollama, default"}, {tell: 8192, source: "Ollama, loaded"}}, 8192, "Ollama, loaded"},
		{"a refusal shrinks below the report", 32768, false, []step{{tell: 4096, source: "vLLM"}, {learn: 3000}}, 3000, "server"},
		{"a cut shrinks, and a report does not undo it", 32768, false, []step{{cut: 1964}, {tell: 4096, source: "Ollama, default"}}, 1964, "server, cut"},
		{"a refusal naming a larger window is ignored", 8192, false, []step{{learn: 9000}}, 8192, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := NewPolicy(Config{Window: tt.window, WindowConfigured: tt.configured})
			for _, s := range tt.steps {
				switch {
				case s.tell > 0:
					p.Tell(s.tell, s.source)
				case s.learn > 0:
					p.Learn(s.learn)
				case s.cut > 0:
					p.LearnFrom(s.cut, "server, cut")
				}
			}
			if got, src := p.Window(), p.WindowSource(); got != tt.want || src != tt.wantSource {
				t.Errorf("Window() = %d (%q), want %d (%q)", got, src, tt.want, tt.wantSource)
			}
			if p.Learned() != (tt.wantSource != "") {
				t.Errorf("Learned() = %v, want %v", p.Learned(), tt.wantSource != "")
			}
		})
	}
}
