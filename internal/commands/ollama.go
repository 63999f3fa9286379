package commands

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/window"
)

// OllamaAPI is an Ollama server's native API as /ollama-window uses it
// (window.Ollama).
type OllamaAPI interface {
	// Version is the server's version; window.ErrNotOllama when the
	// endpoint is not Ollama.
	Version(ctx context.Context) (string, error)
	// Model is what the server says of a model (Found false: it has none
	// of that name).
	Model(ctx context.Context, name string) (window.OllamaModel, error)
	// Create makes name from from with num_ctx numCtx.
	Create(ctx context.Context, name, from string, numCtx int, progress func(string)) error
}

// OllamaCommand is the command that raises an Ollama model's window: the
// raise hint names it (agent.Options.RaiseCommand).
const OllamaCommand = "/ollama-window"

// The bounds of /ollama-window's requests: its questions, and the
// creation (from a model the server has, Ollama writes a manifest and a
// small layer: seconds).
const (
	ollamaAskTimeout    = 5 * time.Second
	ollamaCreateTimeout = 2 * time.Minute
)

// ErrNotOllamaWindow is what /ollama-window refuses with: the endpoint is
// not Ollama, or the window asked for is not one it can make.
var ErrNotOllamaWindow = errors.New("/ollama-window")

// runOllamaWindow says the Ollama model's windows and what a larger one
// would take; with TOKENS (the user's consent, typed) it creates the
// derived model and switches to it as /model NAME does.
func runOllamaWindow(ctx context.Context, r *Registry, st State, in Invocation) (Result, error) {
	model := st.Model
	if model == "" {
		model = r.deps.Config.Model
	}
	want := 0
	switch len(in.Args) {
	case 0:
	case 1:
		n, ok := parseTokens(in.Args[0])
		if !ok {
			return Result{}, fmt.Errorf("%w: %q is not a number of tokens (usage: /ollama-window [TOKENS], e.g. 32768 or 32k)", ErrNotOllamaWindow, in.Args[0])
		}
		want = n
	default:
		return Result{}, fmt.Errorf("%w: usage: /ollama-window [TOKENS], e.g. 32768 or 32k", ErrNotOllamaWindow)
	}
	api := r.deps.Ollama
	if api == nil {
		return Result{}, fmt.Errorf("%w works with an Ollama server only: the endpoint is OpenAI's own (no base_url)", ErrNotOllamaWindow)
	}
	ask, cancel := context.WithTimeout(ctx, ollamaAskTimeout)
	defer cancel()
	if _, err := api.Version(ask); err != nil {
		return Result{}, fmt.Errorf("%w works with an Ollama server only, and the endpoint is not one (it does not answer Ollama's /api/version): "+
			"its window is the server's to set", ErrNotOllamaWindow)
	}
	info, err := api.Model(ask, model)
	if err != nil {
		return Result{}, fmt.Errorf("ask Ollama about %s: %s", termtext.OneLine(model, 80), ollamaMessage(err))
	}
	if !info.Found {
		return Result{}, fmt.Errorf("%w: Ollama has no model %s (/model lists the endpoint's)", ErrNotOllamaWindow, termtext.OneLine(model, 80))
	}
	loaded, source := info.Window()
	if want == 0 {
		return Result{Text: describeOllamaWindow(ask, api, model, info, loaded, source)}, nil
	}
	switch {
	case want <= loaded:
		return Result{}, fmt.Errorf("%w: %s already runs with a %s-token window (%s): TOKENS must be above it",
			ErrNotOllamaWindow, model, termtext.Thousands(loaded), source)
	case info.Trained > 0 && want > info.Trained:
		return Result{}, fmt.Errorf("%w: %s supports at most %s tokens: a larger window does not help it (TOKENS must be at most %d)",
			ErrNotOllamaWindow, model, termtext.Thousands(info.Trained), info.Trained)
	}
	name := window.DerivedName(model, want)
	if name == model {
		return Result{}, fmt.Errorf("%w: %s is the model in use; gencode does not change a model, it makes a new one", ErrNotOllamaWindow, name)
	}
	back := fmt.Sprintf("`/model %s` goes back, and `ollama rm %s` removes it. A larger window takes more memory on the server: "+
		"if Ollama cannot fit it on the GPU it runs partly on the CPU (slower), or cannot load the model.", model, name)
	existing, err := api.Model(ask, name)
	switch {
	case err != nil:
		return Result{}, fmt.Errorf("ask Ollama about %s: %s", name, ollamaMessage(err))
	case existing.Found && existing.NumCtx == want:
		return Result{Action: ActionSetModel, Model: name,
			Text: fmt.Sprintf("%s exists already, with num_ctx %d: switching to it (nothing created). %s", name, want, back)}, nil
	case existing.Found:
		set := "sets no num_ctx"
		if existing.NumCtx > 0 {
			set = fmt.Sprintf("sets num_ctx %d", existing.NumCtx)
		}
		return Result{}, fmt.Errorf("%w: a model named %s exists already and %s: gencode does not replace it "+
			"(ollama rm %s removes it; or ask for another window)", ErrNotOllamaWindow, name, set, name)
	}
	mk, cancelMk := context.WithTimeout(ctx, ollamaCreateTimeout)
	defer cancelMk()
	if err := api.Create(mk, name, model, want, nil); err != nil {
		return Result{}, fmt.Errorf("Ollama did not create %s: %s", name, ollamaMessage(err))
	}
	return Result{Action: ActionSetModel, Model: name,
		Text: fmt.Sprintf("Created %s on the Ollama server: %s with num_ctx %d (%s itself is unchanged; your model list has one more). "+
			"Switching this session to it. %s", name, model, want, model, back)}, nil
}

