package cli

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
)

func TestStartIndexerIndexesAnOldLogAndStops(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := sessiontest.Open(t)
	sess, err := store.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	_, err = store.Append(ctx, sess.ID, session.Message{Role: session.RoleUser, Content: "an old message"})
	require.NoError(t, err)

	a := &app{store: store}
	stop := a.startIndexer(ctx, func(err error) { t.Errorf("indexer: %v", err) })
	require.Eventually(t, func() bool {
		n, err := store.IndexBacklog(ctx)
		return err == nil && n == 0
	}, 20*time.Second, 20*time.Millisecond)
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not return")
	}
}
