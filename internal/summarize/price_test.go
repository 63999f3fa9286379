package summarize

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
)

// TestCarriedCost: a message has been re-read from the cache once for each
// request after the one that brought it; each request ends with an
// assistant message. Only the range (msgs[:cut]) counts.
func TestCarriedCost(t *testing.T) {
	t.Parallel()
	msgs := []session.Message{
		{Role: session.RoleUser, Tokens: 100},     // re-read by 2 requests
		{Role: session.RoleAssistant, Tokens: 50}, // by 1
		{Role: session.RoleUser, Tokens: 100},     // by 1
		{Role: session.RoleAssistant, Tokens: 50}, // by the next one only: 0 so far
		{Role: session.RoleUser, Tokens: 1000},    // just typed: 0
	}
	tokens := func(m session.Message) int { return m.Tokens }
	tests := []struct {
		cut  int
		want float64
	}{
		{cut: 5, want: 0.1 * (100*2 + 50*1 + 100*1)},
		{cut: 2, want: 0.1 * (100*2 + 50*1)},
		{cut: 0, want: 0},
	}
	for _, tt := range tests {
		got := carriedCost(msgs, tt.cut, 0.1, tokens)
		require.InDelta(t, tt.want, got, 1e-9, "carriedCost(cut %d)", tt.cut)
	}
}

// TestCompactionPriceCountsTheBreakAndTheMerge: the summary request's
// prefix at the cached price, its instruction at the full one, the new
// summary and the kept messages re-read at the full price by the next
// request, and the summary twice more in the merge that folds it.
func TestCompactionPriceCountsTheBreakAndTheMerge(t *testing.T) {
	t.Parallel()
	got := compactionPrice(0.1, 10_000, 500, 1_000)
	want := 0.1*10_000 + summaryRequestUncached + 0.9*(500+1_000) + 2*0.9*500
	require.InDelta(t, want, got, 1e-9)
	// Without a cache every token is at the full price: the prefix too.
	require.InDelta(t, 10_000+summaryRequestUncached, compactionPrice(1, 10_000, 500, 1_000), 1e-9)
}

// TestCacheAwareTrigger: below the soft threshold and with the message
// trigger off, a background compaction starts when re-reading the oldest
// messages has cost more than compacting them, and only then: many
// requests over small turns pay for it; the same tokens in a few large
// requests have cost little to carry; below a third of the soft threshold
// it waits for the model's sake; with no price (CachedPrice < 0) it is off.
func TestCacheAwareTrigger(t *testing.T) {
	t.Parallel()
	manySmall := func(l *logBuilder) { seedTurns(l, 1, 30) }
	fewLarge := func(l *logBuilder) {
		for i := 1; i <= 3; i++ {
			l.turn(fmt.Sprintf("Turn %d: %s", i, strings.Repeat("describe the handler and its store. ", 170)))
		}
	}
	tests := []struct {
		name      string
		seed      func(*logBuilder)
		ratio     float64 // of the window the view takes
		price     float64
		wantStart bool
	}{
		{name: "small turns re-read by many requests", seed: manySmall, ratio: 0.3, wantStart: true},
		{name: "the same share in a few large requests", seed: fewLarge, ratio: 0.3},
		{name: "below a third of the soft threshold", seed: manySmall, ratio: 0.15},
		{name: "no cached price", seed: manySmall, ratio: 0.3, price: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := openStore(t)
			l := newLog(t, store)
			tt.seed(l)
			llm := &fakeLLM{gate: make(chan struct{})}
			cfg := testConfig(windowAt(l, tt.ratio))
			cfg.TriggerThreshold = 0 // the message trigger is not what is tested
			if tt.price != 0 {
				cfg.CachedPrice = tt.price
			}
			var got reports
			cfg.Notify = got.add
			s := newSummarizer(store, llm, charCounter{}, cfg)
			defer s.Close()
			v := l.view()
			tok := viewTokens(s, v)
			soft, _ := s.thresholds()
			require.Less(t, tok, soft, "the view must stay below the soft threshold")
			e := s.economics(v)
			_, err := s.Prepare(context.Background(), v, tok)
			require.NoError(t, err)
			if !tt.wantStart {
				require.Empty(t, got.all(), "carried %.0f, price %.0f", e.carried, e.price)
				return
			}
			require.True(t, e.worth(), "carried %.0f < price %.0f", e.carried, e.price)
			require.Len(t, got.all(), 1)
			require.True(t, got.all()[0].Background)
			require.Contains(t, got.all()[0].Reason, "cache-aware trigger")
		})
	}
}

// TestCacheAwareTriggerFindsTheCheapestCycle: played request by request
// over a long session of small turns, compacting whenever the trigger says
// so bills less than compacting twice as often or half as often (the
// bench's billing model: cached tokens at a tenth of the price). The
// session is simulated from the same prices the trigger uses.
func TestCacheAwareTriggerFindsTheCheapestCycle(t *testing.T) {
	t.Parallel()
	const (
		cached  = 0.1
		fixed   = 1_400
		perTurn = 150 // tokens a request adds
		kept    = 400
		turns   = 600
	)
	// bill plays the session compacting every k requests (k = 0: when
	// carriedCost reaches compactionPrice) and returns the bill and the
	// number of compactions.
	bill := func(k int) (float64, int) {
		var total float64
		tail := []session.Message{}
		compactions, since := 0, 0
		tokens := func(m session.Message) int { return m.Tokens }
		for r := 0; r < turns; r++ {
			tail = append(tail, session.Message{Role: session.RoleUser, Tokens: perTurn / 2})
			size := fixed
			for _, m := range tail {
				size += m.Tokens
			}
			total += cached*float64(size-perTurn/2) + perTurn/2 // the new message at the full price
			tail = append(tail, session.Message{Role: session.RoleAssistant, Tokens: perTurn / 2})
			since++
			cut := len(tail) - 2
			rng := 0
			for _, m := range tail[:cut] {
				rng += m.Tokens
			}
			summary := min(600, int(0.3*float64(rng)))
			price := compactionPrice(cached, fixed+rng, summary, kept)
			due := k > 0 && since >= k
			if k == 0 {
				due = carriedCost(tail, cut, cached, tokens) >= price
			}
			if due && cut > 0 {
				total += price
				compactions++
				since = 0
				tail = tail[cut:]
			}
		}
		return total, compactions
	}
	auto, n := bill(0)
	require.Positive(t, n)
	every := turns / n
	for _, k := range []int{every / 2, every * 2} {
		other, _ := bill(k)
		require.Less(t, auto, other, "compacting every %d requests (the trigger: about every %d)", k, every)
	}
}

// TestSummaryBlockBudget: every request re-reads the summary block, so it
// takes 8% of a large window; a small window keeps the 15% it had (at most
// 900 tokens), room for the user's stated facts.
func TestSummaryBlockBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		window, want int
	}{
		{window: 32_000, want: 2_560},
		{window: 128_000, want: 10_240},
		{window: 8_000, want: 900},
		{window: 6_000, want: 900},
		{window: 4_000, want: 600},
	}
	for _, tt := range tests {
		s := newSummarizer(openStore(t), &fakeLLM{}, charCounter{}, testConfig(tt.window))
		got := s.budgets(testFixedCost).block
		s.Close()
		require.Equal(t, tt.want, got, "budgets(window %d).block", tt.window)
	}
}
