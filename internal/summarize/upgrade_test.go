package summarize

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
)

// rangeCountingStore is the real store, counting the ranges read with
// Messages, ViewMessages or Each.
type rangeCountingStore struct {
	*session.Store
	mu    sync.Mutex
	reads map[[2]int64]int
}

func (s *rangeCountingStore) Messages(ctx context.Context, id string, from, to int64) ([]session.Message, error) {
	s.count(from, to)
	return s.Store.Messages(ctx, id, from, to)
}

func (s *rangeCountingStore) ViewMessages(ctx context.Context, id string, from, to int64) ([]session.Message, error) {
	s.count(from, to)
	return s.Store.ViewMessages(ctx, id, from, to)
}

func (s *rangeCountingStore) Each(ctx context.Context, id string, from, to int64) iter.Seq2[session.Message, error] {
	s.count(from, to)
	return s.Store.Each(ctx, id, from, to)
}

func (s *rangeCountingStore) count(from, to int64) {
	s.mu.Lock()
	s.reads[[2]int64{from, to}]++
	s.mu.Unlock()
}

func (s *rangeCountingStore) read(from, to int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads[[2]int64{from, to}]
}

// TestUpgradeNarratesThePlannedRange: the narrative written after a turn
// could not wait is written from the range the compaction read and
// redacted: not loaded and redacted again, and still without its secret.
func TestUpgradeNarratesThePlannedRange(t *testing.T) {
	t.Parallel()
	const secret = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	store := &rangeCountingStore{Store: openStore(t), reads: map[[2]int64]int{}}
	l := newLog(t, store.Store)
	l.turn("Use the token " + secret + " for the registry.")
	seedTurns(l, 1, 15)
	gate := make(chan struct{})
	llm := &fakeLLM{gate: gate}
	cfg := testConfig(windowAt(l, 0.95))
	cfg.WaitLimit = 100 * time.Millisecond
	cfg.RedactSecrets = true
	s := newSummarizer(store, llm, charCounter{}, cfg)
	defer s.Close()
	v := l.view()
	v2, err := s.Prepare(context.Background(), v, viewTokens(s, v))
	require.NoError(t, err)
	require.Len(t, v2.Summaries, 1)
	fallback := v2.Summaries[0]
	require.True(t, fallback.Fallback)

	close(gate)
	s.Wait()
	up := l.view().Summaries[0]
	require.False(t, up.Fallback, "the narrative replaced the deterministic summary")
	require.Equal(t, []string{fallback.ID}, up.Merged)
	require.Zero(t, store.read(fallback.FromSeq, fallback.ToSeq), "the upgrade read its range again")
	reqs := llm.requests()
	last, err := json.Marshal(reqs[len(reqs)-1])
	require.NoError(t, err)
	require.NotContains(t, string(last), secret)
	require.Contains(t, string(last), "[REDACTED:")
}

// BenchmarkUpgradeRange is the work the narrative written after a turn
// could not wait does before it asks the model, on a range of 2,000
// messages with redact_secrets on: loaded from the log and redacted again
// (before), or the range its compaction read and redacted (now).
//
//	go test ./internal/summarize -run '^$' -bench UpgradeRange -benchtime 20x
func BenchmarkUpgradeRange(b *testing.B) {
	store := openStore(b)
	l := newLog(b, store)
	seedTurns(l, 1, 400)
	cfg := testConfig(windowAt(l, 0.95))
	cfg.RedactSecrets = true
	s := newSummarizer(store, &fakeLLM{}, charCounter{}, cfg)
	defer s.Close()
	msgs := l.view().Messages
	planned := redactMessages(msgs)
	target := session.Summary{SessionID: l.id, FromSeq: msgs[0].Seq, ToSeq: msgs[len(msgs)-1].Seq}
	for _, tt := range []struct {
		name    string
		planned []session.Message
	}{{"reloaded", nil}, {"planned", planned}} {
		b.Run(fmt.Sprintf("%s/messages=%d", tt.name, len(msgs)), func(b *testing.B) {
			for b.Loop() {
				src, tokens, stop, err := s.upgradeFeed(context.Background(), l.id, target, tt.planned)
				require.NoError(b, err)
				require.NoError(b, src.fill(math.MaxInt))
				stop()
				require.NotEmpty(b, src.buf)
				require.Positive(b, tokens)
			}
		})
	}
}
