package agent

import (
	"context"

	"github.com/gencode/gencode/internal/tools"
)

// sessionRunner is a toolRunner some of whose tools act on the session of
// the turn that calls them (recall's SearchHistory and ReadHistory). The
// agent runs turns of several sessions, so it passes each call's session
// rather than binding the tools to one at construction.
type sessionRunner interface {
	RunInSession(ctx context.Context, sessionID string, c tools.Call) tools.Result
}

// runTool runs one call of a turn of sessionID.
func (a *Agent) runTool(ctx context.Context, sessionID string, c tools.Call) tools.Result {
	if sr, ok := a.tools.(sessionRunner); ok {
		return sr.RunInSession(ctx, sessionID, c)
	}
	return a.tools.Run(ctx, c)
}
