package conflicts_test

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/tui/conflicts"
	"github.com/gencode/gencode/internal/tui/theme"
)

func files() []conflicts.File {
	return []conflicts.File{
		{Path: "notes.md", Diff: "--- a/notes.md\n+++ b/notes.md\n@@ -1 +1,2 @@\n # Notes\n+written by hand after the turn"},
		{Path: "cmd/very/long/path/to/a/file/that/does/not/fit/main.go", Diff: "--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-package old\n+package main"},
	}
}

// TestGoldenConflicts: the dialog at 40, 80 and 120 columns, the second
// and third files set to overwrite (the third, not in the checkpoint, says
// it is deleted), the third selected; no line wider than the screen.
func TestGoldenConflicts(t *testing.T) {
	t.Parallel()
	for _, w := range []int{40, 80, 120} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			t.Parallel()
			m := conflicts.New(theme.New(true, colorprofile.NoTTY), 1, "Rewind: 3 files changed outside gencode", append(files(),
				// Not in the checkpoint: overwriting it deletes it, and says so.
				conflicts.File{Path: "scratch.txt", Diff: "--- a/scratch.txt\n+++ b/scratch.txt\n@@ -1 +1 @@\n-made by gencode\n+edited by hand", Deletes: true}))
			m.SetSize(w, 14)
			m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
			m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
			m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
			m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
			view := m.View()
			for _, l := range strings.Split(view, "\n") {
				require.LessOrEqual(t, ansi.StringWidth(l), w, "%q", l)
			}
			golden.RequireEqual(t, view)
		})
	}
}

// TestChoicesAndAnswers: keep mine to start with; space, o and m set the
// selected file's choice; Enter says the choices, Esc cancels.
func TestChoicesAndAnswers(t *testing.T) {
	t.Parallel()
	m := conflicts.New(theme.New(true, colorprofile.NoTTY), 7, "t", files())
	require.Equal(t, []bool{true, true}, m.Keep())
	m, _ = m.Update(tea.KeyPressMsg{Code: 'o', Text: "o"})
	require.Equal(t, []bool{false, true}, m.Keep())
	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	m, _ = m.Update(tea.KeyPressMsg{Code: 'm', Text: "m"})
	require.Equal(t, []bool{true, false}, m.Keep())
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	require.Equal(t, conflicts.AppliedMsg{ID: 7, Keep: []bool{true, false}}, cmd())
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	require.Equal(t, conflicts.CanceledMsg{ID: 7}, cmd())
}
