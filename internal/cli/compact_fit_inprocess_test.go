package cli

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/summarize"
)

// These tests are issue 22's items 4 and 5: a server whose window is far
// smaller than the one gencode believes (gpt-4o-mini, 128k) and that
// refuses what does not fit, as llama.cpp (exceed_context_size_error with
// n_ctx) and a plain OpenAI-style server do. Every summary request must fit
// the window it is sent to, and the facts the user planted must reach the
// last request, through summaries or as messages.

// factLineRe finds a planted fact: "FACT07: the staging port is 7407".
var factLineRe = regexp.MustCompile(`FACT\d+: the [a-z ]+ is \d+`)

// fillerWords make a user turn long without repeating one token.
var fillerWords = strings.Fields(`please review the parser module and explain how nested blocks are
handled when a closing brace is missing then check whether the lexer keeps line numbers right after
a multiline string literal and whether error messages name the file and column consistently across
the formatter the linter and the test runner so that we can decide which component should own the
position tracking in the long run without breaking the public interface that plugins already use`)

// longTurn is a user message of about 250 tokens: filler, and the fact
// (when not empty) as its own sentence.
func longTurn(i int, fact string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Turn %d. ", i)
	for j := 0; j < 200; j++ {
		b.WriteString(fillerWords[(i*7+j)%len(fillerWords)])
		b.WriteByte(' ')
	}
	b.WriteString("and that is all for this step.")
	if fact != "" {
		b.WriteString(" " + fact + ".")
	}
	return b.String()
}

// plantedFact is the fact of turn i.
func plantedFact(i int) string {
	things := []string{"staging port", "retry limit", "build number", "cache size", "worker count"}
	return fmt.Sprintf("FACT%02d: the %s is %d", i, things[i%len(things)], 7400+i)
}

// requestText is everything a request sends.
func requestText(r openaitest.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Content + "\n")
		for _, c := range m.ToolCalls {
			b.WriteString(c.Function.Arguments + "\n")
		}
	}
	return b.String()
}

// factSummary is a good summarizer: the five headings, every planted fact
// of its input kept.
func factSummary(r openaitest.Request) string {
	var b strings.Builder
	b.WriteString("## Goal\n- review the parser and its tools\n## Key decisions\n")
	seen := map[string]bool{}
	for _, f := range factLineRe.FindAllString(requestText(r), -1) {
		if !seen[f] {
			seen[f] = true
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	b.WriteString("## Topics\n- position tracking\n## Current state\n- reviewing\n## Next steps\n- continue the review\n")
	return b.String()
}

// TestSummaryRequestsFitTheServersWindow: 40 turns of about 250 tokens
// against a server whose window is 4,096 (llama.cpp) or 6,000 (OpenAI's
// wording) while gencode believes 128k. The session compacts; no summary
// request is refused; at most the first agent request is (that is how
// gencode learns the window when nothing told it before); every fact
// planted early, in the middle and late reaches the last request.
func TestSummaryRequestsFitTheServersWindow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		window  int
		refusal func(window, prompt, completion int) (int, string)
		// over is how much more the server counts than gencode's
		// tokenizer, in percent: the model's own tokenizer is not o200k.
		over int
	}{
		{name: "llama.cpp 4096", window: 4096, refusal: openaitest.LlamaCppRefusal},
		{name: "llama.cpp 4096, the server counting a fifth more", window: 4096, refusal: openaitest.LlamaCppRefusal, over: 20},
		{name: "openai-style 6000", window: 6000},
	}
	facts := []int{2, 4, 19, 21, 36, 39}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			counter := tokenCache.Counter("gpt-4o-mini")
			countText := openaitest.MemoTokenizer(counter.Count)
			count := func(r openaitest.Request) int {
				return openaitest.PromptTokens(r, countText) * (100 + tt.over) / 100
			}
			opts := []openaitest.Option{openaitest.WithMessageRules(), openaitest.WithTokenizer(counter.Count),
				openaitest.WithContextWindow(tt.window, count),
				openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
					if openaitest.DefaultPurpose(r) == openaitest.PurposeSummary {
						return openaitest.Text(factSummary(r))
					}
					return openaitest.Text("Noted; the review goes on.")
				})}
			if tt.refusal != nil {
				opts = append(opts, openaitest.WithContextRefusal(tt.refusal))
			}
			srv := openaitest.NewServer(t, opts...)
			store, sess := newStoreSession(t)
			h := newHarness(t, srv, store, sess, 128000, func(c *summarize.Config) {
				// The summarizer is the agent's model on the same
				// endpoint, as the CLI wires it by default.
				c.Model, c.SummaryWindow, c.CachedPrefix = "gpt-4o-mini", 128000, true
			})
			planted := map[int]bool{}
			for _, i := range facts {
				planted[i] = true
			}
			for i := 1; i <= 40; i++ {
				fact := ""
				if planted[i] {
					fact = plantedFact(i)
				}
				h.turn(longTurn(i, fact))
			}
			h.sum.Wait()
			h.turn("What were the facts I gave you? Answer from the conversation.")
			h.sum.Wait()

			reqs, accts := srv.Requests(), srv.Accounts()
			require.Len(t, accts, len(reqs))
			var summaries, summaryRefused, agentRefused int
			for _, a := range accts {
				switch {
				case a.Purpose == openaitest.PurposeSummary:
					summaries++
					if a.Rejected != "" {
						summaryRefused++
					}
				case a.Rejected != "":
					agentRefused++
				}
			}
			reps := h.compactions(0)
			var compactions, fallbacks int
			for _, r := range reps {
				if r.Phase == summarize.Finished && r.Summary != nil {
					compactions++
					if r.Fallback {
						fallbacks++
					}
				}
			}
			var last openaitest.Request
			for i := len(reqs) - 1; i >= 0; i-- {
				if openaitest.DefaultPurpose(reqs[i]) == openaitest.PurposeAgent && accts[i].Rejected == "" {
					last = reqs[i]
					break
				}
			}
			text := requestText(last)
			var lost []int
			for _, i := range facts {
				if !strings.Contains(text, plantedFact(i)) {
					lost = append(lost, i)
				}
			}
			t.Logf("%s: %d requests; %d summary requests, %d refused; %d agent requests refused; %d compactions, %d fallbacks; facts lost: %v",
				tt.name, len(reqs), summaries, summaryRefused, agentRefused, compactions, fallbacks, lost)
			require.NotZero(t, compactions, "the session never compacted")
			require.Zero(t, summaryRefused, "summary requests refused")
			require.LessOrEqual(t, agentRefused, 1, "agent requests refused")
			require.Zero(t, fallbacks, "compactions fell back to the deterministic summary")
			require.Empty(t, lost, "facts of these turns lost")
		})
	}
}

