// Package conflicts is the dialog a rewind opens when files it would
// overwrite were changed outside gencode since: each file with its choice
// (keep mine, or overwrite with the checkpoint's version), the selected
// file's diff under the list. Enter applies the choices, Esc cancels. It
// says which with a message; its parent runs the rewind the choices make.
package conflicts

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tui/keys"
	"github.com/gencode/gencode/internal/tui/theme"
)

// File is one conflicting file: its path and what changed in it outside
// gencode (a unified diff, sanitized).
type File struct {
	Path, Diff string
	// Deletes: the checkpoint has no such file, so overwriting it with
	// the checkpoint's version deletes it (shown as "[delete]").
	Deletes bool
}

// AppliedMsg says the user applied the choices of dialog ID: Keep[i]
// leaves file i as it is, else it is overwritten.
type AppliedMsg struct {
	ID   int
	Keep []bool
}

// CanceledMsg says the user closed dialog ID without a change.
type CanceledMsg struct{ ID int }

// Model is an open conflicts dialog.
type Model struct {
	id            int
	title         string
	files         []File
	keep          []bool
	sel           int
	st            theme.Picker
	km            keys.Conflicts
	width, height int
}

// New returns the dialog over files; every file starts as "keep mine",
// the choice that loses nothing. id tells its messages from an earlier
// dialog's.
func New(th *theme.Theme, id int, title string, files []File) Model {
	keep := make([]bool, len(files))
	for i := range keep {
		keep[i] = true
	}
	return Model{id: id, title: title, files: files, keep: keep, st: th.Picker, km: keys.Default().Conflicts, width: 80, height: 12}
}

// ID is the dialog's id, as its messages carry it.
func (m Model) ID() int { return m.id }

// Keep is the choices so far: Keep()[i] keeps file i.
func (m Model) Keep() []bool { return append([]bool(nil), m.keep...) }

// SetSize gives the dialog its width and at most height lines.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = max(width, 20), max(height, 6)
}

// Height is the lines the dialog takes.
func (m Model) Height() int { return lipgloss.Height(m.View()) }

// Update handles a key.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || len(m.files) == 0 {
		return m, nil
	}
	switch {
	case key.Matches(k, m.km.Up):
		m.sel = (m.sel + len(m.files) - 1) % len(m.files)
	case key.Matches(k, m.km.Down):
		m.sel = (m.sel + 1) % len(m.files)
	case key.Matches(k, m.km.Toggle):
		m.keep[m.sel] = !m.keep[m.sel]
	case key.Matches(k, m.km.Overwrite):
		m.keep[m.sel] = false
	case key.Matches(k, m.km.Keep):
		m.keep[m.sel] = true
	case key.Matches(k, m.km.Apply):
		id, keep := m.id, m.Keep()
		return m, func() tea.Msg { return AppliedMsg{ID: id, Keep: keep} }
	case key.Matches(k, m.km.Cancel):
		id := m.id
		return m, func() tea.Msg { return CanceledMsg{ID: id} }
	}
	return m, nil
}

// View draws a rule, the title, one line per file with its choice, the
// selected file's diff in the lines left, and the keys.
func (m Model) View() string {
	clip := lipgloss.NewStyle().MaxWidth(m.width)
	lines := []string{
		m.st.Dim.Render(strings.Repeat("─", m.width)),
		clip.Render(m.st.Title.Render(termtext.Label(m.title))),
	}
	for i, f := range m.files {
		choice := "[overwrite]"
		if f.Deletes {
			choice = "[delete]"
		}
		if m.keep[i] {
			choice = "[keep mine]"
		}
		line := "  " + choice + " " + termtext.Label(f.Path)
		if i == m.sel {
			line = m.st.Selected.Render("│ " + choice + " " + termtext.Label(f.Path))
		}
		lines = append(lines, clip.Render(line))
	}
	keyLine := m.keyLine()
	// The selected file's diff, in what the list and the key line leave.
	room := m.height - len(lines) - 2
	if room > 0 && m.sel < len(m.files) {
		diff := strings.Split(m.files[m.sel].Diff, "\n")
		lines = append(lines, clip.Render(m.st.Dim.Render("changed outside gencode in "+termtext.Label(m.files[m.sel].Path)+":")))
		if len(diff) > room-1 {
			diff = append(diff[:max(room-2, 0)], "…")
		}
		for _, d := range diff[:min(len(diff), max(room-1, 0))] {
			lines = append(lines, clip.Render("  "+m.st.Detail.Render(termtext.Label(d))))
		}
	}
	return strings.Join(append(lines, keyLine), "\n")
}

// keyLine is the dialog's keys, briefly, as far as the width allows.
func (m Model) keyLine() string {
	short := []struct{ help, desc string }{
		{"↑/↓", "file"}, {"space", "toggle"},
		{m.km.Keep.Help().Key, "keep mine"}, {m.km.Overwrite.Help().Key, "overwrite"},
		{m.km.Apply.Help().Key, "rewind"}, {m.km.Cancel.Help().Key, "cancel"},
	}
	var parts []string
	for _, s := range short {
		parts = append(parts, m.st.Key.Render(s.help)+" "+m.st.Dim.Render(s.desc))
	}
	line := func() string { return "  " + strings.Join(parts, m.st.Dim.Render(" · ")) }
	for len(parts) > 1 && lipgloss.Width(line()) > m.width {
		parts = parts[1:]
	}
	return lipgloss.NewStyle().MaxWidth(m.width).Render(line())
}
