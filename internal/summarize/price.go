package summarize

import (
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/view"
)

// The cache-aware trigger: when a compaction bills less than carrying on.
//
// A provider with a prefix cache bills a request's prompt at the full price
// only from the first token that differs from the previous request; the
// rest costs CachedPrice of it. Between compactions each request re-reads
// the unsummarized messages from the cache, so carrying them costs more
// with every request; a compaction costs a fixed price once (the summary
// request, and the request after it, which reads the new summary and the
// kept messages at the full price). As in the economic order quantity, the
// cheapest cycle compacts when what the range has cost to carry since its
// messages arrived reaches what compacting it costs: sooner and the fixed
// price is paid too often, later and the carrying costs more than it saves.
// The soft and hard thresholds still bound the window; this only moves a
// compaction earlier, never below econFloor of the soft threshold, where
// the model would lose its recent context for little.

// defaultCachedPrice is the price of a cached prompt token as a share of
// the full input price: 0.1 for OpenAI's and DeepSeek's current models,
// and the billing model of `make bench-session`.
const defaultCachedPrice = 0.1

// summaryRequestUncached is what a summary request sends besides the
// cached conversation: the instruction and the range's last messages
// pasted into it (about 800 tokens a request in both scenarios of
// `make bench-session`).
const summaryRequestUncached = 800

// mergeReads is how many more times a summary's tokens are sent at the
// full price after the request that follows its compaction: the merge that
// folds it into the block pastes it, and the request after that merge
// re-reads the merged block.
const mergeReads = 2

// econFloorNum/econFloorDen: the cache-aware trigger does not compact a
// view below this share of the soft threshold.
const (
	econFloorNum = 1
	econFloorDen = 3
)

// cachedPrice is the configured price of a cached token (Config.CachedPrice).
func (s *Summarizer) cachedPrice() float64 { return s.cfg.CachedPrice }

// carriedCost is what re-reading msgs[:cut] has cost so far, in full-price
// tokens: a message is sent again, from the cache, by every request after
// the one that brought it (and by the request about to be sent); each
// request ends with one assistant message, so a message has been re-read
// once for each assistant message after it. cost is a message's tokens in
// the view.
func carriedCost(msgs []session.Message, cut int, cached float64, cost func(session.Message) int) float64 {
	requests := 0
	var sum float64
	for i := len(msgs) - 1; i >= 0; i-- {
		if i < cut {
			sum += float64(cost(msgs[i]) * requests)
		}
		if msgs[i].Role == session.RoleAssistant {
			requests++
		}
	}
	return cached * sum
}

// compactionPrice is what compacting costs besides the requests that are
// sent anyway, in full-price tokens: the summary request reads prefix
// tokens from the cache and sends its instruction at the full price; the
// request after it reads the new summary and the kept messages at the full
// price instead of the cached one; and the summary is paid at the full
// price mergeReads more times when a merge folds it.
func compactionPrice(cached float64, prefix, summary, kept int) float64 {
	return cached*float64(prefix) + summaryRequestUncached +
		(1-cached)*float64(summary+kept) + mergeReads*(1-cached)*float64(summary)
}

// econ is the cache-aware trigger's verdict on a view.
type econ struct {
	// carried is what the range has cost to carry so far, price what
	// compacting it costs (full-price tokens); cut is the range's end.
	carried, price float64
	cut            int
}

// worth reports that compacting now bills less than carrying on.
func (e econ) worth() bool { return e.cut > 0 && e.carried >= e.price }

// economics prices compacting v now: the range a background compaction
// would take (as plan chooses it) against what carrying it has cost. The
// summary is expected at target_compression of the range, within one
// summary's budget.
func (s *Summarizer) economics(v session.View) econ {
	cached := s.cachedPrice()
	if cached <= 0 || cached >= 1 || len(v.Messages) < 2 {
		return econ{}
	}
	fixed := s.fixedCost()
	b := s.budgets(fixed)
	block := view.BlockTokens(v.Summaries)
	capTokens := s.view.CapTokens()
	cost := func(m session.Message) int {
		if m.Role == session.RoleTool && capTokens > 0 && m.Tokens > capTokens {
			return capTokens
		}
		return m.Tokens
	}
	tailBudget := b.goal - fixed - min(b.block, block+b.perSummary)
	cut := selectRange(v.Messages, rangeParams{preserve: s.cfg.PreserveRecent, tailBudget: max(1, tailBudget), passUser: true}, cost)
	if cut == 0 {
		return econ{}
	}
	rng, kept := 0, 0
	for i, m := range v.Messages {
		if i < cut {
			rng += cost(m)
		} else {
			kept += cost(m)
		}
	}
	summary := min(b.perSummary, int(s.cfg.TargetCompression*float64(rng)))
	return econ{
		carried: carriedCost(v.Messages, cut, cached, cost),
		price:   compactionPrice(cached, fixed+block+rng, summary, kept),
		cut:     cut,
	}
}

// econFloor is the view size below which the cache-aware trigger waits.
func (s *Summarizer) econFloor() int {
	soft, _ := s.thresholds()
	return soft * econFloorNum / econFloorDen
}
