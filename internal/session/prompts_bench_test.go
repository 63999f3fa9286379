package session

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkPrompts is what a TUI start pays for Up's history, in a
// project whose session holds 1,000 or 100,000 messages (a quarter of
// them sent by the user); the two should cost the same:
//
//	go test -run '^$' -bench 'BenchmarkPrompts' -benchtime 20x -count 3 ./internal/session/
func BenchmarkPrompts(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			ctx := context.Background()
			st, err := Open(ctx, b.TempDir())
			require.NoError(b, err)
			defer st.Close()
			sess, err := st.CreateSession(ctx, "/w", "m")
			require.NoError(b, err)
			l := newBenchLog(1)
			for i := 0; i < n; i += 1000 {
				msgs := make([]Message, 0, 1000)
				for range 1000 {
					msgs = append(msgs, l.next())
				}
				_, err := st.Append(ctx, sess.ID, msgs...)
				require.NoError(b, err)
			}
			b.ResetTimer()
			for b.Loop() {
				got, err := st.Prompts(ctx, "/w", 200, 4096)
				require.NoError(b, err)
				require.Len(b, got, 200)
			}
		})
	}
}
