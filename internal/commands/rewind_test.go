package commands

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/checkpoint"
	"github.com/gencode/gencode/internal/rewind"
	"github.com/gencode/gencode/internal/session"
)

// TestRewindCommand: /rewind lists the turn with the file it created;
// "/rewind 1" removes the file and takes the turn out of the view the
// next request is built from; "/rewind undo" brings both back.
func TestRewindCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	proj := t.TempDir()
	st, err := session.Open(ctx, t.TempDir())
	require.NoError(t, err)
	defer st.Close()
	files := checkpoint.New(t.TempDir(), proj, checkpoint.Options{})
	sess, err := st.CreateSession(ctx, proj, "m")
	require.NoError(t, err)

	before, err := files.Checkpoint(ctx)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(proj, "a.txt"), []byte("a\n"), 0o644))
	after, err := files.Checkpoint(ctx)
	require.NoError(t, err)
	_, err = st.Append(ctx, sess.ID,
		session.Message{Role: session.RoleUser, Content: "make a.txt", Tokens: 3},
		session.Message{Role: session.RoleAssistant, Tokens: 5, ToolCalls: []session.ToolCall{{ID: "w", Name: "Write", Arguments: `{}`}}},
		session.Message{Role: session.RoleTool, ToolCallID: "w", Name: "Write", Content: "Created a.txt", Tokens: 3,
			Meta: session.Meta{Tool: "Write", FilePath: "a.txt", Checkpoint: &session.Checkpoint{Before: before, After: after}}},
		session.Message{Role: session.RoleAssistant, Content: "Done.", Tokens: 2})
	require.NoError(t, err)

	r := New(Deps{Store: st, Rewinder: func(_ context.Context, id string) (rewind.Rewinder, error) {
		return rewind.Rewinder{Store: st, Files: files, SessionID: id}, nil
	}})
	state := State{SessionID: sess.ID}
	res, err := r.Run(ctx, state, "/rewind")
	require.NoError(t, err)
	require.Contains(t, res.Report.Plain(), "+1 ~0 -0  make a.txt")

	res, err = r.Run(ctx, state, "/rewind 1")
	require.NoError(t, err)
	require.Equal(t, ActionNone, res.Action)
	require.Contains(t, res.Text, "Rewound to before turn 1 (both).\n\n- removed a.txt")
	require.Contains(t, res.Text, "make a.txt")
	require.NoFileExists(t, filepath.Join(proj, "a.txt"))
	v, err := st.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	require.Empty(t, v.Messages)

	res, err = r.Run(ctx, state, "/rewind undo")
	require.NoError(t, err)
	require.Contains(t, res.Text, "undone")
	require.FileExists(t, filepath.Join(proj, "a.txt"))
	v, err = st.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	require.Len(t, v.Messages, 4)

	_, err = r.Run(ctx, state, "/rewind 1 sideways")
	require.ErrorContains(t, err, "want code, conversation or both")
	res, err = r.Run(ctx, state, "/help")
	require.NoError(t, err)
	require.NotContains(t, res.Report.Plain(), "/rewind", "kept out of /help until the TUI's picker")
}
