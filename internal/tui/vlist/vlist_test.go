package vlist

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rows is n rows of two lines each, counting what the list asks for.
type rows struct {
	n     int
	asked map[int]int
}

func newRows(n int) *rows { return &rows{n: n, asked: map[int]int{}} }

func (r *rows) Len() int { return r.n }
func (r *rows) ID(i int) int {
	return i + 1
}
func (r *rows) Lines(i int) []string {
	r.asked[i]++
	return []string{fmt.Sprintf("row %d", i), fmt.Sprintf("  more of %d", i)}
}

// TestOnlyTheWindowIsAskedFor: a frame of a list of 100,000 rows asks for
// the rows it shows (and scrolling, for the rows it passes), not the rest.
func TestOnlyTheWindowIsAskedFor(t *testing.T) {
	t.Parallel()
	r := newRows(100_000)
	m := New("empty")
	m.SetSize(40, 10)
	m.Layout(r)
	lines := strings.Split(m.View(), "\n")
	require.Len(t, lines, 10)
	require.Equal(t, "  more of 99999", lines[9])
	require.Equal(t, "row 99999", lines[8])
	require.Equal(t, "", lines[7], "rows are separated by a blank line")
	require.LessOrEqual(t, len(r.asked), 4)
	require.Equal(t, 100_000, m.IDAt(9))
	require.Equal(t, 0, m.IDAt(10))
}

func TestScrollKeepsItsLineAsRowsArrive(t *testing.T) {
	t.Parallel()
	r := newRows(50)
	m := New("empty")
	m.SetSize(40, 6)
	m.Layout(r)
	m.ScrollUp(r, 7)
	require.False(t, m.Following())
	m.Layout(r)
	first := strings.Split(m.View(), "\n")[0]
	r.n += 10 // new rows at the end do not move the window
	m.Layout(r)
	require.Equal(t, first, strings.Split(m.View(), "\n")[0])
	m.ScrollDown(r, 1000) // past the end: follows again
	m.Layout(r)
	require.True(t, m.Following())
	require.Equal(t, "  more of 59", strings.Split(m.View(), "\n")[5])

	m.ScrollTop()
	m.Layout(r)
	require.Equal(t, "row 0", strings.Split(m.View(), "\n")[0])
	require.True(t, m.PinnedTop())
}

func TestEmptyAndNarrow(t *testing.T) {
	t.Parallel()
	m := New("nothing here yet, type something")
	m.SetSize(10, 2)
	m.Layout(newRows(0))
	require.Equal(t, "nothing h…\n", m.View())
}

// TestNarrowedWindowCutsLinesAgain: lines drawn again after the window
// narrows (the terminal resized, nothing else changed) are cut to the new
// width, and back to whole when it widens again.
func TestNarrowedWindowCutsLinesAgain(t *testing.T) {
	t.Parallel()
	r := newRows(3)
	m := New("empty")
	m.SetSize(40, 2)
	m.Layout(r)
	require.Equal(t, "row 2\n  more of 2", m.View())
	m.SetSize(6, 2)
	m.Layout(r)
	require.Equal(t, "row 2\n  mor…", m.View())
	m.SetSize(40, 2)
	m.Layout(r)
	require.Equal(t, "row 2\n  more of 2", m.View())
}
