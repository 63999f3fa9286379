package commands

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/config"
)

// TestConfigShowsModelTables: /config lists each [models."NAME"] key with
// the line that set it, says which model each table is for, and says when
// a reasoning_effort is not sent.
func TestConfigShowsModelTables(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(file, []byte(`model = "qwen3:8b"
[summarize]
model = "o4-mini"
[models."qwen3:8b"]
context_window = 32768
reasoning_effort = "high"
extra = { top_k = 20, options = { num_ctx = 32768 } }
[models."o4-mini"]
reasoning_effort = "low"
max_tokens = 4000
[models."Llama3.2"]
max_tokens = 512
`), 0o600))
	cfg, err := config.Load(file, func(k string) string { return map[string]string{"HOME": t.TempDir()}[k] }, config.Flags{})
	require.NoError(t, err)
	f := newFixture(t)
	takes := func(m string) bool { return m == "o4-mini" }

	tests := []struct {
		name  string
		model string // the model in use
		want  []string
		not   []string
	}{
		{"keys and notes", "qwen3:8b", []string{
			// The footer names the file; a row says its line.
			"models.qwen3:8b.context_window 32768 file:5",
			"models.qwen3:8b.reasoning_effort high file:6",
			"models.qwen3:8b.extra.options {\"num_ctx\":32768} file:7",
			"models.qwen3:8b.extra.top_k 20 file:7",
			"models.o4-mini.max_tokens 4000 file:10",
			"file: " + file,
			`qwen3:8b (in use): context window 32,768 tokens (the server's, when smaller, wins); reasoning_effort "high" is not sent: qwen3:8b is not known to take it (extra.reasoning_effort sends it as written); extra fields sent as written: options, top_k`,
			`o4-mini (summarizer): answers up to 4,000 tokens; reasoning_effort "low" is sent`,
			`Llama3.2 (applies after /model Llama3.2): answers up to 512 tokens`,
		}, []string{"differs in case"}},
		{"after /model, a name that differs in case", "llama3.2", []string{
			`qwen3:8b (applies after /model qwen3:8b)`,
			`no table for llama3.2, the model in use: [models."Llama3.2"] differs in case and does not apply`,
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := New(Deps{Store: f.store, Config: cfg, Window: func(string) int { return 8192 }, TakesReasoningEffort: takes})
			r, err := reg.Run(context.Background(), State{SessionID: f.sess.ID, Model: tt.model}, "/config")
			require.NoError(t, err)
			// Columns padded to the widest cell: compared with one space.
			out := regexp.MustCompile(`  +`).ReplaceAllString(r.Report.Plain(), " ")
			for _, w := range tt.want {
				require.Contains(t, out, w, "/config:\n%s", out)
			}
			for _, n := range tt.not {
				require.NotContains(t, out, n)
			}
		})
	}

	// Without tables there is no such section.
	reg := New(Deps{Store: f.store, Config: config.Default(), TakesReasoningEffort: takes})
	r, err := reg.Run(context.Background(), State{SessionID: f.sess.ID, Model: "m"}, "/config")
	require.NoError(t, err)
	require.False(t, strings.Contains(r.Report.Plain(), "Per-model settings"), r.Report.Plain())
}
