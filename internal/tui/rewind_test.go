package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/checkpoint"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/rewind"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/tools"
)

// rewindSession is a session whose one turn created a.txt with Write in
// a project kept by a checkpoint store, and the registry that rewinds it.
func rewindSession(t *testing.T) (st *session.Store, id, proj string, opt harnessOpt) {
	t.Helper()
	ctx := context.Background()
	st = newStore(t)
	proj = t.TempDir()
	files := checkpoint.New(t.TempDir(), proj, checkpoint.Options{})
	before, err := files.Checkpoint(ctx)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(proj, "a.txt"), []byte("a\n"), 0o644))
	after, err := files.Checkpoint(ctx)
	require.NoError(t, err)
	id = seed(t, st, "make a",
		session.Message{Role: session.RoleUser, Content: "make a.txt please", Tokens: 3},
		session.Message{Role: session.RoleAssistant, Tokens: 5, ToolCalls: []session.ToolCall{{ID: "w", Name: "Write", Arguments: `{}`}}},
		session.Message{Role: session.RoleTool, ToolCallID: "w", Name: "Write", Content: "Created a.txt", Tokens: 3,
			Meta: session.Meta{Tool: "Write", FilePath: "a.txt", Checkpoint: &session.Checkpoint{Before: before, After: after}}},
		session.Message{Role: session.RoleAssistant, Content: "Made it.", Tokens: 2})
	reg := commands.New(commands.Deps{Store: st, Config: config.Default(), Window: func(string) int { return 8192 }, Cwd: proj,
		Rewinder: func(_ context.Context, sid string) (rewind.Rewinder, error) {
			return rewind.Rewinder{Store: st, Files: files, SessionID: sid}, nil
		}})
	return st, id, proj, func(o *harnessSetup) { o.Commands = reg }
}

// TestRewindPickerRestoresAndReloads: /rewind opens a picker of the
// turns (text, turn, +c ~m -d); Enter offers the three ways; the first
// restores code and conversation: a.txt is gone, the view is reloaded
// without the turn, the turn's text is back in the editor, and the chat
// says what happened and that /rewind undo takes it back. The picker
// then lists that rewind, undoable.
func TestRewindPickerRestoresAndReloads(t *testing.T) {
	t.Parallel()
	st, id, proj, opt := rewindSession(t)
	h := newHarness(t, 100, 30, withStore(st), withSession(id), opt)
	h.until("the history", func(v string) bool { return strings.Contains(v, "Made it.") })

	h.openPicker("/rewind", "Rewind to before a turn")
	v := h.view()
	require.Contains(t, v, "make a.txt please")
	require.Contains(t, v, "turn 1")
	require.Contains(t, v, "+1 ~0 -0")
	h.key("enter")
	h.untilModel("the modes", func(m Model) bool {
		return m.mode == modePicker && strings.Contains(m.Screen(), "Restore code and conversation")
	})
	v = h.view()
	require.Contains(t, v, "Restore conversation only")
	require.Contains(t, v, "the files and the view as they were before the turn", "each way says what it restores")
	h.key("enter")
	h.until("the rewind's note", func(v string) bool { return strings.Contains(v, "Rewound code and conversation to before turn 1.") })
	require.NoFileExists(t, filepath.Join(proj, "a.txt"))
	v = h.view()
	require.NotContains(t, v, "Made it.", "the view is reloaded without the rewound turn")
	require.Contains(t, v, "/rewind undo")
	require.Contains(t, v, "The view holds 0 summaries and 0 messages (0 tokens) now.")
	require.Equal(t, "make a.txt please", h.m.input.Value())

	h.m.input.Clear()
	h.openPicker("/rewind", "Rewind to before a turn")
	require.Contains(t, h.view(), "Undo rewind")
	h.key("enter")
	h.until("the undo", func(v string) bool { return strings.Contains(v, "undone.") })
	require.FileExists(t, filepath.Join(proj, "a.txt"))
	h.until("the turn back in the view", func(v string) bool { return strings.Contains(v, "Made it.") })
}

// TestRewindRefusedDuringATurn: /rewind, with or without a turn number,
// restores nothing while a turn runs, and says to cancel it first.
func TestRewindRefusedDuringATurn(t *testing.T) {
	t.Parallel()
	st, id, proj, opt := rewindSession(t)
	h := newHarness(t, 100, 30, withStore(st), withSession(id), opt)
	h.until("the history", func(v string) bool { return strings.Contains(v, "Made it.") })
	h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) { <-ctx.Done() })
	h.typ("go on")
	h.key("enter")
	h.untilModel("the turn", func(m Model) bool { return m.turn != nil })
	for _, line := range []string{"/rewind 1", "/rewind"} {
		h.typ(line)
		h.key("enter")
		h.until("the refusal", func(v string) bool {
			return strings.Count(v, "a turn is running: press esc to cancel it first") == map[string]int{"/rewind 1": 1, "/rewind": 2}[line]
		})
	}
	require.FileExists(t, filepath.Join(proj, "a.txt"))
	require.NotEqual(t, modePicker, h.m.mode)
	h.key("esc")
	h.untilModel("the turn canceled", func(m Model) bool { return m.turn == nil })
}

