// Package pricing turns the tokens a provider counted into dollars: a table
// of well-known models' list prices, which the config's [pricing] section
// extends and overrides.
package pricing

import (
	"fmt"
	"strings"
)

// Price is what a model costs, in US dollars per million tokens. Cached
// input is the part of the prompt the provider served from its prompt
// cache; a provider without one bills it as Input.
type Price struct {
	Input       float64
	CachedInput float64
	Output      float64
}

// Tokens is what one or more requests used, as the provider counted it.
// Input includes Cached.
type Tokens struct {
	Input, Cached, Output int
}

// Add returns the sum of t and u.
func (t Tokens) Add(u Tokens) Tokens {
	return Tokens{Input: t.Input + u.Input, Cached: t.Cached + u.Cached, Output: t.Output + u.Output}
}

// Cost is what tk costs at p, in dollars. Cached tokens beyond Input (a
// provider's inconsistent report) are counted as Input.
func (p Price) Cost(tk Tokens) float64 {
	cached := min(max(tk.Cached, 0), tk.Input)
	return (float64(tk.Input-cached)*p.Input + float64(cached)*p.CachedInput + float64(tk.Output)*p.Output) / 1e6
}

// known are list prices of well-known models (USD per million tokens:
// input, cached input, output) as their providers published them in 2025.
// A name matches itself and its dated or suffixed versions
// ("gpt-4o-mini-2024-07-18"); the longest match wins.
var known = map[string]Price{
	// OpenAI
	"gpt-5":         {1.25, 0.125, 10},
	"gpt-5-mini":    {0.25, 0.025, 2},
	"gpt-5-nano":    {0.05, 0.005, 0.40},
	"gpt-4.1":       {2, 0.50, 8},
	"gpt-4.1-mini":  {0.40, 0.10, 1.60},
	"gpt-4.1-nano":  {0.10, 0.025, 0.40},
	"gpt-4o":        {2.50, 1.25, 10},
	"gpt-4o-mini":   {0.15, 0.075, 0.60},
	"o1":            {15, 7.50, 60},
	"o3":            {2, 0.50, 8},
	"o3-mini":       {1.10, 0.55, 4.40},
	"o4-mini":       {1.10, 0.275, 4.40},
	"gpt-4-turbo":   {10, 10, 30},
	"gpt-3.5-turbo": {0.50, 0.50, 1.50},
	// DeepSeek (V3.2 prices: a cache hit is a tenth of a miss)
	"deepseek-chat":     {0.28, 0.028, 0.42},
	"deepseek-reasoner": {0.28, 0.028, 0.42},
	// xAI
	"grok-4":           {3, 0.75, 15},
	"grok-3":           {3, 0.75, 15},
	"grok-3-mini":      {0.30, 0.075, 0.50},
	"grok-code-fast-1": {0.20, 0.02, 1.50},
	// Anthropic (through an OpenAI-compatible endpoint; cache reads)
	"claude-opus-4":     {15, 1.50, 75},
	"claude-opus-4-1":   {15, 1.50, 75},
	"claude-sonnet-4":   {3, 0.30, 15},
	"claude-sonnet-4-5": {3, 0.30, 15},
	"claude-haiku-4-5":  {1, 0.10, 5},
	"claude-3-5-haiku":  {0.80, 0.08, 4},
	// Groq
	"llama-3.3-70b-versatile": {0.59, 0.59, 0.79},
}

// Table is the price of every model gencode can price: the known list
// prices and the config's, which win. The zero Table has the known ones.
type Table struct {
	prices map[string]Price
}

// New returns the known prices overridden and extended by overrides (the
// config's [pricing], keyed by model name).
func New(overrides map[string]Price) Table {
	t := Table{prices: make(map[string]Price, len(known)+len(overrides))}
	for k, p := range known {
		t.prices[k] = p
	}
	for k, p := range overrides {
		t.prices[normalize(k)] = p
	}
	return t
}

// Lookup returns the price of model: its own entry, else the longest entry
// it extends at a '-' (a dated version: gpt-4o-2024-08-06 is gpt-4o). A
// provider prefix ("openai/gpt-4o") and case are ignored.
func (t Table) Lookup(model string) (Price, bool) {
	prices := t.prices
	if prices == nil {
		prices = known
	}
	m := normalize(model)
	if p, ok := prices[m]; ok {
		return p, true
	}
	best, found := "", Price{}
	for k, p := range prices {
		if strings.HasPrefix(m, k+"-") && len(k) > len(best) {
			best, found = k, p
		}
	}
	return found, best != ""
}

// Cost is what tk costs with model; false when the table has no price for
// it.
func (t Table) Cost(model string, tk Tokens) (float64, bool) {
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	return p.Cost(tk), true
}

func normalize(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	return m
}

// Format writes a cost in dollars with the precision its size needs:
// "$0.0042", "$0.213", "$12.40".
func Format(usd float64) string {
	switch {
	case usd == 0:
		return "$0"
	case usd < 0.0001:
		return "<$0.0001"
	case usd < 0.01:
		return fmt.Sprintf("$%.4f", usd)
	case usd < 1:
		return fmt.Sprintf("$%.3f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// Counted is what a provider's usage report bills: prompt tokens (cached
// of them served from its cache) and output. Most providers count
// reasoning in completion_tokens; xAI leaves it out of completion_tokens
// but in total_tokens, and bills it as output: so output is what the total
// holds beyond the prompt, when that is more.
func Counted(prompt, cached, completion, total int) Tokens {
	return Tokens{Input: prompt, Cached: min(max(cached, 0), prompt), Output: max(completion, total-prompt)}
}
