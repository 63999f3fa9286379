package agent

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/window"
)

// WindowProbe asks the server for the model's window (package window's
// Prober, bound to the endpoint and model). It must return within its own
// time bound.
type WindowProbe func(ctx context.Context) window.Result

// serverWindow is what the agent knows of the server's own word on its
// window: the first probe (in flight or done), a second one for a model
// that was not loaded yet, and which notices were given.
type serverWindow struct {
	probe WindowProbe
	done  chan struct{} // closed when the first probe has ended

	mu      sync.Mutex
	result  window.Result
	applied bool // the first result was announced
	again   bool // a second probe was started (at most one a run)
	hinted  bool // said how to raise Ollama's window
}

// SetWindowProbe starts asking the server for the model's window, in the
// background: the first request waits for the answer (the probe bounds
// itself in time, DefaultTimeout), the compactor and the status bar plan
// with it. A model the server had not loaded yet is asked once more after
// its first answer. Call before any turn. The goroutine ends with the
// probe.
func (a *Agent) SetWindowProbe(probe WindowProbe) {
	w := &serverWindow{probe: probe, done: make(chan struct{})}
	a.win = w
	configured := a.policy.ConfiguredWindow()
	go func() {
		defer close(w.done)
		r := w.run(a)
		// Told at once: /context and the status bar show it before any turn.
		a.policy.Tell(r.Tokens, r.Source)
		a.opts.Logger.Info("server window", "model", a.opts.Model, "window", r.Tokens, "source", r.Source,
			"trained", r.Trained, "pending", r.Pending, "configured", configured)
		w.mu.Lock()
		w.result = r
		w.mu.Unlock()
	}()
}

// run asks once, recovering a panic (the probe reads what servers send).
func (w *serverWindow) run(a *Agent) (r window.Result) {
	defer func() {
		if p := recover(); p != nil {
			a.opts.Logger.Error("window probe panicked", "panic", p, "stack", string(debug.Stack()))
			r = window.Result{}
		}
	}()
	return w.probe(context.Background())
}

// AwaitWindow waits for the server's answer to the window probe (bounded
// by the probe's own timeout, or ctx); the policy, and so the agent, the
// compactor and the status bar, use the server's window from the moment
// it came. It returns the answer and the notices to give the user the
// first time (nil after). Without a probe it returns at once.
func (a *Agent) AwaitWindow(ctx context.Context) (window.Result, []string) {
	w := a.win
	if w == nil {
		return window.Result{}, nil
	}
	select {
	case <-w.done:
	case <-ctx.Done():
		return window.Result{}, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.result
	if w.applied {
		return r, nil
	}
	w.applied = true
	configured := a.policy.ConfiguredWindow()
	var notes []string
	uses := r.Tokens > 0 && a.policy.Window() == r.Tokens // not a smaller configured one
	if uses && r.Tokens < configured {
		notes = append(notes, fmt.Sprintf("the server's context window for %s is %s tokens (%s), not %s: history is compacted to fit it",
			termtext.OneLine(a.opts.Model, 80), termtext.Thousands(r.Tokens), r.Source, termtext.Thousands(configured)))
	}
	if h := r.RaiseHint(a.opts.Model); h != "" && uses && !r.Pending && !w.hinted {
		w.hinted = true
		notes = append(notes, h)
	}
	return r, notes
}

// reprobe asks the server once more after an answer when the model was
// not loaded at the first probe (Ollama loads it with the first request),
// in the background; the policy takes the loaded window when it comes.
// It returns the raise hint to give when the loaded window is far below
// what the model supports (once a run).
func (a *Agent) reprobe() {
	w := a.win
	if w == nil {
		return
	}
	w.mu.Lock()
	if !w.applied || !w.result.Pending || w.again {
		w.mu.Unlock()
		return
	}
	w.again = true
	w.mu.Unlock()
	go func() {
		r := w.run(a)
		if r.Tokens <= 0 || r.Pending {
			return
		}
		a.policy.Tell(r.Tokens, r.Source)
		a.opts.Logger.Info("server window after the model loaded", "model", a.opts.Model, "window", r.Tokens, "source", r.Source)
		w.mu.Lock()
		w.result = r
		w.mu.Unlock()
	}()
}

// pendingHint is the raise hint of a window learned by the second probe,
// once; "" when there is none to give.
func (a *Agent) pendingHint() string {
	w := a.win
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.hinted || w.result.Pending || w.result.Tokens != a.policy.Window() {
		return ""
	}
	h := w.result.RaiseHint(a.opts.Model)
	if h != "" {
		w.hinted = true
	}
	return h
}

// Cut tolerance: how far the provider's prompt_tokens may fall short of
// gencode's own count of the same request before the shortfall is taken
// for a prompt the server cut (Ollama drops whole messages from the front
// of a prompt larger than its window, without an error). Servers count
// with the model's own tokenizer and chat template, gencode with
// o200k_base or cl100k_base and OpenAI's framing: the two differ, mostly
// upwards (smaller vocabularies, template tokens). The bound is derived in
// cut_tolerance_test.go (TestCutToleranceNoFalseAlarm) and
// docs/notes/window.md.
const (
	cutMinTokens = 256 // a shortfall below this is never a cut
	cutRatio     = 25  // nor one below this percentage of what was sent
)

// isCut says whether a request gencode counted as sent tokens came back
// with prompt_tokens counted by the server: true when the shortfall is
// past the tolerance.
func isCut(sent, counted int) bool {
	if sent <= 0 || counted <= 0 {
		return false
	}
	return sent-counted > max(cutMinTokens, sent*cutRatio/100)
}

// minLearnedWindow is the least window a cut prompt teaches: a cut that
// kept less (one huge message dropped) says little of the window.
const minLearnedWindow = 1024

// cutPrompt is a request the server answered after cutting it.
type cutPrompt struct{ sent, kept int }

// notice tells the user of the cut, once for the turn: retrying says the
// answer was set aside and the request is sent again compacted.
func (c cutPrompt) notice(window int, retrying bool) string {
	s := fmt.Sprintf("the server cut the prompt without an error: gencode sent about %s tokens and it read %s; its window is about %s tokens",
		termtext.Thousands(c.sent), termtext.Thousands(c.kept), termtext.Thousands(window))
	if retrying {
		return s + ". Its answer is set aside; compacting the history and asking again"
	}
	return s + ". The answer below came from the cut prompt: it may have missed earlier messages"
}
