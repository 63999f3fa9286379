package cli_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestPrintModeKeepsAPartialAnswer: when the stream breaks mid-answer,
// print mode prints what arrived on stdout, then the error on stderr, and
// exits 1 (it printed nothing but the error, as if nothing had come).
func TestPrintModeKeepsAPartialAnswer(t *testing.T) {
	t.Parallel()
	const answer = "The first part of the answer arrives, and then the connection breaks before the end of it."
	srv := openaitest.NewServer(t)
	srv.Enqueue(openaitest.Reply{Content: answer, Cut: true, CutAfter: 4})
	sb := newSandbox(t)
	sb.useServer(srv)
	res := sb.run("-p", "explain", "--no-summarize")
	require.Equal(t, 1, res.code, "stderr: %s", res.stderr)
	got := strings.TrimSpace(res.stdout)
	require.NotEmpty(t, got, "the partial answer was dropped; stderr: %s", res.stderr)
	require.True(t, strings.HasPrefix(answer, got), "stdout %q is not the start of the answer", got)
	require.NotEmpty(t, strings.TrimSpace(res.stderr), "the error is said on stderr")
}