// TestFallbackKeepsEveryFact: the summarizer always fails (500 for every
// summary request), so every compaction applies the deterministic
// summary. 40 user turns of about 250 tokens each state one short fact;
// the server's window is 6,000. All 40 facts reach the last request, in
// the summaries or as messages.
func TestFallbackKeepsEveryFact(t *testing.T) {
	t.Parallel()
	counter := tokenCache.Counter("gpt-4o-mini")
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithTokenizer(counter.Count),
		openaitest.WithContextWindow(6000, nil),
		openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
			if openaitest.DefaultPurpose(r) == openaitest.PurposeSummary {
				return openaitest.Reply{Status: 500}
			}
			return openaitest.Text("Noted; the review goes on.")
		}))
	store, sess := newStoreSession(t)
	h := newHarness(t, srv, store, sess, 128000, func(c *summarize.Config) {
		c.Model, c.SummaryWindow, c.CachedPrefix = "gpt-4o-mini", 128000, true
		c.RetryBackoff = 1
	})
	for i := 1; i <= 40; i++ {
		h.turn(longTurn(i, plantedFact(i)))
	}
	h.sum.Wait()
	h.turn("What were the facts I gave you? Answer from the conversation.")
	h.sum.Wait()

	reqs, accts := srv.Requests(), srv.Accounts()
	var last openaitest.Request
	for i := len(reqs) - 1; i >= 0; i-- {
		if openaitest.DefaultPurpose(reqs[i]) == openaitest.PurposeAgent && accts[i].Rejected == "" {
			last = reqs[i]
			break
		}
	}
	var compactions, fallbacks int
	for _, r := range h.compactions(0) {
		if r.Phase == summarize.Finished && r.Summary != nil {
			compactions++
			if r.Fallback {
				fallbacks++
			}
		}
	}
	text := requestText(last)
	var lost []int
	for i := 1; i <= 40; i++ {
		if !strings.Contains(text, plantedFact(i)) {
			lost = append(lost, i)
		}
	}
	t.Logf("%d requests; %d compactions, %d fallbacks; last request %d tokens; facts kept %d of 40, lost: %v",
		len(reqs), compactions, fallbacks, openaitest.PromptTokens(last, counter.Count), 40-len(lost), lost)
	if testing.Verbose() {
		for _, m := range last.Messages {
			if strings.Contains(m.Content, "Earlier in this session") {
				t.Log(m.Content)
			}
		}
	}
	require.NotZero(t, fallbacks, "no compaction fell back")
	require.Equal(t, compactions, fallbacks, "a compaction had a narrative")
	require.Empty(t, lost, "facts of these turns lost")
}
