package summarize

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/view"
)

// narrateCompaction writes a compaction's narrative. When the summarizer
// is the agent's model (CachedPrefix) and the conversation fits the
// summarizer's window, the request continues the conversation as the agent
// last sent it, which the provider has cached, with the instruction as its
// last user message: the cheap path. Otherwise the range is pasted as a
// transcript, in chunks that fit (narrate). A refusal for the window
// shrinks it and plans again; the same request is never sent twice.
func (s *Summarizer) narrateCompaction(ctx context.Context, st *sessState, c *compaction, a *attempts) (narrative, int, error) {
	f := s.fitFor(st)
	words := func() int { return s.words(c.rangeTokens, c.b, f.window()) }
	if c.src != nil {
		// A long range read from the log: no conversation holds it.
		return s.narrate(ctx, f, c.src, c.focus, words, a)
	}
	for replans := 0; ; replans++ {
		req, n, ok := s.cachedPrefixRequest(c, f, words())
		if !ok {
			break
		}
		text, err := s.call(ctx, req, c.rangeTokens, n, a)
		if err == nil {
			return parseNarrative(text), 1, nil
		}
		if !f.refused(err, n) || replans >= maxReplans {
			return narrative{}, 0, fmt.Errorf("summarize messages %d-%d: %w", c.facts.FromSeq, c.facts.ToSeq, err)
		}
	}
	return s.narrate(ctx, f, sliceFeed(transcriptEntries(c.rng)), c.focus, words, a)
}

// cachedPrefixRequest is the summary request that continues the
// conversation: the request the agent sends for the compaction's view, up
// to the range's end, then the instruction; n is its size, the answer's
// max tokens included. Roles stay valid for strict templates: the
// conversation part ends with the system message or an assistant message
// without tool calls, and the range's messages after that point are pasted
// into the instruction. ok is false when the summarizer is not the agent's
// model, the range is not in the conversation (a refocus), or the request
// would not fit the summarizer's window.
func (s *Summarizer) cachedPrefixRequest(c *compaction, f fit, words int) (req Request, n int, ok bool) {
	if !s.cfg.CachedPrefix || c.refocus() {
		// A refocus summarizes a range the conversation no longer holds.
		return Request{}, 0, false
	}
	p := s.view.Build(c.view)
	last := c.facts.ToSeq
	k := 0
	for i, m := range p.Messages {
		if m.Seq > last {
			break
		}
		k = i + 1
	}
	conv := p.Messages[:k]
	var pastedSeqs []int64
	for len(conv) > 0 {
		m := conv[len(conv)-1]
		if m.Role == session.RoleSystem || m.Role == session.RoleAssistant && len(m.ToolCalls) == 0 {
			break
		}
		if m.Seq > 0 {
			pastedSeqs = append(pastedSeqs, m.Seq)
		}
		conv = conv[:len(conv)-1]
	}
	if len(conv) == 0 {
		return Request{}, 0, false
	}
	// What the conversation costs, as the agent's requests are counted:
	// the head (system prompt, tool schemas, summaries) and the log's
	// messages by their counts in the view. Measured before anything is
	// rendered: a conversation far larger than the window stops here.
	n = p.Fixed + p.Summaries
	for _, m := range conv {
		n += m.Tokens
	}
	if !f.fits(n) {
		return Request{}, 0, false
	}
	var pasted []entry
	for _, e := range transcriptEntries(c.rng) {
		if slices.Contains(pastedSeqs, e.seq) {
			pasted = append(pasted, e)
			n += e.tokens
		}
	}
	if s.cfg.RedactSecrets {
		// Redaction changes nothing in a conversation without secrets,
		// which stays the cached prefix; one with a secret is sent
		// without it.
		conv = redactMessages(conv)
	}
	req = prefixRequest(s.cfg.Model, conv, pasted, c.facts.FromSeq, last, c.focus, words)
	// The instruction is counted; the messages pasted into it were
	// estimated from their stored counts.
	n += s.textTokens(session.RoleUser, prefixRequest(s.cfg.Model, nil, nil, c.facts.FromSeq, last, c.focus, words).Prompt) +
		replyPriming + req.MaxTokens
	if !f.fits(n) {
		return Request{}, 0, false
	}
	return req, n, true
}

