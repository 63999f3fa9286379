package rewind

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/checkpoint"
	"github.com/gencode/gencode/internal/session"
)

// fixture is a session whose turns write files with checkpoints around
// each write, as the tools keep them.
type fixture struct {
	t     testing.TB
	ctx   context.Context
	proj  string
	st    *session.Store
	files *checkpoint.Store
	sess  session.Session
	// unrecorded writes each call's checkpoints as an older build did,
	// without the paths it changed (the rewind compares them itself).
	unrecorded bool
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := session.Open(ctx, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	proj := t.TempDir()
	sess, err := st.CreateSession(ctx, proj, "m")
	require.NoError(t, err)
	return &fixture{t: t, ctx: ctx, proj: proj, st: st, files: checkpoint.New(t.TempDir(), proj, checkpoint.Options{}), sess: sess}
}

// turn is a user request whose one Write puts content in name.
func (f *fixture) turn(text, name, content string) {
	f.t.Helper()
	before, err := f.files.Checkpoint(f.ctx)
	require.NoError(f.t, err)
	require.NoError(f.t, os.WriteFile(filepath.Join(f.proj, name), []byte(content), 0o644))
	after, err := f.files.Checkpoint(f.ctx)
	require.NoError(f.t, err)
	cp := &session.Checkpoint{Before: before, After: after}
	if !f.unrecorded { // as the tools record it
		cp.Changed, err = f.files.Changed(f.ctx, before, after)
		require.NoError(f.t, err)
		cp.ChangedKnown = true
	}
	_, err = f.st.Append(f.ctx, f.sess.ID,
		session.Message{Role: session.RoleUser, Content: text, Tokens: 1},
		session.Message{Role: session.RoleAssistant, Tokens: 1, ToolCalls: []session.ToolCall{{ID: name, Name: "Write", Arguments: `{"file_path":"` + name + `","content":"x"}`}}},
		session.Message{Role: session.RoleTool, ToolCallID: name, Name: "Write", Content: "Wrote " + name, Tokens: 1,
			Meta: session.Meta{Tool: "Write", FilePath: name, Checkpoint: cp}},
		session.Message{Role: session.RoleAssistant, Content: "ok", Tokens: 1})
	require.NoError(f.t, err)
}

func (f *fixture) read(name string) string {
	b, err := os.ReadFile(filepath.Join(f.proj, name))
	if errors.Is(err, os.ErrNotExist) {
		return "(none)"
	}
	require.NoError(f.t, err)
	return string(b)
}

func TestCodeRewindUndoAndConflicts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turn("one", "a.txt", "a1")
	f.turn("two", "b.txt", "b1")
	f.turn("three", "a.txt", "a2")
	rw := Rewinder{Store: f.st, Files: f.files, SessionID: f.sess.ID}

	res, err := rw.ToTurn(f.ctx, 2, Mode{Code: true}, Choices{})
	require.NoError(t, err)
	require.Equal(t, []string{"~ a.txt", "- b.txt"}, res.Rewind.Changes)
	require.Equal(t, "a1", f.read("a.txt"))
	require.Equal(t, "(none)", f.read("b.txt"))

	// A second rewind right after: no conflict with the first one's work.
	_, err = rw.ToTurn(f.ctx, 1, Mode{Code: true}, Choices{})
	require.NoError(t, err)
	require.Equal(t, "(none)", f.read("a.txt"))

	// Undo the latest: a.txt as the first rewind left it.
	_, err = rw.Undo(f.ctx, "", Choices{})
	require.NoError(t, err)
	require.Equal(t, "a1", f.read("a.txt"))

	// A hand edit since: the next rewind refuses, names it, changes nothing.
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "a.txt"), []byte("by hand"), 0o644))
	res, err = rw.ToTurn(f.ctx, 1, Mode{Code: true}, Choices{})
	oneConflict(t, res, err, "a.txt", "+by hand")
	require.Equal(t, "by hand", f.read("a.txt"))
	_, err = rw.ToTurn(f.ctx, 1, Mode{Code: true}, Force)
	require.NoError(t, err)
	require.Equal(t, "(none)", f.read("a.txt"))

	_, err = rw.ToTurn(f.ctx, 9, Both, Choices{})
	require.ErrorIs(t, err, ErrNoTurn)
}

