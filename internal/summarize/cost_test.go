package summarize

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
)

// costResult is what a simulated session cost.
type costResult struct {
	turns, requests        int
	mainTokens             int // prompt + completion of every main-model request
	summarizerTokens       int // prompt + completion of every summarizer request
	summarizerRequests     int
	summaries, merges      int
	fallbacks              int
	rangeTokens, sumTokens int // first-level summaries: what they covered, what they take
	peak                   int // largest request sent, tokens
	window                 int
	rawTokens              int // the whole log
	finalContext           int
}

func (r costResult) share() float64 {
	return float64(r.summarizerTokens) / float64(r.mainTokens+r.summarizerTokens)
}

func (r costResult) compression() float64 { return float64(r.sumTokens) / float64(r.rangeTokens) }

var wordsRe = regexp.MustCompile(`about (\d+) words`)

// sizedLLM answers with about 70% of the words it was asked for, headings
// included: a model that follows the length instruction.
func sizedLLM(req Request) (Completion, error) {
	n := 100
	if m := wordsRe.FindStringSubmatch(req.System); m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	var b strings.Builder
	b.WriteString("## Goal\n- keep the service growing\n## Key decisions\n")
	words := 8
	for i := 0; words < n*7/10; i++ {
		line := fmt.Sprintf("- decision %d about the handler, the store and the tests of module %d\n", i, i)
		b.WriteString(line)
		words += len(strings.Fields(line))
	}
	b.WriteString("## Topics\n- handlers\n## Current state\n- tests pass\n## Next steps\n- go on\n")
	return Completion{Text: b.String()}, nil
}

// simulateSession plays turns of a coding session the way the agent
// drives the summarizer: Prepare before every model request (the view it
// returns is what is sent), messages appended as they come. Sizes are
// drawn from a fixed seed: requests of 20-120 tokens, 1-3 tool rounds of
// reads (200-1500 tokens), writes (100-600) and commands (50-800 of
// output), answers of 50-300 tokens.
func simulateSession(tb testing.TB, turns, window int) costResult {
	tb.Helper()
	ctx := context.Background()
	store := openStore(tb)
	l := newLog(tb, store)
	cfg := testConfig(window)
	s := New(store, &fakeLLM{answer: sizedLLM}, charCounter{}, testPolicy(charCounter{}, cfg, 1000), cfg)
	defer s.Close()
	rng := rand.New(rand.NewSource(42))
	text := func(tokens int) string {
		var b strings.Builder
		for b.Len() < tokens*4 {
			fmt.Fprintf(&b, "word%d ", rng.Intn(1000))
		}
		return b.String()
	}
	res := costResult{turns: turns, window: window}
	v := l.view()
	request := func(completion session.Message) {
		var err error
		tok := s.View().Tokens(v)
		v, err = s.Prepare(ctx, v, tok)
		require.NoError(tb, err)
		s.Wait()
		sent := s.View().Tokens(v)
		res.peak = max(res.peak, sent)
		res.requests++
		res.mainTokens += sent + charCounter{}.Count(completion.Content) + 4
		for _, c := range completion.ToolCalls {
			res.mainTokens += charCounter{}.Count(c.Arguments)
		}
	}
	// The view is kept like the agent keeps it: appended to, replaced by
	// what Prepare returns.
	add := func(msgs ...session.Message) { v.Messages = append(v.Messages, l.add(msgs...)...) }
	calls := 0
	for i := 0; i < turns; i++ {
		add(session.Message{Role: session.RoleUser, Content: fmt.Sprintf("Turn %d: %s", i, text(20+rng.Intn(100)))})
		for round := 0; round < 1+rng.Intn(3); round++ {
			a := session.Message{Role: session.RoleAssistant, Content: "Let me look."}
			var results []session.Message
			for k := 0; k < 1+rng.Intn(2); k++ {
				calls++
				id := fmt.Sprintf("c%d", calls)
				var c call
				switch rng.Intn(3) {
				case 0:
					path := fmt.Sprintf("/w/pkg%d/file%d.go", rng.Intn(40), rng.Intn(20))
					args, _ := json.Marshal(map[string]string{"file_path": path})
					c = call{name: "Read", args: string(args), output: text(200 + rng.Intn(1300)), meta: session.Meta{Tool: "Read", FilePath: path}}
				case 1:
					c = writeCall(fmt.Sprintf("/w/pkg%d/new%d.go", rng.Intn(40), calls), text(100+rng.Intn(500)))
				default:
					c = bashCall(fmt.Sprintf("go test ./pkg%d/...", rng.Intn(40)), text(50+rng.Intn(750)), rng.Intn(4)/3)
				}
				a.ToolCalls = append(a.ToolCalls, session.ToolCall{ID: id, Name: c.name, Arguments: c.args})
				results = append(results, session.Message{Role: session.RoleTool, ToolCallID: id, Name: c.name, Content: c.output, Meta: c.meta})
			}
			request(a)
			add(append([]session.Message{a}, results...)...)
		}
		answer := session.Message{Role: session.RoleAssistant, Content: text(50 + rng.Intn(250))}
		request(answer)
		add(answer)
	}
	st := s.Stats()
	res.summarizerTokens = st.PromptTokens + st.CompletionTokens
	res.summarizerRequests = st.Requests
	all, err := store.Summaries(ctx, l.id, true)
	require.NoError(tb, err)
	msgs := l.allMessages()
	for _, m := range msgs {
		res.rawTokens += m.Tokens
	}
	for _, sm := range all {
		if sm.Fallback {
			res.fallbacks++
		}
		if len(sm.Merged) > 0 {
			res.merges++
			continue
		}
		res.summaries++
		res.sumTokens += sm.TokenCount
		for _, m := range msgs[sm.FromSeq-1 : sm.ToSeq] {
			res.rangeTokens += m.Tokens
		}
	}
	res.finalContext = s.View().Tokens(l.view())
	return res
}

