package summarize

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// countingCounter counts how much text was tokenized.
type countingCounter struct {
	charCounter
	mu    sync.Mutex
	bytes int
}

func (c *countingCounter) Count(s string) int {
	c.mu.Lock()
	c.bytes += len(s)
	c.mu.Unlock()
	return c.charCounter.Count(s)
}

// TestNarrateTokenizesNothingTwice: a summary of a long range reads the
// messages' stored counts to size its chunks; it tokenizes only what it
// writes (the summary) and what the summarizer answered, never the
// range again. (Before, every message was tokenized once more: 54% of
// the first turn after importing a 100,000-message session.)
func TestNarrateTokenizesNothingTwice(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 200)
	var rangeBytes int
	for _, m := range l.allMessages() {
		rangeBytes += len(m.Content)
	}
	counter := &countingCounter{}
	llm := &fakeLLM{answer: func(r Request) (Completion, error) {
		return Completion{Text: echoSummary(r), PromptTokens: 1000, CompletionTokens: 100}, nil
	}}
	cfg := testConfig(16000)     // chunks: the range does not fit one call
	cfg.MaskToolOutputsAfter = 0 // the view policy counts its placeholders once; none here
	s := New(store, llm, counter, cfg)
	defer s.Close()
	rep, err := s.SummarizeNow(context.Background(), l.id, "")
	require.NoError(t, err)
	require.NotNil(t, rep.Summary)
	require.Greater(t, rep.Summary.Chunks, 1)
	require.Less(t, counter.bytes, rangeBytes/4, "tokenized %d bytes for a range of %d", counter.bytes, rangeBytes)
}
