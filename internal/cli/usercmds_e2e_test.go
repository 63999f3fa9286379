package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// writeProjectCommand writes a command file under the sandbox's project.
func (s *sandbox) writeProjectCommand(rel, text string) {
	s.t.Helper()
	path := filepath.Join(s.work, rel)
	require.NoError(s.t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(s.t, os.WriteFile(path, []byte(text), 0o644))
}

const reviewCommand = "---\ndescription: review one file\nargument-hint: FILE\n---\n" +
	"Review $1 for bugs; answer in $2 bullets. Tree: !`ls src`\n@$1\n"

// TestProjectCommandInPrintMode: gencode -p "/review src/main.go" runs the
// project's .gencode/commands/review.md: arguments substituted, the file
// attached as a mention is, and the !`cmd` run as Bash with its permission.
func TestProjectCommandInPrintMode(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.writeProjectCommand(".gencode/commands/review.md", reviewCommand)
	sb.writeProjectCommand("src/main.go", "package main\n\nfunc main() {}\n")
	sb.writeProjectCommand(".claude/commands/frontend/component.md", "Make a $ARGUMENTS component.")

	srv.Enqueue(openaitest.Text("looks fine"))
	res := sb.run("-p", "/review src/main.go three", "--allow", "Bash")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "looks fine\n", res.stdout)
	got := lastUser(t, srv.Requests()[0])
	require.True(t, strings.HasPrefix(got, "Review src/main.go for bugs; answer in three bullets. Tree: main.go\n"), got)
	require.Contains(t, got, "<file path=\"src/main.go\">")
	require.Contains(t, got, "func main() {}")

	srv.Enqueue(openaitest.Text("made"))
	res = sb.run("-p", "/frontend:component round Button")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "Make a round Button component.", lastUser(t, srv.Requests()[1]))

	// Without the Bash tool's permission the !`cmd` does not run, and
	// nothing is sent.
	res = sb.run("-p", "/review src/main.go three")
	require.Equal(t, 1, res.code, res.stderr)
	require.Contains(t, res.stderr, "/review: !`ls src`")
	require.Contains(t, res.stderr, "--allow Bash")
	require.Len(t, srv.Requests(), 2)
}

// TestBuiltinWinsOverUserCommand: a user command named like a built-in is
// not run, and print mode says which wins.
func TestBuiltinWinsOverUserCommand(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.writeProjectCommand(".gencode/commands/clear.md", "wipe everything")
	srv.Enqueue(openaitest.Text("ok"))
	res := sb.run("-p", "/clear")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stderr, "/clear is a built-in command, which wins over .gencode/commands/clear.md")
	require.Equal(t, "/clear", lastUser(t, srv.Requests()[0]))
}

// TestProjectCommandInTmux: the project's command is in /help, completes
// with Tab, is suggested for a typo, and runs with its arguments.
func TestProjectCommandInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.writeProjectCommand(".claude/commands/review.md", "---\ndescription: review one file\nargument-hint: FILE\n---\nReview $1 for bugs, in $2 bullets.\n@$1\n")
	sb.writeProjectCommand("src/main.go", "package main\n\nfunc main() {}\n")
	srv.Enqueue(openaitest.Text("Reviewed: no bugs found."))

	p := startTUI(t, sb)
	p.waitText("gencode")
	p.typeLine("/help")
	// The chat follows the help to its end (the keys); the user's commands
	// are above them, a page or two up.
	p.waitText("Scrolling the chat")
	for i := 0; i < 4 && !strings.Contains(p.screen(), "review one file (.claude/commands/review.md)"); i++ {
		p.keys("PPage")
		time.Sleep(300 * time.Millisecond)
	}
	p.waitText("Your commands")
	p.waitText("review one file (.claude/commands/review.md)")
	p.keys("C-End")
	p.typeLine("/reveiw")
	p.waitText("did you mean /review?")
	p.cmd("send-keys", "-t", "e2e", "-l", "/rev")
	p.keys("Tab")
	p.waitText("/review")
	p.cmd("send-keys", "-t", "e2e", "-l", " src/main.go two")
	p.keys("Enter")
	p.waitText("Reviewed: no bugs found.")
	got := lastUser(t, srv.Requests()[0])
	require.True(t, strings.HasPrefix(got, "Review src/main.go for bugs, in two bullets.\n"), got)
	require.Contains(t, got, "func main() {}")
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}

// TestCommandShellAsksInTmux: a command's !`cmd` runs only once the user
// allows it in Bash's permission dialog; its output is in the prompt.
func TestCommandShellAsksInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.writeProjectCommand(".gencode/commands/status.md", "Explain this status: !`echo tree-is-clean`\n")
	srv.Enqueue(openaitest.Text("The tree is clean."))

	p := startTUI(t, sb)
	p.waitText("Message gencode")
	p.typeLine("/status")
	p.waitText("Allow Bash?")
	time.Sleep(700 * time.Millisecond) // the dialog takes keys once the user has seen it
	p.keys("y")
	p.waitText("The tree is clean.")
	require.Equal(t, "Explain this status: tree-is-clean\n", lastUser(t, srv.Requests()[0]))
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}
