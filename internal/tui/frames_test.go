package tui

import (
	"bytes"

	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/require"
)

// counter is a program whose view says how many bumpMsg it has seen: a
// word whose every letter differs from the one before's, so that its
// whole text is written (the renderer writes only the cells that change).
type counter struct{ n int }

func word(n int) string {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte('a' + (3*n+i)%26)
	}
	return string(b)
}

type bumpMsg struct{}

func (c counter) Init() tea.Cmd { return nil }

func (c counter) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(bumpMsg); ok {
		c.n++
	}
	return c, nil
}

func (c counter) View() tea.View { return tea.NewView(word(c.n)) }

// screen is a program's output, written by its renderer, read by the test.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(b)
}

func (s *screen) has(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(s.buf.String(), text)
}

// TestFramePacerSlowsBubbleTeasTicker: an idle program's frame ticker is
// slowed (this fails when a Bubble Tea upgrade moves the ticker: see
// frames.go), and the next message gives it its rate back: its frame is
// drawn at once, not at the idle rate; so is the last frame before idling.
func TestFramePacerSlowsBubbleTeasTicker(t *testing.T) {
	t.Parallel()
	out := &screen{}
	fp := NewFramePacer()
	fp.idleAfter, fp.idleSettle = 50*time.Millisecond, 20*time.Millisecond
	p := tea.NewProgram(counter{}, tea.WithInput(nil), tea.WithOutput(out), tea.WithWindowSize(40, 5),
		tea.WithoutSignals(), tea.WithEnvironment([]string{"TERM=dumb"}), tea.WithFilter(fp.Filter))
	fp.Attach(p)
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()
	t.Cleanup(func() {
		p.Quit()
		require.NoError(t, <-done)
		fp.Close()
	})

	for round := 1; round <= 3; round++ {
		require.Eventually(t, fp.Idle, 5*time.Second, 5*time.Millisecond, "round %d: the ticker never slowed", round)
		sent := time.Now()
		p.Send(bumpMsg{})
		want := word(round)
		require.Eventually(t, func() bool { return out.has(want) }, idleFrame/2, time.Millisecond,
			"round %d: %q not drawn within %v of the message", round, want, idleFrame/2)
		t.Logf("round %d: drawn %v after the message", round, time.Since(sent).Round(time.Millisecond))
	}
}
