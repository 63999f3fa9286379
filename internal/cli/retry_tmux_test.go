package cli_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestRetryInTmux: the endpoint answers 429 with Retry-After: 3; while the
// client waits, the chat says so ("rate limited, retrying in 3 s (2/5)"),
// and the answer of the retry follows it.
func TestRetryInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t)
	srv.Enqueue(
		openaitest.Reply{Status: 429, Header: map[string]string{"Retry-After": "3"},
			Body: `{"error":{"message":"Rate limit reached for gpt-4o-mini","type":"tokens","code":"rate_limit_exceeded"}}`},
		openaitest.Text("The answer after the wait."),
	)
	sb := newSandbox(t)
	sb.useServer(srv)
	p := startTUI(t, sb)
	p.waitText("Message gencode")
	p.typeLine("hello")
	s := p.waitText("rate limited, retrying in 3 s (2/5)")
	require.NotContains(t, s, "The answer after the wait.", "shown while the client waits")
	s = p.waitText("The answer after the wait.")
	require.Less(t, strings.Index(s, "retrying in 3 s"), strings.Index(s, "The answer after the wait."))
	require.Len(t, srv.Requests(), 2)
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}