// TestFactsLogFollowsRewinds: hidden turns leave the facts' log; a
// code-only rewind enters it as an observed call where it happened.
func TestFactsLogFollowsRewinds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turn("one", "a.txt", "a1")
	f.turn("two", "b.txt", "b1")
	rw := Rewinder{Store: f.st, Files: f.files, SessionID: f.sess.ID}
	_, err := rw.ToTurn(f.ctx, 2, Mode{Code: true}, Choices{})
	require.NoError(t, err)
	var tools []string
	var rewound *session.FileChanges
	for m, err := range FactsLog(f.ctx, f.st, f.sess.ID) {
		require.NoError(t, err)
		if m.Role == session.RoleTool {
			tools = append(tools, m.Name)
			if m.Name == "Rewind" {
				rewound = m.Meta.Changes
			}
		}
	}
	require.Equal(t, []string{"Write", "Write", "Rewind"}, tools)
	require.Equal(t, []string{"b.txt"}, rewound.Deleted)

	_, err = rw.ToTurn(f.ctx, 2, Mode{Conversation: true}, Choices{})
	require.NoError(t, err)
	tools = nil
	for m, err := range FactsLog(f.ctx, f.st, f.sess.ID) {
		require.NoError(t, err)
		if m.Role == session.RoleTool {
			tools = append(tools, m.Name)
		}
	}
	require.Equal(t, []string{"Write"}, tools, "turn 2 hidden, and the code rewind made after it: b.txt is in no list")
}

// TestConflictChoicesPerFile: two files edited by hand since; a choice for
// one only changes nothing; keep one and overwrite the other does just
// that, and the undo brings the overwritten one's hand edit back.
func TestConflictChoicesPerFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turn("one", "a.txt", "a1")
	f.turn("two", "b.txt", "b1")
	f.turn("three", "a.txt", "a2")
	f.turn("four", "b.txt", "b2")
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "a.txt"), []byte("mine a"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "b.txt"), []byte("mine b"), 0o644))
	rw := Rewinder{Store: f.st, Files: f.files, SessionID: f.sess.ID}

	res, err := rw.ToTurn(f.ctx, 3, Mode{Code: true}, Choices{Keep: []string{"a.txt"}})
	require.ErrorIs(t, err, ErrConflict, "b.txt has no choice")
	require.Len(t, res.Conflicts, 2)
	require.Equal(t, "mine a", f.read("a.txt"))
	require.Equal(t, "mine b", f.read("b.txt"))

	res, err = rw.ToTurn(f.ctx, 3, Mode{Code: true}, Choices{Keep: []string{"a.txt"}, Overwrite: []string{"b.txt"}})
	require.NoError(t, err)
	require.Equal(t, []string{"a.txt"}, res.Kept)
	require.Equal(t, []string{"~ b.txt"}, res.Rewind.Changes)
	require.Equal(t, "mine a", f.read("a.txt"), "kept")
	require.Equal(t, "b1", f.read("b.txt"), "overwritten with the checkpoint's")

	_, err = rw.Undo(f.ctx, "", Choices{})
	require.NoError(t, err)
	require.Equal(t, "mine a", f.read("a.txt"))
	require.Equal(t, "mine b", f.read("b.txt"))
}

