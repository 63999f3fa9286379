package commands

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
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

// runContext shows what fills the context window: the prompt the next
// request sends, measured by the view policy that builds it.
func runContext(ctx context.Context, r *Registry, st State, _ Invocation) (Result, error) {
	if st.AwaitWindow != nil {
		st.AwaitWindow(ctx)
	}
	// The policy is the agent's: a second one made here would measure
	// another prompt than the one the next request sends.
	p := st.View
	if p == nil {
		return Result{}, errors.New("/context: no view policy to measure with")
	}
	// Added up from the counts the store keeps per message, as the status
	// bar's figure is: the log is not loaded (Build(LoadView) says the same).
	b := p.Build(session.View{})
	if st.SessionID != "" {
		var err error
		if b, err = p.Measure(ctx, r.deps.Store, st.SessionID); err != nil {
			return Result{}, err
		}
	}
	window := b.Window
	row := func(name string, n int, note string) string {
		return fmt.Sprintf("%-28s %9s  %5s  %s", name, termtext.Thousands(n), pct(n, window), note)
	}
	rep := &Report{Title: fmt.Sprintf("Context · %s · %s of %s tokens (%s)", st.Model, termtext.Thousands(b.Tokens), termtext.Thousands(window), pct(b.Tokens, window))}
	cut := ""
	if b.CutCount > 0 {
		cut = fmt.Sprintf("%d cut to %s tokens each", b.CutCount, termtext.Thousands(p.CapTokens()))
	}
	lines := []string{row("System prompt + tool schemas", b.Fixed, "")}
	if b.Instructions > 0 {
		lines = append(lines, row("  of which instructions", b.Instructions, strings.Join(r.deps.Instructions, ", ")))
	}
	rep.Sections = []Section{{Lines: append(lines,
		row("Summaries", b.Summaries, fmt.Sprintf("%d active", b.SummaryCount)),
		row("User messages", b.User, ""),
		row("Assistant messages", b.Assistant, ""),
		row("Tool outputs", b.ToolOutputs, cut),
		row("Masked tool outputs", b.Masked, fmt.Sprintf("%d placeholders", b.MaskedCount)),
		row("Free", max(0, window-b.Tokens), ""),
	)}}
	full := window + b.Reserve // the server's whole window
	switch {
	case b.Source == "server":
		rep.Sections[0].Lines = append(rep.Sections[0].Lines, "",
			fmt.Sprintf("The server's window: %s tokens (not %s); kept for this run.", termtext.Thousands(full), termtext.Thousands(b.ConfiguredWindow)),
			"It named it when it refused a larger request.")
	case b.Source == "server, cut":
		rep.Sections[0].Lines = append(rep.Sections[0].Lines, "",
			fmt.Sprintf("The server's window: about %s tokens (not %s); kept for this run.", termtext.Thousands(full), termtext.Thousands(b.ConfiguredWindow)),
			"It showed it by cutting a larger prompt without an error.")
	case b.Learned:
		rep.Sections[0].Lines = append(rep.Sections[0].Lines, "",
			fmt.Sprintf("Window: %s tokens (%s), not %s.", termtext.Thousands(full), b.Source, termtext.Thousands(b.ConfiguredWindow)),
			"The server reported it when asked; the smaller of it and a configured context_window is used.")
	}
	if b.Reserve > 0 {
		src := ""
		if b.Source != "" {
			src = " (" + b.Source + ")"
		}
		rep.Sections[0].Lines = append(rep.Sections[0].Lines, "",
			fmt.Sprintf("Window: %s tokens%s; %s kept for the answer (max_tokens): the prompt plans with %s.",
				termtext.Thousands(full), src, termtext.Thousands(b.Reserve), termtext.Thousands(window)))
	}
	if r.deps.MCP != nil {
		rep.Sections = append(rep.Sections, mcpContextSection(r.deps.MCP, window))
	}
	if w := InstructionsWarning(b.Instructions, window, r.deps.Instructions); w != "" {
		rep.Sections = append(rep.Sections, Section{Title: "Warning", Lines: []string{w}})
	}
	cfg := r.deps.Config.Summarize
	auto := "automatic summarization is off"
	if cfg.Enabled {
		auto = fmt.Sprintf("background summary at %s tokens (%.0f%%) · compaction before sending at %s (%.0f%%)",
			termtext.Thousands(int(float64(window)*cfg.SoftRatio)), cfg.SoftRatio*100, termtext.Thousands(int(float64(window)*cfg.HardRatio)), cfg.HardRatio*100)
	}
	rep.Footer = fmt.Sprintf("%d messages in the view · %s", b.LogMessages, auto)
	return Result{Report: rep}, nil
}

// InstructionsWarning says when the instructions (AGENTS.md) take more
// than a quarter of the window, which only a small window lets them do:
// every request carries them. "" when they fit.
func InstructionsWarning(tokens, window int, files []string) string {
	if tokens <= 0 || window <= 0 || tokens*4 <= window {
		return ""
	}
	names := "the instructions"
	if len(files) > 0 {
		names = "the instructions (" + strings.Join(files, ", ") + ")"
	}
	return fmt.Sprintf("%s take %s tokens of every request, %s of the %s-token window: shorten them, or use a model with a larger window",
		names, termtext.Thousands(tokens), pct(tokens, window), termtext.Thousands(window))
}

func pct(n, of int) string {
	if of <= 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", termtext.Percent(n, of))
}

func parsePositive(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a positive number", s)
	}
	return n, nil
}