// TestEscEscOpensRewindPicker: on an empty editor with nothing running,
// Esc says a second opens the rewind picker; a second after the window
// only arms again; two within it open the picker; Esc closes it.
func TestEscEscOpensRewindPicker(t *testing.T) {
	t.Parallel()
	st, id, _, opt := rewindSession(t)
	h := newHarness(t, 100, 30, withStore(st), withSession(id), opt)
	h.until("the history", func(v string) bool { return strings.Contains(v, "Made it.") })

	h.key("esc")
	require.Contains(t, h.view(), "esc again to rewind")
	h.pause(2 * time.Second)
	h.key("esc")
	require.NotEqual(t, modePicker, h.m.mode, "too late: the second Esc arms again")
	h.pause(500 * time.Millisecond)
	h.key("esc")
	h.untilModel("the picker", func(m Model) bool {
		return m.mode == modePicker && strings.Contains(m.Screen(), "Rewind to before a turn")
	})
	h.key("esc")
	h.untilModel("the picker closed", func(m Model) bool { return m.mode == modeEditing })

	// A draft: Esc does not arm.
	h.typ("draft")
	h.key("esc")
	h.key("esc")
	require.NotEqual(t, modePicker, h.m.mode)
	require.Equal(t, "draft", h.m.input.Value())
}

