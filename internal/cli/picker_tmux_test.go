package cli_test

import (
	"strings"
	"testing"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestModelPickerInTmux: in the real binary on a real terminal, /model
// opens the endpoint's models with the one in use selected; ↓ and Enter
// switch to the next, and the status bar shows it.
func TestModelPickerInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t, openaitest.WithModels("gpt-4o-mini", "llama3.2", "o3-mini"))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_MODEL"] = "gpt-4o-mini"

	p := startTUI(t, sb)
	p.waitText("Message gencode")
	p.typeLine("/model")
	p.waitText("Switch the model")
	p.waitText("│ gpt-4o-mini  (current)")
	p.keys("Down")
	p.waitText("│ llama3.2")
	p.keys("Enter")
	p.waitText("Switched to llama3.2")
	p.waitFor("the status bar to show llama3.2", func(s string) bool {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		return strings.Contains(lines[len(lines)-1], "llama3.2")
	})
	p.keys("C-c")
	p.keys("C-c")
	if code := p.exitCode(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}
