package summarize

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gencode/gencode/internal/facts"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/view"
)

// mode is why a compaction runs; it decides how far the range may reach
// and whether a weak result holds off the next automatic one.
type mode int

const (
	modeBackground mode = iota // soft threshold or message count
	modeHard                   // hard threshold: the turn waits
	modeOverflow               // the provider refused the request
	modeManual                 // /summarize, gencode summarize
)

func (m mode) automatic() bool { return m == modeBackground || m == modeHard }

// smallWindowBlock is the most of the summary block's floor (see budgets).
const smallWindowBlock = 900

// budgets are the sizes a compaction aims at, in tokens (facts in chars).
type budgets struct {
	block      int // the whole summary block; past it summaries merge
	perSummary int // one summary
	narrative  int // one narrative
	factChars  int // the facts shown per summary (RenderChars)
	// keepChars and keepCharsFallback bound the user's constraints and
	// facts shown per summary (KeepChars), with a narrative and without
	// one: the deterministic summary has the narrative's room besides.
	keepChars, keepCharsFallback int
	goal                         int // the context after a compaction
}

func (s *Summarizer) budgets(fixed int) budgets {
	w := s.window()
	soft, _ := s.thresholds()
	var b budgets
	// Every request re-reads the block (0.08 of the window by default),
	// but a small window keeps the room it had at 15% (at most 900
	// tokens, a 6,000-token window's): enough for the user's stated facts.
	b.block = min(max(int(s.cfg.SummaryBudgetRatio*float64(w)), min(w*15/100, smallWindowBlock)), max(300, (soft-fixed)/2))
	b.perSummary = max(200, b.block/3)
	b.narrative = min(b.perSummary*6/10, 1500)
	b.factChars = min(max(b.perSummary*4/10*4, 400), 12000)
	// At about 4 characters a token: a quarter of the block with a
	// narrative, half without (40 short facts take about 1,400 characters,
	// and a 6,000-token window's block is 900 tokens); in a large window at
	// most about 1,000 and 4,000 tokens.
	b.keepChars = min(max(b.block, 400), 4000)
	b.keepCharsFallback = min(max(b.block*2, 800), facts.MaxKeptChars)
	b.goal = soft - w/10
	return b
}

// attempts is a compaction's allowance of failed summarizer calls.
type attempts struct {
	left int
	// silent: a call timed out waiting for the summarizer; no more calls
	// are made in this compaction.
	silent bool
	// session is the session the compaction is for: its requests say it
	// (Request.SessionID), so that what they use is counted for it.
	session string
}

// compact runs one compaction of a session and reports it, in four steps:
// plan (the range, the budgets, whether it is worth it), write (the
// summary: the summarizer's narrative, or the deterministic facts alone
// when it fails), apply (one transaction, only if the range is still
// unsummarized) and the hold policy (hold.go). It never deletes a message
// (unless delete_originals), never stores an error as a summary, and falls
// back to the deterministic summary, flagged Fallback with the reason,
// when the summarizer fails.
func (s *Summarizer) compact(ctx context.Context, st *sessState, id string, m mode, focus, reason string) (Report, error) {
	st.run.Lock()
	defer st.run.Unlock()
	start := s.cfg.Now()
	rep := Report{SessionID: id, Phase: Failed, Background: m == modeBackground, Reason: reason}
	fail := func(err error) (Report, error) {
		rep.Err = err
		rep.Duration = s.cfg.Now().Sub(start)
		if errors.Is(err, ErrNothingToSummarize) || errors.Is(err, ErrNoReduction) {
			rep.Phase = Finished // nothing went wrong; there was nothing worth doing
		}
		return rep, err
	}
	c, err := s.plan(ctx, st, id, m, focus)
	if err != nil {
		return fail(err)
	}
	if c.stop != nil {
		defer c.stop()
	}

	// The summarizer's calls run under lctx: a turn waits for them at most
	// WaitLimit, and a turn that needs the session compacted now cuts a
	// background compaction's calls short (hurry) and gets the
	// deterministic summary applied at once. /summarize waits for the
	// narrative: it was asked for, and the caller's ctx can cancel it.
	lctx, lcancel := context.WithCancel(ctx)
	if m == modeHard || m == modeOverflow {
		lctx, lcancel = context.WithTimeout(ctx, s.cfg.WaitLimit)
	}
	defer lcancel()
	if m == modeBackground {
		st.setHurry(lcancel)
		defer st.setHurry(nil)
	}
	sum, llmErr, cutShort, silent := s.write(ctx, lctx, st, c)
	if err := ctx.Err(); err != nil {
		return fail(fmt.Errorf("compaction of session %s stopped: %w", id, err))
	}
	if c.src != nil && c.src.err != nil {
		// A long range not read to its end: its facts are not whole.
		return fail(fmt.Errorf("load messages %d-%d of session %s: %w", c.facts.FromSeq, c.facts.ToSeq, id, c.src.err))
	}
	if sum.TokensAfter >= sum.TokensBefore && !c.refocus() {
		if m.automatic() {
			s.holdOff(st, c.eff, len(c.view.Messages))
		}
		return fail(fmt.Errorf("%w: %d -> %d tokens", ErrNoReduction, sum.TokensBefore, sum.TokensAfter))
	}
	sum.Duration = s.cfg.Now().Sub(start)
	applied, err := s.apply(ctx, st, c, sum)
	if err != nil {
		return fail(err)
	}

	rep.Phase, rep.Summary, rep.Fallback = Finished, &applied, applied.Fallback
	if llmErr != nil {
		rep.Err = fmt.Errorf("summarizer failed, deterministic summary used: %w", llmErr)
	}
	if cutShort {
		rep.upgrade, rep.upgradeRange = &applied, c.rng
	}
	after := applied.TokensAfter
	if silent {
		// The summarizer did not answer within its timeout: a merge
		// now would wait as long again. It is shortened without it.
		lcancel()
	}
	if merged, err := s.mergeIfOver(ctx, lctx, st, id, focus, m, c.eff); err != nil {
		// The summary itself is applied; the block stays over its budget
		// until the next compaction merges it.
		s.cfg.Logger.Warn("merge summaries; they stay unmerged", "session", id, "err", err)
	} else if merged != nil {
		rep.Merged = merged
		after = merged.TokensAfter
	}
	s.afterCompaction(st, c, after)
	rep.Duration = s.cfg.Now().Sub(start)
	return rep, nil
}

