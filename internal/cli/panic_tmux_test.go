package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/gencodetest"
	"github.com/gencode/gencode/internal/openaitest"
)

// TestPanicLeavesASaneTerminalInTmux: a panic in a goroutine gencode starts
// itself (the turn, the search indexer, the window probe) or in the
// compaction /summarize runs in Bubble Tea's command goroutine (which
// would end the program) is recovered in
// the real binary in a real terminal: the TUI goes on, the stack is in the
// log, and after Ctrl+C twice the shell finds its terminal as it left it
// (cooked, echoing). The binary is built with -tags gencode_testpanic, whose
// GENCODE_TEST_PANIC names the goroutine that panics.
func TestPanicLeavesASaneTerminalInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	bin, err := gencodetest.PanicBinary()
	require.NoError(t, err)
	for _, tc := range []struct {
		where  string // GENCODE_TEST_PANIC
		logged string // the log's where=
		screen string // what the chat shows after the message
	}{
		{"turn", "where=turn", "internal error in the turn (a bug in gencode): GENCODE_TEST_PANIC=turn"},
		{"indexer", `where="search indexer"`, "Hello back."},
		{"window", "where=\"window probe\"", "Hello back."},
		{"summary", "where=compaction", "summarization failed; the originals are kept: internal error in the compaction"},
	} {
		t.Run(tc.where, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithMessageRules(),
				openaitest.WithResponder(func(openaitest.Request) openaitest.Reply { return openaitest.Text("Hello back.") }))
			sb := newSandbox(t)
			sb.useServer(srv)
			sb.bin = bin
			sb.env["GENCODE_TEST_PANIC"] = tc.where

			p := startTUI(t, sb)
			p.waitText("Message gencode")
			p.typeLine("hello")
			if tc.where == "summary" {
				// A few exchanges for /summarize to compact.
				for i := 2; i <= 5; i++ {
					p.waitFor(fmt.Sprintf("answer %d", i-1), func(s string) bool { return strings.Count(s, "Hello back.") >= i-1 })
					p.typeLine("more")
				}
				p.waitFor("answer 5", func(s string) bool { return strings.Count(s, "Hello back.") >= 5 })
				p.typeLine("/summarize")
			}
			s := p.waitText(tc.screen)
			if tc.where == "turn" || tc.where == "summary" {
				require.Contains(t, s, "its stack is in")
			}
			p.keys("C-c")
			p.waitText("press ctrl+c again to quit")
			p.keys("C-c")
			require.Equal(t, 0, p.exitCode())
			p.requireSaneTerminal()

			log, err := os.ReadFile(filepath.Join(sb.env["XDG_STATE_HOME"], "gencode", "gencode.log"))
			require.NoError(t, err)
			require.Contains(t, string(log), "panic recovered")
			require.Contains(t, string(log), tc.logged)
			require.Contains(t, string(log), "GENCODE_TEST_PANIC="+tc.where, "the panic's value")
			require.True(t, strings.Contains(string(log), "goroutine") || strings.Contains(string(log), ".go:"), "a stack")
		})
	}
}
