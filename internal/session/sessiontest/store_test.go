package sessiontest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
)

// TestOpenGivesEachTestItsOwnEmptyStore: every store Open gives is empty,
// private to the user, writable, and apart from the others.
func TestOpenGivesEachTestItsOwnEmptyStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := sessiontest.Open(t), sessiontest.Open(t)
	require.NotEqual(t, a.Path(), b.Path())
	for _, st := range []*session.Store{a, b} {
		list, err := st.Sessions(ctx, 0)
		require.NoError(t, err)
		require.Empty(t, list)
		fi, err := os.Stat(st.Path())
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}
	sess, err := a.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	_, err = a.Append(ctx, sess.ID, session.Message{Role: session.RoleUser, Content: "hi"})
	require.NoError(t, err)
	list, err := b.Sessions(ctx, 0)
	require.NoError(t, err)
	require.Empty(t, list, "a session written to one store is in another")
}

// TestOpenInKeepsAStoreThatIsThere: OpenIn gives an empty store where
// there was none, and the same store, its sessions kept, the next time.
func TestOpenInKeepsAStoreThatIsThere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "share", "gencode")
	st := sessiontest.OpenIn(t, dir)
	list, err := st.Sessions(ctx, 0)
	require.NoError(t, err)
	require.Empty(t, list)
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	_, err = st.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	require.NoError(t, st.Close())

	st = sessiontest.OpenIn(t, dir)
	defer st.Close()
	list, err = st.Sessions(ctx, 0)
	require.NoError(t, err)
	require.Len(t, list, 1, "the store that was there is kept")
}
