package session

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testRenderer stands for the view's renderer: it shows the fields the
// block is made of, so a block rendered from another record shows.
func testRenderer(form string) Renderer {
	return Renderer{Form: form, Render: func(s Summary) string {
		return form + ": " + s.Content + " / " + strings.Join(s.UserConstraints, "; ")
	}}
}

// countingRenderer is testRenderer(form) counting its renders in *n.
func countingRenderer(form string, n *int) Renderer {
	r := testRenderer(form)
	render := r.Render
	r.Render = func(s Summary) string { *n++; return render(s) }
	return r
}

// A summary's block is rendered once, when it is stored, and given with
// the view from then on; a request's view (RequestView) carries only what
// the request needs besides it, and the chat's and the compactor's
// (LoadView) the whole record.
func TestSummaryBlockIsStoredWithTheSummary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	rendered := 0
	s, err := Open(ctx, dir, WithRenderer(countingRenderer("f1", &rendered)))
	require.NoError(t, err)
	defer s.Close()
	sess := seed(t, s, 30)
	sum, err := s.ApplySummary(ctx, Summary{SessionID: sess.ID, FromSeq: 1, ToSeq: 10, Content: "the plan",
		UserConstraints: []string{"The port is 7008."}, TokenCount: 12, TokenKey: "k", RenderChars: 900, KeepChars: 300}, nil, false)
	require.NoError(t, err)
	require.Equal(t, 1, rendered)

	v, err := s.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	require.Equal(t, map[string]string{sum.ID: "f1: the plan / The port is 7008."}, v.Blocks)
	require.Equal(t, []string{"The port is 7008."}, v.Summaries[0].UserConstraints, "LoadView gives the whole record")

	rv, err := s.RequestView(ctx, sess.ID)
	require.NoError(t, err)
	require.Equal(t, v.Blocks, rv.Blocks)
	require.Equal(t, v.Messages, rv.Messages)
	require.Len(t, rv.Summaries, 1)
	head := rv.Summaries[0]
	require.Empty(t, head.UserConstraints, "a request's view carries the block, not the facts")
	require.Empty(t, head.Content)
	require.Equal(t, Summary{ID: sum.ID, SessionID: sess.ID, FromSeq: 1, ToSeq: 10, GeneratedAt: head.GeneratedAt,
		TokenCount: 12, TokenKey: "k", RenderChars: 900, KeepChars: 300}, head)
	require.True(t, head.GeneratedAt.Equal(sum.GeneratedAt))
	require.Equal(t, 1, rendered, "no view renders a stored block again")
}

// A summary stored without its block (by a build before blocks were, or
// a store without the renderer) and one stored by a renderer of another
// form are rendered when a view is loaded, whole, and their blocks kept for
// the next process.
func TestSummaryBlockOfAnotherBuildIsRenderedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	old, err := Open(ctx, dir)
	require.NoError(t, err)
	sess := seed(t, old, 30)
	first, err := old.ApplySummary(ctx, Summary{SessionID: sess.ID, FromSeq: 1, ToSeq: 10, Content: "one",
		UserConstraints: []string{"a"}}, nil, false)
	require.NoError(t, err)
	require.NoError(t, old.Close())
	other, err := Open(ctx, dir, WithRenderer(testRenderer("f0")))
	require.NoError(t, err)
	second, err := other.ApplySummary(ctx, Summary{SessionID: sess.ID, FromSeq: 11, ToSeq: 20, Content: "two",
		UserConstraints: []string{"b"}}, nil, false)
	require.NoError(t, err)
	require.NoError(t, other.Close())

	rendered := 0
	s, err := Open(ctx, dir, WithRenderer(countingRenderer("f1", &rendered)))
	require.NoError(t, err)
	defer s.Close()
	want := map[string]string{first.ID: "f1: one / a", second.ID: "f1: two / b"}
	rv, err := s.RequestView(ctx, sess.ID)
	require.NoError(t, err)
	require.Equal(t, want, rv.Blocks)
	require.Equal(t, []string{"a"}, rv.Summaries[0].UserConstraints, "rendered from the whole record")
	require.Equal(t, 2, rendered)

	v, err := s.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	require.Equal(t, want, v.Blocks)
	require.Equal(t, 2, rendered, "the blocks were kept")
	rv, err = s.RequestView(ctx, sess.ID)
	require.NoError(t, err)
	require.Equal(t, want, rv.Blocks)
	require.Empty(t, rv.Summaries[0].UserConstraints, "with their heads")
	require.Equal(t, first.ID, rv.Summaries[0].ID)
	require.Equal(t, int64(11), rv.Summaries[1].FromSeq)
	tally, err := s.Tally(ctx, sess.ID, TallyRule{})
	require.NoError(t, err)
	require.Equal(t, want, tally.View.Blocks)
}
