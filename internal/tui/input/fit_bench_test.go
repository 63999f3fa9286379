package input_test

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// BenchmarkTypeInLongDraft is a key typed at the end of a three-line
// draft and taken back, each followed by the layout the TUI runs after
// every message (SetWidth at the same width) and three more, as for the
// chunks or ticks of a turn streaming meanwhile.
var backspace = tea.KeyPressMsg{Code: tea.KeyBackspace}

func BenchmarkTypeInLongDraft(b *testing.B) {
	m := newInput()
	m = typ(m, "first line of the draft")
	m, _ = m.Update(altEnter)
	m = typ(m, "second line, long enough to wrap once it goes past the editor's sixty columns")
	m, _ = m.Update(altEnter)
	m = typ(m, "third")
	for b.Loop() {
		for _, k := range []tea.KeyPressMsg{runes("x"), backspace} {
			m, _ = m.Update(k)
			for range 4 {
				m.SetWidth(60)
			}
		}
	}
}

// BenchmarkTypeInLongLine is a key typed at the end of a one-line draft
// three rows long and taken back, each followed by the layout.
func BenchmarkTypeInLongLine(b *testing.B) {
	m := newInput()
	m = typ(m, strings.Repeat("a long line of a draft that wraps ", 5))
	for b.Loop() {
		for _, k := range []tea.KeyPressMsg{runes("x"), backspace} {
			m, _ = m.Update(k)
			m.SetWidth(60)
		}
	}
}
