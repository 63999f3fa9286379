package summarize

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gencode/gencode/internal/session"
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

// minReduction is the share of the context a compaction must save; a
// weaker one holds off automatic compactions until the view grows.
const minReduction = 0.2

// llmFailureLimit is how many compactions in a row may find the
// summarizer failing before it is left alone until the view grows.
const llmFailureLimit = 3

// budgets are the sizes a compaction aims at, in tokens (facts in chars).
type budgets struct {
	block      int // the whole summary block; past it summaries merge
	perSummary int // one summary
	narrative  int // one narrative
	factChars  int // the facts shown per summary (RenderChars)
	goal       int // the context after a compaction
}

func (s *Summarizer) budgets(fixed int) budgets {
	w := s.window()
	soft, _ := s.thresholds()
	var b budgets
	b.block = min(int(s.cfg.SummaryBudgetRatio*float64(w)), max(300, (soft-fixed)/2))
	b.perSummary = max(200, b.block/3)
	b.narrative = min(b.perSummary*6/10, 1500)
	b.factChars = min(max(b.perSummary*4/10*4, 400), 12000)
	b.goal = soft - w/10
	return b
}

// attempts is a compaction's allowance of failed summarizer calls.
type attempts struct{ left int }

// compact runs one compaction of a session and reports it. It never
// deletes a message (unless delete_originals), never stores an error as a
// summary, and applies its summary in one transaction only if its range is
// still unsummarized. When the summarizer fails it applies the
// deterministic summary, flagged Fallback with the reason.
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
	v, err := s.store.LoadView(ctx, id)
	if err != nil {
		return fail(fmt.Errorf("load session %s: %w", id, err))
	}
	fixed := s.fixedCost()
	before := s.view.Tokens(v)
	eff := st.effective(before)
	b := s.budgets(fixed)
	blockNow := blockTokens(v.Summaries)
	tailBudget := b.goal - fixed - min(b.block, blockNow+b.perSummary)
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
	cut := selectRange(v.Messages, rangeParams{
		preserve:   s.cfg.PreserveRecent,
		tailBudget: max(1, tailBudget),
		passUser:   true,
		manual:     m == modeManual,
	}, cost)
	// kept are the summaries the new one goes beside; a refocus replaces
	// the latest one instead.
	kept, replaces := v.Summaries, []string(nil)
	var rng, tail []session.Message
	switch {
	case cut > 0:
		rng, tail = v.Messages[:cut], v.Messages[cut:]
	case m == modeManual && focus != "" && len(v.Summaries) > 0:
		// "/summarize FOCUS" right after a summary: nothing new to
		// cover, so the latest range is summarized again with the focus.
		last := v.Summaries[len(v.Summaries)-1]
		if rng, err = s.refocusRange(ctx, id, last); err != nil {
			return fail(err)
		}
		tail = v.Messages
		kept, replaces = v.Summaries[:len(v.Summaries)-1], []string{last.ID}
	default:
		if m.automatic() {
			s.hold(st, eff, len(v.Messages))
		}
		return fail(ErrNothingToSummarize)
	}
	refocus := replaces != nil
	rangeTokens := 0
	for _, msg := range rng {
		rangeTokens += msg.Tokens
	}
	if s.cfg.RedactSecrets {
		// Before anything is extracted or cut: a secret cut in half
		// would no longer be recognized.
		rng = redactMessages(rng)
	}

	sum := extract(rng, s.cfg.PreserveSystem)
	sum.SessionID, sum.FromSeq, sum.ToSeq, sum.Focus = id, rng[0].Seq, rng[len(rng)-1].Seq, focus
	words := s.words(rangeTokens, b)

	if m == modeBackground {
		// Not worth an LLM call if even a good summary would save little.
		est := sum
		est.Content = strings.Repeat("word ", words)
		s.finish(&est, b)
		after := s.view.Tokens(session.View{Session: v.Session, Summaries: append(append([]session.Summary{}, kept...), est), Messages: tail})
		byTokens := float64(before-after) >= minReduction*float64(before)
		byCount := float64(cut) >= minReduction*float64(len(v.Messages)) && after < before
		soft, _ := s.thresholds()
		if !(byTokens || (eff < soft && byCount)) {
			s.hold(st, eff, len(v.Messages))
			return fail(fmt.Errorf("%w: %d tokens would shrink only to about %d", ErrNoReduction, before, after))
		}
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
	var llmErr error
	cutShort := false // the summarizer was still working when we stopped waiting
	if m != modeManual && s.llmHeld(st, eff) {
		llmErr = fmt.Errorf("the summarizer failed %d times in a row; not asked again until the session grows", llmFailureLimit)
	} else {
		nar, chunks, err := s.narrate(lctx, rng, focus, words, &attempts{left: s.cfg.MaxAttempts})
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
			s.noteLLM(st, err, eff)
		case m == modeBackground && errors.Is(lctx.Err(), context.Canceled):
			llmErr = fmt.Errorf("a turn needed the session compacted before the summarizer answered: %w", err)
			cutShort = true
		case (m == modeHard || m == modeOverflow) && errors.Is(lctx.Err(), context.DeadlineExceeded):
			llmErr = fmt.Errorf("the summarizer did not answer within %s while the turn waited: %w", s.cfg.WaitLimit, err)
			cutShort = true
		default:
			s.noteLLM(st, err, eff)
		}
	}
	if err := ctx.Err(); err != nil {
		return fail(fmt.Errorf("compaction of session %s stopped: %w", id, err))
	}
	if llmErr != nil {
		sum.Fallback = true
		sum.FallbackReason = oneLine(clip(redactString(llmErr.Error(), s.cfg.RedactSecrets), 300))
		sum.Model = ""
	}
	s.finish(&sum, b)
	withSum := func(x session.Summary) int {
		return s.view.Tokens(session.View{Session: v.Session, Summaries: append(append([]session.Summary{}, kept...), x), Messages: tail})
	}
	after := withSum(sum)
	// A refocus keeps its narrative (the focus is what was asked for);
	// the summary's own budget bounds it.
	if after >= before && llmErr == nil && !refocus {
		// The narrative made it too big (a tiny range, a verbose model):
		// the facts alone may still help.
		llmErr = errors.New("the narrative did not make the context smaller")
		sum = dropNarrative(sum)
		sum.Fallback, sum.FallbackReason = true, llmErr.Error()
		s.finish(&sum, b)
		after = withSum(sum)
	}
	sum.MessagesBefore, sum.MessagesAfter = len(v.Messages), len(tail)
	sum.TokensBefore, sum.TokensAfter = before, after
	sum.Duration = s.cfg.Now().Sub(start)
	if after >= before && !refocus {
		if m.automatic() {
			s.hold(st, eff, len(v.Messages))
		}
		return fail(fmt.Errorf("%w: %d -> %d tokens", ErrNoReduction, before, after))
	}
	// A deterministic fallback never deletes originals: nothing may be
	// lost because the summarizer failed. The narrative written later
	// (upgrade) deletes them, as the user configured.
	applied, err := s.store.ApplySummary(ctx, sum, replaces, s.cfg.DeleteOriginals && !sum.Fallback)
	if err != nil {
		st.mu.Lock()
		st.failures++
		if st.failures >= llmFailureLimit {
			st.holdTokens = eff + s.window()/10
			st.holdMsgs = len(v.Messages) + max(5, s.cfg.TriggerThreshold/10)
		}
		st.mu.Unlock()
		return fail(fmt.Errorf("apply summary of messages %d-%d: %w", sum.FromSeq, sum.ToSeq, err))
	}
	st.bump()

	rep.Phase, rep.Summary, rep.Fallback = Finished, &applied, applied.Fallback
	if llmErr != nil {
		rep.Err = fmt.Errorf("summarizer failed, deterministic summary used: %w", llmErr)
	}
	if cutShort {
		rep.upgrade = &applied
	}
	if merged, err := s.mergeIfOver(ctx, lctx, st, id, focus, m, eff); err != nil {
		// The summary itself is applied; the block stays over its budget
		// until the next compaction merges it.
		s.cfg.Logger.Warn("merge summaries; they stay unmerged", "session", id, "err", err)
	} else if merged != nil {
		rep.Merged = merged
		after = merged.TokensAfter
	}
	weak := float64(before-after) < minReduction*float64(before)
	if weak && m.automatic() && !(float64(cut) >= minReduction*float64(len(v.Messages))) {
		s.hold(st, eff, len(v.Messages))
	} else {
		st.release()
	}
	rep.Duration = s.cfg.Now().Sub(start)
	return rep, nil
}

