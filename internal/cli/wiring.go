package cli

import (
	"context"
	"errors"

	"github.com/sashabaranov/go-openai"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/models"
	"github.com/gencode/gencode/internal/summarize"
)

// summarizer is the background compactor as the CLI owns it: started with
// the agent, waited for before a print-mode exit, closed at the end.
type summarizer interface {
	Wait()
	Close()
	SummarizeNow(ctx context.Context, sessionID, focus string) (summarize.Report, error)
}

// newSummarizer installs the summarizer on the agent; nil when disabled.
// It talks to the endpoint through a client of its own that does not retry:
// the summarizer bounds its attempts itself and falls back to a
// deterministic summary, so a failing summarizer never holds a turn for the
// client's retry budget.
func (a *app) newSummarizer(_ *llm.Client, ag *agent.Agent, off bool) summarizer {
	if off || !a.cfg.Summarize.Enabled {
		return nil
	}
	s := a.buildSummarizer(ag, a.notify)
	ag.SetCompactor(s)
	return s
}

// buildSummarizer makes the summarizer for the agent's model and window.
// notify receives background reports as they happen (nil: they reach the
// turn's events at its next request).
func (a *app) buildSummarizer(ag *agent.Agent, notify func(summarize.Report)) *summarize.Summarizer {
	key := a.cfg.APIKey
	if key == "" {
		key = "none"
	}
	client := llm.New(llm.Config{BaseURL: a.cfg.BaseURL, APIKey: key, MaxRetries: -1})
	sc := a.cfg.Summarize
	model := a.cfg.SummaryModel()
	summaryWindow := a.window(model)
	if model != a.cfg.Model {
		summaryWindow, _ = models.Window(model)
	}
	return summarize.New(a.store, completer{client}, a.tokens.Counter(a.cfg.Model), summarize.Config{
		Enabled:              true,
		Window:               ag.Window(),
		SummaryWindow:        summaryWindow,
		Model:                model,
		FixedCost:            ag.FixedCost(),
		SoftRatio:            sc.SoftRatio,
		HardRatio:            sc.HardRatio,
		TriggerThreshold:     sc.TriggerThreshold,
		TargetCompression:    sc.TargetCompression,
		PreserveRecent:       sc.PreserveRecent,
		PreserveSystem:       sc.PreserveSystem,
		MaskToolOutputsAfter: sc.MaskToolOutputsAfter,
		RedactSecrets:        sc.RedactSecrets,
		DeleteOriginals:      sc.DeleteOriginals,
		SummaryBudgetRatio:   sc.SummaryBudgetRatio,
		Notify:               notify,
	})
}

// completer adapts the LLM client to the summarizer's Completer: one
// plain, non-streamed completion without tools.
type completer struct{ c *llm.Client }

func (c completer) Complete(ctx context.Context, req summarize.Request) (summarize.Completion, error) {
	resp, err := c.c.Complete(ctx, llm.Request{
		Model: req.Model, MaxTokens: req.MaxTokens,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: req.System},
			{Role: openai.ChatMessageRoleUser, Content: req.Prompt},
		},
	})
	if err != nil {
		return summarize.Completion{}, err
	}
	out := summarize.Completion{Text: resp.Content, Model: resp.Model}
	if resp.Usage != nil {
		out.PromptTokens, out.CompletionTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
	}
	return out, nil
}

// notify prints background compaction reports as they come (print mode
// may be waiting for one before it exits).
func (a *app) notify(r summarize.Report) { a.reportCompaction(&r) }

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