// TestShellCommandKeepsItsCheckpoint: a "!command"'s checkpoint goes
// with its output into the stored message, the next one sent or the one
// kept on quitting, so a rewind sees its changes as gencode's own: two
// commands join into the state before the first and after the second. A
// command's record of the paths it changed goes with it.
func TestShellCommandKeepsItsCheckpoint(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cps := checkpoint.New(t.TempDir(), dir, checkpoint.Options{})
	ts := tools.New(tools.Options{WorkDir: dir, Env: []string{"PATH=" + os.Getenv("PATH")}, Checkpoints: cps})
	h := newHarness(t, 80, 20, withTools(ts))
	h.runShell("!echo x > f.txt")
	h.runShell("!echo y > g.txt")
	h.typ("look")
	h.key("enter")
	h.until("the turn", func(string) bool { return len(h.agent.Starts()) == 1 })
	h.agent.mu.Lock()
	cp := h.agent.metas[0].Checkpoint
	h.agent.mu.Unlock()
	require.NotNil(t, cp, "the message carrying the output carries the checkpoint")
	require.Empty(t, cp.Err)
	require.NotEmpty(t, cp.Before)
	require.NotEqual(t, cp.Before, cp.After)

	h.runShell("!rm f.txt")
	h.key("ctrl+c")
	h.key("ctrl+c")
	_, n, err := h.m.KeepUnsent(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	kept := h.agent.notes[0].msg.Meta.Checkpoint
	require.NotNil(t, kept, "the output kept on quitting carries it too")
	require.Empty(t, kept.Err)
	require.NotEmpty(t, kept.After)
	require.True(t, kept.ChangedKnown, "with what the command changed")
	require.Equal(t, []string{"f.txt"}, kept.Changed)
}

// TestRewindConflictDialogHonoursEachChoice: a rewind over two files
// edited by hand since opens a dialog listing both, each "keep mine" to
// start with, the selected one's diff under the list; Esc cancels with
// nothing changed; then overwrite the second and keep the first: the
// rewind runs with those choices, the first file keeps the hand edit,
// the second is back as the checkpoint has it (absent).
func TestRewindConflictDialogHonoursEachChoice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	proj := t.TempDir()
	files := checkpoint.New(t.TempDir(), proj, checkpoint.Options{})
	before, err := files.Checkpoint(ctx)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(proj, "a.txt"), []byte("a\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(proj, "b.txt"), []byte("b\n"), 0o644))
	after, err := files.Checkpoint(ctx)
	require.NoError(t, err)
	id := seed(t, st, "make a and b",
		session.Message{Role: session.RoleUser, Content: "make a.txt and b.txt", Tokens: 3},
		session.Message{Role: session.RoleAssistant, Tokens: 5, ToolCalls: []session.ToolCall{{ID: "s", Name: "Bash", Arguments: `{}`}}},
		session.Message{Role: session.RoleTool, ToolCallID: "s", Name: "Bash", Content: "(no output)", Tokens: 3,
			Meta: session.Meta{Tool: "Bash", Checkpoint: &session.Checkpoint{Before: before, After: after}}},
		session.Message{Role: session.RoleAssistant, Content: "Made them.", Tokens: 2})
	reg := commands.New(commands.Deps{Store: st, Config: config.Default(), Window: func(string) int { return 8192 }, Cwd: proj,
		Rewinder: func(_ context.Context, sid string) (rewind.Rewinder, error) {
			return rewind.Rewinder{Store: st, Files: files, SessionID: sid}, nil
		}})
	require.NoError(t, os.WriteFile(filepath.Join(proj, "a.txt"), []byte("a\nmine a\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(proj, "b.txt"), []byte("b\nmine b\n"), 0o644))
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(proj, name))
		if err != nil {
			return "(none)"
		}
		return string(b)
	}
	h := newHarness(t, 100, 30, withStore(st), withSession(id), func(o *harnessSetup) { o.Commands = reg })
	h.until("the history", func(v string) bool { return strings.Contains(v, "Made them.") })

	open := func() {
		h.typ("/rewind 1 code")
		h.key("enter")
		h.untilModel("the conflicts dialog", func(m Model) bool { return m.mode == modeConflicts })
	}
	open()
	v := h.view()
	require.Contains(t, v, "[keep mine] a.txt")
	require.Contains(t, v, "[keep mine] b.txt")
	require.Contains(t, v, "+mine a", "the selected file's diff")
	require.NotContains(t, v, "add --force", "asked, not told to retype")
	h.key("esc")
	h.until("the cancel", func(v string) bool { return strings.Contains(v, "Rewind canceled: nothing was changed.") })
	require.Equal(t, modeEditing, h.m.mode)
	require.Equal(t, "a\nmine a\n", read("a.txt"))
	require.Equal(t, "b\nmine b\n", read("b.txt"))

	open()
	h.key("down")
	require.Contains(t, h.view(), "+mine b", "the diff follows the selection")
	h.key("space")
	require.Contains(t, h.view(), "[delete] b.txt", "b.txt did not exist at the checkpoint: overwriting deletes it, and says so")
	h.key("enter")
	h.until("the rewind's note", func(v string) bool { return strings.Contains(v, "Rewound code to before turn 1.") })
	require.Equal(t, modeEditing, h.m.mode)
	require.Equal(t, "a\nmine a\n", read("a.txt"), "kept")
	require.Equal(t, "(none)", read("b.txt"), "overwritten with the checkpoint's state: b.txt did not exist")
	require.Contains(t, h.view(), "Kept as you left them: a.txt")
}

// TestJoinedCommandsKeepAnExactRecord: "!commands" joined into one span
// keep the paths it changed only where that is exact: one of them changed
// nothing and they follow each other. Two that changed files have none
// (the union is not what the span's checkpoints differ in when a file is
// changed and changed back): the rewind compares the checkpoints itself.
func TestJoinedCommandsKeepAnExactRecord(t *testing.T) {
	t.Parallel()
	rec := func(before, after string, paths ...string) *tools.Checkpoint {
		return &tools.Checkpoint{Before: before, After: after, Changed: append([]string{}, paths...), ChangedKnown: true}
	}
	tests := []struct {
		name   string
		first  *tools.Checkpoint
		second *tools.Checkpoint
		want   *session.Checkpoint
	}{
		{"one command", nil, rec("a", "b", "x"), &session.Checkpoint{Before: "a", After: "b", Changed: []string{"x"}, ChangedKnown: true}},
		{"nothing, then a change", rec("a", "a"), rec("a", "b", "x"), &session.Checkpoint{Before: "a", After: "b", Changed: []string{"x"}, ChangedKnown: true}},
		{"a change, then nothing", rec("a", "b", "x"), rec("b", "b"), &session.Checkpoint{Before: "a", After: "b", Changed: []string{"x"}, ChangedKnown: true}},
		{"two changes", rec("a", "b", "x"), rec("b", "c", "x"), &session.Checkpoint{Before: "a", After: "c"}},
		{"a hand edit between", rec("a", "a"), rec("h", "c", "x"), &session.Checkpoint{Before: "a", After: "c"}},
		{"an older record", &tools.Checkpoint{Before: "a", After: "a"}, rec("a", "b", "x"), &session.Checkpoint{Before: "a", After: "b", Changed: []string{"x"}, ChangedKnown: true}},
		{"no record", rec("a", "a"), &tools.Checkpoint{Before: "a", After: "b"}, &session.Checkpoint{Before: "a", After: "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acc := joinCheckpoints(nil, tt.first)
			require.Equal(t, tt.want, joinCheckpoints(acc, tt.second))
		})
	}
}