// TestKeptHandEditStaysOutsideAfterUndo: a hand edit the user kept through
// a rewind, which was then undone, is still the user's: a later rewind
// that would overwrite (here: delete) the file asks first, as it did
// before the undo.
func TestKeptHandEditStaysOutsideAfterUndo(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turn("one", "notes.txt", "gencode's")
	f.turn("two", "second.txt", "2")
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "notes.txt"), []byte("by hand"), 0o644))
	rw := Rewinder{Store: f.st, Files: f.files, SessionID: f.sess.ID}

	res, err := rw.ToTurn(f.ctx, 1, Both, Choices{Keep: []string{"notes.txt"}})
	require.NoError(t, err)
	require.Equal(t, []string{"notes.txt"}, res.Kept)
	require.Equal(t, "(none)", f.read("second.txt"))
	_, err = rw.Undo(f.ctx, "", Choices{})
	require.NoError(t, err)
	require.Equal(t, "2", f.read("second.txt"))
	require.Equal(t, "by hand", f.read("notes.txt"))

	res, err = rw.ToTurn(f.ctx, 1, Mode{Code: true}, Choices{})
	oneConflict(t, res, err, "notes.txt", "+by hand", "the kept hand edit is not gencode's")
	require.Equal(t, "by hand", f.read("notes.txt"), "nothing changed")
	require.Equal(t, "2", f.read("second.txt"), "nothing changed")
}

// TestChoicePathsAsTheUserTypesThem: --keep ./a.txt and --keep with the
// absolute path name the same file as a.txt; a path the rewind does not
// change is refused with its name, and nothing changes.
func TestChoicePathsAsTheUserTypesThem(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turn("one", "a.txt", "a1")
	f.turn("two", "a.txt", "a2")
	f.turn("three", "b.txt", "b1")
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "a.txt"), []byte("mine"), 0o644))
	rw := Rewinder{Store: f.st, Files: f.files, SessionID: f.sess.ID}

	_, err := rw.ToTurn(f.ctx, 2, Mode{Code: true}, Choices{Keep: []string{"nosuch.txt"}})
	require.ErrorContains(t, err, "nosuch.txt is not among the files this rewind changes")
	require.Equal(t, "b1", f.read("b.txt"), "nothing changed")

	res, err := rw.ToTurn(f.ctx, 2, Mode{Code: true}, Choices{Keep: []string{"./a.txt"}})
	require.NoError(t, err)
	require.Equal(t, []string{"a.txt"}, res.Kept)
	require.Equal(t, "mine", f.read("a.txt"))
	require.Equal(t, "(none)", f.read("b.txt"))
	_, err = rw.Undo(f.ctx, "", Choices{})
	require.NoError(t, err)

	res, err = rw.ToTurn(f.ctx, 2, Mode{Code: true}, Choices{Overwrite: []string{filepath.Join(f.proj, "a.txt")}})
	require.NoError(t, err)
	require.Equal(t, "a1", f.read("a.txt"), "overwritten, named by its absolute path")
}

