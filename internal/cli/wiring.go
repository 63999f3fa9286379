package cli

import (
	"context"
	"errors"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/llm"
)

// summarizer is the background compactor as the CLI owns it: started with
// the agent, waited for before a print-mode exit, closed at the end.
type summarizer interface {
	Wait()
	Close()
}

// newSummarizer installs the summarizer on the agent; nil when disabled.
func (a *app) newSummarizer(_ *llm.Client, _ *agent.Agent, _ bool) summarizer {
	return nil
}

// interactive runs the TUI.
func (a *app) interactive(_ context.Context, _ rootOptions) error {
	return errors.New("the terminal UI is not built yet; use print mode: gencode -p \"PROMPT\"")
}

// renderReport draws a report for the terminal: boxed on a terminal,
// plain when piped or with NO_COLOR.
func (a *app) renderReport(r *commands.Report) string {
	return r.Plain()
}

// searchFunc is the history search (the recall index), or nil.
func (a *app) searchFunc() commands.SearchFunc { return nil }
