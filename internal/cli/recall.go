package cli

import (
	"github.com/gencode/gencode/internal/recall"
	"github.com/gencode/gencode/internal/tools"
)

// withRecall adds the history tools (SearchHistory, ReadHistory) to the
// agent's tools, on by default and read-only. They act on the session of
// the turn that calls them: the agent passes it (recall.Tools.RunInSession),
// so one agent serves /clear and /resume too. Their answers are capped at a
// quarter of the context window, and at most recall.DefaultMaxReadTokens.
//
// The index catches up before each search, so nothing needs to run beside
// them. A front end that lives long (the TUI) may keep it warm with
// a.store.RunIndexer in a goroutine it owns.
func (a *app) withRecall(ts *tools.Set, count func(string) int, window int) *recall.Tools {
	maxRead := recall.DefaultMaxReadTokens
	if window > 0 {
		maxRead = min(maxRead, max(window/4, 500))
	}
	return recall.With(ts, a.store, recall.Options{MaxReadTokens: maxRead, CountTokens: count})
}
