package cli

import (
	"context"
	"time"

	"github.com/gencode/gencode/internal/crash"
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
// them; a front end that lives long (the TUI) keeps it warm with
// startIndexer.
func (a *app) withRecall(ts *tools.Set, count func(string) int, window int) *recall.Tools {
	maxRead := recall.DefaultMaxReadTokens
	if window > 0 {
		maxRead = min(maxRead, max(window/4, 500))
	}
	return recall.With(ts, a.store, recall.Options{MaxReadTokens: maxRead, CountTokens: count})
}

// indexEvery is how often the background indexer looks for new messages.
const indexEvery = 2 * time.Second

// startIndexer keeps the search index caught up in the background, giving
// way while the session writes (see session.Store.RunIndexer), so that the
// first search of a long or old session does not wait for indexing. It runs
// until stop is called; stop waits for it to end, and must be called
// before the store is closed:
//
//	defer a.startIndexer(ctx, logErr)()
func (a *app) startIndexer(ctx context.Context, onErr func(error)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The index catches up at the next search: a panic costs no more
		// than an error here, and is reported as one.
		defer crash.Recover(a.log, "search indexer", "", func(e *crash.Error) { onErr(a.locate(e)) })
		a.panicAt("indexer")
		a.store.RunIndexer(ctx, indexEvery, onErr)
	}()
	return func() {
		cancel()
		<-done
	}
}
