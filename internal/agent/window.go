package agent

import (
	"context"
	"fmt"
	"sync"

	"github.com/gencode/gencode/internal/crash"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/view"
	"github.com/gencode/gencode/internal/window"
)

// WindowProbe asks the server for the model's window (package window's
// Prober, bound to the endpoint and model). It must return within its own
// time bound.
type WindowProbe func(ctx context.Context) window.Result

// WindowMemory keeps windows a server showed only by cutting a prompt,
// across runs (window.Memory bound to the endpoint and model): told is
// what the server's endpoints said, which the memory must still match.
type WindowMemory interface {
	Recall(told int) (window.Remembered, bool)
	Keep(r window.Remembered) error
}

// serverWindow is what the agent knows of the server's own word on its
// window: the first probe (in flight or done), a second one for a model
// that was not loaded yet, and which notices were given.
type serverWindow struct {
	probe WindowProbe
	mem   WindowMemory  // nil: nothing kept across runs
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
// its first answer. A window an earlier run learned from a cut prompt
// (mem, may be nil) is used while the server still reports what it did
// then. Call before any turn. The goroutine ends with the probe.
func (a *Agent) SetWindowProbe(probe WindowProbe, mem WindowMemory) {
	w := &serverWindow{probe: probe, mem: mem, done: make(chan struct{})}
	a.win = w
	configured := a.policy.ConfiguredWindow()
	go func() {
		defer close(w.done)
		defer crash.Recover(a.opts.Logger, "window probe", "", nil)
		r := w.run(a)
		// Told at once: /context and the status bar show it before any turn.
		a.policy.SetServer(r.Server)
		a.policy.Tell(r.Tokens, r.Source)
		if mem != nil {
			if rem, ok := mem.Recall(r.Tokens); ok {
				a.policy.LearnFrom(rem.Tokens, rem.Source)
			}
		}
		a.opts.Logger.Info("server window", "model", a.opts.Model, "window", r.Tokens, "source", r.Source,
			"trained", r.Trained, "pending", r.Pending, "configured", configured)
		w.mu.Lock()
		w.result = r
		w.mu.Unlock()
	}()
}

// AwaitServerWindow waits until the server has answered the window
// probe (bounded by the probe's own timeout, or ctx), so that a figure
// measured next is against the server's window; at once without a probe.
// Unlike AwaitWindow it gives no notices: the first turn says them.
func (a *Agent) AwaitServerWindow(ctx context.Context) {
	if w := a.win; w != nil {
		select {
		case <-w.done:
		case <-ctx.Done():
		}
	}
}

// run asks once, recovering a panic (the probe reads what servers send).
func (w *serverWindow) run(a *Agent) (r window.Result) {
	defer crash.Recover(a.opts.Logger, "window probe", "", nil) // r stays zero: no answer
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
	if h := r.RaiseHint(a.opts.Model, a.opts.RaiseCommand); h != "" && uses && !r.Pending && !w.hinted {
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
		defer crash.Recover(a.opts.Logger, "window probe", "", nil)
		r := w.run(a)
		if r.Tokens <= 0 || r.Pending {
			return
		}
		a.policy.SetServer(r.Server)
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
	h := w.result.RaiseHint(a.opts.Model, a.opts.RaiseCommand)
	if h != "" {
		w.hinted = true
	}
	return h
}

// cutTolerance is the tolerance for the agent's server: the one the
// summarizer's requests are judged by too (view.CutToleranceFor).
func (a *Agent) cutTolerance() view.CutTolerance { return a.policy.CutTolerance() }

// keepWindow remembers, for the next runs, a window the server showed by
// refusing a larger request (source "server") or by cutting one ("server,
// cut"): a later process starts with it instead of being refused or cut
// again, while the server's endpoints tell what they told then.
func (a *Agent) keepWindow(tokens int, source string) {
	w := a.win
	if w == nil || w.mem == nil {
		return
	}
	w.mu.Lock()
	told := w.result.Tokens
	w.mu.Unlock()
	if err := w.mem.Keep(window.Remembered{Tokens: tokens, Source: source, Told: told}); err != nil {
		a.opts.Logger.Warn("remember the window the server showed", "source", source, "err", err)
	}
}

// minLearnedWindow is the least window a cut prompt teaches.
const minLearnedWindow = view.MinCutWindow

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
