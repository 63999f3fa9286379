package summarize

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sync"
	"time"

	"github.com/gencode/gencode/internal/crash"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/view"
)

// Sentinel errors; check them with errors.Is.
var (
	// ErrNothingToSummarize means the view holds no range worth
	// summarizing: too few messages besides the recent ones kept verbatim.
	ErrNothingToSummarize = errors.New("nothing to summarize")
	// ErrNoReduction means a summary would not have made the context
	// smaller; it was not applied.
	ErrNoReduction = errors.New("summary would not shrink the context")
	// ErrClosed means the summarizer was closed.
	ErrClosed = errors.New("summarizer closed")
)

// Completer is the LLM as the summarizer uses it: one chat completion
// that calls no tools, not streamed. The CLI adapts its llm.Client.
type Completer interface {
	Complete(ctx context.Context, req Request) (Completion, error)
}

// Request is one summarizer call, in one of two shapes:
//   - System and Prompt: a system prompt and one user message (a pasted
//     transcript, a merge of narratives);
//   - Conversation and Prompt: the session's conversation as the agent
//     last sent it (system message first), then Prompt as the last user
//     message. The Completer sends it with the agent's tools and
//     tool_choice "none", so that the whole request up to Prompt is the
//     prefix a provider has cached, and the model answers in text.
type Request struct {
	Model        string
	System       string
	Conversation []session.Message
	// SessionID is the session the request summarizes, for the
	// Completer to count what it uses (set by the summarizer).
	SessionID string
	Prompt    string
	MaxTokens int
}

// Completion is a summarizer answer and what the provider counted (0 when
// it reported nothing).
type Completion struct {
	Text             string
	Model            string
	PromptTokens     int
	CompletionTokens int
}

// Counter counts tokens (the CLI passes its tokenizer).
type Counter interface {
	Count(text string) int
}

// LogStore is the session store as the summarizer uses it (a *session.Store,
// or one that wraps it).
type LogStore interface {
	Session(ctx context.Context, id string) (session.Session, error)
	Summaries(ctx context.Context, sessionID string, all bool) ([]session.Summary, error)
	SummarizedThrough(ctx context.Context, sessionID string) (int64, error)
	Rewound(ctx context.Context, sessionID string) (func(seq int64) bool, error)
	LoadView(ctx context.Context, sessionID string) (session.View, error)
	// ViewMessages are a range's messages as the view has them (without
	// what a rewind took out): the originals a summary is written from.
	ViewMessages(ctx context.Context, sessionID string, from, to int64) ([]session.Message, error)
	Messages(ctx context.Context, sessionID string, from, to int64) ([]session.Message, error)
	// Heads and Each read a long log without loading it (stream.go).
	Heads(ctx context.Context, sessionID string, from, to int64) ([]session.Head, error)
	Each(ctx context.Context, sessionID string, from, to int64) iter.Seq2[session.Message, error]
	ApplySummary(ctx context.Context, sum session.Summary, replaces []string, deleteOriginals bool) (session.Summary, error)
}

