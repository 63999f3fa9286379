package status_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tui/status"
	"github.com/gencode/gencode/internal/tui/theme"
)

func plain() *theme.Theme {
	return theme.New(true, colorprofile.NoTTY)
}

// states builds the bar in each state the golden file shows.
func states(width int) []string {
	base := func() status.Model {
		m := status.New(plain(), 0.6)
		m.SetWidth(width)
		m.SetModel("gpt-4o-mini", 128000)
		m.SetSession("4f1c2a9b8e7d", "Fix the flaky store test on CI and explain the cause")
		m.SetContext(23456, 0, "")
		return m
	}
	var out []string
	m := base()
	out = append(out, "idle:", m.View())

	m = base()
	m.SetBusy(true, "working")
	out = append(out, "busy:", m.View())

	m = base()
	m.SetContext(70000, 0, "")
	m.Compaction(summarize.Report{Phase: summarize.Started, Background: true})
	out = append(out, "summarizing in the background, past the soft threshold:", m.View())

	m = base()
	m.Compaction(summarize.Report{Phase: summarize.Finished, Summary: &session.Summary{FromSeq: 1, ToSeq: 240, TokensBefore: 61204, TokensAfter: 7950}})
	out = append(out, "last result:", m.View())

	m = base()
	m.Compaction(summarize.Report{Phase: summarize.Failed, Err: errors.New("timeout")})
	out = append(out, "failed:", m.View())

	m = base()
	m.SetNotice("press ctrl+c again to quit")
	out = append(out, "notice:", m.View())

	m = base()
	m.SetSession("", "")
	m.SetContext(-1, 0, "")
	out = append(out, "new session, context not known yet:", m.View())

	m = base()
	m.SetSpend(41234, "$0.0123")
	out = append(out, "what the session's requests used and cost:", m.View())

	m = base()
	m.SetSpend(812, "")
	m.SetBusy(true, "working")
	out = append(out, "busy, an unpriced model:", m.View())

	m = base()
	m.SetContext(3100, 4096, "server")
	out = append(out, "the server named a smaller window than configured:", m.View())

	m = base()
	m.SetContext(3100, 4096, "Ollama, loaded")
	out = append(out, "the window Ollama reports for the loaded model:", m.View())
	return out
}

func TestGoldenStatus(t *testing.T) {
	t.Parallel()
	for _, w := range []int{40, 80, 120} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			t.Parallel()
			golden.RequireEqual(t, strings.Join(states(w), "\n"))
		})
	}
}

// TestWidth checks the bar never wraps, whatever the width.
func TestWidth(t *testing.T) {
	t.Parallel()
	for _, w := range []int{20, 40, 60, 80, 100, 200} {
		for i, l := range states(w) {
			if i%2 == 0 {
				continue // a caption
			}
			if got := ansi.StringWidth(l); got > w {
				t.Errorf("width %d: bar is %d cells: %q", w, got, l)
			}
		}
	}
}

func TestSpinnerTurnsOnlyWhenBusy(t *testing.T) {
	t.Parallel()
	m := status.New(plain(), 0.6)
	if cmd := m.SetBusy(true, "working"); cmd == nil {
		t.Fatal("SetBusy(true) started no spinner")
	}
	if cmd := m.SetBusy(true, "running Bash"); cmd != nil {
		t.Error("a second SetBusy(true) started a second spinner")
	}
	m.SetBusy(false, "")
	if m.Busy() {
		t.Error("Busy() after SetBusy(false)")
	}
}

// TestSpendIsTheSessions: what one session spent is not shown for the
// next one (/clear, /resume).
func TestSpendIsTheSessions(t *testing.T) {
	t.Parallel()
	m := status.New(plain(), 0.6)
	m.SetWidth(120)
	m.SetModel("gpt-4o-mini", 128000)
	m.SetSession("a1", "first")
	m.SetSpend(41234, "$0.0123")
	require.Contains(t, m.View(), "41k tok $0.0123")
	m.SetSession("a1", "first, retitled")
	require.Contains(t, m.View(), "41k tok $0.0123", "the same session keeps it")
	m.SetSession("b2", "")
	require.NotContains(t, m.View(), "tok")
}

// TestPercentIsContexts: the status bar's percent is /context's, one
// rounding for both (/context cut 3,199 of 6,400 down to 49% where the
// bar rounded it to 50%).
func TestPercentIsContexts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tokens, window int
		want           string
	}{
		{3199, 6400, "50%"},
		{1496, 128000, "1%"},
		{127000, 128000, "99%"},
		{0, 8192, "0%"},
	}
	for _, tt := range tests {
		m := status.New(plain(), 0)
		m.SetWidth(120)
		m.SetModel("m", tt.window)
		m.SetContext(tt.tokens, tt.window, "")
		if v := m.View(); !regexp.MustCompile(`ctx \S+/\S+ ` + tt.want).MatchString(v) {
			t.Errorf("SetContext(%d, %d): bar %q, want %s", tt.tokens, tt.window, v, tt.want)
		}
		if got := fmt.Sprintf("%d%%", termtext.Percent(tt.tokens, tt.window)); got != tt.want {
			t.Errorf("termtext.Percent(%d, %d) = %s, want %s", tt.tokens, tt.window, got, tt.want)
		}
	}
}