// TestLongSessionCost is acceptance 8 as a test: over a 500-turn simulated
// session the summarizer's tokens stay within 5% of all tokens spent, no
// request passes the window, and each summary is smaller than
// target_compression of what it covers. The numbers are logged.
func TestLongSessionCost(t *testing.T) {
	t.Parallel()
	turns := 500
	if testing.Short() {
		turns = 150
	}
	for _, window := range []int{32768, 128000} {
		t.Run(fmt.Sprintf("window %d", window), func(t *testing.T) {
			t.Parallel()
			turns := turns
			if raceOn && window > 32768 {
				turns = 150 // as -short, under -race; go test ./internal/summarize -run LongSessionCost runs 500
			}
			r := simulateSession(t, turns, window)
			t.Logf("%d turns, %d requests: main model %d tokens, summarizer %d tokens in %d requests: %.2f%% of all tokens",
				r.turns, r.requests, r.mainTokens, r.summarizerTokens, r.summarizerRequests, 100*r.share())
			t.Logf("%d summaries, %d merges, %d fallbacks; summaries take %.3f of the tokens they cover (target_compression 0.3); "+
				"log %d tokens, final context %d; peak request %d of %d (%.0f%%)",
				r.summaries, r.merges, r.fallbacks, r.compression(), r.rawTokens, r.finalContext, r.peak, r.window, 100*float64(r.peak)/float64(r.window))
			require.Positive(t, r.summaries)
			require.LessOrEqual(t, r.share(), 0.05, "the summarizer costs more than 5% of the session")
			require.LessOrEqual(t, r.compression(), 0.3, "summaries larger than target_compression")
			require.Less(t, r.peak, r.window*9/10, "a request reached the hard threshold")
			require.Zero(t, r.fallbacks)
		})
	}
}

// BenchmarkLongSessionCost reports the same measurements as metrics:
// go test -run '^$' -bench LongSessionCost ./internal/summarize
func BenchmarkLongSessionCost(b *testing.B) {
	for _, window := range []int{32768, 128000} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			var r costResult
			for i := 0; i < b.N; i++ {
				r = simulateSession(b, 500, window)
			}
			b.ReportMetric(100*r.share(), "summarizer-%")
			b.ReportMetric(r.compression(), "compression")
			b.ReportMetric(float64(r.summaries), "summaries")
			b.ReportMetric(float64(r.merges), "merges")
			b.ReportMetric(100*float64(r.peak)/float64(r.window), "peak-%window")
		})
	}
}