// Config is the summarizer's policy. Zero values get DefaultConfig's.
type Config struct {
	Enabled bool
	// Window is the main model's context window in tokens.
	Window int
	// SummaryWindow is the summarizer model's window (0: Window); a range
	// that does not fit in it is summarized in chunks.
	SummaryWindow int
	// Model is the summarizer model.
	Model string
	// CachedPrefix says the summarizer model is the agent's, on the same
	// endpoint: a summary request then continues the conversation (its
	// cached prefix) with an instruction instead of pasting a transcript
	// (see Request). Off: every request pastes the range.
	CachedPrefix bool

	SoftRatio            float64 // background compaction starts here
	HardRatio            float64 // the turn waits for a compaction here
	TriggerThreshold     int     // also start at more messages than this in the view (0: off)
	TargetCompression    float64 // a narrative aims at this share of its range's tokens
	PreserveRecent       int     // messages kept verbatim after a compaction, when they fit
	PreserveSystem       bool    // system messages of a range are kept verbatim in its summary
	MaskToolOutputsAfter int     // tool results kept whole in the view (0: no masking)
	RedactSecrets        bool
	DeleteOriginals      bool
	SummaryBudgetRatio   float64 // the summary block's share of the window; past it summaries merge
	// CachedPrice is what the provider bills for a prompt token served
	// from its prefix cache, as a share of the full input price (default
	// 0.1); the cache-aware trigger prices compactions with it (price.go).
	// Negative: no cache-aware trigger.
	CachedPrice float64

	// MaxAttempts bounds the summarizer calls that may fail in one
	// compaction before the deterministic summary is used (default 3).
	MaxAttempts int
	// AttemptTimeout bounds one summarizer call (default 2 minutes).
	AttemptTimeout time.Duration
	// WaitLimit bounds how long a turn waits for the summarizer (hard
	// threshold, overflow, /summarize); past it the deterministic summary is
	// applied and the narrative follows in the background (default 20 s).
	WaitLimit time.Duration
	// RetryBackoff is waited after a failed call, doubled each time
	// (default 500 ms).
	RetryBackoff time.Duration
	// Notify receives every compaction report as it happens: a background
	// compaction's from its goroutine, one a turn waits for (hard
	// threshold, overflow) from the turn's. It is the one route by which
	// front ends learn of compactions; nil: nobody listens. SummarizeNow
	// also returns its report.
	Notify func(Report)
	// Now is the clock (tests).
	Now func() time.Time
	// Logger receives what no caller sees: background failures, merges
	// that failed, views that did not reload (nil: discard).
	Logger *slog.Logger
}

// DefaultConfig returns the defaults of the config file's [summarize] table.
func DefaultConfig() Config {
	return Config{
		Enabled: true, Window: view.DefaultWindow, SoftRatio: 0.6, HardRatio: 0.9, TriggerThreshold: 50,
		TargetCompression: 0.3, PreserveRecent: 6, PreserveSystem: true, MaskToolOutputsAfter: 30,
		RedactSecrets: true, SummaryBudgetRatio: 0.08, CachedPrice: defaultCachedPrice,
		MaxAttempts: 3, AttemptTimeout: 2 * time.Minute, WaitLimit: 20 * time.Second, RetryBackoff: 500 * time.Millisecond,
	}
}

