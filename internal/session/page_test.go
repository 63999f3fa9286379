package session

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEachPagesThroughTheLog: Each yields every message of a range once,
// in order, across page boundaries, and stops when the caller does.
func TestEachPagesThroughTheLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	other, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	n := 2*pageSize + 7
	var msgs []Message
	for i := 1; i <= n; i++ {
		msgs = append(msgs, Message{Role: RoleUser, Content: fmt.Sprint("m", i)})
	}
	_, err = s.Append(ctx, sess.ID, msgs...)
	require.NoError(t, err)
	_, err = s.Append(ctx, other.ID, Message{Role: RoleUser, Content: "other"})
	require.NoError(t, err)

	tests := []struct {
		from, to   int64
		first, cnt int64
	}{{1, 0, 1, int64(n)}, {5, 0, 5, int64(n) - 4}, {pageSize, pageSize + 1, pageSize, 2}, {int64(n) + 1, 0, 0, 0}}
	for _, tt := range tests {
		var got []int64
		for m, err := range s.Each(ctx, sess.ID, tt.from, tt.to) {
			require.NoError(t, err)
			require.Equal(t, fmt.Sprint("m", m.Seq), m.Content)
			got = append(got, m.Seq)
		}
		require.Len(t, got, int(tt.cnt), "Each(%d, %d)", tt.from, tt.to)
		for i, seq := range got {
			require.Equal(t, tt.first+int64(i), seq)
		}
	}
	seen := 0
	for range s.Each(ctx, sess.ID, 1, 0) {
		seen++
		if seen == 3 {
			break
		}
	}
	require.Equal(t, 3, seen)

	tail, err := s.TailAfter(ctx, sess.ID, 100, 4)
	require.NoError(t, err)
	require.Len(t, tail, 4)
	require.EqualValues(t, n-3, tail[0].Seq)
	tail, err = s.TailAfter(ctx, sess.ID, int64(n)-2, 10)
	require.NoError(t, err)
	require.Len(t, tail, 2, "only what comes after")
	require.EqualValues(t, n-1, tail[0].Seq)
}
