package tui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/gencode/gencode/internal/tools"
)

// Asker answers the tools' permission requests with the TUI's dialog. Ask
// is called on the agent's goroutine: it hands the request to the UI and
// waits for the user's answer or for ctx to end (a canceled turn).
type Asker struct {
	reqs chan askMsg
	// saved carries what became of "always for this project" answers.
	saved chan savedMsg
}

// NewAsker returns an Asker; pass it to both tools.New and Options.
func NewAsker() *Asker { return &Asker{reqs: make(chan askMsg), saved: make(chan savedMsg, 8)} }

// savedMsg says whether an "always for this project" rule was saved.
type savedMsg struct {
	tool, rule string
	err        error
}

// Saved implements tools.SaveReporter. It never blocks the tool: with
// the queue full (the UI is stuck) the note is dropped; /permissions
// still shows the rules and the last failure.
func (a *Asker) Saved(tool, rule string, err error) {
	select {
	case a.saved <- savedMsg{tool: tool, rule: rule, err: err}:
	default:
	}
}

// waitSaved is the Cmd that receives the next savedMsg; the UI starts it
// once and again after each.
func (a *Asker) waitSaved() tea.Cmd {
	if a == nil {
		return nil
	}
	return func() tea.Msg { return <-a.saved }
}

// askMsg carries one request to the UI.
type askMsg struct {
	ctx   context.Context
	req   tools.Request
	reply chan<- tools.Decision
	// why carries the reason the user gave with a denial, sent before
	// the decision (buffered; nil: the asker takes none).
	why chan<- string
}

// Ask implements tools.Asker.
func (a *Asker) Ask(ctx context.Context, r tools.Request) (tools.Decision, error) {
	d, _, err := a.AskWhy(ctx, r)
	return d, err
}

// AskWhy implements tools.ReasonAsker: a denial may come with what the
// user wants the model told.
func (a *Asker) AskWhy(ctx context.Context, r tools.Request) (tools.Decision, string, error) {
	reply, why := make(chan tools.Decision, 1), make(chan string, 1)
	select {
	case a.reqs <- askMsg{ctx: ctx, req: r, reply: reply, why: why}:
	case <-ctx.Done():
		return tools.Deny, "", ctx.Err()
	}
	select {
	case d := <-reply:
		select {
		case reason := <-why:
			return d, reason, nil
		default:
			return d, "", nil
		}
	case <-ctx.Done():
		return tools.Deny, "", ctx.Err()
	}
}

// wait is the Cmd that receives the next request. The UI starts it once
// and again after each answer, so one dialog shows at a time.
func (a *Asker) wait() tea.Cmd {
	if a == nil {
		return nil
	}
	return func() tea.Msg { return <-a.reqs }
}