// compaction is one compaction as planned: the view it starts from, the
// range it summarizes (view.Messages[:cut]) and what it aims at.
type compaction struct {
	mode   mode
	id     string
	focus  string
	view   session.View
	before int // the request's tokens now
	eff    int // before, scaled to what the provider counts
	b      budgets
	cut    int // view.Messages[:cut] is the range; 0 for a refocus
	// rng is the range, redacted when redact_secrets is on;
	// rangeTokens its stored count.
	rng         []session.Message
	rangeTokens int
	// tail is what stays after the range; kept are the summaries the new
	// one goes beside, and replaces the ones it supersedes (a refocus
	// replaces the latest summary).
	tail     []session.Message
	kept     []session.Summary
	replaces []string
	// words is the length asked of the narrative.
	words int
	// facts is the deterministic summary of the range.
	facts session.Summary
	// A long range (planLong) is not in memory: src reads it from the
	// log for the narrative, stop ends that read, and total is how many
	// messages the unsummarized log holds (view holds the kept ones).
	src   *feed
	stop  func()
	total int
}

// refocus reports a /summarize FOCUS that summarizes the latest summary's
// range again.
func (c *compaction) refocus() bool { return c.replaces != nil }

// plan chooses what a compaction summarizes: the oldest unsummarized
// messages, so that what stays fits the budget left after the summaries;
// for a background compaction, only if even a good summary would save
// enough. When there is nothing worth doing it says why
// (ErrNothingToSummarize, ErrNoReduction) and holds off the next
// automatic compaction.
func (s *Summarizer) plan(ctx context.Context, st *sessState, id string, m mode, focus string) (*compaction, error) {
	sess, err := s.store.Session(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	through, err := s.store.SummarizedThrough(ctx, sess.ID)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	if heads, err := s.longRange(ctx, sess, through); err != nil || heads != nil {
		if err != nil {
			return nil, err
		}
		return s.planLong(ctx, st, m, focus, sess, heads) // stream.go
	}
	v, err := s.store.LoadView(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	fixed := s.fixedCost()
	c := &compaction{mode: m, id: id, focus: focus, view: v, before: s.view.Tokens(v), b: s.budgets(fixed)}
	c.eff = st.effective(c.before)
	tailBudget := c.b.goal - fixed - min(c.b.block, view.BlockTokens(v.Summaries)+c.b.perSummary)
	if m == modeOverflow {
		tailBudget = tailBudget * 3 / 4
	}
	capTokens := s.view.CapTokens()
	cost := func(msg session.Message) int {
		if msg.Role == session.RoleTool && capTokens > 0 && msg.Tokens > capTokens {
			return capTokens
		}
		return msg.Tokens
	}
	c.cut = selectRange(v.Messages, rangeParams{
		preserve:   s.cfg.PreserveRecent,
		tailBudget: max(1, tailBudget),
		passUser:   true,
		manual:     m == modeManual,
	}, cost)
	c.kept = v.Summaries
	switch {
	case c.cut > 0:
		c.rng, c.tail = v.Messages[:c.cut], v.Messages[c.cut:]
	case m == modeManual && focus != "" && len(v.Summaries) > 0:
		// "/summarize FOCUS" right after a summary: nothing new to
		// cover, so the latest range is summarized again with the focus.
		last := v.Summaries[len(v.Summaries)-1]
		if c.rng, err = s.refocusRange(ctx, id, last); err != nil {
			return nil, err
		}
		c.tail = v.Messages
		c.kept, c.replaces = v.Summaries[:len(v.Summaries)-1], []string{last.ID}
	default:
		if m.automatic() {
			s.holdOff(st, c.eff, len(v.Messages))
		}
		return nil, ErrNothingToSummarize
	}
	for _, msg := range c.rng {
		c.rangeTokens += msg.Tokens
	}
	if s.cfg.RedactSecrets {
		// Before anything is extracted or cut: a secret cut in half
		// would no longer be recognized.
		c.rng = redactMessages(c.rng)
	}
	c.facts = facts.Extract(c.rng, s.cfg.PreserveSystem)
	c.facts.SessionID, c.facts.FromSeq, c.facts.ToSeq, c.facts.Focus = id, c.rng[0].Seq, c.rng[len(c.rng)-1].Seq, focus
	c.words = s.words(c.rangeTokens, c.b, s.summaryWindow())

	if m == modeBackground {
		// Not worth an LLM call if even a good summary would save little.
		est := c.facts
		est.Content = strings.Repeat("word ", c.words)
		s.finish(&est, c.b)
		after := s.tokensWith(c, est)
		byTokens := float64(c.before-after) >= minReduction*float64(c.before)
		byCount := float64(c.cut) >= minReduction*float64(len(v.Messages)) && after < c.before
		soft, _ := s.thresholds()
		if !(byTokens || (c.eff < soft && byCount)) {
			s.holdOff(st, c.eff, len(v.Messages))
			return nil, fmt.Errorf("%w: %d tokens would shrink only to about %d", ErrNoReduction, c.before, after)
		}
	}
	return c, nil
}

// tokensWith is the request's size once sum replaces the range.
func (s *Summarizer) tokensWith(c *compaction, sum session.Summary) int {
	return s.view.Tokens(session.View{Session: c.view.Session,
		Summaries: append(append([]session.Summary{}, c.kept...), sum), Messages: c.tail})
}

// write makes the compaction's summary: the deterministic facts and the
// summarizer's narrative, or the facts alone (Fallback, with the reason)
// when the summarizer failed, is held, or its narrative would not make the
// context smaller. llmErr says why there is no narrative; cutShort that
// the summarizer was still working when the turn stopped waiting for it.
// TokensBefore and TokensAfter are set; the caller checks the reduction.
//
//lint:ignore ST1008 llmErr is a result, not the call's failure: write always returns a summary
func (s *Summarizer) write(ctx, lctx context.Context, st *sessState, c *compaction) (sum session.Summary, llmErr error, cutShort, silent bool) {
	sum = c.facts
	m := c.mode
	if m != modeManual && s.llmHeld(st, c.eff) {
		llmErr = fmt.Errorf("the summarizer failed %d times in a row; not asked again until the session grows", llmFailureLimit)
	} else {
		a := &attempts{left: s.cfg.MaxAttempts, session: c.id}
		nar, chunks, err := s.narrateCompaction(lctx, st, c, a)
		silent = a.silent
		if err == nil {
			sum.Content, sum.Goal, sum.CurrentState = nar.text, nar.goal, nar.currentState
			sum.Topics, sum.NextSteps = nar.topics, nar.nextSteps
			if len(nar.decisions) > 0 {
				sum.KeyDecisions = nar.decisions
			}
			sum.Model, sum.Chunks = s.cfg.Model, chunks
		}
		llmErr = err
		switch {
		case err == nil || ctx.Err() != nil:
			s.noteLLM(st, err, c.eff)
		case m == modeBackground && errors.Is(lctx.Err(), context.Canceled):
			llmErr = fmt.Errorf("a turn needed the session compacted before the summarizer answered: %w", err)
			cutShort = true
		case (m == modeHard || m == modeOverflow) && errors.Is(lctx.Err(), context.DeadlineExceeded):
			llmErr = fmt.Errorf("the summarizer did not answer within %s while the turn waited: %w", s.cfg.WaitLimit, err)
			cutShort = true
		default:
			s.noteLLM(st, err, c.eff)
		}
	}
	if c.src != nil {
		sum = c.withLongFacts(sum) // stream.go
	}
	if llmErr != nil {
		sum.Fallback = true
		sum.FallbackReason = facts.OneLine(facts.Clip(redactString(llmErr.Error(), s.cfg.RedactSecrets), 300))
		sum.Model = ""
	}
	s.finish(&sum, c.b)
	after := s.tokensWith(c, sum)
	// A refocus keeps its narrative (the focus is what was asked for);
	// the summary's own budget bounds it.
	if after >= c.before && llmErr == nil && !c.refocus() {
		// The narrative made it too big (a tiny range, a verbose model):
		// the facts alone may still help.
		llmErr = errors.New("the narrative did not make the context smaller")
		sum = dropNarrative(sum)
		sum.Fallback, sum.FallbackReason = true, llmErr.Error()
		s.finish(&sum, c.b)
		after = s.tokensWith(c, sum)
	}
	sum.MessagesBefore, sum.MessagesAfter = len(c.view.Messages), len(c.tail)
	if c.total > 0 {
		sum.MessagesBefore = c.total
	}
	sum.TokensBefore, sum.TokensAfter = c.before, after
	return sum, llmErr, cutShort, silent
}

// apply stores the summary in one transaction. A deterministic fallback
// never deletes originals: nothing may be lost because the summarizer
// failed; the narrative written later (upgrade) deletes them, as the user
// configured.
func (s *Summarizer) apply(ctx context.Context, st *sessState, c *compaction, sum session.Summary) (session.Summary, error) {
	applied, err := s.store.ApplySummary(ctx, sum, c.replaces, s.cfg.DeleteOriginals && !sum.Fallback)
	if err != nil {
		s.applyFailed(st, c.eff, len(c.view.Messages))
		return session.Summary{}, fmt.Errorf("apply summary of messages %d-%d: %w", sum.FromSeq, sum.ToSeq, err)
	}
	st.bump()
	return applied, nil
}

// refocusRange loads the originals behind a summary, to summarize them
// again with a focus. Originals deleted by delete_originals cannot be.
func (s *Summarizer) refocusRange(ctx context.Context, id string, sum session.Summary) ([]session.Message, error) {
	msgs, err := s.store.ViewMessages(ctx, id, sum.FromSeq, sum.ToSeq)
	if err != nil {
		return nil, fmt.Errorf("load messages %d-%d of session %s: %w", sum.FromSeq, sum.ToSeq, id, err)
	}
	for _, m := range msgs {
		if m.Meta.Deleted {
			return nil, fmt.Errorf("%w: the originals of messages %d-%d were deleted (delete_originals)",
				ErrNothingToSummarize, sum.FromSeq, sum.ToSeq)
		}
	}
	if len(msgs) == 0 {
		return nil, ErrNothingToSummarize
	}
	return msgs, nil
}

// dropNarrative returns the summary without what the LLM wrote.
func dropNarrative(sum session.Summary) session.Summary {
	sum.Content, sum.Goal, sum.CurrentState, sum.Model = "", "", "", ""
	sum.Topics, sum.NextSteps, sum.Chunks = nil, nil, 0
	return sum
}

// finish scrubs a summary, sets how much of its facts the model sees and
// counts its tokens as the block will show it.
func (s *Summarizer) finish(sum *session.Summary, b budgets) {
	scrubSummary(sum, s.cfg.RedactSecrets)
	sum.RenderChars = b.factChars
	sum.KeepChars = b.keepChars
	if strings.TrimSpace(sum.Content) == "" {
		sum.KeepChars = b.keepCharsFallback
	}
	text := view.RenderSummary(*sum)
	sum.TokenCount = s.counter.Count(text)
	sum.TokenKey = ""
	// A counter whose vocabulary did not load estimates: that count is not
	// one a later run may reuse.
	e, ok := s.counter.(interface {
		Encoding() string
		Err() error
	})
	if ok && e.Err() == nil {
		sum.TokenKey = view.TokenKey(e.Encoding(), text)
	}
	if sum.GeneratedAt.IsZero() {
		sum.GeneratedAt = s.cfg.Now()
	}
}
