package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/summarize"
)

// TestModelSwitchEndsTheOldSummarizer: /model while the old model's
// summarizer compacts the session in the background. The switch ends that
// compaction (nothing it was doing is applied later) and closes the old
// summarizer, so the new model's is the only one working on the session.
func TestModelSwitchEndsTheOldSummarizer(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	answer := "Answered: " + strings.Repeat("the quick brown fox jumps over the lazy dog ", 30)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
		if r.Model == fakeSummaryModel {
			return openaitest.Reply{Content: fakeSummary(r), Gate: gate}
		}
		return openaitest.Text(answer)
	}))
	store, sess := newStoreSession(t)
	built := map[string]*harness{}
	models := &modelSet{build: func(model string) (*agent.Agent, summarizer, error) {
		h := newHarness(t, srv, store, sess, 12000, func(c *summarize.Config) { // small: a summary starts a few turns in
			c.TriggerThreshold, c.PreserveRecent = 12, 4
		})
		built[model] = h
		return h.agent, h.sum, nil
	}}
	defer models.close()
	_, _, err := models.use("a")
	require.NoError(t, err)
	old := built["a"]
	started := false
	for i := 1; !started; i++ {
		require.Less(t, i, 10, "no background summary started")
		mark := old.notified()
		old.turn(fmt.Sprintf("question %d", i))
		for _, c := range old.compactions(mark) {
			started = started || (c.Phase == summarize.Started && c.Background)
		}
	}
	require.Eventually(t, func() bool { return summarizerRequests(srv) == 1 }, 10*time.Second, 10*time.Millisecond,
		"the background summary reached the server")

	_, sum, err := models.use("b")
	require.NoError(t, err)
	require.Same(t, built["b"].sum, sum)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = old.sum.SummarizeNow(ctx, sess.ID, "")
	require.ErrorIs(t, err, summarize.ErrClosed, "the old summarizer still takes work")

	close(gate) // the old compaction's answer comes now: too late
	old.sum.Wait()
	v, err := store.LoadView(context.Background(), sess.ID)
	require.NoError(t, err)
	require.Empty(t, v.Summaries, "the old summarizer applied its compaction after the switch")
}
