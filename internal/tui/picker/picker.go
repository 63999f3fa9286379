// Package picker is the arrow-key list /resume and /model open without an
// argument: a bubbles/list of choices, filtered with "/", Enter picks, Esc
// closes without a change. Its keys are the KeyMap's Picker bindings; it
// says what was picked (or that it was closed) with a message, and its
// parent does what the choice means.
package picker

import (
	"io"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/list"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tui/keys"
	"github.com/gencode/gencode/internal/tui/theme"
)

// Item is one choice as the list shows it: a title and, under it, a
// detail line ("": none).
type Item struct {
	Title, Detail string
}

// item adapts an Item to list.DefaultItem; index is its place in the
// items the picker was made with.
type item struct {
	Item
	index int
}

func (i item) Title() string       { return i.Item.Title }
func (i item) Description() string { return i.Item.Detail }
func (i item) FilterValue() string { return i.Item.Title + " " + i.Item.Detail }

// ChosenMsg says the user picked the item at Index (of those New was
// given) in the picker ID.
type ChosenMsg struct{ ID, Index int }

// ClosedMsg says the user closed the picker ID without a choice.
type ClosedMsg struct{ ID int }

// Model is an open picker.
type Model struct {
	id    int
	l     list.Model
	st    theme.Picker
	km    keys.Picker
	width int
	lines int // an item's lines: 1, or 2 with details
}

// New returns a picker titled title over items, with the one at selected
// selected first; id tells its messages from an earlier picker's.
func New(th *theme.Theme, id int, title string, items []Item, selected int) Model {
	st, km := th.Picker, keys.Default().Picker
	li := make([]list.Item, len(items))
	details := false
	for i, it := range items {
		// Titles and details come from the endpoint and the store:
		// shown inert, on one line.
		it.Title, it.Detail = termtext.Label(it.Title), termtext.Label(it.Detail)
		details = details || it.Detail != ""
		li[i] = item{Item: it, index: i}
	}
	d := list.NewDefaultDelegate()
	d.SetSpacing(0)
	d.ShowDescription = details
	lines := 1
	if details {
		lines = 2
	}
	d.SetHeight(lines)
	// The selected item is marked by a bar, which shows without colour
	// too; the others are indented as far.
	pad := func(s lipgloss.Style) lipgloss.Style { return s.Padding(0, 0, 0, 2) }
	bar := func(s lipgloss.Style) lipgloss.Style {
		s = s.Border(lipgloss.NormalBorder(), false, false, false, true).Padding(0, 0, 0, 1)
		if th.Profile != colorprofile.NoTTY {
			s = s.BorderForeground(th.Palette.Accent)
		}
		return s
	}
	d.Styles = list.DefaultItemStyles{
		NormalTitle: pad(st.Item), NormalDesc: pad(st.Detail),
		SelectedTitle: bar(st.Selected), SelectedDesc: bar(st.SelectedDetail),
		DimmedTitle: pad(st.Item), DimmedDesc: pad(st.Detail),
		FilterMatch: st.Match,
	}
	l := list.New(li, delegate{d}, 80, 10)
	l.Title = title
	l.Styles = styles(st)
	// list.New drew its filter and dots with its own default
	// (dark) styles: the theme's instead.
	l.FilterInput.SetStyles(l.Styles.Filter)
	l.FilterInput.SetVirtualCursor(th.Profile != colorprofile.NoTTY)
	l.Paginator.ActiveDot = l.Styles.ActivePaginationDot.String()
	l.Paginator.InactiveDot = l.Styles.InactivePaginationDot.String()
	l.SetStatusBarItemName("item", "items")
	l.SetShowHelp(false) // the key line is drawn from the KeyMap, below
	l.DisableQuitKeybindings()
	l.InfiniteScrolling = false
	// The KeyMap's keys only: no j/k/q, which are letters of a filter.
	off := key.NewBinding(key.WithDisabled())
	l.KeyMap = list.KeyMap{
		CursorUp: km.Up, CursorDown: km.Down, PrevPage: km.PageUp, NextPage: km.PageDown,
		GoToStart: off, GoToEnd: off,
		Filter: km.Filter, ClearFilter: km.Close,
		CancelWhileFiltering: km.Close, AcceptWhileFiltering: km.Pick,
		ShowFullHelp: off, CloseFullHelp: off, Quit: off, ForceQuit: off,
	}
	if selected > 0 && selected < len(items) {
		l.Select(selected)
	}
	return Model{id: id, l: l, st: st, km: km, width: 80, lines: lines}
}

// delegate draws the items as list's default does, and while a filter is
// typed marks its first match as selected: Enter picks it.
type delegate struct{ list.DefaultDelegate }

func (d delegate) Render(w io.Writer, m list.Model, index int, it list.Item) {
	dd := d.DefaultDelegate
	if m.FilterState() == list.Filtering && m.FilterValue() != "" && index == 0 {
		dd.Styles.NormalTitle, dd.Styles.NormalDesc = dd.Styles.SelectedTitle, dd.Styles.SelectedDesc
	}
	dd.Render(w, m, index, it)
}

