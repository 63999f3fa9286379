package cli_test

import (
	"strings"
	"testing"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestSlashCommandsInTmux: in the real binary on a real terminal, a typo
// gets a suggestion, /summarize shows its box, and /history --full can be
// scrolled back.
func TestSlashCommandsInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t, openaitest.WithResponder(summarize))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
	sb.seedSession(12, 2)

	p := startTUI(t, sb, "-c")
	p.waitText("The tests of p12 pass.")

	p.typeLine("/sumarize")
	p.waitText("did you mean /summarize?")

	// Before any summary, /history --full lists all 48 messages: taller
	// than the 40-row pane, so its top is off screen until PgUp.
	p.typeLine("/history --full")
	s := p.waitText("#48 assistant: The tests of p12 pass.")
	if strings.Contains(s, "Session history ·") {
		t.Fatalf("the report fits the pane; the test needs a taller one:\n%s", s)
	}
	for i := 0; i < 10 && !strings.Contains(p.screen(), "Session history ·"); i++ {
		before := p.screen()
		p.keys("PPage")
		p.waitFor("the view to scroll", func(now string) bool { return now != before })
	}
	p.waitText("Session history ·")
	p.keys("C-End")

	p.typeLine("/summarize the test runs")
	p.waitText("╭─ Session Summary")
	for _, want := range []string{"Messages: 48 →", "Commands run (", "go test ./pkg/p1", "written by " + summaryModel} {
		p.waitText(want)
	}
	p.typeLine("/history")
	p.waitText("[Summary 1] Messages 1-")
	p.keys("C-c")
	p.keys("C-c")
	if code := p.exitCode(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}
