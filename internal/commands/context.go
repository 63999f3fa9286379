package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/gencode/gencode/internal/session"
)

func runHistory(ctx context.Context, r *Registry, st State, in Invocation) (Result, error) {
	if st.SessionID == "" {
		return Result{Text: "No history yet."}, nil
	}
	o := HistoryOptions{Full: in.Flag("full"), Search: in.Flags["search"]}
	if v, ok := in.Flags["expand"]; ok {
		n, err := parsePositive(v)
		if err != nil {
			return Result{}, fmt.Errorf("/history --expand: %w", err)
		}
		o.Expand = n
	}
	if o.Search == "" && len(in.Args) > 0 && in.Args[0] == "search" {
		o.Search = strings.Join(in.Args[1:], " ")
	}
	rep, err := History(ctx, r.deps.Store, r.deps.Search, st.SessionID, o)
	if err != nil {
		return Result{}, err
	}
	return Result{Report: rep}, nil
}

// ContextBreakdown is what fills the context window.
type ContextBreakdown struct {
	Fixed, Summaries, User, Assistant, ToolOutputs, Masked int
	Total, Window                                          int
	Messages, MaskedCount, SummaryCount                    int
}

// Breakdown measures a view the way the agent sends it.
func Breakdown(v session.View, opts session.ContextOptions, fixed, window int) ContextBreakdown {
	c := v.Context(opts)
	b := ContextBreakdown{Fixed: fixed, Summaries: session.BlockTokens(v.Summaries), Window: window,
		Messages: len(c.Messages), MaskedCount: c.Masked, SummaryCount: len(v.Summaries)}
	for _, m := range c.Messages {
		switch m.Role {
		case session.RoleUser:
			b.User += m.Tokens
		case session.RoleAssistant:
			b.Assistant += m.Tokens
		case session.RoleTool:
			if session.IsPlaceholder(m.Content) {
				b.Masked += m.Tokens
			} else {
				b.ToolOutputs += m.Tokens
			}
		}
	}
	b.Total = fixed + c.Tokens
	return b
}

func runContext(ctx context.Context, r *Registry, st State, _ Invocation) (Result, error) {
	window := r.deps.Window(st.Model)
	fixed := 0
	if r.deps.FixedCost != nil {
		fixed = r.deps.FixedCost()
	}
	var v session.View
	if st.SessionID != "" {
		var err error
		v, err = r.deps.Store.LoadView(ctx, st.SessionID)
		if err != nil {
			return Result{}, err
		}
	}
	cfg := r.deps.Config.Summarize
	b := Breakdown(v, session.ContextOptions{MaskAfter: cfg.MaskToolOutputsAfter}, fixed, window)
	row := func(name string, n int, note string) string {
		return fmt.Sprintf("%-28s %9s  %5s  %s", name, thousands(n), pct(n, window), note)
	}
	rep := &Report{Title: fmt.Sprintf("Context · %s · %s of %s tokens (%s)", st.Model, thousands(b.Total), thousands(window), pct(b.Total, window))}
	rep.Sections = []Section{{Lines: []string{
		row("System prompt + tool schemas", b.Fixed, ""),
		row("Summaries", b.Summaries, fmt.Sprintf("%d active", b.SummaryCount)),
		row("User messages", b.User, ""),
		row("Assistant messages", b.Assistant, ""),
		row("Tool outputs", b.ToolOutputs, ""),
		row("Masked tool outputs", b.Masked, fmt.Sprintf("%d placeholders", b.MaskedCount)),
		row("Free", max(0, window-b.Total), ""),
	}}}
	auto := "automatic summarization is off"
	if cfg.Enabled {
		auto = fmt.Sprintf("background summary starts at %s tokens (%.0f%%), compaction before sending at %s (%.0f%%)",
			thousands(int(float64(window)*cfg.SoftRatio)), cfg.SoftRatio*100, thousands(int(float64(window)*cfg.HardRatio)), cfg.HardRatio*100)
	}
	rep.Footer = fmt.Sprintf("%d messages in the view · %s", b.Messages, auto)
	return Result{Report: rep}, nil
}

func pct(n, of int) string {
	if of <= 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", n*100/of)
}

func parsePositive(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a positive number", s)
	}
	return n, nil
}

// jsonString returns a top-level string field of a JSON object, or "".
func jsonString(obj, key string) string {
	var m map[string]any
	if json.Unmarshal([]byte(obj), &m) != nil {
		return ""
	}
	s, _ := m[key].(string)
	return s
}
