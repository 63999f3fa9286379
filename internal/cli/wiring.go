package cli

import (
	"context"
	"errors"

	"github.com/gencode/gencode/internal/agent"
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