// narrate asks the summarizer for the narrative of rng (redacted), pasted
// as a transcript, in chunks that fit its window when the range does not,
// then merged (reduce). Chunks are planned from the messages' stored
// counts; each request is counted before it is sent, and one that would
// not fit is planned smaller. A refusal for the window shrinks the window
// and plans what is left again; chunks already summarized are kept.
// words gives the length asked of each answer, for the window as it is.
// Nothing of the range is tokenized: a chunk's size is its overhead,
// counted once, plus its messages' estimates.
func (s *Summarizer) narrate(ctx context.Context, f fit, src *feed, focus string, words func() int, a *attempts) (narrative, int, error) {
	var parts, labels []string
	overheads := map[int]int{} // by words
	replans := 0
	for {
		w := words()
		overhead, ok := overheads[w]
		if !ok {
			overhead = s.chunkOverhead(w, focus)
			overheads[w] = overhead
		}
		budget := f.room(overhead, answerTokens(w))
		if budget < minInput {
			return narrative{}, 0, f.tooSmall()
		}
		if err := src.fill(budget); err != nil {
			return narrative{}, 0, err
		}
		if len(src.buf) == 0 {
			break
		}
		chunks := planChunks(src.buf, budget)
		ch := chunks[0]
		req := summaryRequest(s.cfg.Model, ch, len(parts)+1, len(parts)+len(chunks)+(src.left+budget-1)/budget, focus, w)
		in := 0
		for _, e := range ch {
			in += e.tokens
		}
		n := overhead + in + req.MaxTokens
		text, err := s.call(ctx, req, in, n, a)
		if err != nil {
			if f.refused(err, n) && replans < maxReplans {
				replans++
				continue
			}
			return narrative{}, 0, fmt.Errorf("summarize messages %d-%d: %w", ch[0].seq, ch[len(ch)-1].seq, err)
		}
		parts = append(parts, text)
		labels = append(labels, fmt.Sprintf("Messages %d-%d", ch[0].seq, ch[len(ch)-1].seq))
		src.consume(len(ch))
	}
	if len(parts) == 1 {
		return parseNarrative(parts[0]), 1, nil
	}
	text, err := s.reduce(ctx, f, parts, labels, focus, words, a)
	if err != nil {
		return narrative{}, 0, err
	}
	return parseNarrative(text), len(parts), nil
}

