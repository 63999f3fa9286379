package session_test

import (
	"context"
	"testing"

	"github.com/gencode/gencode/internal/session"
	"github.com/stretchr/testify/require"
)

// BenchmarkOpen is what opening the store costs a gencode process: New
// is the first run's (the file created, every migration applied),
// Existing every later one's (the schema read, quick_check).
func BenchmarkOpen(b *testing.B) {
	ctx := context.Background()
	b.Run("New", func(b *testing.B) {
		for b.Loop() {
			st, err := session.Open(ctx, b.TempDir())
			require.NoError(b, err)
			require.NoError(b, st.Close())
		}
	})
	b.Run("Existing", func(b *testing.B) {
		dir := b.TempDir()
		st, err := session.Open(ctx, dir)
		require.NoError(b, err)
		require.NoError(b, st.Close())
		for b.Loop() {
			st, err := session.Open(ctx, dir)
			require.NoError(b, err)
			require.NoError(b, st.Close())
		}
	})
}