// refocusRange loads the originals behind a summary, to summarize them
// again with a focus. Originals deleted by delete_originals cannot be.
func (s *Summarizer) refocusRange(ctx context.Context, id string, sum session.Summary) ([]session.Message, error) {
	msgs, err := s.store.Messages(ctx, id, sum.FromSeq, sum.ToSeq)
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

func (s *Summarizer) llmHeld(st *sessState, eff int) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.llmFailures >= llmFailureLimit && eff < st.llmHoldTokens
}

func (s *Summarizer) noteLLM(st *sessState, err error, eff int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err == nil {
		st.llmFailures = 0
		return
	}
	st.llmFailures++
	if st.llmFailures >= llmFailureLimit {
		st.llmHoldTokens = eff + s.window()/10
	}
}

// finish scrubs a summary, sets how much of its facts the model sees and
// counts its tokens as the block will show it.
func (s *Summarizer) finish(sum *session.Summary, b budgets) {
	scrubSummary(sum, s.cfg.RedactSecrets)
	sum.RenderChars = b.factChars
	sum.TokenCount = s.counter.Count(RenderSummary(*sum))
	if sum.GeneratedAt.IsZero() {
		sum.GeneratedAt = s.cfg.Now()
	}
}

// narrate asks the summarizer for the range's narrative, in chunks that
// fit its window when the range does not, then merged.
func (s *Summarizer) narrate(ctx context.Context, rng []session.Message, focus string, words int, a *attempts) (narrative, int, error) {
	entries := renderTranscript(rng)
	budget := s.inputBudget(words)
	for i := range entries {
		entries[i].tokens = s.counter.Count(entries[i].text)
		if entries[i].tokens > budget {
			// One message larger than a whole chunk: keep its head and tail.
			entries[i].text = headTail(entries[i].text, budget*3)
			entries[i].tokens = s.counter.Count(entries[i].text)
		}
	}
	var chunks [][]entry
	var cur []entry
	used := 0
	for _, e := range entries {
		if len(cur) > 0 && used+e.tokens > budget {
			chunks = append(chunks, cur)
			cur, used = nil, 0
		}
		cur = append(cur, e)
		used += e.tokens
	}
	chunks = append(chunks, cur)
	var parts, labels []string
	for i, ch := range chunks {
		in := 0
		for _, e := range ch {
			in += e.tokens
		}
		text, err := s.call(ctx, summaryRequest(s.cfg.Model, ch, i+1, len(chunks), focus, words), in, a)
		if err != nil {
			return narrative{}, 0, fmt.Errorf("summarize messages %d-%d: %w", ch[0].seq, ch[len(ch)-1].seq, err)
		}
		parts = append(parts, text)
		labels = append(labels, fmt.Sprintf("Messages %d-%d", ch[0].seq, ch[len(ch)-1].seq))
	}
	if len(parts) == 1 {
		return parseNarrative(parts[0]), 1, nil
	}
	text, err := s.reduce(ctx, parts, labels, focus, words, a)
	if err != nil {
		return narrative{}, 0, err
	}
	return parseNarrative(text), len(chunks), nil
}

