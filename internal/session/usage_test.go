package session

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUsage: every request's usage is kept with its session, added up by
// purpose and model for the session, and by model for its latest turn; it
// survives reopening the store.
func TestUsage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	s, err := Open(ctx, dir)
	require.NoError(t, err)
	a, err := s.CreateSession(ctx, "/w", "gpt-4o")
	require.NoError(t, err)
	b, err := s.CreateSession(ctx, "/w", "gpt-4o")
	require.NoError(t, err)
	for _, u := range []Usage{
		{Purpose: UsageTurn, Model: "gpt-4o", TurnSeq: 1, Input: 1000, Cached: 0, Output: 50},
		{Purpose: UsageTurn, Model: "gpt-4o", TurnSeq: 1, Input: 1200, Cached: 1000, Output: 30},
		{Purpose: UsageSummary, Model: "gpt-4o-mini", Input: 3000, Cached: 2000, Output: 400},
		{Purpose: UsageTurn, Model: "gpt-4o", TurnSeq: 5, Input: 900, Cached: 800, Output: 20},
		{Purpose: UsageTurn, Model: "gpt-4.1", TurnSeq: 5, Input: 950, Output: 10}, // a /model switch mid-session
	} {
		require.NoError(t, s.AddUsage(ctx, a.ID, u))
	}
	require.NoError(t, s.AddUsage(ctx, b.ID, Usage{Purpose: UsageTurn, Model: "gpt-4o", TurnSeq: 1, Input: 7, Output: 1}))
	require.NoError(t, s.Close())

	s, err = Open(ctx, dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	all, err := s.UsageBySession(ctx, a.ID, b.ID, "nosuch")
	require.NoError(t, err)
	require.Equal(t, []UsageTotal{
		{Purpose: UsageTurn, Model: "gpt-4.1", Requests: 1, Input: 950, Output: 10},
		{Purpose: UsageTurn, Model: "gpt-4o", Requests: 3, Input: 3100, Cached: 1800, Output: 100},
		{Purpose: UsageSummary, Model: "gpt-4o-mini", Requests: 1, Input: 3000, Cached: 2000, Output: 400},
	}, all[a.ID])
	require.Equal(t, []UsageTotal{{Purpose: UsageTurn, Model: "gpt-4o", Requests: 1, Input: 7, Output: 1}}, all[b.ID])
	require.NotContains(t, all, "nosuch")

	last, err := s.LastTurnUsage(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, []UsageTotal{
		{Purpose: UsageTurn, Model: "gpt-4.1", Requests: 1, Input: 950, Output: 10},
		{Purpose: UsageTurn, Model: "gpt-4o", Requests: 1, Input: 900, Cached: 800, Output: 20},
	}, last)
	c, err := s.CreateSession(ctx, "/w", "gpt-4o")
	require.NoError(t, err)
	last, err = s.LastTurnUsage(ctx, c.ID)
	require.NoError(t, err)
	require.Empty(t, last)
}
