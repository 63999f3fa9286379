package summarize

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
)

// TestLongLogIsCompactedBeforeTheViewIsLoaded: a session of 800 messages,
// never summarized, ten windows long (an import, say). CatchUp, which a
// turn calls before it loads the view, summarizes all but what fits the
// window, in chunks read from the log in order (every request within the
// summarizer's window, each chunk starting where the last ended), keeps a
// fact stated in turn 3 and the files of the first and the last turn
// summarized, and leaves a view that fits the window.
func TestLongLogIsCompactedBeforeTheViewIsLoaded(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 160) // 5 messages a turn
	const window = 4000
	llm := &fakeLLM{}
	s := newSummarizer(store, llm, charCounter{}, testConfig(window))
	defer s.Close()
	before, err := store.Heads(context.Background(), l.id, 1, 0)
	require.NoError(t, err)
	total := 0
	for _, h := range before {
		total += h.Tokens
	}
	require.Greater(t, total, 5*window, "the log should be several windows long")

	require.NoError(t, s.CatchUp(context.Background(), l.id))

	sums, err := store.Summaries(context.Background(), l.id, true)
	require.NoError(t, err)
	require.Len(t, sums, 1, "one summary of the long range, no other compaction")
	sum := sums[0]
	require.Equal(t, int64(1), sum.FromSeq)
	require.False(t, sum.Fallback, sum.FallbackReason)
	require.Greater(t, sum.Chunks, 1, "the range is summarized in chunks")
	require.Contains(t, sum.Content, "FACT-BLUEFALCON", "a fact of turn 3, through the chunks and their merge")
	require.Contains(t, sum.FilesModified, "/w/pkg/f1.go")
	last := int(sum.ToSeq-1)/5 + 1 // the turn of the range's last message
	require.Contains(t, sum.FilesModified, fmt.Sprintf("/w/pkg/f%d.go", last-1))
	require.Equal(t, 800, sum.MessagesBefore)

	seqRe := regexp.MustCompile(`Summarize messages (\d+)-(\d+) of the session`)
	next := int64(1)
	for i, r := range llm.requests() {
		require.LessOrEqual(t, requestSize(r), window, "request %d", i+1)
		m := seqRe.FindStringSubmatch(r.Prompt)
		if m == nil {
			continue // a merge
		}
		from, _ := strconv.ParseInt(m[1], 10, 64)
		to, _ := strconv.ParseInt(m[2], 10, 64)
		require.Equal(t, next, from, "request %d: chunks follow each other", i+1)
		next = to + 1
	}
	require.Equal(t, sum.ToSeq+1, next, "the chunks cover the range")
	require.LessOrEqual(t, viewTokens(s, l.view()), window, "the view left fits the window")
}

// TestShortLogIsNotCaughtUp: CatchUp leaves a log that fits a couple of
// windows to the turn's own thresholds.
func TestShortLogIsNotCaughtUp(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 160)
	llm := &fakeLLM{}
	s := newSummarizer(store, llm, charCounter{}, testConfig(128000))
	defer s.Close()
	require.NoError(t, s.CatchUp(context.Background(), l.id))
	sums, err := store.Summaries(context.Background(), l.id, true)
	require.NoError(t, err)
	require.Empty(t, sums)
	require.Empty(t, llm.requests())
}

// TestLongLogFallbackHasAllItsFacts: when the summarizer fails on a long
// log, the deterministic summary applied still has the facts of the whole
// range, read after the chunks the summarizer never took.
func TestLongLogFallbackHasAllItsFacts(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 160)
	llm := &fakeLLM{answer: func(Request) (Completion, error) { return Completion{}, errors.New("model overloaded") }}
	s := newSummarizer(store, llm, charCounter{}, testConfig(4000))
	defer s.Close()

	require.NoError(t, s.CatchUp(context.Background(), l.id))

	sums, err := store.Summaries(context.Background(), l.id, false)
	require.NoError(t, err)
	require.Len(t, sums, 1)
	sum := sums[0]
	require.True(t, sum.Fallback)
	require.Contains(t, sum.FilesModified, "/w/pkg/f1.go")
	last := int(sum.ToSeq-1)/5 + 1
	require.Contains(t, sum.FilesModified, fmt.Sprintf("/w/pkg/f%d.go", last-1))
	require.Contains(t, strings.Join(sum.UserConstraints, "\n"), "FACT-BLUEFALCON", "the user's memo of turn 3, verbatim")
}

// TestLongLogLeavesOutWhatARewindTookOut: turns 3-10 of a long log were
// rewound (the conversation went back to before turn 3). The first
// compaction of the log, planned from its heads, neither summarizes them
// nor lists their files: what a rewind took out stays out, as in a view.
func TestLongLogLeavesOutWhatARewindTookOut(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	ctx := context.Background()
	seedTurns(l, 1, 10) // turn 3 says FACT-BLUEFALCON
	_, err := store.RecordRewind(ctx, session.Rewind{SessionID: l.id, Kind: session.RewindTurn, Turn: 3, FromSeq: 11})
	require.NoError(t, err)
	seedTurns(l, 11, 160)
	llm := &fakeLLM{}
	s := newSummarizer(store, llm, charCounter{}, testConfig(4000))
	defer s.Close()

	require.NoError(t, s.CatchUp(ctx, l.id))

	sums, err := store.Summaries(ctx, l.id, false)
	require.NoError(t, err)
	require.Len(t, sums, 1)
	sum := sums[0]
	require.False(t, sum.Fallback, sum.FallbackReason)
	require.Contains(t, sum.FilesModified, "/w/pkg/f1.go")
	require.Contains(t, sum.FilesModified, "/w/pkg/f11.go")
	require.NotContains(t, sum.FilesModified, "/w/pkg/f3.go")
	require.NotContains(t, sum.Content, "FACT-BLUEFALCON")
	for _, r := range llm.requests() {
		require.NotContains(t, r.Prompt, "Turn 5: add feature 5", "a rewound turn sent to the summarizer")
	}
}
