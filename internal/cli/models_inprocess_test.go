package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/models"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/permstore"
	"github.com/gencode/gencode/internal/termtext"
)

// TestModelWindowDrivesTheContextFigures: a [models."NAME"] table's
// context_window is the window the agent plans with, the one its usage
// events carry (the status bar's ctx), and /context's; another model
// falls back to the top-level context_window, and one without either to
// the known-model table.
func TestModelWindowDrivesTheContextFigures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "config.toml")
	require.NoError(t, os.WriteFile(file, []byte(`model = "gpt-4o-mini"
context_window = 100000
[models."gpt-4o-mini"]
context_window = 20000
[models."qwen3:8b"]
context_window = 12288
`), 0o600))
	home := t.TempDir()
	env := func(k string) string { return map[string]string{"HOME": home}[k] }
	cfg, err := config.Load(file, env, config.Flags{})
	require.NoError(t, err)
	noTop := cfg
	noTop.ContextWindow = 0
	known, _ := models.Window("gpt-4.1")

	tests := []struct {
		name  string
		cfg   config.Config
		model string
		want  int
	}{
		{"its own table", cfg, "gpt-4o-mini", 20000},
		{"another table, after /model", cfg, "qwen3:8b", 12288},
		{"no table: the top-level window", cfg, "llama3.2", 100000},
		{"no table, no top-level window: the known table", noTop, "gpt-4.1", known},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithMessageRules())
			store, sess := newStoreSession(t)
			a := &app{cfg: tt.cfg, store: store, cwd: sess.Cwd, tokens: tokenCache, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
				env: Env{Getenv: env}, perms: permstore.Open(t.TempDir(), sess.Cwd)}
			ag, _, err := a.newAgent(tt.model, llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "k"}), nil, nil, false)
			require.NoError(t, err)
			require.Equal(t, tt.want, ag.Window(), "the agent's window for %s", tt.model)

			srv.Enqueue(openaitest.Text("ok"))
			var usage *agent.Usage
			for ev := range ag.Start(context.Background(), sess.ID, "hello") {
				require.NoError(t, ev.Err)
				if ev.Kind == agent.EventUsage {
					usage = ev.Usage
				}
			}
			require.NotNil(t, usage)
			require.Equal(t, tt.want, usage.Window, "the status bar's window (ctx)")

			reg := commands.New(commands.Deps{Store: store, Config: a.cfg, Window: a.window})
			res, err := reg.Run(context.Background(), commands.State{SessionID: sess.ID, Model: tt.model, View: ag.Policy()}, "/context")
			require.NoError(t, err)
			m := contextTotal.FindStringSubmatch(res.Report.Plain())
			require.NotNil(t, m, res.Report.Plain())
			require.Equal(t, termtext.Thousands(tt.want), m[2], "/context's window")
		})
	}
}
