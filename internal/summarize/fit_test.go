package summarize

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// textEntry is an entry of n bytes at 4 bytes a token, its text made of
// a head, filler and a tail a test can look for.
func textEntry(seq int64, n int) entry {
	head, tail := fmt.Sprintf("HEAD%d ", seq), fmt.Sprintf(" TAIL%d", seq)
	text := head + strings.Repeat("x", max(0, n-len(head)-len(tail))) + tail
	return entry{seq: seq, text: text, full: text, bpt: 4, tokens: tokensOf(text, 4)}
}

func TestPlanChunks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		sizes  []int // bytes of each entry
		budget int   // tokens
		// wantChunks is how many chunks; -1: not checked.
		wantChunks int
		wantCut    []int // indexes of entries that must be cut
	}{
		{name: "all in one", sizes: []int{400, 400, 400}, budget: 1000, wantChunks: 1},
		{name: "two per chunk", sizes: []int{400, 400, 400, 400}, budget: 210, wantChunks: 2},
		{name: "one larger than a chunk", sizes: []int{400, 40000, 400}, budget: 500, wantChunks: 3, wantCut: []int{1}},
		{name: "every one larger than a chunk", sizes: []int{9000, 9000, 9000}, budget: 300, wantChunks: 3, wantCut: []int{0, 1, 2}},
		{name: "tiny budget", sizes: []int{4000, 100, 100, 100}, budget: 40, wantChunks: -1, wantCut: []int{0}},
		{name: "many small", sizes: repeatInts(97, 300), budget: 777, wantChunks: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var entries []entry
			for i, n := range tt.sizes {
				entries = append(entries, textEntry(int64(i+1), n))
			}
			chunks := planChunks(entries, tt.budget)
			if tt.wantChunks >= 0 {
				require.Len(t, chunks, tt.wantChunks)
			}
			var got []entry
			for _, ch := range chunks {
				require.NotEmpty(t, ch, "an empty chunk")
				sum := 0
				for _, e := range ch {
					sum += e.tokens
					require.Equal(t, tokensOf(e.text, e.bpt), e.tokens, "entry %d: its estimate is of its text", e.seq)
				}
				require.LessOrEqual(t, sum, tt.budget, "planChunks(%v, %d): a chunk of %d tokens", tt.sizes, tt.budget, sum)
				got = append(got, ch...)
			}
			require.Len(t, got, len(entries), "every entry, once")
			for i, e := range got {
				require.Equal(t, entries[i].seq, e.seq, "in order")
				if e.text == entries[i].text {
					continue
				}
				require.Contains(t, tt.wantCut, i, "entry %d cut though it fit", i)
			}
			for _, i := range tt.wantCut {
				e := got[i]
				require.NotEqual(t, entries[i].text, e.text, "entry %d sent whole", i)
				require.Less(t, len(e.text), len(entries[i].text))
				require.Contains(t, e.text, "characters cut", "entry %d: the cut is said", i)
				require.True(t, strings.HasPrefix(e.text, fmt.Sprintf("HEAD%d", e.seq)), "entry %d keeps its head: %q", i, e.text)
				require.True(t, strings.HasSuffix(e.text, fmt.Sprintf("TAIL%d", e.seq)), "entry %d keeps its tail: %q", i, e.text)
			}
		})
	}
}

func repeatInts(n, v int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestPlanMergeTerminates: parts held to half the room always merge at
// least two at a time, so rounds of merges end, each group within the room,
// in at most ceil(log2(n)) rounds.
func TestPlanMergeTerminates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		parts  int
		room   int
		answer int // size of a merge's answer, held to room/2 as reduce holds it
	}{
		{name: "two", parts: 2, room: 1000, answer: 300},
		{name: "many small", parts: 57, room: 2000, answer: 120},
		{name: "parts as large as allowed", parts: 40, room: 1000, answer: 500},
		{name: "answers longer than asked", parts: 33, room: 900, answer: 5000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			per := tt.room / 2
			sizes := repeatInts(tt.parts, min(tt.answer, per))
			rounds := 0
			for len(sizes) > 1 {
				rounds++
				require.LessOrEqual(t, rounds, int(math.Ceil(math.Log2(float64(tt.parts)))), "merging does not end")
				ends := planMerge(sizes, tt.room)
				var next []int
				i := 0
				for k, j := range ends {
					sum := 0
					for _, s := range sizes[i:j] {
						sum += s
					}
					require.LessOrEqual(t, sum, tt.room, "a merge of %d tokens in a room of %d", sum, tt.room)
					if k < len(ends)-1 {
						require.GreaterOrEqual(t, j-i, 2, "a group of one before the last")
					}
					next = append(next, min(tt.answer, per))
					i = j
				}
				require.Equal(t, len(sizes), i, "every part in a group")
				require.Less(t, len(next), len(sizes))
				sizes = next
			}
		})
	}
}

