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
	ctx, proj, st, files, sess := rewindSetup(t)

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
	res, err := r.Run(ctx, state, "/rewind list")
	require.NoError(t, err)
	require.Contains(t, res.Report.Plain(), "+1 ~0 -0  make a.txt")
	res, err = r.Run(ctx, state, "/rewind")
	require.NoError(t, err)
	require.NotNil(t, res.Pick, "/rewind alone is a list to pick from")
	require.Equal(t, "make a.txt", res.Pick.Items[0].Title)
	require.Contains(t, res.Pick.Items[0].Detail, "turn 1")
	require.Contains(t, res.Pick.Items[0].Detail, "+1 ~0 -0")
	modes := res.Pick.Items[0].Result.Pick
	require.NotNil(t, modes, "a turn offers the three ways")
	var lines []string
	for _, c := range modes.Items {
		require.Equal(t, ActionRun, c.Result.Action)
		lines = append(lines, c.Result.Line)
	}
	require.Equal(t, []string{"/rewind 1 both", "/rewind 1 code", "/rewind 1 conversation"}, lines)

	res, err = r.Run(ctx, state, "/rewind 1")
	require.NoError(t, err)
	require.Equal(t, ActionRewound, res.Action, "the front end reloads the view")
	require.Equal(t, "make a.txt", res.Draft, "the turn's text goes back in the editor")
	require.Contains(t, res.Text, "Rewound code and conversation to before turn 1.\n\n- removed a.txt")
	require.Contains(t, res.Text, "/rewind undo")
	require.Contains(t, res.Text, "The view holds 0 summaries and 0 messages (0 tokens) now.")
	require.NoFileExists(t, filepath.Join(proj, "a.txt"))
	v, err := st.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	require.Empty(t, v.Messages)

	res, err = r.Run(ctx, state, "/rewind undo")
	require.NoError(t, err)
	require.Contains(t, res.Text, "undone")
	require.Contains(t, res.Text, "The view holds 0 summaries and 4 messages (13 tokens) now.")
	require.FileExists(t, filepath.Join(proj, "a.txt"))
	v, err = st.LoadView(ctx, sess.ID)
	require.NoError(t, err)
	require.Len(t, v.Messages, 4)

	_, err = r.Run(ctx, state, "/rewind 1 sideways")
	require.ErrorContains(t, err, "want code, conversation or both")
	res, err = r.Run(ctx, state, "/help")
	require.NoError(t, err)
	require.Contains(t, res.Report.Plain(), "/rewind")
}

// TestConflictAskLineParsesBack: the line a conflicts dialog runs gives
// each file its choice, whatever its name holds (spaces, quotes, a
// backslash, a leading --).
func TestConflictAskLineParsesBack(t *testing.T) {
	ask := ConflictAsk{line: "/rewind 2 code", Files: []ConflictFile{{Path: "a.txt"}, {Path: `my "notes" \ v2.md`}, {Path: "--force"}}}
	in, err := Parse(ask.Line([]bool{true, false, true}), map[string]bool{"keep": true, "overwrite": true})
	require.NoError(t, err)
	require.Equal(t, []string{"2", "code"}, in.Args)
	require.Equal(t, []string{"a.txt", "--force"}, in.All["keep"])
	require.Equal(t, []string{`my "notes" \ v2.md`}, in.All["overwrite"])
	require.False(t, in.Flag("force"))
}

// TestRewindAsksAgainAfterUndo: the conflicts dialog's "overwrite" for a
// hand-edited file, then "/rewind undo" brings the hand edit back; the
// same /rewind asks again about that file, with the same diff, and
// changes nothing until answered.
func TestRewindAsksAgainAfterUndo(t *testing.T) {
	t.Parallel()
	ctx, proj, st, files, sess := rewindSetup(t)
	for _, name := range []string{"a.txt", "b.txt"} {
		before, err := files.Checkpoint(ctx)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(proj, name), []byte("gencode's\n"), 0o644))
		after, err := files.Checkpoint(ctx)
		require.NoError(t, err)
		_, err = st.Append(ctx, sess.ID,
			session.Message{Role: session.RoleUser, Content: "make " + name, Tokens: 3},
			session.Message{Role: session.RoleAssistant, Tokens: 5, ToolCalls: []session.ToolCall{{ID: name, Name: "Write", Arguments: `{}`}}},
			session.Message{Role: session.RoleTool, ToolCallID: name, Name: "Write", Content: "Created " + name, Tokens: 3,
				Meta: session.Meta{Tool: "Write", FilePath: name, Checkpoint: &session.Checkpoint{Before: before, After: after}}},
			session.Message{Role: session.RoleAssistant, Content: "Done.", Tokens: 2})
		require.NoError(t, err)
	}
	mine := "gencode's\nby hand\n"
	require.NoError(t, os.WriteFile(filepath.Join(proj, "a.txt"), []byte(mine), 0o644))
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(proj, name))
		if os.IsNotExist(err) {
			return "(none)"
		}
		require.NoError(t, err)
		return string(b)
	}
	r := New(Deps{Store: st, Rewinder: func(_ context.Context, id string) (rewind.Rewinder, error) {
		return rewind.Rewinder{Store: st, Files: files, SessionID: id}, nil
	}})
	state := State{SessionID: sess.ID}

	first, err := r.Run(ctx, state, "/rewind 2 code")
	require.NoError(t, err)
	require.NotNil(t, first.Conflicts, "the hand edit is asked about")
	require.Len(t, first.Conflicts.Files, 1)
	require.Equal(t, "a.txt", first.Conflicts.Files[0].Path)
	res, err := r.Run(ctx, state, first.Conflicts.Line([]bool{false}))
	require.NoError(t, err)
	require.Nil(t, res.Conflicts)
	require.Equal(t, "gencode's\n", read("a.txt"), "overwritten, as answered")
	require.Equal(t, "(none)", read("b.txt"))

	res, err = r.Run(ctx, state, "/rewind undo")
	require.NoError(t, err)
	require.Nil(t, res.Conflicts)
	require.Equal(t, mine, read("a.txt"), "the undo brings the hand edit back")
	require.Equal(t, "gencode's\n", read("b.txt"))

	again, err := r.Run(ctx, state, "/rewind 2 code")
	require.NoError(t, err)
	require.NotNil(t, again.Conflicts, "the hand edit is still the user's: asked about again")
	require.Equal(t, first.Conflicts.Files, again.Conflicts.Files)
	require.Equal(t, mine, read("a.txt"), "nothing changed")
	require.Equal(t, "gencode's\n", read("b.txt"), "nothing changed")
}

// rewindSetup is a project, a store with one session in it, and the
// project's checkpoints.
func rewindSetup(t *testing.T) (context.Context, string, *session.Store, *checkpoint.Store, session.Session) {
	t.Helper()
	ctx := context.Background()
	proj := t.TempDir()
	st, err := session.Open(ctx, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	files := checkpoint.New(t.TempDir(), proj, checkpoint.Options{})
	sess, err := st.CreateSession(ctx, proj, "m")
	require.NoError(t, err)
	return ctx, proj, st, files, sess
}
