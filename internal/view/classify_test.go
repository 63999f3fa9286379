package view

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
)

// TestMeterFollowsAViewRule: the store keeps no rule of the view's own.
// Changing one (leftOut: which answers normalize leaves out) in its one
// place changes what the store records at append (the rule reaches it
// through Classify) and the meter still equals the request built, which
// leaves the answer out. With a copy of the rule in the store, the store
// would call the answer carried as is and the meter would count it.
func TestMeterFollowsAViewRule(t *testing.T) {
	// Not parallel: it changes a package variable, restored at the end,
	// before the package's parallel tests run.
	old := leftOut
	leftOut = func(m session.Message) bool { return old(m) || m.Content == "SKIP this answer" }
	defer func() { leftOut = old }()

	ctx := context.Background()
	st := openStore(t)
	l := newLog(t, st)
	l.add(
		session.Message{Role: session.RoleUser, Content: "first request"},
		session.Message{Role: session.RoleAssistant, Content: "SKIP this answer"},
		session.Message{Role: session.RoleUser, Content: "second request"},
		session.Message{Role: session.RoleAssistant, Content: "a real answer"},
	)
	p := NewPolicy(Config{Window: 100000, Overhead: 100})
	v, err := st.LoadView(ctx, l.id)
	require.NoError(t, err)
	built := p.Build(v)
	for _, m := range built.Messages {
		require.NotEqual(t, "SKIP this answer", m.Content, "the request leaves it out")
	}
	var plain int
	require.NoError(t, st.DB().QueryRowContext(ctx, `SELECT plain FROM messages WHERE session_id = ? AND seq = 2`, l.id).Scan(&plain))
	require.Equal(t, int(session.Mended), plain, "the store recorded the view's rule")
	got, err := p.Measure(ctx, st, l.id)
	require.NoError(t, err)
	require.Equal(t, built.Tokens, got.Tokens, "the meter follows the rule")

	// And back: with the rule as it was, the same answer is carried as is.
	leftOut = old
	l2 := newLog(t, st)
	l2.add(session.Message{Role: session.RoleUser, Content: "first request"},
		session.Message{Role: session.RoleAssistant, Content: "SKIP this answer"})
	require.NoError(t, st.DB().QueryRowContext(ctx, `SELECT plain FROM messages WHERE session_id = ? AND seq = 2`, l2.id).Scan(&plain))
	require.Equal(t, int(session.AsIs), plain)
}