// TestOverwrittenHandEditStaysTheUsersAfterUndo: a hand edit a rewind
// overwrote (as chosen) comes back with the undo, and is still the user's:
// a later rewind asks before overwriting it again, with the same diff as
// the first. A file the undo put back as gencode wrote it rewinds without a
// question. Both ways of choosing: --overwrite for the file, and --force.
func TestOverwrittenHandEditStaysTheUsersAfterUndo(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		choice Choices
	}{
		{"overwrite", Choices{Overwrite: []string{"notes.txt"}}},
		{"force", Force},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.turn("one", "notes.txt", "gencode's\n")
			f.turn("two", "second.txt", "2\n")
			require.NoError(t, os.WriteFile(filepath.Join(f.proj, "notes.txt"), []byte("gencode's\nby hand\n"), 0o644))
			rw := Rewinder{Store: f.st, Files: f.files, SessionID: f.sess.ID}

			first, err := rw.ToTurn(f.ctx, 2, Mode{Code: true}, Choices{})
			require.ErrorIs(t, err, ErrConflict)
			require.Len(t, first.Conflicts, 1)
			require.Equal(t, "notes.txt", first.Conflicts[0].Path)

			_, err = rw.ToTurn(f.ctx, 2, Mode{Code: true}, tt.choice)
			require.NoError(t, err)
			require.Equal(t, "gencode's\n", f.read("notes.txt"), "overwritten as chosen")
			require.Equal(t, "(none)", f.read("second.txt"))
			_, err = rw.Undo(f.ctx, "", Choices{})
			require.NoError(t, err, "the undo puts back what the rewind itself changed: no question")
			require.Equal(t, "gencode's\nby hand\n", f.read("notes.txt"))
			require.Equal(t, "2\n", f.read("second.txt"))

			res, err := rw.ToTurn(f.ctx, 2, Mode{Code: true}, Choices{})
			require.ErrorIs(t, err, ErrConflict, "the hand edit the undo brought back is the user's")
			require.Equal(t, first.Conflicts, res.Conflicts, "asked as the first rewind asked")
			require.Equal(t, "gencode's\nby hand\n", f.read("notes.txt"), "nothing changed")
			require.Equal(t, "2\n", f.read("second.txt"), "nothing changed")

			res, err = rw.ToTurn(f.ctx, 2, Mode{Code: true}, Choices{Keep: []string{"notes.txt"}})
			require.NoError(t, err, "second.txt, as gencode wrote it, rewinds without a question")
			require.Equal(t, []string{"- second.txt"}, res.Rewind.Changes)
			require.Equal(t, "gencode's\nby hand\n", f.read("notes.txt"))
		})
	}
}

// TestRestoredHandEditStaysTheUsers: a hand edit made between two turns
// is kept in the checkpoint before the second; a rewind to that turn puts
// it back, and a rewind further back asks before overwriting it, as it
// would have before gencode's second turn changed it. Files as gencode
// left them rewind without a question.
func TestRestoredHandEditStaysTheUsers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "old.txt"), []byte("before gencode\n"), 0o644))
	f.turn("one", "a.txt", "a1\n")
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "a.txt"), []byte("a1\nby hand\n"), 0o644))
	f.turn("two", "a.txt", "a2\n")
	f.turn("three", "old.txt", "changed\n")
	rw := Rewinder{Store: f.st, Files: f.files, SessionID: f.sess.ID}

	_, err := rw.ToTurn(f.ctx, 2, Mode{Code: true}, Choices{})
	require.NoError(t, err, "a2 and changed are gencode's")
	require.Equal(t, "a1\nby hand\n", f.read("a.txt"), "the checkpoint before turn 2 holds the hand edit")
	require.Equal(t, "before gencode\n", f.read("old.txt"))

	res, err := rw.ToTurn(f.ctx, 1, Mode{Code: true}, Choices{})
	oneConflict(t, res, err, "a.txt", "+by hand", "the hand edit the rewind put back is the user's")
	require.Equal(t, "a1\nby hand\n", f.read("a.txt"), "nothing changed")

}

// TestFilesAsGencodeFoundThemAreNotAConflict: a rewind to the first turn
// puts a file back as it was before gencode changed it; that is not a
// conflict for the undo, a hand edit of it since is.
func TestFilesAsGencodeFoundThemAreNotAConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "old.txt"), []byte("before gencode\n"), 0o644))
	f.turn("one", "old.txt", "changed\n")
	f.turn("two", "b.txt", "b\n")
	rw := Rewinder{Store: f.st, Files: f.files, SessionID: f.sess.ID}

	_, err := rw.ToTurn(f.ctx, 1, Mode{Code: true}, Choices{})
	require.NoError(t, err)
	require.Equal(t, "before gencode\n", f.read("old.txt"))
	_, err = rw.Undo(f.ctx, "", Choices{})
	require.NoError(t, err)
	require.Equal(t, "changed\n", f.read("old.txt"))

	_, err = rw.ToTurn(f.ctx, 1, Mode{Code: true}, Choices{})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "old.txt"), []byte("before gencode\nby hand\n"), 0o644))
	res, err := rw.Undo(f.ctx, "", Choices{})
	oneConflict(t, res, err, "old.txt", "+by hand")
	require.Equal(t, "before gencode\nby hand\n", f.read("old.txt"), "nothing changed")
}