// reduce merges narratives, oldest first, in as many rounds as the
// summarizer's window needs.
func (s *Summarizer) reduce(ctx context.Context, parts, labels []string, focus string, words int, a *attempts) (string, error) {
	budget := s.inputBudget(words)
	for len(parts) > 1 {
		var nextParts, nextLabels []string
		for i := 0; i < len(parts); {
			j, used := i, 0
			for j < len(parts) && (j == i || used+s.counter.Count(parts[j]) <= budget) {
				used += s.counter.Count(parts[j])
				j++
			}
			if j == i+1 && i+1 < len(parts) {
				j = i + 2 // always merge at least two
			}
			label := strings.TrimPrefix(labels[i], "Messages ")
			if j-1 > i {
				label = firstSeq(labels[i]) + "-" + lastSeq(labels[j-1])
			}
			if j-i == 1 {
				nextParts, nextLabels = append(nextParts, parts[i]), append(nextLabels, labels[i])
				i = j
				continue
			}
			in := 0
			for _, p := range parts[i:j] {
				in += s.counter.Count(p)
			}
			text, err := s.call(ctx, mergeRequest(s.cfg.Model, parts[i:j], labels[i:j], focus, words), in, a)
			if err != nil {
				return "", fmt.Errorf("merge summaries of messages %s: %w", label, err)
			}
			nextParts, nextLabels = append(nextParts, text), append(nextLabels, "Messages "+label)
			i = j
		}
		if len(nextParts) >= len(parts) {
			return "", errors.New("merge made no progress")
		}
		parts, labels = nextParts, nextLabels
	}
	return parts[0], nil
}

