package summarize

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gencode/gencode/internal/session"
)

// narrateCompaction writes a compaction's narrative. When the summarizer
// is the agent's model (CachedPrefix) and the conversation fits its
// window, the request continues the conversation as the agent last sent it,
// which the provider has cached, with the instruction as its last user
// message; otherwise the range is pasted as a transcript (narrate).
func (s *Summarizer) narrateCompaction(ctx context.Context, c *compaction, a *attempts) (narrative, int, error) {
	req, ok := s.cachedPrefixRequest(c)
	if !ok {
		return s.narrate(ctx, c.rng, c.focus, c.words, a)
	}
	text, err := s.call(ctx, req, c.rangeTokens, a)
	if err != nil {
		return narrative{}, 0, fmt.Errorf("summarize messages %d-%d: %w", c.facts.FromSeq, c.facts.ToSeq, err)
	}
	return parseNarrative(text), 1, nil
}

// cachedPrefixRequest is the summary request that continues the
// conversation: the request the agent sends for the compaction's view, up
// to the range's end, then the instruction. Roles stay valid for strict
// templates: the conversation part ends with the system message or an
// assistant message without tool calls, and the range's messages after
// that point are pasted into the instruction. ok is false when the
// summarizer is not the agent's model, the range is not in the
// conversation (a refocus), or the request would not fit its window.
func (s *Summarizer) cachedPrefixRequest(c *compaction) (Request, bool) {
	if !s.cfg.CachedPrefix || c.refocus() {
		// A refocus summarizes a range the conversation no longer holds.
		return Request{}, false
	}
	p := s.view.Build(c.view)
	last := c.facts.ToSeq
	n := 0
	for i, m := range p.Messages {
		if m.Seq > last {
			break
		}
		n = i + 1
	}
	conv := p.Messages[:n]
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
		return Request{}, false
	}
	var pasted []entry
	for _, e := range renderTranscript(c.rng) {
		if slices.Contains(pastedSeqs, e.seq) {
			pasted = append(pasted, e)
		}
	}
	// What the request costs: the head (system prompt and summaries) and
	// the log's messages by their counts in the view, the pasted ones by
	// their size.
	tokens := p.Fixed + p.Summaries + 500 + answerTokens(c.words)
	for _, m := range conv {
		tokens += m.Tokens
	}
	for _, e := range pasted {
		tokens += len(e.text)/3 + 4
	}
	if tokens > s.cfg.SummaryWindow*9/10 {
		return Request{}, false
	}
	if s.cfg.RedactSecrets {
		// Redaction changes nothing in a conversation without secrets,
		// which stays the cached prefix; one with a secret is sent
		// without it.
		conv = redactMessages(conv)
	}
	return prefixRequest(s.cfg.Model, conv, pasted, c.facts.FromSeq, last, c.focus, c.words), true
}

// narrate asks the summarizer for the narrative of rng (redacted),
// pasted as a transcript, in chunks that fit its window when the range
// does not, then merged. Chunks are sized from the messages' stored
// counts: nothing is tokenized again.
func (s *Summarizer) narrate(ctx context.Context, rng []session.Message, focus string, words int, a *attempts) (narrative, int, error) {
	entries := renderTranscript(rng)
	budget := s.inputBudget(words)
	for i := range entries {
		entries[i].tokens = estimateTokens(rng[i], len(entries[i].text))
		if entries[i].tokens > budget {
			// One message larger than a whole chunk: keep its head and tail.
			entries[i].text = headTail(entries[i].text, budget*3)
			entries[i].tokens = estimateTokens(rng[i], len(entries[i].text))
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
// an echo of the prompt) is a failure too.
func (s *Summarizer) call(ctx context.Context, req Request, inputTokens int, a *attempts) (string, error) {
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

// estimateTokens is the tokens of n bytes of text rendered from m, scaled
// from m's stored count by the bytes per token of its own text (about 4
// for English, clamped to 1-8), so that nothing is tokenized twice.
func estimateTokens(m session.Message, n int) int {
	size := len(m.Content)
	for _, c := range m.ToolCalls {
		size += len(c.Name) + len(c.Arguments)
	}
	perToken := 4.0
	if m.Tokens > 0 && size > 0 {
		perToken = min(8, max(1, float64(size)/float64(m.Tokens)))
	}
	return int(float64(n)/perToken) + 1
}
