package summarize

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/view"
)

// Every summary request is measured, before it is sent, against the window
// it is sent to: the summarizer model's, or the smaller one its endpoint
// named when it refused a request (llama.cpp's n_ctx, "maximum context
// length is N"), or the one the agent learned when the summarizer is the
// agent's model on its endpoint. A request that would not fit is not sent:
// the range goes in smaller chunks. A request the endpoint refuses all the
// same is never sent again unchanged: the window is learned smaller than
// that request, and what remains is planned again.

// OverflowError is a summary request the endpoint refused as larger than
// its context window. The Completer returns it (wrapping the provider's
// error) so that the summarizer plans smaller requests instead of sending
// the same one again.
type OverflowError struct {
	// Window is the context window the endpoint named, 0 when it did not.
	Window int
	Err    error
}

func (e *OverflowError) Error() string {
	if e.Err == nil {
		return "context window exceeded"
	}
	return e.Err.Error()
}

func (e *OverflowError) Unwrap() error { return e.Err }

const (
	// A request is planned to take at most fitNum/fitDen of its window:
	// the project's tokenizer is not the server's.
	fitNum, fitDen = 9, 10
	// minInput is the least history, in tokens, one summary request must be
	// able to carry; in a window with less room there is nothing to ask.
	minInput = 150
	// maxReplans bounds how often one summary (or merge) is planned again
	// after a refusal. Each refusal shrinks the window by a tenth at least,
	// so this is a guard, not the policy.
	maxReplans = 12
	// replyPriming is what a chat request adds once for the answer
	// (tokens.ReplyPriming).
	replyPriming = 3
)

