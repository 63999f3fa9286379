package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestMentionsInTmux is issue 13.6 as a person meets it in a terminal:
// Tab shows and completes the project's paths after "@", the mentioned
// file reaches the model, and "!echo hi" prints its output at once and
// sends it with the next message; output no message carried is kept at
// quit and goes with the next message of the session.
func TestMentionsInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Content: "Answered."}
	}))
	sb := newSandbox(t)
	sb.useServer(srv)
	require.NoError(t, os.MkdirAll(filepath.Join(sb.work, "internal", "tui"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "internal", "tui", "view.go"), []byte("package tui // VIEW-MARKER\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "index.md"), []byte("# index\n"), 0o644))
	p := startTUI(t, sb)
	p.waitText("Message gencode")

	p.keys("-l", "explain @in")
	p.keys("Tab")
	p.waitText("index.md  internal/   (tab completes)")
	p.keys("-l", "t")
	p.keys("Tab")
	p.waitText("❯ explain @internal/")
	p.keys("-l", "t")
	p.keys("Tab")
	p.waitText("❯ explain @internal/tui/")
	p.keys("-l", "v")
	p.keys("Tab")
	p.waitText("❯ explain @internal/tui/view.go")
	p.keys("-l", "briefly")
	p.keys("Enter")
	p.waitText("attached internal/tui/view.go")
	p.waitText("Answered.")
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "explain @internal/tui/view.go briefly\n\n<file path=\"internal/tui/view.go\">\n     1\tpackage tui // VIEW-MARKER\n</file>", lastUser(t, reqs[0]))

	p.typeLine("!echo hi")
	s := p.waitText("[exit code 0]")
	require.Regexp(t, `\$ echo hi\s+hi\s`, s)
	require.Len(t, srv.Requests(), 1, "a !command is not sent by itself")
	p.typeLine("what did it print?")
	// The answer on screen, not only its request: a quit before it is
	// stored cancels the turn, and the next message would then go with
	// this unanswered one.
	p.waitFor("the second answer", func(s string) bool { return strings.Count(s, "Answered.") == 2 })
	require.Len(t, srv.Requests(), 2)
	require.Equal(t, "what did it print?\n\n<shell-output>\n$ echo hi\nhi\n[exit code 0]\n</shell-output>", lastUser(t, srv.Requests()[1]))

	// Output no message carried when gencode quits is kept in the session
	// and goes with the next message, here from print mode.
	p.typeLine("!echo kept-for-later")
	ran := regexp.MustCompile(`\$ echo kept-for-later\s+kept-for-later\s+\[exit code 0\]`)
	p.waitFor("the second output", ran.MatchString)
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
	res := sb.run("-c", "-p", "and that one?")
	require.Equal(t, 0, res.code, res.stderr)
	require.Len(t, srv.Requests(), 3)
	require.Equal(t, "<shell-output>\n$ echo kept-for-later\nkept-for-later\n[exit code 0]\n</shell-output>\n\nand that one?",
		lastUser(t, srv.Requests()[2]))
}

// TestShellStreamsInTmux: a "!command"'s output shows while it runs, as a
// model's Bash call's does: its first line is on screen before it prints
// the second, and its whole output replaces the live lines when it ends.
func TestShellStreamsInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	sb := newSandbox(t)
	sb.useServer(openaitest.NewServer(t))
	p := startTUI(t, sb)
	p.waitText("Message gencode")
	p.typeLine(`!echo first-line; while [ ! -e go ]; do sleep 0.1; done; printf 'sec%s\n' ond-line`)
	s := p.waitText("⎿ first-line")
	require.NotContains(t, s, "second-line", "the command waits for the file")
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "go"), nil, 0o644))
	s = p.waitText("[exit code 0]")
	require.Regexp(t, `first-line\s+second-line\s`, s)
	require.NotContains(t, s, "⎿ first-line", "the output replaced the live lines")
}
