package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// openTwice opens two Stores on one data directory: two writers, as two
// processes would be (each Store has its own lock files open).
func openTwice(t *testing.T) (a, b *Store, sess Session) {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	a, err := Open(ctx, dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	b, err = Open(ctx, dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	sess, err = a.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	return a, b, sess
}

func TestLeaseExcludesAnotherWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, sess := openTwice(t)

	la, err := a.Lease(ctx, sess.ID[:6], 0) // a prefix names the session too
	require.NoError(t, err)
	require.Equal(t, sess.ID, la.SessionID())

	start := time.Now()
	_, err = b.Lease(ctx, sess.ID, 300*time.Millisecond)
	require.ErrorIs(t, err, ErrInUse)
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "the second writer waits before it gives up")
	var busy *BusyError
	require.ErrorAs(t, err, &busy)
	require.Equal(t, os.Getpid(), busy.Holder.PID)
	want := fmt.Sprintf(`^session %s is in use by gencode pid %d since \d\d:\d\d$`, sess.ID, os.Getpid())
	require.Regexp(t, regexp.MustCompile(want), err.Error())

	la.Release()
	la.Release() // twice is harmless
	lb, err := b.Lease(ctx, sess.ID, 0)
	require.NoError(t, err, "released: free at once")
	_, err = a.Lease(ctx, sess.ID, 0)
	require.ErrorIs(t, err, ErrInUse, "now b holds it")
	lb.Release()
}

func TestLeaseIsReentrantWithinAStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, sess := openTwice(t)
	outer, err := a.Lease(ctx, sess.ID, 0)
	require.NoError(t, err)
	inner, err := a.Lease(ctx, sess.ID, 0) // e.g. the agent's turn under the TUI's lease
	require.NoError(t, err)
	inner.Release()
	_, err = b.Lease(ctx, sess.ID, 0)
	require.ErrorIs(t, err, ErrInUse, "the outer lease still holds")
	outer.Release()
	lb, err := b.Lease(ctx, sess.ID, 0)
	require.NoError(t, err)
	lb.Release()
}

func TestLeaseWaitsForTheHolder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, sess := openTwice(t)
	la, err := a.Lease(ctx, sess.ID, 0)
	require.NoError(t, err)
	time.AfterFunc(150*time.Millisecond, la.Release)
	lb, err := b.Lease(ctx, sess.ID, 10*time.Second)
	require.NoError(t, err, "the holder let go within the wait")
	lb.Release()

	// Closing a Store releases its leases; a canceled wait says so.
	_, err = a.Lease(ctx, sess.ID, 0)
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = b.Lease(cctx, sess.ID, 10*time.Second)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, a.Close())
	lb, err = b.Lease(ctx, sess.ID, 0)
	require.NoError(t, err)
	lb.Release()
}

func TestLeaseUnknownSession(t *testing.T) {
	t.Parallel()
	_, err := openStore(t).Lease(context.Background(), "nosuch", 0)
	require.ErrorIs(t, err, ErrNotFound)
}

// TestLeaseMutualExclusion: writers on their own Stores take and release
// one session's lease in a loop; never two hold it at once. Releasing
// removes the lock file while others wait on it: they must not lock the
// removed file.
func TestLeaseMutualExclusion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	first, err := Open(ctx, dir)
	require.NoError(t, err)
	defer first.Close()
	sess, err := first.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	const writers, rounds = 4, 60
	var inside, most, taken atomic.Int32
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		s, err := Open(ctx, dir)
		require.NoError(t, err)
		defer s.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				l, err := s.Lease(ctx, sess.ID, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				taken.Add(1)
				time.Sleep(100 * time.Microsecond)
				inside.Add(-1)
				l.Release()
			}
		}()
	}
	wg.Wait()
	require.Equal(t, int32(writers*rounds), taken.Load())
	require.Equal(t, int32(1), most.Load(), "at most one writer at a time")
}

func TestBusyErrorWithoutHolder(t *testing.T) {
	t.Parallel()
	err := error(&BusyError{SessionID: "abc"})
	require.Equal(t, "session abc is in use by another gencode process", err.Error())
	require.True(t, errors.Is(err, ErrInUse))
	err = &BusyError{SessionID: "abc", Holder: Holder{PID: 7, Host: "elsewhere.example", Since: time.Now().Add(-48 * time.Hour)}}
	require.Regexp(t, `^session abc is in use by gencode pid 7 on elsewhere.example since [A-Z][a-z]{2} \d+ \d\d:\d\d$`, err.Error())
}

// BenchmarkLease: taking and giving up a free session's lease, what a
// turn pays when its front end does not hold the lease already (compare
// BenchmarkAppend).
func BenchmarkLease(b *testing.B) {
	s := openStore(b)
	ctx := context.Background()
	sess, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(b, err)
	for b.Loop() {
		l, err := s.Lease(ctx, sess.ID, 0)
		if err != nil {
			b.Fatal(err)
		}
		l.Release()
	}
}