// summaryWindow is the window summary requests are sent to: the
// summarizer model's; the smaller one a refusal of a summary request
// named; and, when the summarizer is the agent's model on the agent's
// endpoint (CachedPrefix), the window the agent learned from its own
// refusals.
func (s *Summarizer) summaryWindow() int {
	w := s.cfg.SummaryWindow
	if s.cfg.CachedPrefix {
		w = min(w, s.view.Window())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.learned > 0 {
		w = min(w, s.learned)
	}
	return w
}

// learnWindow keeps a smaller window for the summarizer's requests: w,
// at most what a refused request took. named is the window the endpoint
// named (0: none); the agent's policy learns it too when the summarizer is
// the agent's model on its endpoint.
func (s *Summarizer) learnWindow(w, named int, cut bool) {
	s.mu.Lock()
	before := s.learned
	if s.learned == 0 || w < s.learned {
		s.learned = w
	}
	after := s.learned
	s.mu.Unlock()
	if named > 0 && s.cfg.CachedPrefix {
		if cut {
			s.view.LearnFrom(named, "server, cut")
		} else {
			s.view.Learn(named)
		}
	}
	if after != before && cut {
		s.cfg.Logger.Info("a summary request was cut by the server; planning smaller requests",
			"window", after, "kept", named)
	} else if after != before {
		s.cfg.Logger.Info("a summary request was refused as too large; planning smaller requests",
			"window", after, "named", named)
	}
}

// fit holds a compaction's summary requests to the summarizer's window.
type fit struct {
	s *Summarizer
	// st calibrates the project's counts with what the provider counted
	// for the session's requests (nil: none).
	st *sessState
}

func (s *Summarizer) fitFor(st *sessState) fit { return fit{s: s, st: st} }

// ratio is how many tokens the provider counts for one of ours, at least 1.
func (f fit) ratio() float64 {
	if f.st == nil {
		return 1
	}
	f.st.mu.Lock()
	defer f.st.mu.Unlock()
	return max(1, f.st.ratio)
}

func (f fit) window() int { return f.s.summaryWindow() }

// limit is the most a request may take, in the project's tokens.
func (f fit) limit() int {
	return int(float64(f.window()*fitNum/fitDen) / f.ratio())
}

// fits reports whether a request of n tokens (the project's count, the
// answer's max tokens included) may be sent.
func (f fit) fits(n int) bool { return n <= f.limit() }

// room is what a request may carry besides overhead and its answer.
func (f fit) room(overhead, answer int) int { return f.limit() - overhead - answer }

// refused reports whether err is the endpoint refusing a request of sent
// tokens as larger than its window (or answering it after a silent cut,
// which is treated the same), and if so learns a window smaller than
// that request, so that no request that large is sent again: the one the
// endpoint named, or, when it named none, half the refused request (a
// tenth less at a time would take a dozen refusals to come down from a
// window believed far too large).
func (f fit) refused(err error, sent int) bool {
	var oe *OverflowError
	if !errors.As(err, &oe) {
		return false
	}
	w := int(float64(sent) * f.ratio())
	if oe.Window > 0 {
		w = min(w, oe.Window)
	} else {
		w /= 2
	}
	f.s.learnWindow(max(1, w), oe.Window, errors.Is(oe, view.ErrPromptCut))
	return true
}

// tooSmall is the error of a window too small for any summary request.
func (f fit) tooSmall() error {
	return fmt.Errorf("the summarizer's context window (%d tokens) leaves no room for a summary request", f.window())
}

// requestTokens is a pasted request's size as the project counts it: its
// two messages with their framing, the reply priming and the answer's
// max tokens.
func (s *Summarizer) requestTokens(req Request) int {
	return s.textTokens(session.RoleSystem, req.System) + s.textTokens(session.RoleUser, req.Prompt) + replyPriming + req.MaxTokens
}

// textTokens is what a message of role holding text takes in a request:
// the one formula (view.MessageTokens) over the summarizer's tokenizer.
func (s *Summarizer) textTokens(role session.Role, text string) int {
	return view.MessageTokens(s.counter.Count, session.Message{Role: role, Content: text})
}

// fitText cuts text to its head and tail until it counts at most limit
// tokens (text within the limit is returned as it is), and returns its
// count.
func (s *Summarizer) fitText(text string, limit int) (string, int) {
	n := s.counter.Count(text)
	chars := len(text)
	out := text
	for n > limit && chars > 0 {
		chars = int(float64(chars) * float64(limit) / float64(n) * 0.9)
		out = headTail(text, chars)
		n = s.counter.Count(out)
	}
	return out, n
}

// bytesPerToken is how many bytes a token of m's text takes, from its
// stored count (about 4 for English, clamped to 1-8): what the texts
// rendered from m are estimated with, so that nothing is tokenized twice.
func bytesPerToken(m session.Message) float64 {
	size := len(m.Content)
	for _, c := range m.ToolCalls {
		size += len(c.Name) + len(c.Arguments)
	}
	if m.Tokens > 0 && size > 0 {
		return min(8, max(1, float64(size)/float64(m.Tokens)))
	}
	return 4
}

// tokensOf estimates the tokens of text at bpt bytes a token.
func tokensOf(text string, bpt float64) int {
	if bpt <= 0 {
		bpt = 4
	}
	return int(float64(len(text))/bpt) + 1
}

// cutEntry cuts an entry larger than budget tokens to its head and tail,
// from its whole text, until its estimate is within budget (or only the
// line saying what was cut is left).
func cutEntry(e entry, budget int) entry {
	if e.tokens <= budget {
		return e
	}
	full := e.full
	if full == "" {
		full = e.text
	}
	chars := int(float64(budget) * e.bpt * 0.9)
	for {
		e.text = headTail(full, max(0, chars))
		e.tokens = tokensOf(e.text, e.bpt)
		if e.tokens <= budget || chars <= 0 {
			return e
		}
		chars = chars * 3 / 4
	}
}

// planChunks groups entries, oldest first, into chunks of at most budget
// estimated tokens each; an entry larger than budget is cut to its head
// and tail first (never sent whole). No chunk is empty; the chunks hold
// every entry, in order.
func planChunks(entries []entry, budget int) [][]entry {
	budget = max(1, budget)
	var chunks [][]entry
	var cur []entry
	used := 0
	for _, e := range entries {
		e = cutEntry(e, budget)
		if len(cur) > 0 && used+e.tokens > budget {
			chunks = append(chunks, cur)
			cur, used = nil, 0
		}
		cur = append(cur, e)
		used += e.tokens
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	return chunks
}

// planMerge groups parts of the given sizes, oldest first, into merges of
// at most room tokens each: it returns where each group ends (exclusive).
// A group holds at least two parts when two fit; so when every part is at
// most room/2, each round of merges leaves fewer parts than it was given,
// and merging terminates.
func planMerge(sizes []int, room int) []int {
	var ends []int
	for i := 0; i < len(sizes); {
		j, used := i, 0
		for j < len(sizes) && (j == i || used+sizes[j] <= room) {
			used += sizes[j]
			j++
		}
		ends = append(ends, j)
		i = j
	}
	return ends
}

// chunkOverhead is what a chunk's request takes besides its history: the
// system prompt and the lines around the history.
func (s *Summarizer) chunkOverhead(words int, focus string) int {
	probe := summaryRequest(s.cfg.Model, []entry{{seq: 1}}, 1, 2, focus, words)
	probe.MaxTokens = 0
	return s.requestTokens(probe) + 8
}

// mergeOverhead is what a merge request takes besides its parts: the
// system prompt, the tags and the focus line; each part adds its label.
func (s *Summarizer) mergeOverhead(words int, focus string) int {
	probe := mergeRequest(s.cfg.Model, nil, nil, focus, words)
	probe.MaxTokens = 0
	return s.requestTokens(probe) + 8
}

// mergeLabelTokens is what a part's label ("### Messages 10-20") adds.
const mergeLabelTokens = 12

// partLimit is the most one part of a merge may take, so that two always
// fit in room.
func partLimit(room int) int { return room/2 - mergeLabelTokens }

// labelsOf joins the labels of merged parts: "Messages 3-40".
func labelsOf(labels []string) string {
	if len(labels) == 1 {
		return strings.TrimPrefix(labels[0], "Messages ")
	}
	return firstSeq(labels[0]) + "-" + lastSeq(labels[len(labels)-1])
}