// styles are the list's styles, from the theme's: the title and status
// line without their blank line under them (the picker is short).
func styles(st theme.Picker) list.Styles {
	plain := st.Item
	dim := st.Dim
	return list.Styles{
		TitleBar: plain.Padding(0, 0, 0, 2),
		Title:    st.Title,
		Spinner:  dim,
		Filter: textinput.Styles{
			Focused: textinput.StyleState{Text: plain, Placeholder: dim, Suggestion: dim, Prompt: dim},
			Blurred: textinput.StyleState{Text: plain, Placeholder: dim, Suggestion: dim, Prompt: dim},
			Cursor:  textinput.CursorStyle{Color: lipgloss.NoColor{}, Shape: tea.CursorBlock},
		},
		DefaultFilterCharacterMatch: st.Match,
		StatusBar:                   dim.Padding(0, 0, 0, 2),
		StatusEmpty:                 dim,
		StatusBarActiveFilter:       plain,
		StatusBarFilterCount:        dim,
		NoItems:                     dim.Padding(0, 0, 0, 2),
		PaginationStyle:             plain.PaddingLeft(2),
		HelpStyle:                   dim.Padding(0, 0, 0, 2),
		ActivePaginationDot:         plain.SetString("•"),
		InactivePaginationDot:       dim.SetString("•"),
		ArabicPagination:            dim,
		DividerDot:                  dim.SetString(" • "),
	}
}

// ID is the picker's id, as its messages carry it.
func (m Model) ID() int { return m.id }

// FilterValue is the filter typed so far ("": none).
func (m Model) FilterValue() string { return m.l.FilterValue() }

// Filtering reports whether a filter is being typed or applied.
func (m Model) Filtering() bool { return m.l.FilterState() != list.Unfiltered }

// SetSize gives the picker its width and at most maxHeight lines; it
// takes fewer when its items need fewer.
func (m *Model) SetSize(width, maxHeight int) {
	m.width = width
	// The rule above and the key line under the list are not the list's.
	m.l.SetSize(width, max(min(maxHeight-2, m.wanted()), 4))
}

// wanted is the list's height that shows every item: the title, the
// status line, the items, and the line the list keeps for its page dots
// (blank when one page holds every item).
func (m Model) wanted() int { return 3 + m.lines*len(m.l.Items()) }

// Height is the lines the picker takes.
func (m Model) Height() int { return lipgloss.Height(m.View()) }

// Update handles a key, and the list's own messages (its filter's
// results, the filter cursor's blinks).
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, isKey := msg.(tea.KeyPressMsg)
	if !isKey {
		var cmd tea.Cmd
		m.l, cmd = m.l.Update(msg)
		return m, cmd
	}
	filtering := m.l.FilterState() == list.Filtering
	switch {
	case key.Matches(k, m.km.Pick):
		if filtering {
			// The first match of what is typed, filtered now: the
			// filter's own Cmd may not have answered yet.
			m.applyFilter()
		}
		if it, ok := m.l.SelectedItem().(item); ok {
			id, i := m.id, it.index
			return m, func() tea.Msg { return ChosenMsg{ID: id, Index: i} }
		}
		return m, nil
	case key.Matches(k, m.km.Close) && m.l.FilterState() == list.Unfiltered:
		id := m.id
		return m, func() tea.Msg { return ClosedMsg{ID: id} }
	case filtering && key.Matches(k, m.km.Up, m.km.Down, m.km.PageUp, m.km.PageDown):
		// Arrows leave the filter's line for its matches.
		m.applyFilter()
	}
	var cmd tea.Cmd
	m.l, cmd = m.l.Update(k)
	return m, cmd
}

// applyFilter ends the typing of a filter, keeping its matches (none
// typed: all items).
func (m *Model) applyFilter() {
	if v := m.l.FilterValue(); strings.TrimSpace(v) != "" {
		m.l.SetFilterText(v)
		return
	}
	m.l.ResetFilter()
}

// View draws a rule, the list, and the picker's keys under it.
func (m Model) View() string {
	rule := m.st.Dim.Render(strings.Repeat("─", max(m.width, 1)))
	return rule + "\n" + m.l.View() + "\n" + m.keyLine()
}

// keyLine is the picker's keys, briefly, as far as the width allows.
func (m Model) keyLine() string {
	short := []struct{ help, desc string }{{"↑/↓", "move"}, {m.km.Pick.Help().Key, "pick"}, {m.km.Filter.Help().Key, "filter"}, {m.km.Close.Help().Key, "close"}}
	if m.l.FilterState() != list.Unfiltered {
		short[3].desc = "clear"
	}
	var parts []string
	for _, s := range short {
		parts = append(parts, m.st.Key.Render(s.help)+" "+m.st.Dim.Render(s.desc))
	}
	line := func() string { return "  " + strings.Join(parts, m.st.Dim.Render(" · ")) }
	// Narrow: the arrows go first, they need no saying.
	for len(parts) > 1 && lipgloss.Width(line()) > m.width {
		parts = parts[1:]
	}
	return lipgloss.NewStyle().MaxWidth(max(m.width, 1)).Render(line())
}
