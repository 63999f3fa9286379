package commands

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/window"
)

// TestOllamaWindow: /ollama-window against the emulated Ollama: without
// TOKENS it says the windows and what it would do, creating nothing; with
// TOKENS (the user's consent) it creates the derived model and switches to
// it as /model does; it refuses a server that is not Ollama, a window not
// above the loaded one or past the trained length, a name taken by a model
// with another num_ctx, and says Ollama's own error.
func TestOllamaWindow(t *testing.T) {
	t.Parallel()
	const base, made = "qwen2.5-coder:7b", "qwen2.5-coder:7b-32k"
	ollama := func(t *testing.T, e openaitest.Emulation) *openaitest.Server {
		e.Flavor, e.Window, e.Trained, e.Preloaded = openaitest.Ollama, 4096, 32768, true
		return openaitest.NewServer(t, openaitest.WithModels(base), openaitest.WithEmulation(e))
	}
	tests := []struct {
		name    string
		line    string
		server  func(t *testing.T) *openaitest.Server // nil: OpenAI's own endpoint (no base_url)
		setup   func(t *testing.T, o *window.Ollama)
		want    Result // Text is checked with contains
		texts   []string
		err     string
		created map[string]int
	}{
		{name: "no argument: the windows and the offer, nothing created", line: "/ollama-window",
			server: func(t *testing.T) *openaitest.Server { return ollama(t, openaitest.Emulation{}) },
			texts: []string{"qwen2.5-coder:7b on Ollama: window 4,096 tokens (loaded); the model supports 32,768.",
				"`/ollama-window 32768` would create qwen2.5-coder:7b-32k on the server (FROM qwen2.5-coder:7b, PARAMETER num_ctx 32768",
				"switch this session to it, as `/model qwen2.5-coder:7b-32k` does", "more memory on the server",
				"Nothing is created until you type the command with TOKENS"},
			created: map[string]int{}},
		{name: "no argument, the model not loaded yet", line: "/ollama-window",
			server: func(t *testing.T) *openaitest.Server {
				return openaitest.NewServer(t, openaitest.WithModels(base),
					openaitest.WithEmulation(openaitest.Emulation{Flavor: openaitest.Ollama, Window: 4096, Trained: 32768}))
			},
			texts:   []string{"window 4,096 tokens (not loaded yet: the window it will get, default)", "`/ollama-window 32768`"},
			created: map[string]int{}},
		{name: "not Ollama", line: "/ollama-window 32768",
			server: func(t *testing.T) *openaitest.Server { return openaitest.NewServer(t, openaitest.WithModels(base)) },
			err:    "/ollama-window works with an Ollama server only, and the endpoint is not one"},
		{name: "OpenAI's own endpoint", line: "/ollama-window", err: "/ollama-window works with an Ollama server only: the endpoint is OpenAI's own"},
		{name: "too small", line: "/ollama-window 4096",
			server:  func(t *testing.T) *openaitest.Server { return ollama(t, openaitest.Emulation{}) },
			err:     "qwen2.5-coder:7b already runs with a 4,096-token window (Ollama, loaded): TOKENS must be above it",
			created: map[string]int{}},
		{name: "too big", line: "/ollama-window 64k",
			server:  func(t *testing.T) *openaitest.Server { return ollama(t, openaitest.Emulation{}) },
			err:     "qwen2.5-coder:7b supports at most 32,768 tokens",
			created: map[string]int{}},
		{name: "not a number", line: "/ollama-window lots",
			server: func(t *testing.T) *openaitest.Server { return ollama(t, openaitest.Emulation{}) },
			err:    `"lots" is not a number of tokens`},
		{name: "the name is taken by another window", line: "/ollama-window 32768",
			server: func(t *testing.T) *openaitest.Server { return ollama(t, openaitest.Emulation{}) },
			setup: func(t *testing.T, o *window.Ollama) {
				require.NoError(t, o.Create(context.Background(), made, base, 16384, nil))
			},
			err:     "a model named qwen2.5-coder:7b-32k exists already and sets num_ctx 16384: gencode does not replace it",
			created: map[string]int{made: 16384}},
		{name: "the name exists with that window: switched to, nothing created", line: "/ollama-window 32768",
			server: func(t *testing.T) *openaitest.Server { return ollama(t, openaitest.Emulation{}) },
			setup: func(t *testing.T, o *window.Ollama) {
				require.NoError(t, o.Create(context.Background(), made, base, 32768, nil))
			},
			want:    Result{Action: ActionSetModel, Model: made},
			texts:   []string{"qwen2.5-coder:7b-32k exists already, with num_ctx 32768: switching to it (nothing created)", "`/model qwen2.5-coder:7b` goes back"},
			created: map[string]int{made: 32768}},
		{name: "Ollama's error", line: "/ollama-window 32768",
			server: func(t *testing.T) *openaitest.Server {
				return ollama(t, openaitest.Emulation{CreateError: "write manifest: no space left on device\x1b[31m"})
			},
			err:     "Ollama did not create qwen2.5-coder:7b-32k: write manifest: no space left on device",
			created: map[string]int{}},
		{name: "created and switched to", line: "/ollama-window 32k",
			server: func(t *testing.T) *openaitest.Server { return ollama(t, openaitest.Emulation{}) },
			want:   Result{Action: ActionSetModel, Model: made},
			texts: []string{"Created qwen2.5-coder:7b-32k on the Ollama server: qwen2.5-coder:7b with num_ctx 32768",
				"Switching this session to it", "`/model qwen2.5-coder:7b` goes back", "`ollama rm qwen2.5-coder:7b-32k` removes it",
				"A larger window takes more memory on the server"},
			created: map[string]int{made: 32768}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			deps := Deps{Config: config.Default()}
			var srv *openaitest.Server
			if tt.server != nil {
				srv = tt.server(t)
				o := window.NewOllama(nil, srv.URL(), "")
				deps.Ollama = o
				if tt.setup != nil {
					tt.setup(t, o)
				}
			}
			res, err := New(deps).Run(context.Background(), State{Model: base}, tt.line)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				require.NotContains(t, err.Error(), "\x1b", "the server's message on one line, inert")
			} else {
				require.NoError(t, err)
				require.Equal(t, tt.want.Action, res.Action)
				require.Equal(t, tt.want.Model, res.Model)
				for _, s := range tt.texts {
					require.Contains(t, res.Text, s)
				}
			}
			if tt.created != nil {
				require.Equal(t, tt.created, srv.Created())
			}
		})
	}
}

// TestOllamaWindowInHelp: /help lists the command, and Tab completes it.
func TestOllamaWindowInHelp(t *testing.T) {
	t.Parallel()
	res, err := New(Deps{}).Run(context.Background(), State{}, "/help")
	require.NoError(t, err)
	require.Contains(t, res.Report.Plain(), "/ollama-window [TOKENS]")
	require.Equal(t, []string{"/ollama-window"}, New(Deps{}).Complete("/oll"))
}
