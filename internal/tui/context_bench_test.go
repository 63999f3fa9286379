package tui

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/commands"
)

// heapObjects is the bytes of the heap's objects now.
func heapObjects() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// peakHeap runs f and returns how far the heap's objects grew above what
// was live before it (sampled every 200 µs from runtime/metrics, which
// does not stop the world). The collection before f is not timed.
func peakHeap(b *testing.B, f func()) uint64 {
	b.StopTimer()
	runtime.GC()
	read := heapObjects
	base := read()
	peak := base
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	b.StartTimer()
	f()
	b.StopTimer()
	close(done)
	wg.Wait()
	peak = max(peak, read())
	b.StartTimer()
	return peak - base
}

// BenchmarkContextCommand is /context in the TUI (the command as the TUI
// runs it, with the agent's policy) for sessions of 10,000 and 100,000
// messages: "report" is the production path (the store's running sums),
// "view" the one before them (the view loaded and built). It reports the
// heap the command grows at its peak; the report's cost should not grow
// with the session:
//
//	go test -run '^$' -bench BenchmarkContextCommand -benchtime 5x ./internal/tui/
func BenchmarkContextCommand(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		st := newStore(b)
		id := seed(b, st, "bench", longSession(n)...)
		ag := realAgent(b.TempDir(), st)
		reg := commands.New(commands.Deps{Store: st})
		state := commands.State{SessionID: id, Model: ag.Model(), View: ag.Policy()}
		ctx := context.Background()
		for _, path := range []string{"report", "view"} {
			run := func() int {
				if path == "view" {
					v, err := st.LoadView(ctx, id)
					require.NoError(b, err)
					return ag.Policy().Build(v).Tokens
				}
				res, err := reg.Run(ctx, state, "/context")
				require.NoError(b, err)
				require.NotNil(b, res.Report)
				return 1
			}
			run() // the first measure keeps the masked sizes
			b.Run(fmt.Sprintf("%s/%dk", path, n/1000), func(b *testing.B) {
				b.ReportAllocs()
				var peak uint64
				for b.Loop() {
					peak = max(peak, peakHeap(b, func() { run() }))
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			})
		}
	}
}