// describeOllamaWindow is /ollama-window without TOKENS: the windows, and
// what /ollama-window N would do. Nothing is changed.
func describeOllamaWindow(ctx context.Context, api OllamaAPI, model string, info window.OllamaModel, loaded int, source string) string {
	var b strings.Builder
	state := "loaded"
	if info.Loaded == 0 {
		state = "not loaded yet: the window it will get, " + strings.TrimPrefix(source, "Ollama, ")
	}
	fmt.Fprintf(&b, "%s on Ollama: window %s tokens (%s)", model, termtext.Thousands(loaded), state)
	if info.Trained > 0 {
		fmt.Fprintf(&b, "; the model supports %s.", termtext.Thousands(info.Trained))
	} else {
		b.WriteString("; Ollama does not say how much the model supports.")
	}
	want := window.RaiseTo(loaded, info.Trained)
	if want == 0 {
		b.WriteString(" Nothing to raise: it already has the window it supports.")
		return b.String()
	}
	name := window.DerivedName(model, want)
	fmt.Fprintf(&b, " `/ollama-window %d` would create %s on the server (FROM %s, PARAMETER num_ctx %d: one more model in your list; %s itself is unchanged) and switch this session to it, as `/model %s` does.",
		want, name, model, want, model, name)
	if ex, err := api.Model(ctx, name); err == nil && ex.Found {
		if ex.NumCtx == want {
			fmt.Fprintf(&b, " %s exists already with that window: the command would only switch to it.", name)
		} else {
			fmt.Fprintf(&b, " A model named %s exists already with another num_ctx: the command would refuse to replace it.", name)
		}
	}
	limit := "any window above the loaded one"
	if info.Trained > 0 {
		limit += " and up to " + termtext.Thousands(info.Trained)
	}
	fmt.Fprintf(&b, " TOKENS may be %s. A larger window takes more memory on the server. Nothing is created until you type the command with TOKENS.", limit)
	return b.String()
}

// parseTokens reads TOKENS: 32768, 32,768, or 32k (32,768).
func parseTokens(s string) (int, bool) {
	s = strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	mult := 1
	if t, ok := strings.CutSuffix(strings.ToLower(s), "k"); ok {
		s, mult = t, 1024
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 1<<24 {
		return 0, false
	}
	return n * mult, true
}

// ollamaMessage is an error from Ollama as the user reads it: the
// server's message on one line, bounded (the front end sanitizes and
// redacts it as any error).
func ollamaMessage(err error) string {
	var oe *window.OllamaError
	if errors.As(err, &oe) {
		return termtext.OneLine(oe.Message, 300)
	}
	return termtext.OneLine(err.Error(), 300)
}