func (c *Config) fill() {
	d := DefaultConfig()
	if c.Window <= 0 {
		c.Window = d.Window
	}
	if c.SummaryWindow <= 0 {
		c.SummaryWindow = c.Window
	}
	if c.SoftRatio <= 0 || c.SoftRatio >= 1 {
		c.SoftRatio = d.SoftRatio
	}
	if c.HardRatio <= c.SoftRatio || c.HardRatio > 1 {
		c.HardRatio = max(d.HardRatio, c.SoftRatio)
	}
	if c.TargetCompression <= 0 || c.TargetCompression >= 1 {
		c.TargetCompression = d.TargetCompression
	}
	if c.SummaryBudgetRatio <= 0 || c.SummaryBudgetRatio >= 1 {
		c.SummaryBudgetRatio = d.SummaryBudgetRatio
	}
	if c.CachedPrice == 0 || c.CachedPrice >= 1 {
		c.CachedPrice = d.CachedPrice
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = d.MaxAttempts
	}
	if c.AttemptTimeout <= 0 {
		c.AttemptTimeout = d.AttemptTimeout
	}
	if c.WaitLimit <= 0 {
		c.WaitLimit = d.WaitLimit
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = d.RetryBackoff
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Stats counts the summarizer's own use of the LLM.
type Stats struct {
	Requests         int
	Failures         int
	PromptTokens     int
	CompletionTokens int
}

// Summarizer compacts sessions. It implements the agent's Compactor: the
// agent calls Prepare before each request, which never waits below the
// hard threshold (a background goroutine per session does the work), and
// Compact after a provider overflow. SummarizeNow serves /summarize. It is
// safe for concurrent use; Close stops its goroutines.
type Summarizer struct {
	store   LogStore
	llm     Completer
	counter Counter
	cfg     Config

	view *view.Policy

	ctx    context.Context // canceled by Close; background work runs under it
	cancel context.CancelFunc

	mu       sync.Mutex // guards the fields below; taken before any sessState.mu
	sessions map[string]*sessState
	closed   bool
	stats    Stats
	// learned is the summarizer's window as its endpoint's refusals
	// taught it (0: none); see summaryWindow.
	learned int
}

// New returns a Summarizer. store is normally a *session.Store, llm an
// adapter over the LLM client, counter the tokenizer, policy the view
// policy the agent builds its requests with: the summarizer plans with the
// same figures, so there is no second policy to disagree with it.
func New(store LogStore, llm Completer, counter Counter, policy *view.Policy, cfg Config) *Summarizer {
	if policy == nil {
		panic("summarize.New: no view policy")
	}
	cfg.fill()
	ctx, cancel := context.WithCancel(context.Background())
	return &Summarizer{store: store, llm: llm, counter: counter, cfg: cfg, view: policy, ctx: ctx, cancel: cancel,
		sessions: map[string]*sessState{}}
}

// Config returns the effective configuration.
func (s *Summarizer) Config() Config { return s.cfg }

// Stats returns the summarizer's LLM use so far.
func (s *Summarizer) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// View is the view policy the summarizer plans with.
func (s *Summarizer) View() *view.Policy { return s.view }

// window is the context window compactions aim at.
func (s *Summarizer) window() int { return s.view.Usable() }

// Wait blocks until no background compaction runs.
func (s *Summarizer) Wait() {
	for {
		var jobs []chan struct{}
		s.mu.Lock()
		for _, st := range s.sessions {
			if j := st.running(); j != nil {
				jobs = append(jobs, j)
			}
		}
		s.mu.Unlock()
		if len(jobs) == 0 {
			return
		}
		for _, j := range jobs {
			<-j
		}
	}
}

// Close cancels background compactions and waits for their goroutines to
// end. A summary is applied in one transaction, so nothing is left half
// done. Prepare does nothing after Close.
func (s *Summarizer) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.Wait()
}

func (s *Summarizer) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// sessState is what the summarizer keeps per session.
type sessState struct {
	run sync.Mutex // held by the compaction in progress

	mu    sync.Mutex    // guards the fields below
	job   chan struct{} // closed when the background job ends; nil when none runs
	gen   int           // summaries applied here (compactions, merges, upgrades)
	seen  int           // gen of the view Prepare last returned
	ratio float64       // provider's count / our estimate
	hold  holds         // hold.go
	hurry func()        // cuts the background job's summarizer calls short
}

func (st *sessState) setHurry(f func()) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.hurry = f
}

func (s *Summarizer) state(id string) *sessState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.sessions[id]
	if st == nil {
		st = &sessState{ratio: 1}
		s.sessions[id] = st
	}
	return st
}

func (st *sessState) running() chan struct{} {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.job
}

// changed reports whether a summary was applied since the view Prepare
// last returned, and marks the current state as seen.
func (st *sessState) changed() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	c := st.gen != st.seen
	st.seen = st.gen
	return c
}

func (st *sessState) bump() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.gen++
}

// effective scales an estimate by what the provider counted before.
func (st *sessState) effective(tokens int) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return int(float64(tokens) * st.ratio)
}

// ObserveUsage calibrates the session's estimates with what the provider
// counted for the same request.
func (s *Summarizer) ObserveUsage(sessionID string, estimated, actual int) {
	if estimated <= 0 || actual <= 0 {
		return
	}
	st := s.state(sessionID)
	st.mu.Lock()
	defer st.mu.Unlock()
	r := float64(actual) / float64(estimated)
	st.ratio = min(2, max(0.5, 0.5*st.ratio+0.5*r))
}

