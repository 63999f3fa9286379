package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const modelsFile = `model = "gpt-5-mini"
context_window = 65536

[models."qwen3:8b"]
context_window = 32768
max_tokens = 4096
reasoning_effort = "high"

[models."qwen3:8b".extra]
top_k = 20
options = {num_ctx = 32768, stop = ["<|im_end|>"]}

[models."gpt-5-mini"]
reasoning_effort = "low"
max_tokens = 8000

[models."qwen2.5-coder:7b"]
extra.think = false
`

func TestModelTables(t *testing.T) {
	t.Parallel()
	file := writeFile(t, modelsFile)
	cfg, err := Load(file, envFrom(map[string]string{"HOME": t.TempDir()}), Flags{})
	require.NoError(t, err)
	at := func(line string) string { return file + ":" + line }

	tests := []struct {
		name  string
		model string
		want  ModelSettings
	}{
		{"own window over the top-level one", "qwen3:8b", ModelSettings{
			Model: "qwen3:8b", ContextWindow: 32768, MaxTokens: 4096, ReasoningEffort: "high",
			Extra: map[string]any{"top_k": int64(20), "options": map[string]any{"num_ctx": int64(32768), "stop": []any{"<|im_end|>"}}},
			Sources: map[string]string{"context_window": at("5"), "max_tokens": at("6"), "reasoning_effort": at("7"),
				"extra.top_k": at("10"), "extra.options": at("11")},
		}},
		{"top-level window inherited", "gpt-5-mini", ModelSettings{
			Model: "gpt-5-mini", ContextWindow: 65536, MaxTokens: 8000, ReasoningEffort: "low",
			Sources: map[string]string{"context_window": at("2"), "max_tokens": at("15"), "reasoning_effort": at("14")},
		}},
		{"dotted extra key, a name with a dot", "qwen2.5-coder:7b", ModelSettings{
			Model: "qwen2.5-coder:7b", ContextWindow: 65536, Extra: map[string]any{"think": false},
			Sources: map[string]string{"context_window": at("2"), "extra.think": at("18")},
		}},
		{"no table", "llama3.2", ModelSettings{
			Model: "llama3.2", ContextWindow: 65536, Sources: map[string]string{"context_window": at("2")},
		}},
		{"no table, a name that only differs in case", "QWEN3:8B", ModelSettings{
			Model: "QWEN3:8B", ContextWindow: 65536, Sources: map[string]string{"context_window": at("2")},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := cfg.ModelSettings(tt.model)
			require.Equal(t, tt.want, got, "ModelSettings(%q)", tt.model)
		})
	}
	require.Equal(t, []string{"gpt-5-mini", "qwen2.5-coder:7b", "qwen3:8b"}, cfg.ModelNames())
}

func TestSummarizerSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, env string
		want            ModelSettings
	}{
		{"the main model's", "model = \"m\"\ncontext_window = 16384\n[models.m]\nmax_tokens = 1000\n", "",
			ModelSettings{Model: "m", ContextWindow: 16384, MaxTokens: 1000}},
		{"its own table, not the main model's window", "model = \"m\"\ncontext_window = 16384\n[summarize]\nmodel = \"small\"\n[models.small]\nmax_tokens = 512\nextra.top_p = 0.5\n", "",
			ModelSettings{Model: "small", MaxTokens: 512, Extra: map[string]any{"top_p": 0.5}}},
		{"its own window", "model = \"m\"\n[models.small]\ncontext_window = 4096\n", "small",
			ModelSettings{Model: "small", ContextWindow: 4096}},
		{"another model without a table", "model = \"m\"\ncontext_window = 16384\n[models.m]\nmax_tokens = 1000\n", "small",
			ModelSettings{Model: "small"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(writeFile(t, tt.text), envFrom(map[string]string{"HOME": t.TempDir(), "GENCODE_SUMMARY_MODEL": tt.env}), Flags{})
			require.NoError(t, err)
			got := cfg.SummarizerSettings()
			got.Sources = nil
			require.Equal(t, tt.want, got)
		})
	}
}

func TestModelTableErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		text    string
		wantErr string
	}{
		{"unknown key", "[models.\"qwen3:8b\"]\ncontext_window = 8192\ncontext_windw = 4096\n",
			":3: models.qwen3:8b.context_windw: unknown key"},
		{"unknown key, inline", "models.m = {max_token = 5}\n", ":1: models.m.max_token: unknown key"},
		{"window as text", "[models.m]\ncontext_window = \"32k\"\n", ":2: models.m.context_window:"},
		{"effort as a number", "[models.m]\nreasoning_effort = 3\n", ":2: models.m.reasoning_effort:"},
		{"extra not a table", "[models.m]\nextra = 5\n", ":2: models.m.extra:"},
		{"negative window", "[models.m]\ncontext_window = -1\n", ":2: models.m.context_window: must be a positive number of tokens"},
		{"tiny window", "model = \"x\"\n[models.m]\ncontext_window = 100\n", ":3: models.m.context_window: must be at least 1024 tokens"},
		{"negative max_tokens", "[models.m]\nmax_tokens = -5\n", ":2: models.m.max_tokens: must be a positive number of tokens"},
		{"answer as large as the window", "[models.m]\ncontext_window = 4096\nmax_tokens = 4096\n",
			":3: models.m.max_tokens: must be below context_window (4096)"},
		{"answer as large as the inherited window", "context_window = 2048\n[models.m]\nmax_tokens = 3000\n",
			":3: models.m.max_tokens: must be below the top-level context_window (2048)"},
		{"unknown effort", "[models.m]\nreasoning_effort = \"extreme\"\n",
			`:2: models.m.reasoning_effort: must be one of none, minimal, low, medium, high, xhigh, max, not "extreme"`},
		{"effort in capitals", "[models.m]\nreasoning_effort = \"High\"\n", `:2: models.m.reasoning_effort: must be one of`},
		{"reserved extra field", "[models.m]\nextra = {messages = []}\n",
			":2: models.m.extra.messages: is a request field gencode sets itself"},
		{"reserved extra field in a sub-table", "[models.m.extra]\ntop_k = 1\nstream = false\n",
			":3: models.m.extra.stream: is a request field gencode sets itself"},
		{"not a JSON number", "[models.m.extra]\ntemperature = nan\n", ":2: models.m.extra.temperature: cannot be sent as JSON"},
		{"not a JSON number, nested", "[models.m]\nextra.options = {x = inf}\n", ":2: models.m.extra.options: cannot be sent as JSON"},
		{"no name", "[models.\"\"]\nmax_tokens = 1\n", ":1: models.: a model table needs the model's name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := writeFile(t, tt.text)
			_, err := Load(file, envFrom(map[string]string{"HOME": t.TempDir()}), Flags{})
			require.Error(t, err)
			require.Contains(t, err.Error(), file+tt.wantErr)
		})
	}
}

func TestModelTablesInSettings(t *testing.T) {
	t.Parallel()
	file := writeFile(t, modelsFile)
	cfg, err := Load(file, envFrom(map[string]string{"HOME": t.TempDir()}), Flags{})
	require.NoError(t, err)
	got := map[string]Setting{}
	for _, s := range cfg.Settings() {
		got[s.Key] = s
	}
	tests := []struct{ key, value, line string }{
		{"models.qwen3:8b.context_window", "32768", "5"},
		{"models.qwen3:8b.max_tokens", "4096", "6"},
		{"models.qwen3:8b.reasoning_effort", "high", "7"},
		{"models.qwen3:8b.extra.top_k", "20", "10"},
		{"models.qwen3:8b.extra.options", `{"num_ctx":32768,"stop":["<|im_end|>"]}`, "11"},
		{"models.gpt-5-mini.reasoning_effort", "low", "14"},
		{"models.qwen2.5-coder:7b.extra.think", "false", "18"},
	}
	for _, tt := range tests {
		want := Setting{Key: tt.key, Value: tt.value, Source: file + ":" + tt.line}
		if got[tt.key] != want {
			t.Errorf("Settings()[%q] = %+v, want %+v", tt.key, got[tt.key], want)
		}
	}
	// Fields a table leaves out are not listed as if set.
	for _, k := range []string{"models.gpt-5-mini.context_window", "models.qwen2.5-coder:7b.max_tokens"} {
		if s, ok := got[k]; ok {
			t.Errorf("Settings() lists %q = %+v; the table does not set it", k, s)
		}
	}
}