// reduce merges narratives, oldest first, in as many rounds as the
// summarizer's window needs. Every part is held to half of what a merge
// request may carry (cut to its head and tail if the summarizer wrote more
// than it was asked), so that at least two merge each time and every round
// leaves fewer parts: merging ends. A refusal for the window shrinks it,
// and the round goes on with what is left, planned again.
func (s *Summarizer) reduce(ctx context.Context, f fit, parts, labels []string, focus string, words func() int, a *attempts) (string, error) {
	parts, labels = slices.Clone(parts), slices.Clone(labels)
	replans := 0
	for len(parts) > 1 {
		w := words()
		overhead := s.mergeOverhead(w, focus)
		room := f.room(overhead, answerTokens(w))
		per := partLimit(room)
		if per < minInput/2 {
			return "", f.tooSmall()
		}
		sizes := make([]int, len(parts))
		for i, p := range parts {
			var n int
			parts[i], n = s.fitText(p, per)
			sizes[i] = n + mergeLabelTokens
		}
		var nextParts, nextLabels []string
		i := 0
		for _, j := range planMerge(sizes, room) {
			if j-i == 1 {
				nextParts, nextLabels = append(nextParts, parts[i]), append(nextLabels, labels[i])
				i = j
				continue
			}
			req := mergeRequest(s.cfg.Model, parts[i:j], labels[i:j], focus, w)
			in := 0
			for _, sz := range sizes[i:j] {
				in += sz
			}
			label := labelsOf(labels[i:j])
			text, err := s.call(ctx, req, in, overhead+in+req.MaxTokens, a)
			if err != nil {
				if f.refused(err, overhead+in+req.MaxTokens) && replans < maxReplans {
					replans++
					break
				}
				return "", fmt.Errorf("merge summaries of messages %s: %w", label, err)
			}
			nextParts, nextLabels = append(nextParts, text), append(nextLabels, "Messages "+label)
			i = j
		}
		// What was merged stays merged; what was not is planned again.
		parts, labels = append(nextParts, parts[i:]...), append(nextLabels, labels[i:]...)
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

// transcriptEntries renders rng (redacted) for the summarizer, each entry
// with its size estimated from its message's stored count.
func transcriptEntries(rng []session.Message) []entry {
	entries := renderTranscript(rng)
	for i := range entries {
		entries[i].bpt = bytesPerToken(rng[i])
		entries[i].full = entries[i].text
		entries[i].tokens = tokensOf(entries[i].text, entries[i].bpt)
	}
	return entries
}

// words is the length asked of a narrative: target_compression of its
// range, within the narrative budget, a tenth of the summarizer's window
// and what lets a merge of two such answers, with its own answer, fit the
// window.
func (s *Summarizer) words(rangeTokens int, b budgets, window int) int {
	w := int(s.cfg.TargetCompression * float64(rangeTokens) * 0.75)
	mergeable := (window*fitNum/fitDen - 700) / 6
	return max(60, min(w, b.narrative*3/4, window/10, mergeable))
}

// silent reports an error saying that the endpoint stayed silent past a
// timeout: one with a Timeout method that says so (the LLM client's
// timeouts, net.Error's), or a deadline.
func silent(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout() || errors.Is(err, context.DeadlineExceeded)
}

// errAnswer describes a summarizer answer that cannot be used.
type errAnswer struct{ why string }

func (e *errAnswer) Error() string { return "unusable summarizer answer: " + e.why }

// call makes one summarizer request, again after a failure while the
// compaction's allowance of failures lasts. An empty answer, one at
// least as long as its input, or one validateNarrative rejects (garbage,
// an echo of the prompt) is a failure too. n is the request's size as the
// summarizer measured it, the answer's max tokens included: an answer
// whose prompt_tokens fall short of it past the server's cut tolerance
// (the agent's, view.Policy.IsCut) came from a prompt the server cut (Ollama,
// silently). It is not used: it is returned as an OverflowError naming
// the window the server kept, so that the caller plans smaller requests.
func (s *Summarizer) call(ctx context.Context, req Request, inputTokens, n int, a *attempts) (string, error) {
	backoff := s.cfg.RetryBackoff
	req.SessionID = a.session
	for {
		if a.left <= 0 {
			return "", errors.New("no attempts left")
		}
		actx, cancel := context.WithTimeout(ctx, s.cfg.AttemptTimeout)
		c, err := s.llm.Complete(actx, req)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if sent := n - req.MaxTokens; err == nil && s.view.IsCut(sent, c.PromptTokens) {
			s.cfg.Logger.Warn("the server cut a summary request; its answer is not used",
				"sent", sent, "prompt_tokens", c.PromptTokens)
			err = &OverflowError{Window: max(c.PromptTokens, view.MinCutWindow), Err: view.ErrPromptCut}
		}
		if err == nil {
			err = s.checkAnswer(c.Text, req, inputTokens)
		} else if timedOut {
			err = fmt.Errorf("no answer within %s: %w", s.cfg.AttemptTimeout, err)
		}
		s.addStats(req, c, err)
		if err == nil {
			return c.Text, nil
		}
		if oe := (*OverflowError)(nil); errors.As(err, &oe) {
			// Sent again it would be refused again: the caller plans a
			// smaller request. Not a failure of the summarizer.
			return "", err
		}
		a.left--
		if ctx.Err() != nil {
			return "", fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		}
		if timedOut || silent(err) {
			// A summarizer that stays silent past its timeout is not
			// asked again in this compaction, for another attempt, chunk
			// or merge: each would wait as long, and the deterministic
			// summary is ready now.
			a.left, a.silent = 0, true
			return "", err
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