// notify hands a report to the front ends (Config.Notify).
func (s *Summarizer) notify(r Report) {
	if s.cfg.Notify != nil {
		s.cfg.Notify(r)
	}
}

// thresholds in tokens.
func (s *Summarizer) thresholds() (soft, hard int) {
	w := float64(s.window())
	return int(s.cfg.SoftRatio * w), int(s.cfg.HardRatio * w)
}

func (s *Summarizer) fixedCost() int { return s.view.Fixed() }

// Prepare is called before every request. Below the soft threshold it
// returns at once; past it (or past trigger_threshold messages, or when
// carrying the oldest messages has cost more than compacting them: the
// cache-aware trigger, price.go) it starts a background compaction and
// returns at once; past the hard threshold it compacts before returning
// (waiting first for a background compaction already running). A summary applied in the background meanwhile is
// picked up here: the view is reloaded.
func (s *Summarizer) Prepare(ctx context.Context, v session.View, tokens int) (session.View, error) {
	if !s.cfg.Enabled || v.Session.ID == "" || s.isClosed() {
		return v, nil
	}
	id := v.Session.ID
	st := s.state(id)
	reload := func() {
		if !st.changed() {
			return
		}
		nv, err := s.store.LoadView(ctx, id)
		if err != nil {
			s.cfg.Logger.Warn("reload the view after a summary", "session", id, "err", err)
			return
		}
		v = nv
		tokens = s.view.Tokens(v)
	}
	reload()
	soft, hard := s.thresholds()
	eff := st.effective(tokens)
	holdTokens, holdMsgs := st.held()
	window := s.window()
	pct := func(n int) int { return n * 100 / window }
	var e econ
	worth := func() bool { e = s.economics(v); return e.worth() }
	switch {
	case eff >= hard && eff >= holdTokens:
		if job := st.running(); job != nil {
			if err := waitJob(ctx, st, s.cfg.WaitLimit); err != nil {
				return v, err
			}
			reload()
			if eff = st.effective(tokens); eff < hard {
				return v, nil
			}
		}
		reason := fmt.Sprintf("context at %d%% of the %d-token window (hard threshold %d%%)", pct(eff), window, pct(hard))
		s.notify(Report{SessionID: id, Phase: Started, Reason: reason})
		rep, err := s.compact(ctx, st, id, modeHard, "", reason)
		s.logReport(rep)
		s.notify(rep)
		if err != nil {
			// The turn goes on with the view it has: a request that no
			// longer fits is refused by the provider and then compacted
			// once more by Compact.
			return v, nil
		}
		st.changed()
		if nv, err := s.store.LoadView(ctx, id); err == nil {
			v = nv
		} else {
			s.cfg.Logger.Warn("reload the view after a summary", "session", id, "err", err)
		}
		s.upgradeLater(st, id, rep)
	case eff >= soft && eff >= holdTokens:
		s.startBackground(st, id, fmt.Sprintf("context at %d%% of the %d-token window (soft threshold %d%%)",
			pct(eff), window, pct(soft)))
	case eff >= s.econFloor() && eff >= holdTokens && len(v.Messages) >= holdMsgs && worth():
		s.startBackground(st, id, fmt.Sprintf("re-reading the oldest %d messages has cost about %.0f full-price tokens, "+
			"compacting them costs about %.0f (cache-aware trigger, context at %d%% of the %d-token window)",
			e.cut, e.carried, e.price, pct(eff), window))
	case s.cfg.TriggerThreshold > 0 && len(v.Messages) > s.cfg.TriggerThreshold && len(v.Messages) >= holdMsgs &&
		eff >= soft/2:
		// The message count is the secondary trigger: many short
		// messages are cheap to keep, and a summary of them would save
		// little, so it fires only once the context holds half the soft
		// threshold's tokens.
		s.startBackground(st, id, fmt.Sprintf("%d messages in the context (trigger_threshold %d)",
			len(v.Messages), s.cfg.TriggerThreshold))
	}
	return v, nil
}

