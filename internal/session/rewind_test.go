package session_test

import (
	"context"
	"testing"

	"github.com/gencode/gencode/internal/session"
	"github.com/stretchr/testify/require"
)

func seqs(v session.View) []int64 {
	var out []int64
	for _, m := range v.Messages {
		out = append(out, m.Seq)
	}
	return out
}

func TestRewindConversationHidesAndUndoBringsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, sess := openSession(t, t.TempDir())
	defer st.Close()
	_, err := st.Append(ctx, sess.ID,
		session.Message{Role: session.RoleUser, Content: "one", Tokens: 1},
		session.Message{Role: session.RoleAssistant, Tokens: 1, ToolCalls: []session.ToolCall{{ID: "a", Name: "Write"}}},
		session.Message{Role: session.RoleTool, ToolCallID: "a", Name: "Write", Tokens: 1,
			Meta: session.Meta{Checkpoint: &session.Checkpoint{Before: "c1", After: "c2"}}},
		session.Message{Role: session.RoleAssistant, Content: "ok", Tokens: 1},
		session.Message{Role: session.RoleUser, Content: "two", Tokens: 1},
		session.Message{Role: session.RoleAssistant, Content: "ok", Tokens: 1})
	require.NoError(t, err)
	turns, err := st.Turns(ctx, sess.ID)
	require.NoError(t, err)
	require.Len(t, turns, 2)
	require.Equal(t, []session.Checkpoint{{Before: "c1", After: "c2", Seq: 3}}, turns[0].Checkpoints)
	require.Equal(t, int64(5), turns[1].Seq)

	r, err := st.RecordRewind(ctx, session.Rewind{SessionID: sess.ID, Kind: session.RewindTurn, Turn: 2, FromSeq: 5})
	require.NoError(t, err)
	require.Equal(t, int64(6), r.ToSeq)
	v, err := st.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2, 3, 4}, seqs(v))
	turns, err = st.Turns(ctx, sess.ID)
	require.NoError(t, err)
	require.True(t, turns[1].Rewound)

	// New messages after the rewind are in the view.
	_, err = st.Append(ctx, sess.ID, session.Message{Role: session.RoleUser, Content: "three", Tokens: 1})
	require.NoError(t, err)
	v, err = st.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2, 3, 4, 7}, seqs(v))

	_, _, err = st.UndoRewind(ctx, sess.ID, r.ID)
	require.NoError(t, err)
	v, err = st.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7}, seqs(v))
	_, _, err = st.UndoRewind(ctx, sess.ID, r.ID)
	require.ErrorIs(t, err, session.ErrUndone)
}

func TestRewindSummaryAndRedo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, sess := openSession(t, t.TempDir())
	defer st.Close()
	for range 3 {
		_, err := st.Append(ctx, sess.ID, session.Message{Role: session.RoleUser, Content: "q", Tokens: 1},
			session.Message{Role: session.RoleAssistant, Content: "a", Tokens: 1})
		require.NoError(t, err)
	}
	sum, err := st.ApplySummary(ctx, session.Summary{SessionID: sess.ID, FromSeq: 1, ToSeq: 4, Content: "s"}, nil, false)
	require.NoError(t, err)
	v, err := st.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	require.Len(t, v.Summaries, 1)
	require.Equal(t, []int64{5, 6}, seqs(v))

	r, err := st.RecordRewind(ctx, session.Rewind{SessionID: sess.ID, Kind: session.RewindSummary, SummaryID: sum.ID})
	require.NoError(t, err)
	v, err = st.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	require.Empty(t, v.Summaries)
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6}, seqs(v))

	_, kept, err := st.UndoRewind(ctx, sess.ID, r.ID)
	require.NoError(t, err)
	require.Empty(t, kept)
	v, err = st.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	require.Len(t, v.Summaries, 1)
	require.Equal(t, []int64{5, 6}, seqs(v))
}

// TestTurnsKeepTheShellCheckpoints: the "!commands" run before a message
// (their checkpoint on the message carrying their output) are part of its
// turn; one that kept none makes the turn's files unkept, and the output
// kept on quitting (a Shell message) joins the turn before it.
func TestTurnsKeepTheShellCheckpoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, sess := openSession(t, t.TempDir())
	defer st.Close()
	_, err := st.Append(ctx, sess.ID,
		session.Message{Role: session.RoleUser, Content: "one", Tokens: 1, Meta: session.Meta{Checkpoint: &session.Checkpoint{Before: "c1", After: "c2"}}},
		session.Message{Role: session.RoleAssistant, Content: "ok", Tokens: 1},
		session.Message{Role: session.RoleUser, Content: "out", Tokens: 1, Meta: session.Meta{Shell: true, Checkpoint: &session.Checkpoint{Before: "c2", After: "c3"}}},
		session.Message{Role: session.RoleUser, Content: "two", Tokens: 1, Meta: session.Meta{Checkpoint: &session.Checkpoint{Err: "too large"}}},
		session.Message{Role: session.RoleAssistant, Content: "ok", Tokens: 1})
	require.NoError(t, err)
	turns, err := st.Turns(ctx, sess.ID)
	require.NoError(t, err)
	require.Len(t, turns, 2)
	// Each with the message holding it: a rewind's place among them is its LogSeq.
	require.Equal(t, []session.Checkpoint{{Before: "c1", After: "c2", Seq: 1}, {Before: "c2", After: "c3", Seq: 3}}, turns[0].Checkpoints)
	require.Empty(t, turns[1].Checkpoints)
	require.Equal(t, []string{"!command (message 4): too large"}, turns[1].Unkept)
}