// TestHandEditBeforeACallStaysTheUsers: files changed by hand between two
// turns, which the later turn's call does not touch, are the user's: a
// rewind to before the first turn asks before it overwrites or deletes
// them, as it would have before the second turn ran (its checkpoint after
// holds the hand edits, but the call did not write them). The file the
// second turn wrote rewinds without a question.
func TestHandEditBeforeACallStaysTheUsers(t *testing.T) {
	t.Parallel()
	handEditBeforeACall(t, newFixture(t), nil)
}

// TestOlderSessionsReplayAsBefore: calls an older build recorded, without
// the paths each changed, are compared by the rewind itself, with the
// same answers; so are those of a session older and newer builds took
// turns in (an older build's calls, this one's, an older one's again).
func TestOlderSessionsReplayAsBefore(t *testing.T) {
	t.Parallel()
	for name, older := range map[string]func(f *fixture){
		"older build":  func(f *fixture) { f.unrecorded = true },
		"mixed builds": func(f *fixture) { f.unrecorded = !f.unrecorded },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.unrecorded = true
			handEditBeforeACall(t, f, older)
		})
	}
}

// handEditBeforeACall is TestHandEditBeforeACallStaysTheUsers; between
// the turns, between(f) may change how the fixture records them.
func handEditBeforeACall(t *testing.T, f *fixture, between func(*fixture)) {
	if between == nil {
		between = func(*fixture) {}
	}
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "old.txt"), []byte("before gencode\n"), 0o644))
	f.turn("one", "a.txt", "a1\n")
	between(f)
	f.turn("one more", "old.txt", "changed\n")
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "a.txt"), []byte("a1\nby hand\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "old.txt"), []byte("changed\nby hand\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "mine.txt"), []byte("mine, by hand\n"), 0o644))
	between(f)
	f.turn("two", "b.txt", "b1\n")
	rw := Rewinder{Store: f.st, Files: f.files, SessionID: f.sess.ID}

	res, err := rw.ToTurn(f.ctx, 1, Mode{Code: true}, Choices{})
	require.ErrorIs(t, err, ErrConflict, "the hand edits are the user's")
	var paths []string
	for _, c := range res.Conflicts {
		paths = append(paths, c.Path)
		require.Contains(t, c.Diff, "by hand", c.Path)
	}
	require.Equal(t, []string{"a.txt", "mine.txt", "old.txt"}, paths, "deleted, deleted, overwritten: each asked")
	require.Equal(t, "a1\nby hand\n", f.read("a.txt"), "nothing changed")
	require.Equal(t, "changed\nby hand\n", f.read("old.txt"), "nothing changed")
	require.Equal(t, "mine, by hand\n", f.read("mine.txt"), "nothing changed")
	require.Equal(t, "b1\n", f.read("b.txt"), "nothing changed")

	res, err = rw.ToTurn(f.ctx, 1, Mode{Code: true}, Choices{Keep: []string{"a.txt", "old.txt", "mine.txt"}})
	require.NoError(t, err, "b.txt, as gencode wrote it, rewinds without a question")
	require.Equal(t, []string{"- b.txt"}, res.Rewind.Changes)
	require.Equal(t, "a1\nby hand\n", f.read("a.txt"))
	require.Equal(t, "changed\nby hand\n", f.read("old.txt"))
	require.Equal(t, "mine, by hand\n", f.read("mine.txt"))
	_, err = rw.Undo(f.ctx, "", Choices{})
	require.NoError(t, err)
	require.Equal(t, "b1\n", f.read("b.txt"))
}

