package summarize

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/logfile"
	"github.com/gencode/gencode/internal/session"
)

// TestBackgroundMergeFailureIsLogged: a background compaction applies its
// summary, then merges the summary block, which passed its budget; while
// the merge's summarizer call runs, another writer replaces one of the
// summaries being merged, so the store refuses the merge. Nobody waits for
// a background job, and its report says it succeeded: the log file is the
// only place the failure shows, with the session's id.
func TestBackgroundMergeFailureIsLogged(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	mergeAsked := make(chan struct{})
	release := make(chan struct{})
	var once, released sync.Once
	defer released.Do(func() { close(release) })
	llm := &fakeLLM{answer: func(r Request) (Completion, error) {
		if strings.Contains(r.System, "merge") {
			once.Do(func() { close(mergeAsked) })
			<-release
		}
		return Completion{Text: echoSummary(r)}, nil
	}}
	dir := t.TempDir()
	lf, err := logfile.Open(dir, logfile.Options{})
	require.NoError(t, err)
	defer lf.Close()
	cfg := testConfig(4000)
	cfg.SummaryWindow = 1 << 20 // no range in chunks: each merge request merges the block
	cfg.Logger = logfile.New(lf, logfile.Options{})
	var got reports
	cfg.Notify = got.add
	s := newSummarizer(store, llm, charCounter{}, cfg)
	defer s.Close()

	ctx := context.Background()
	merging := false
	for round := 0; round < 12 && !merging; round++ {
		seedTurns(l, round*6+1, 6)
		v := l.view()
		_, err := s.Prepare(ctx, v, viewTokens(s, v))
		require.NoError(t, err)
		idle := make(chan struct{})
		go func() { s.Wait(); close(idle) }()
		select {
		case <-mergeAsked:
			merging = true
		case <-idle:
		}
	}
	require.True(t, merging, "no background compaction merged the summary block")

	// Another writer replaces the oldest summary meanwhile.
	old := l.view().Summaries[0]
	repl := old
	repl.ID, repl.Content = "", "rewritten elsewhere"
	_, err = store.ApplySummary(ctx, repl, []string{old.ID}, false)
	require.NoError(t, err)
	released.Do(func() { close(release) })
	s.Wait()

	for _, r := range got.finished() {
		require.Nil(t, r.Merged, "the merge cannot have been applied")
	}
	b, err := os.ReadFile(lf.Path())
	require.NoError(t, err)
	var line string
	for _, ln := range strings.Split(string(b), "\n") {
		if strings.Contains(ln, "merge summaries") {
			line = ln
		}
	}
	require.NotEmpty(t, line, "no merge failure in the log:\n%s", b)
	require.Contains(t, line, "level=WARN")
	require.Contains(t, line, "session="+l.id)
	require.Contains(t, line, session.ErrRangeTaken.Error())
}