// serverLLM plays an endpoint with a window: a request larger than it
// (counted as charCounter counts, the answer's max tokens included) is
// refused as llama.cpp or OpenAI refuse it, with the window named or not;
// others get echoSummary, or answer's text when set.
type serverLLM struct {
	window int
	name   bool // the refusal names the window
	// cut: a request larger than the window is not refused but cut, as
	// Ollama cuts it: answered, with the prompt tokens it kept.
	cut    bool
	answer func(Request) string

	mu      sync.Mutex
	sent    []Request
	refused []string // the refused requests, as text
}

func (f *serverLLM) Complete(_ context.Context, req Request) (Completion, error) {
	n := requestSize(req)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, req)
	if n > f.window && f.cut {
		f.refused = append(f.refused, req.text())
		return Completion{Text: echoSummary(req) + "\n- " + fromACutPrompt, PromptTokens: f.window - req.MaxTokens - 40}, nil
	}
	if n > f.window {
		f.refused = append(f.refused, req.text())
		oe := &OverflowError{Err: fmt.Errorf("context window exceeded: request (%d tokens) exceeds the available context size", n)}
		if f.name {
			oe.Window = f.window
		}
		return Completion{}, oe
	}
	prompt := n - req.MaxTokens
	if f.answer != nil {
		return Completion{Text: f.answer(req), PromptTokens: prompt}, nil
	}
	return Completion{Text: echoSummary(req), PromptTokens: prompt}, nil
}

// fromACutPrompt marks an answer serverLLM wrote from a prompt it cut.
const fromACutPrompt = "ANSWERED-FROM-A-CUT-PROMPT"

// requestSize is what the fake server counts for a request.
func requestSize(req Request) int {
	n := charCounter{}.Count(req.System) + charCounter{}.Count(req.Prompt) + 10 + req.MaxTokens
	for _, m := range req.Conversation {
		n += charCounter{}.Count(m.Content) + 4
		for _, c := range m.ToolCalls {
			n += charCounter{}.Count(c.Arguments) + 4
		}
	}
	return n
}

// TestRefusedSummaryRequestIsNeverResent: the summarizer believes a
// window of 128k; the endpoint holds 3,000 tokens. The first request is
// refused; what follows fits what was learned (the window named, or less
// than the refused request when the refusal names none), nothing refused
// is sent again, and the compaction ends with a narrative, not the
// deterministic fallback: a shrinking window never makes it give up.
func TestRefusedSummaryRequestIsNeverResent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cached bool
		named  bool
	}{
		{name: "pasted, window named", named: true},
		{name: "pasted, window not named"},
		{name: "cached prefix, window named", cached: true, named: true},
		{name: "cached prefix, window not named", cached: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := openStore(t)
			l := newLog(t, store)
			seedTurns(l, 1, 40)
			srv := &serverLLM{window: 3000, name: tt.named}
			cfg := testConfig(128000)
			cfg.SummaryWindow, cfg.CachedPrefix = 128000, tt.cached
			s := newSummarizer(store, srv, charCounter{}, cfg)
			defer s.Close()
			rep, err := s.SummarizeNow(context.Background(), l.id, "")
			require.NoError(t, err)
			require.False(t, rep.Fallback, "%v", rep.Err)
			require.Contains(t, rep.Summary.Content, "FACT-BLUEFALCON")
			srv.mu.Lock()
			defer srv.mu.Unlock()
			require.NotEmpty(t, srv.refused, "the test's first request should have been refused")
			refused := map[string]bool{}
			for i, r := range srv.sent {
				text := r.text()
				require.False(t, refused[text], "request %d sent again after its refusal", i+1)
				if requestSize(r) > srv.window {
					refused[text] = true
				}
			}
			if tt.named {
				require.Len(t, srv.refused, 1, "only the first request may be refused when the window is named")
			}
			require.LessOrEqual(t, len(srv.refused), 4, "refusals go down geometrically")
			require.Less(t, s.summaryWindow(), 3000+1, "the window learned")
		})
	}
}