// TestCallOverAHandEditMakesItGencodes: a call that writes a file the user
// had edited by hand makes the file gencode's as the call left it (the
// model worked on it knowingly): a rewind to before that call puts the
// hand edit back without a question.
func TestCallOverAHandEditMakesItGencodes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turn("one", "a.txt", "a1\n")
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "a.txt"), []byte("a1\nby hand\n"), 0o644))
	f.turn("two", "a.txt", "a2\n")
	f.turn("three", "b.txt", "b1\n")
	rw := Rewinder{Store: f.st, Files: f.files, SessionID: f.sess.ID}

	res, err := rw.ToTurn(f.ctx, 2, Mode{Code: true}, Choices{})
	require.NoError(t, err)
	require.Equal(t, []string{"~ a.txt", "- b.txt"}, res.Rewind.Changes)
	require.Equal(t, "a1\nby hand\n", f.read("a.txt"))
}

// unrecordedTwin is a copy of f's session as an older build would have
// logged it: each call's checkpoints without the paths it changed.
func unrecordedTwin(t testing.TB, f *fixture) session.Session {
	t.Helper()
	twin, err := f.st.CreateSession(f.ctx, f.proj, "m")
	require.NoError(t, err)
	var msgs []session.Message
	for m, err := range f.st.Each(f.ctx, f.sess.ID, 1, 0) {
		require.NoError(t, err)
		if cp := m.Meta.Checkpoint; cp != nil {
			old := *cp
			old.Changed, old.ChangedKnown = nil, false
			m.Meta.Checkpoint = &old
		}
		msgs = append(msgs, m)
	}
	_, err = f.st.Append(f.ctx, twin.ID, msgs...)
	require.NoError(t, err)
	return twin
}

// TestRecordedChangesReplayAsCompared: gencode's state of each path, from
// the paths each call recorded, is what comparing each call's checkpoints
// says (an older build's session), through creates, edits, deletes, a
// hand edit, a call that changed nothing, and a call whose checkpoint
// after is pruned since (it makes nothing gencode's either way).
func TestRecordedChangesReplayAsCompared(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "old.txt"), []byte("before gencode\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(f.proj, "d"), 0o755))
	f.turn("one", "a.txt", "a1\n")
	f.turn("two", "d/b.txt", "b1\n")
	require.NoError(t, os.WriteFile(filepath.Join(f.proj, "old.txt"), []byte("by hand\n"), 0o644))
	f.turn("three", "a.txt", "a2\n")
	f.turn("same", "a.txt", "a2\n")
	f.turn("four", "old.txt", "by gencode\n")
	f.turn("five", "d/c.txt", "c1\n")
	turns, err := f.st.Turns(f.ctx, f.sess.ID)
	require.NoError(t, err)
	pruned := turns[4].Checkpoints[0].After // four's
	require.NoError(t, os.Remove(filepath.Join(f.files.GitDir(), "objects", pruned[:2], pruned[2:])))

	twin := unrecordedTwin(t, f)
	twinTurns, err := f.st.Turns(f.ctx, twin.ID)
	require.NoError(t, err)
	got, err := Rewinder{Store: f.st, Files: f.files, SessionID: f.sess.ID}.known(f.ctx, turns)
	require.NoError(t, err)
	want, err := Rewinder{Store: f.st, Files: f.files, SessionID: twin.ID}.known(f.ctx, twinTurns)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.NotContains(t, got.over, "old.txt", "four's checkpoint is gone: old.txt stays as it was")
	require.Equal(t, turns[2].Checkpoints[0].After, got.of("a.txt"), "three's, as the same content written again changed nothing")
	require.Equal(t, turns[1].Checkpoints[0].After, got.of("d/b.txt"))
}

// oneConflict checks that a rewind stopped on one conflict, path, whose
// diff shows added.
func oneConflict(t *testing.T, res Result, err error, path, added string, why ...any) {
	t.Helper()
	require.ErrorIs(t, err, ErrConflict, why...)
	require.Len(t, res.Conflicts, 1)
	require.Equal(t, path, res.Conflicts[0].Path)
	require.Contains(t, res.Conflicts[0].Diff, added)
}
