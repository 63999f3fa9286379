package commands

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gencode/gencode/internal/pricing"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
)

// Spend is what a session's model requests used, as the providers counted
// them, and what that cost where the models are priced.
type Spend struct {
	// Turns is the agent's requests, Summary the summarizer's.
	Turns, Summary                pricing.Tokens
	TurnRequests, SummaryRequests int
	// Cost is in US dollars, of the priced models only.
	Cost float64
	// Unpriced names the models without a price: Cost leaves them out.
	Unpriced []string
}

// Total is every request's tokens.
func (s Spend) Total() pricing.Tokens { return s.Turns.Add(s.Summary) }

// Requests is how many requests were counted.
func (s Spend) Requests() int { return s.TurnRequests + s.SummaryRequests }

// UnpricedMark follows a cost that leaves out the tokens of a model
// without a price ("$0.012+?"); UnpricedNote says so where it is shown.
const (
	UnpricedMark = "+?"
	UnpricedNote = "+? after a cost: it leaves out the tokens of a model without a price (/cost names it)"
)

// CostText is the cost as the front ends show it: "$0.012", "$0.012+?"
// (UnpricedMark), or "" when no model is priced.
func (s Spend) CostText() string {
	switch {
	case len(s.Unpriced) == 0:
		return pricing.Format(s.Cost)
	case s.Cost > 0:
		return pricing.Format(s.Cost) + UnpricedMark
	}
	return ""
}

// SpendOf adds up usage totals (session.Store.UsageBySession) and prices
// them.
func SpendOf(totals []session.UsageTotal, prices pricing.Table) Spend {
	var s Spend
	unpriced := map[string]bool{}
	for _, t := range totals {
		tk := pricing.Tokens{Input: t.Input, Cached: t.Cached, Output: t.Output}
		if t.Purpose == session.UsageSummary {
			s.Summary, s.SummaryRequests = s.Summary.Add(tk), s.SummaryRequests+t.Requests
		} else {
			s.Turns, s.TurnRequests = s.Turns.Add(tk), s.TurnRequests+t.Requests
		}
		if c, ok := prices.Cost(t.Model, tk); ok {
			s.Cost += c
		} else if !unpriced[t.Model] {
			unpriced[t.Model] = true
			s.Unpriced = append(s.Unpriced, t.Model)
		}
	}
	sort.Strings(s.Unpriced)
	return s
}

// Spend is what the session has used so far (the status bar shows it).
func (r *Registry) Spend(ctx context.Context, sessionID string) (Spend, error) {
	if sessionID == "" {
		return Spend{}, nil
	}
	all, err := r.deps.Store.UsageBySession(ctx, sessionID)
	if err != nil {
		return Spend{}, err
	}
	return SpendOf(all[sessionID], r.deps.Prices), nil
}

// runCost shows the tokens the session's requests used, as the provider
// counted them: the last turn, the agent's and the summarizer's share,
// each model with its price, and the cost.
func runCost(ctx context.Context, r *Registry, st State, _ Invocation) (Result, error) {
	if st.SessionID == "" {
		return Result{Text: "No requests yet in this session."}, nil
	}
	all, err := r.deps.Store.UsageBySession(ctx, st.SessionID)
	if err != nil {
		return Result{}, err
	}
	totals := all[st.SessionID]
	if len(totals) == 0 {
		return Result{Text: "No requests yet in this session (or the provider reported no usage)."}, nil
	}
	last, err := r.deps.Store.LastTurnUsage(ctx, st.SessionID)
	if err != nil {
		return Result{}, err
	}
	prices := r.deps.Prices
	s := SpendOf(totals, prices)
	lt := SpendOf(last, prices)
	// A titled section's lines are indented by two: its names are two
	// narrower, so that the columns line up.
	rowIn := func(width int, name string, requests int, tk pricing.Tokens, cost string) string {
		return fmt.Sprintf("%-*s %5s %10s %10s %9s  %s", width, termtext.OneLine(name, width), termtext.Thousands(requests), termtext.Thousands(tk.Input), termtext.Thousands(tk.Cached), termtext.Thousands(tk.Output), cost)
	}
	row := func(name string, requests int, tk pricing.Tokens, cost string) string {
		return rowIn(22, name, requests, tk, cost)
	}
	title := "Cost · " + termtext.Thousands(s.Total().Input+s.Total().Output) + " tokens"
	if c := s.CostText(); c != "" {
		title += " · " + c
	}
	lines := []string{
		fmt.Sprintf("%-22s %5s %10s %10s %9s  %s", "", "reqs", "input", "cached", "output", "cost"),
		row("Last turn", lt.Requests(), lt.Total(), lt.CostText()),
		row("Session: agent", s.TurnRequests, s.Turns, ""),
	}
	if s.SummaryRequests > 0 {
		lines = append(lines, row("  summarizer", s.SummaryRequests, s.Summary, pct(s.Summary.Input+s.Summary.Output, s.Total().Input+s.Total().Output)+" of the tokens"))
	}
	lines = append(lines, row("Session total", s.Requests(), s.Total(), s.CostText()))
	rep := &Report{Title: title, Sections: []Section{{Lines: lines}}}

	var models []string
	for _, t := range totals {
		tk := pricing.Tokens{Input: t.Input, Cached: t.Cached, Output: t.Output}
		p, ok := prices.Lookup(t.Model)
		what := "agent"
		if t.Purpose == session.UsageSummary {
			what = "summarizer"
		}
		line := rowIn(20, t.Model, t.Requests, tk, "")
		if ok {
			line = rowIn(20, t.Model, t.Requests, tk, pricing.Format(p.Cost(tk))) +
				fmt.Sprintf("  %s; $%g / $%g / $%g", what, p.Input, p.CachedInput, p.Output)
		} else {
			line += fmt.Sprintf("%s; no price", what)
		}
		models = append(models, line)
	}
	rep.Sections = append(rep.Sections, Section{Title: "By model", Lines: models})
	rep.Footer = "input includes cached; prices in $ per million tokens (input / cached / output)"
	if len(s.Unpriced) > 0 {
		rep.Footer = fmt.Sprintf("%s after a cost: it leaves out the tokens of %s, which has no price; set one under [pricing.%q] in the config",
			UnpricedMark, strings.Join(s.Unpriced, ", "), s.Unpriced[0])
	}
	return Result{Report: rep}, nil
}
