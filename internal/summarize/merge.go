package summarize

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gencode/gencode/internal/facts"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/view"
)

// mergeIfOver merges the oldest summaries into one when the block passed
// its budget: an LLM merge of their narratives and the facts.Union of their
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
	if len(v.Summaries) < 2 || view.BlockTokens(v.Summaries) <= b.block {
		return nil, nil
	}
	pick := v.Summaries[:len(v.Summaries)-1]
	if len(pick) < 2 {
		pick = v.Summaries
	}
	start := s.cfg.Now()
	merged := facts.Union(pick)
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
	f := s.fitFor(st)
	words := func() int { return s.words(1<<30, b, f.window()) }
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
		text, err := s.reduce(lctx, f, parts, labels, focus, words, &attempts{left: s.cfg.MaxAttempts, session: id})
		s.noteLLM(st, err, eff)
		if err != nil {
			merged.Content = shortenParts(parts, labels, b.narrative*4)
			merged.Fallback = true
			merged.FallbackReason = facts.OneLine(facts.Clip(redactString("merge: "+err.Error(), s.cfg.RedactSecrets), 300))
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

// upgradeFeed is the range an upgrade narrates and its stored tokens: the
// messages the compaction that applied target read (planned), already
// redacted when redact_secrets is set and without the messages a rewind
// took back, as its facts were extracted from them; else (a long log's
// first compaction, read a page at a time, or a range that is not
// target's) the range read from the log as the view has it, a page at a
// time, redacted again. stop ends the read.
func (s *Summarizer) upgradeFeed(ctx context.Context, id string, target session.Summary, planned []session.Message) (src *feed, tokens int, stop func(), err error) {
	if n := len(planned); n > 0 && planned[0].Seq == target.FromSeq && planned[n-1].Seq == target.ToSeq {
		for _, m := range planned {
			tokens += m.Tokens
		}
		return sliceFeed(transcriptEntries(planned)), tokens, func() {}, nil
	}
	rewound, err := s.store.Rewound(ctx, id)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("load messages %d-%d: %w", target.FromSeq, target.ToSeq, err)
	}
	heads, err := s.store.Heads(ctx, id, target.FromSeq, target.ToSeq)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("load messages %d-%d: %w", target.FromSeq, target.ToSeq, err)
	}
	for _, h := range heads {
		if !rewound(h.Seq) {
			tokens += h.Tokens
		}
	}
	src, stop = s.logFeed(ctx, id, target.FromSeq, target.ToSeq, tokens, false, rewound)
	return src, tokens, stop, nil
}

// upgrade writes the narrative of a summary that was applied without one
// because a turn could not wait, and puts it in place of that summary if it
// is still active and the context still fits. planned is the range as the
// compaction read it (see upgradeFeed).
func (s *Summarizer) upgrade(ctx context.Context, st *sessState, id string, target session.Summary, planned []session.Message) (Report, error) {
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
	src, rangeTokens, stop, err := s.upgradeFeed(ctx, id, target, planned)
	if err != nil {
		return fail(err)
	}
	defer stop()
	b := s.budgets(s.fixedCost())
	lctx, lcancel := context.WithCancel(ctx)
	defer lcancel()
	st.setHurry(lcancel)
	defer st.setHurry(nil)
	f := s.fitFor(st)
	words := func() int { return s.words(rangeTokens, b, f.window()) }
	nar, chunks, err := s.narrate(lctx, f, src, target.Focus, words, &attempts{left: s.cfg.MaxAttempts, session: id})
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
		fmt.Fprintf(&b, "### %s\n%s\n\n", labels[i], facts.Clip(p, share))
	}
	return strings.TrimSpace(b.String())
}