// startBackground starts the session's background compaction unless a job
// runs.
func (s *Summarizer) startBackground(st *sessState, id, reason string) {
	s.startJob(st, id, Report{SessionID: id, Phase: Started, Background: true, Reason: reason}, func() Report {
		rep, _ := s.compact(s.ctx, st, id, modeBackground, "", reason)
		return rep
	})
}

// startJob runs work in the session's one background goroutine unless a
// job runs already. The goroutine ends with the work; Close cancels it.
// Its Started report and its final one go to Notify.
func (s *Summarizer) startJob(st *sessState, id string, start Report, work func() Report) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	st.mu.Lock()
	if st.job != nil {
		st.mu.Unlock()
		s.mu.Unlock()
		return
	}
	done := make(chan struct{})
	st.job = done
	st.mu.Unlock()
	s.mu.Unlock()
	s.notify(start)
	go func() {
		var rep Report
		defer func() {
			st.mu.Lock()
			st.job = nil
			st.mu.Unlock()
			close(done)
			if rep.upgrade != nil {
				s.upgradeLater(st, id, rep)
			}
		}()
		defer crash.Recover(s.cfg.Logger, "background summary", id, func(e *crash.Error) { s.notify(Report{SessionID: id, Phase: Failed, Background: true, Err: e}) })
		rep = work()
		s.logReport(rep)
		s.notify(rep)
	}()
}

// logReport logs how an automatic compaction ended. Its report may reach
// no one (a background one when the front end's queue is full, or after
// print mode exits), so failures and fallbacks are warnings; the rest is
// detail for --debug.
func (s *Summarizer) logReport(r Report) {
	l := s.cfg.Logger.With("session", r.SessionID, "background", r.Background)
	switch {
	case r.Phase == Failed && r.Err != nil && !errors.Is(r.Err, ErrNoReduction) &&
		!errors.Is(r.Err, ErrNothingToSummarize) && !errors.Is(r.Err, context.Canceled):
		l.Warn("compaction failed; the originals are kept", "err", r.Err)
	case r.Phase == Finished && r.Summary != nil && r.Err != nil:
		l.Warn("summarizer failed; deterministic summary applied", "from", r.Summary.FromSeq, "to", r.Summary.ToSeq, "err", r.Err)
	case r.Summary != nil:
		l.Debug("compaction applied", "reason", r.Reason, "from", r.Summary.FromSeq, "to", r.Summary.ToSeq,
			"tokens_before", r.Summary.TokensBefore, "tokens_after", r.Summary.TokensAfter, "took", r.Duration)
	default:
		l.Debug("compaction not applied", "reason", r.Reason, "err", r.Err)
	}
}

// upgradeLater starts, in the background, the narrative for a summary that
// a waiting turn had to apply without one.
func (s *Summarizer) upgradeLater(st *sessState, id string, rep Report) {
	target := rep.upgrade
	if target == nil {
		return
	}
	s.startJob(st, id, Report{SessionID: id, Phase: Started, Background: true,
		Reason: fmt.Sprintf("writing the narrative of messages %d-%d, summarized without one while a turn waited", target.FromSeq, target.ToSeq)},
		func() Report {
			r, _ := s.upgrade(s.ctx, st, id, *target, rep.upgradeRange)
			return r
		})
}

