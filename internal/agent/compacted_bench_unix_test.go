//go:build unix

package agent

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/facts"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
)

// BenchmarkCompactedSessionTurn runs a turn (the fake server answers
// "ok") in a session of 100,000 messages whose first 99,990 are one
// deterministic summary, with its facts as the summarizer's fallback
// stores them (12,500 stated values), and a turn in a new session, one
// after the other, and reports their ratio (issue 30: at most 1.1).
//
//	go test ./internal/agent -run '^$' -bench CompactedSessionTurn -benchtime 20x
func BenchmarkCompactedSessionTurn(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	srv := openaitest.NewServer(b, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		return openaitest.Text("ok")
	}))
	store, err := session.Open(ctx, b.TempDir())
	require.NoError(b, err)
	b.Cleanup(func() { store.Close() })
	long, err := store.CreateSession(ctx, "/w", "gpt-4o-mini")
	require.NoError(b, err)
	sessiontest.SeedStatedLog(b, store, long.ID, n)
	msgs, err := store.Messages(ctx, long.ID, 1, n-10)
	require.NoError(b, err)
	sum := facts.Of(msgs)
	sum.SessionID, sum.FromSeq, sum.ToSeq = long.ID, 1, n-10
	sum.Fallback, sum.RenderChars, sum.KeepChars = true, 12000, facts.MaxKeptChars
	sum.TokenCount = 3000
	_, err = store.ApplySummary(ctx, sum, nil, false)
	require.NoError(b, err)

	client := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "test"})
	a := New(store, client, &echoTools{}, vocabs.Counter("gpt-4o-mini"), Options{Model: "gpt-4o-mini", WorkDir: "/w", Window: 128000})
	// CPU, not wall time: on a shared machine a turn waits for a core.
	// The process's (the fake server's share is the same in both turns).
	cpu := func() time.Duration {
		var ru syscall.Rusage
		require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	turn := func(id string) time.Duration {
		start := cpu()
		last := lastEvent(collect(a.Start(ctx, id, "hi")))
		require.Equal(b, EventDone, last.Kind, "last event: %+v", last)
		return cpu() - start
	}
	fresh, err := store.CreateSession(ctx, "/w", "gpt-4o-mini")
	require.NoError(b, err)
	turn(long.ID) // the first turn of each stores its context estimate
	turn(fresh.ID)
	var compacted, new time.Duration
	for b.Loop() {
		compacted += turn(long.ID)
		new += turn(fresh.ID)
	}
	b.ReportMetric(float64(compacted.Microseconds())/1000/float64(b.N), "compacted-cpu-ms")
	b.ReportMetric(float64(new.Microseconds())/1000/float64(b.N), "new-cpu-ms")
	b.ReportMetric(float64(compacted)/float64(new), "compacted/new")
	b.ReportMetric(float64(len(sum.UserConstraints)), "kept-sentences")
}
