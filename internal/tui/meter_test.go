package tui

import (
	"context"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
)

// viewCountingStore is countingStore that counts the views it loads too.
type viewCountingStore struct {
	countingStore
}

func (c *viewCountingStore) LoadView(ctx context.Context, id string) (session.View, error) {
	v, err := c.Store.LoadView(ctx, id)
	c.read += len(v.Messages)
	return v, err
}

// TestStatusFigureReadsNoMessages (issue 11 goal 4): the status bar's
// context figure, measured after every turn, reads none of the session's
// messages, and is the size of the next request all the same (the real
// agent: its tokenizer, masking as configured by default).
func TestStatusFigureReadsNoMessages(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	id := seed(t, st, "t", longSession(2_000)...)
	ag := realAgent(t.TempDir(), st)
	cs := &viewCountingStore{countingStore{Store: st}}
	m := New(Options{Agent: ag, Store: cs, SessionID: id, Profile: colorprofile.NoTTY, Dark: true})
	for range 2 { // the first measure also keeps the masked sizes
		msg := m.measure(id, 1)().(contextMsg)
		require.NoError(t, msg.err)
		require.Zero(t, cs.read, "the figure read messages")
		v, err := st.LoadView(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, ag.ContextSize(v), msg.size)
	}
}