// waitJob waits for the session's background compaction, if any. A turn
// waits for its summarizer calls at most limit; then they are cut short and
// the job applies its deterministic summary (which takes milliseconds).
func waitJob(ctx context.Context, st *sessState, limit time.Duration) error {
	job := st.running()
	if job == nil {
		return nil
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-job:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	st.mu.Lock()
	hurry := st.hurry
	st.mu.Unlock()
	if hurry != nil {
		hurry()
	}
	select {
	case <-job:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Compact compacts now, as far as needed, and waits: the provider said
// the request did not fit. It returns the reloaded view.
func (s *Summarizer) Compact(ctx context.Context, v session.View, reason string) (session.View, error) {
	if s.isClosed() {
		return v, ErrClosed
	}
	id := v.Session.ID
	st := s.state(id)
	st.mu.Lock()
	st.ratio = min(2, st.ratio*1.1) // our estimate was low
	st.mu.Unlock()
	if err := waitJob(ctx, st, s.cfg.WaitLimit); err != nil {
		return v, err
	}
	if st.changed() {
		// A background summary was applied since the refused request was
		// built. If it shrank the context by a fifth, retry with it.
		nv, err := s.store.LoadView(ctx, id)
		if err != nil {
			s.cfg.Logger.Warn("reload the view after a summary", "session", id, "err", err)
		} else if s.view.Tokens(nv)*5 <= s.view.Tokens(v)*4 {
			return nv, nil
		}
	}
	s.notify(Report{SessionID: id, Phase: Started, Reason: reason})
	rep, err := s.compact(ctx, st, id, modeOverflow, "", reason)
	s.logReport(rep)
	s.notify(rep)
	if err != nil {
		return v, err
	}
	st.changed()
	s.upgradeLater(st, id, rep)
	nv, err := s.store.LoadView(ctx, id)
	if err != nil {
		return v, fmt.Errorf("reload session %s: %w", id, err)
	}
	return nv, nil
}

// SummarizeNow compacts a session now, below the thresholds too (the
// /summarize command and `gencode summarize`), and returns the report.
// focus, if not empty, is what the summary should dwell on. It returns
// ErrNothingToSummarize when the session has no range to summarize. A
// panic in the compaction (a bug) is a failed compaction, its stack
// logged, as in the background: /summarize runs it in the TUI's command
// goroutine, where Bubble Tea would end the program.
func (s *Summarizer) SummarizeNow(ctx context.Context, sessionID, focus string) (rep Report, err error) {
	defer crash.Recover(s.cfg.Logger, "compaction", sessionID, func(e *crash.Error) {
		rep, err = Report{SessionID: sessionID, Phase: Failed, Err: e}, e
	})
	if s.isClosed() {
		return Report{SessionID: sessionID, Phase: Failed, Err: ErrClosed}, ErrClosed
	}
	// The session row only: compact reads what it plans with (a long
	// log is never loaded whole).
	sess, err := s.store.Session(ctx, sessionID)
	if err != nil {
		return Report{SessionID: sessionID, Phase: Failed, Err: err}, err
	}
	st := s.state(sess.ID)
	if err := waitJob(ctx, st, s.cfg.WaitLimit); err != nil {
		return Report{SessionID: sess.ID, Phase: Failed, Err: err}, err
	}
	reason := "requested by the user"
	if focus != "" {
		reason += fmt.Sprintf(" (focus: %s)", focus)
	}
	return s.compact(ctx, st, sess.ID, modeManual, focus, reason)
}

func (s *Summarizer) addStats(req Request, c Completion, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Requests++
	if err != nil {
		s.stats.Failures++
		return
	}
	p, o := c.PromptTokens, c.CompletionTokens
	if p == 0 {
		p = s.textTokens(session.RoleSystem, req.System) + s.textTokens(session.RoleUser, req.Prompt)
		for _, m := range req.Conversation {
			if m.Tokens > 0 {
				p += m.Tokens
			} else {
				p += view.MessageTokens(s.counter.Count, m)
			}
		}
	}
	if o == 0 {
		o = s.counter.Count(c.Text)
	}
	s.stats.PromptTokens += p
	s.stats.CompletionTokens += o
}