func firstSeq(label string) string {
	l := strings.TrimPrefix(label, "Messages ")
	if i := strings.IndexByte(l, '-'); i >= 0 {
		return l[:i]
	}
	return l
}

func lastSeq(label string) string {
	l := strings.TrimPrefix(label, "Messages ")
	if i := strings.LastIndexByte(l, '-'); i >= 0 {
		return l[i+1:]
	}
	return l
}

// words is the length asked of a narrative: target_compression of its
// range, within the narrative budget and a tenth of the summarizer's window.
func (s *Summarizer) words(rangeTokens int, b budgets) int {
	w := int(s.cfg.TargetCompression * float64(rangeTokens) * 0.75)
	return max(60, min(w, b.narrative*3/4, s.cfg.SummaryWindow/10))
}

// inputBudget is how many tokens of history one summarizer call may carry:
// well inside its window, after the prompt and the answer.
func (s *Summarizer) inputBudget(words int) int {
	return max(400, int(0.6*float64(s.cfg.SummaryWindow))-450-answerTokens(words))
}

// errAnswer describes a summarizer answer that cannot be used.
type errAnswer struct{ why string }

func (e *errAnswer) Error() string { return "unusable summarizer answer: " + e.why }

// call makes one summarizer request, again after a failure while the
// compaction's allowance of failures lasts. An empty answer, one at
// least as long as its input, or one validateNarrative rejects (garbage,
// an echo of the prompt) is a failure too.
func (s *Summarizer) call(ctx context.Context, req Request, inputTokens int, a *attempts) (string, error) {
	backoff := s.cfg.RetryBackoff
	for {
		if a.left <= 0 {
			return "", errors.New("no attempts left")
		}
		actx, cancel := context.WithTimeout(ctx, s.cfg.AttemptTimeout)
		c, err := s.llm.Complete(actx, req)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if err == nil {
			err = s.checkAnswer(c.Text, req, inputTokens)
		} else if timedOut {
			err = fmt.Errorf("no answer within %s: %w", s.cfg.AttemptTimeout, err)
		}
		s.addStats(req, c, err)
		if err == nil {
			return c.Text, nil
		}
		a.left--
		if ctx.Err() != nil {
			return "", fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		}
		if a.left <= 0 {
			return "", err
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		}
		backoff *= 2
	}
}

