package cli_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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

// TestModelPickerTypeAheadInTmux: keys typed right after Enter on /model,
// before the endpoint answered and the list opened, all reach the list's filter, in order; none is lost
// (the first /model of a v1 run froze ~5 s and threw them away) and none
// lands in the editor.
func TestModelPickerTypeAheadInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t, openaitest.WithModels("gpt-4o-mini", "llama3.2", "o3-mini", "qwen2.5-coder"))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_MODEL"] = "gpt-4o-mini"

	p := startTUI(t, sb)
	p.waitText("Message gencode")
	p.cmd("send-keys", "-t", "e2e", "-l", "/model")
	p.keys("Enter")
	p.cmd("send-keys", "-t", "e2e", "-l", "/qwen2.5")
	s := p.waitText("Filter: qwen2.5")
	require.Contains(t, s, "qwen2.5-coder")
	require.NotContains(t, s, "llama3.2", "the filter applies")
	p.keys("Enter")
	p.waitText("Switched to qwen2.5-coder")
	require.NotContains(t, p.screen(), "❯ /qwen", "a typed-ahead key reached the editor")
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}
