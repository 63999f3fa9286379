package tui

import (
	"context"
	"regexp"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
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

// TestContextReportReadsNoMessages (issue 30 section 1): /context, run as
// the TUI runs it, adds the view up from the store's sums as the status
// bar does: it loads none of the session's messages, and its report is
// the one the view built says (the total and each role's share).
func TestContextReportReadsNoMessages(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	id := seed(t, st, "t", longSession(2_000)...)
	ag := realAgent(t.TempDir(), st)
	cs := &viewCountingStore{countingStore{Store: st}}
	state := commands.State{SessionID: id, Model: ag.Model(), View: ag.Policy()}
	ctx := context.Background()
	for range 2 { // the first measure also keeps the masked sizes
		res, err := commands.New(commands.Deps{Store: cs}).Run(ctx, state, "/context")
		require.NoError(t, err)
		require.Zero(t, cs.read, "/context read messages")
		v, err := st.LoadView(ctx, id)
		require.NoError(t, err)
		b := ag.Policy().Build(v)
		text := res.Report.Plain()
		require.Contains(t, text, termtext.Thousands(b.Tokens)+" of ")
		for _, row := range []struct {
			name string
			n    int
		}{{"User messages", b.User}, {"Assistant messages", b.Assistant}, {"Tool outputs", b.ToolOutputs}, {"Masked tool outputs", b.Masked}} {
			require.Regexp(t, regexp.QuoteMeta(row.name)+` +`+regexp.QuoteMeta(termtext.Thousands(row.n))+` `, text, "%s", text)
		}
		require.Positive(t, b.Masked)
	}
}