func (s *Summarizer) checkAnswer(text string, req Request, inputTokens int) error {
	nar := parseNarrative(text)
	clean := nar.text
	if strings.TrimSpace(clean) == "" {
		return &errAnswer{why: "empty"}
	}
	if n := s.counter.Count(clean); inputTokens > 0 && n >= inputTokens {
		return &errAnswer{why: fmt.Sprintf("%d tokens, not shorter than its %d-token input", n, inputTokens)}
	}
	return validateNarrative(nar, req)
}

// mergeIfOver merges the oldest summaries into one when the block passed
// its budget: an LLM merge of their narratives and the union of their
// facts. If the summarizer fails, the narratives are shortened instead,
// flagged Fallback; the merged summaries stay in the store. lctx bounds
// the summarizer's calls.
func (s *Summarizer) mergeIfOver(ctx, lctx context.Context, st *sessState, id, focus string, m mode, eff int) (*session.Summary, error) {
	v, err := s.store.LoadView(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	fixed := s.fixedCost()
	b := s.budgets(fixed)
	if len(v.Summaries) < 2 || blockTokens(v.Summaries) <= b.block {
		return nil, nil
	}
	pick := v.Summaries[:len(v.Summaries)-1]
	if len(pick) < 2 {
		pick = v.Summaries
	}
	start := s.cfg.Now()
	merged := union(pick)
	merged.SessionID, merged.FromSeq, merged.ToSeq = id, pick[0].FromSeq, pick[len(pick)-1].ToSeq
	var ids, parts, labels []string
	chunks := 0
	for _, p := range pick {
		ids = append(ids, p.ID)
		chunks += max(p.Chunks, 1)
		if p.Focus != "" {
			merged.Focus = p.Focus
		}
		if c := strings.TrimSpace(p.Content); c != "" {
			parts = append(parts, c)
			labels = append(labels, fmt.Sprintf("Messages %d-%d", p.FromSeq, p.ToSeq))
		}
	}
	merged.Merged, merged.Chunks = ids, chunks
	words := s.words(1<<30, b)
	switch {
	case len(parts) == 0:
		merged.Fallback = true
		merged.FallbackReason = "merged summaries that had no narrative"
	case len(parts) == 1:
		merged.Content = parts[0]
	case m != modeManual && s.llmHeld(st, eff):
		merged.Content = shortenParts(parts, labels, b.narrative*4)
		merged.Fallback, merged.FallbackReason = true, "the summarizer is failing; narratives shortened"
	default:
		text, err := s.reduce(lctx, parts, labels, focus, words, &attempts{left: s.cfg.MaxAttempts})
		s.noteLLM(st, err, eff)
		if err != nil {
			merged.Content = shortenParts(parts, labels, b.narrative*4)
			merged.Fallback = true
			merged.FallbackReason = oneLine(clip(redactString("merge: "+err.Error(), s.cfg.RedactSecrets), 300))
		} else {
			nar := parseNarrative(text)
			merged.Content, merged.Goal, merged.CurrentState = nar.text, nar.goal, nar.currentState
			merged.Topics, merged.NextSteps = nar.topics, nar.nextSteps
			if len(nar.decisions) > 0 {
				merged.KeyDecisions = nar.decisions
			}
			merged.Model = s.cfg.Model
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	s.finish(&merged, b)
	rest := append([]session.Summary{merged}, v.Summaries[len(pick):]...)
	before := s.view.Tokens(v)
	after := s.view.Tokens(session.View{Session: v.Session, Summaries: rest, Messages: v.Messages})
	if after >= before {
		return nil, nil
	}
	merged.TokensBefore, merged.TokensAfter = before, after
	merged.MessagesBefore, merged.MessagesAfter = len(v.Messages), len(v.Messages)
	merged.Duration = s.cfg.Now().Sub(start)
	applied, err := s.store.ApplySummary(ctx, merged, ids, false)
	if err != nil {
		return nil, fmt.Errorf("apply merged summary: %w", err)
	}
	st.bump()
	return &applied, nil
}

// upgrade writes the narrative of a summary that was applied without one
// because a turn could not wait, and puts it in place of that summary if it
// is still active and the context still fits.
func (s *Summarizer) upgrade(ctx context.Context, st *sessState, id string, target session.Summary) (Report, error) {
	st.run.Lock()
	defer st.run.Unlock()
	start := s.cfg.Now()
	rep := Report{SessionID: id, Phase: Failed, Background: true,
		Reason: fmt.Sprintf("narrative of messages %d-%d", target.FromSeq, target.ToSeq)}
	fail := func(err error) (Report, error) {
		rep.Err, rep.Duration = err, s.cfg.Now().Sub(start)
		return rep, err
	}
	v, err := s.store.LoadView(ctx, id)
	if err != nil {
		return fail(fmt.Errorf("load session %s: %w", id, err))
	}
	idx := -1
	for i, x := range v.Summaries {
		if x.ID == target.ID {
			idx = i
		}
	}
	if idx < 0 {
		return fail(fmt.Errorf("summary of messages %d-%d was merged or replaced meanwhile: %w", target.FromSeq, target.ToSeq, session.ErrRangeTaken))
	}
	msgs, err := s.store.Messages(ctx, id, target.FromSeq, target.ToSeq)
	if err != nil {
		return fail(fmt.Errorf("load messages %d-%d: %w", target.FromSeq, target.ToSeq, err))
	}
	rangeTokens := 0
	for _, m := range msgs {
		rangeTokens += m.Tokens
	}
	if s.cfg.RedactSecrets {
		msgs = redactMessages(msgs)
	}
	b := s.budgets(s.fixedCost())
	lctx, lcancel := context.WithCancel(ctx)
	defer lcancel()
	st.setHurry(lcancel)
	defer st.setHurry(nil)
	nar, chunks, err := s.narrate(lctx, msgs, target.Focus, s.words(rangeTokens, b), &attempts{left: s.cfg.MaxAttempts})
	if ctx.Err() == nil && !errors.Is(lctx.Err(), context.Canceled) {
		s.noteLLM(st, err, st.effective(s.view.Tokens(v)))
	}
	if err != nil {
		return fail(fmt.Errorf("the summary of messages %d-%d keeps its facts only: %w", target.FromSeq, target.ToSeq, err))
	}
	up := target
	up.ID, up.SupersededBy, up.GeneratedAt = "", "", time.Time{}
	up.Content, up.Goal, up.CurrentState = nar.text, nar.goal, nar.currentState
	up.Topics, up.NextSteps, up.Model, up.Chunks = nar.topics, nar.nextSteps, s.cfg.Model, chunks
	if len(nar.decisions) > 0 {
		up.KeyDecisions = nar.decisions
	}
	up.Fallback, up.FallbackReason, up.Merged = false, "", []string{target.ID}
	s.finish(&up, b)
	sums := append([]session.Summary{}, v.Summaries...)
	sums[idx] = up
	after := s.view.Tokens(session.View{Session: v.Session, Summaries: sums, Messages: v.Messages})
	if _, hard := s.thresholds(); st.effective(after) >= hard {
		return fail(fmt.Errorf("%w: the narrative would bring the context to the hard threshold", ErrNoReduction))
	}
	up.Duration = target.Duration + s.cfg.Now().Sub(start)
	applied, err := s.store.ApplySummary(ctx, up, []string{target.ID}, s.cfg.DeleteOriginals && !up.Fallback)
	if err != nil {
		return fail(fmt.Errorf("apply the narrative of messages %d-%d: %w", target.FromSeq, target.ToSeq, err))
	}
	st.bump()
	rep.Phase, rep.Summary, rep.Duration = Finished, &applied, s.cfg.Now().Sub(start)
	return rep, nil
}

// shortenParts is the merge without an LLM: each narrative's head, within
// an equal share of chars.
func shortenParts(parts, labels []string, chars int) string {
	share := max(200, chars/len(parts))
	var b strings.Builder
	for i, p := range parts {
		fmt.Fprintf(&b, "### %s\n%s\n\n", labels[i], clip(p, share))
	}
	return strings.TrimSpace(b.String())
}
