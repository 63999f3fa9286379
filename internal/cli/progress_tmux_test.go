package cli_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestToolProgressInTmux: while the model's Bash command runs, its output
// shows as it arrives, with a timer; the result replaces it when the
// command ends, and the model gets the whole output.
func TestToolProgressInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t)
	const command = "for i in 1 2 3; do echo $i; sleep 1.5; done"
	srv.Enqueue(
		openaitest.Calls(openaitest.ToolCall{Name: "Bash", Arguments: `{"command":"` + command + `"}`}),
		openaitest.Text("Counted to three."),
	)
	sb := newSandbox(t)
	sb.useServer(srv)
	p := startTUI(t, sb, "--yolo")
	p.waitText("Message gencode")
	p.typeLine("count")
	// The first line, live, while the command still runs: no 3 yet, no
	// result mark, and a timer.
	s := p.waitFor("the command's first line, live", func(s string) bool { return strings.Contains(s, "⎿ 1") })
	require.NotRegexp(t, `(?m)^\s+3\s*$`, s, "shown before the command ends")
	require.NotContains(t, s, "[exit code")
	require.NotContains(t, s, "Counted to three.")
	require.Regexp(t, `Bash\(for i in 1 2 3.*\) \S [0-9]+\.[0-9]s`, s)
	p.waitFor("the second line, live", func(s string) bool { return strings.Contains(s, "    2") })
	s = p.waitText("Counted to three.")
	require.Regexp(t, `Bash\(for i in 1 2 3.*\) ✓`, s)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Equal(t, "1\n2\n3\n[exit code 0]", last.Content, "the model gets the whole output")
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}