// TestCutSummaryRequestIsReplanned: the summarizer believes a window of
// 128k; the endpoint is Ollama holding 3,000 tokens, which answers a
// larger request after cutting it, with the prompt tokens it kept. The
// shortfall, past the cut tolerance the agent uses for Ollama, is taken as
// a refusal naming the window kept: the cut answer is not used, nothing
// cut is sent again, and the range is summarized in requests that fit,
// every fact kept.
func TestCutSummaryRequestIsReplanned(t *testing.T) {
	t.Parallel()
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cached prefix %v", cached), func(t *testing.T) {
			t.Parallel()
			store := openStore(t)
			l := newLog(t, store)
			seedTurns(l, 1, 40)
			srv := &serverLLM{window: 3000, cut: true}
			cfg := testConfig(128000)
			cfg.SummaryWindow, cfg.CachedPrefix = 128000, cached
			s := newSummarizer(store, srv, charCounter{}, cfg)
			defer s.Close()
			s.View().SetServer("Ollama")
			rep, err := s.SummarizeNow(context.Background(), l.id, "")
			require.NoError(t, err)
			require.False(t, rep.Fallback, "%v", rep.Err)
			require.Contains(t, rep.Summary.Content, "FACT-BLUEFALCON")
			require.NotContains(t, rep.Summary.Content, fromACutPrompt, "an answer from a cut prompt was used")
			srv.mu.Lock()
			defer srv.mu.Unlock()
			require.Len(t, srv.refused, 1, "only the first request is cut: the window it kept is learned")
			require.LessOrEqual(t, s.summaryWindow(), 3000, "the window learned")
			if cached {
				require.Equal(t, "server, cut", s.View().WindowSource(), "the agent's policy learns it too")
			}
		})
	}
}

// TestMergeFitsWhenAnswersRunLong: a summarizer that writes far more than
// it is asked still gets merge requests that fit, and merging ends.
func TestMergeFitsWhenAnswersRunLong(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 60)
	long := func(r Request) string {
		return echoSummary(r) + "\n- " + strings.Repeat("detail word ", 300)
	}
	srv := &serverLLM{window: 2500, name: true, answer: long}
	cfg := testConfig(64000)
	cfg.SummaryWindow = 2500
	s := newSummarizer(store, srv, charCounter{}, cfg)
	defer s.Close()
	rep, err := s.SummarizeNow(context.Background(), l.id, "")
	require.NoError(t, err)
	require.False(t, rep.Fallback, "%v", rep.Err)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	require.Empty(t, srv.refused, "a request did not fit")
	merges := 0
	for _, r := range srv.sent {
		if strings.Contains(r.System, "merge") {
			merges++
		}
	}
	require.Positive(t, merges)
	require.Contains(t, rep.Summary.Content, "FACT-BLUEFALCON")
}

// TestTooSmallWindowFallsBack: in a window that holds no summary request
// the compaction still ends, with the deterministic summary.
func TestTooSmallWindowFallsBack(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 20)
	srv := &serverLLM{window: 300, name: true}
	cfg := testConfig(64000)
	cfg.SummaryWindow = 64000
	s := newSummarizer(store, srv, charCounter{}, cfg)
	defer s.Close()
	rep, err := s.SummarizeNow(context.Background(), l.id, "")
	require.NoError(t, err)
	require.True(t, rep.Fallback)
	require.ErrorContains(t, rep.Err, "leaves no room for a summary request")
	srv.mu.Lock()
	defer srv.mu.Unlock()
	require.Len(t, srv.refused, 1)
}
