package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/tokens"
	"github.com/gencode/gencode/internal/tools"
)

// project is a working directory with a file to mention, and the tool set
// the TUI runs mentions and commands with (Bash asks by default).
func project(t *testing.T) (string, *tools.Set) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("first line\nsecond line\n"), 0o600))
	return dir, tools.New(tools.Options{WorkDir: dir, Env: []string{"PATH=" + os.Getenv("PATH"), "OPENAI_API_KEY=sk-do-not-leak"}})
}

func withTools(ts *tools.Set) harnessOpt { return func(o *harnessSetup) { o.Tools = ts } }

// The file an "@" names is sent after the message, as Read shows it; the
// chat shows the message as typed and says what was attached.
func TestMentionAttachesTheFile(t *testing.T) {
	t.Parallel()
	_, ts := project(t)
	h := newHarness(t, 80, 20, withTools(ts))
	h.typ("summarize @notes.txt, please")
	h.key("enter")
	h.until("the turn", func(string) bool { return len(h.agent.Starts()) == 1 })
	require.Equal(t, "summarize @notes.txt, please\n\n<file path=\"notes.txt\">\n     1\tfirst line\n     2\tsecond line\n</file>", h.agent.Starts()[0])
	h.until("the attachment note", func(v string) bool { return strings.Contains(v, "attached notes.txt") })
	require.Contains(t, h.view(), "summarize @notes.txt, please")
	require.NotContains(t, h.view(), "second line")
}

// A mention of a file that cannot be read sends nothing: the error says
// why and the message is back in the editor. Outside the project, Read's
// rule holds: with nobody to ask, it is refused.
func TestMentionThatCannotBeRead(t *testing.T) {
	t.Parallel()
	_, ts := project(t)
	h := newHarness(t, 80, 20, withTools(ts))
	for _, tc := range []struct{ typed, err string }{
		{"and @/etc/hostname", "@/etc/hostname: permission denied: Read outside the working directory"},
	} {
		h.typ(tc.typed)
		h.key("enter")
		h.until("the error", func(v string) bool { return strings.Contains(v, tc.err) })
		require.Equal(t, tc.typed, h.m.input.Value())
		h.m.input.Reset()
	}
	require.Empty(t, h.agent.Starts())
}

// An "@word" that names no file (a Java annotation, a person, a typo) is
// text: the message is sent as written, a note says nothing was attached,
// and the files that do exist are still attached.
func TestMentionOfNoFileIsText(t *testing.T) {
	t.Parallel()
	_, ts := project(t)
	h := newHarness(t, 80, 20, withTools(ts))
	h.typ("why does @Override fail in @notes.txt? ask @alice")
	h.key("enter")
	h.until("the turn", func(string) bool { return len(h.agent.Starts()) == 1 })
	require.Equal(t, "why does @Override fail in @notes.txt? ask @alice\n\n<file path=\"notes.txt\">\n     1\tfirst line\n     2\tsecond line\n</file>", h.agent.Starts()[0])
	h.until("the notes", func(v string) bool {
		return strings.Contains(v, "attached notes.txt") && strings.Contains(v, "no such file, sent as written: @Override, @alice")
	})
	require.Empty(t, h.m.input.Value())
}

// "!command" runs in the project without a dialog, its output is shown,
// and it goes to the model with the next message; the API key is not in
// its environment.
func TestShellCommandOutputGoesWithTheNextMessage(t *testing.T) {
	t.Parallel()
	dir, ts := project(t)
	h := newHarness(t, 80, 20, withTools(ts))
	h.runShell("!echo hi; pwd; echo key=$OPENAI_API_KEY")
	v := h.view()
	require.Contains(t, v, "hi")
	require.Contains(t, v, "key=\n")
	require.Empty(t, h.agent.Starts(), "a command is not a turn")
	require.False(t, (h.m.mode == modeDialog), "the user typed it: no dialog")

	h.typ("what does that say?")
	h.key("enter")
	h.until("the turn", func(string) bool { return len(h.agent.Starts()) == 1 })
	require.Equal(t, "what does that say?\n\n<shell-output>\n$ echo hi; pwd; echo key=$OPENAI_API_KEY\nhi\n"+dir+"\nkey=\n[exit code 0]\n</shell-output>", h.agent.Starts()[0])

	h.typ("and now?")
	h.key("enter")
	h.until("the second turn", func(string) bool { return len(h.agent.Starts()) == 2 })
	require.Equal(t, "and now?", h.agent.Starts()[1], "the output went once")
}

// runShell sends a "!command" and waits for its output, which ends with
// its exit code.
func (h *harness) runShell(line string) {
	h.t.Helper()
	h.typ(line)
	h.key("enter")
	h.until("the output of "+line, func(v string) bool { return strings.Contains(v, "[exit code 0]") })
}

// Esc stops a long "!command".
func TestEscStopsAShellCommand(t *testing.T) {
	t.Parallel()
	_, ts := project(t)
	h := newHarness(t, 80, 20, withTools(ts))
	h.typ("!sleep 30")
	h.key("enter")
	h.untilModel("the command to start", func(m Model) bool { return m.shellCancel != nil })
	h.key("esc")
	h.until("the cancel", func(v string) bool { return strings.Contains(v, "[canceled; the process group was killed") })
}

// Without a tool set "@" and "!" are plain text.
func TestMentionsOffWithoutTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 20)
	h.typ("!ls @notes.txt")
	h.key("enter")
	h.until("the turn", func(string) bool { return len(h.agent.Starts()) == 1 })
	require.Equal(t, "!ls @notes.txt", h.agent.Starts()[0])
}

func TestMentions(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"a.go", "dir/b.txt", "c"}, mentions("see @a.go, @dir/b.txt and @c. Also @a.go; mail me@x.org or @"))
}

// The attached file reaches the provider: the real agent, tool set and
// store against the fake server, which records each request.
func TestMentionReachesTheRequest(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	srv.Enqueue(openaitest.Reply{Content: "It has two lines."})
	_, ts := project(t)
	store := newStore(t)
	ag := agent.New(store, llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "k"}), ts, (&tokens.Cache{}).Counter("gpt-4o-mini"),
		agent.Options{Model: "gpt-4o-mini", WorkDir: ts.WorkDir(), Window: 128000})
	h := newHarness(t, 80, 20, withTools(ts), withStore(store), func(o *harnessSetup) { o.Agent = ag; o.Cwd = ts.WorkDir() })
	h.typ("what is in @notes.txt?")
	h.key("enter")
	h.until("the answer", func(v string) bool { return strings.Contains(v, "It has two lines.") })
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	last := reqs[0].Messages[len(reqs[0].Messages)-1]
	require.Equal(t, "user", last.Role)
	require.Equal(t, "what is in @notes.txt?\n\n<file path=\"notes.txt\">\n     1\tfirst line\n     2\tsecond line\n</file>", last.Content)
}

// Quitting keeps the output of a "!command" no message carried yet: it is
// stored in the session's log (a new session when none was started), and
// the next message goes with it; once a message carried it, nothing is
// kept twice.
func TestUnsentShellOutputIsKeptOnQuit(t *testing.T) {
	t.Parallel()
	_, ts := project(t)
	h := newHarness(t, 80, 20, withTools(ts))
	h.runShell("!echo hi")
	h.key("ctrl+c")
	h.key("ctrl+c")
	require.True(t, h.quit)
	id, n, err := h.m.KeepUnsent(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.NotEmpty(t, id, "a session holds it")
	require.Len(t, h.agent.notes, 1)
	require.Equal(t, id, h.agent.notes[0].sessionID)
	require.Equal(t, "<shell-output>\n$ echo hi\nhi\n[exit code 0]\n</shell-output>", h.agent.notes[0].msg.Text)
	require.True(t, h.agent.notes[0].msg.Meta.Shell)
}

func TestShellOutputSentIsNotKeptAgain(t *testing.T) {
	t.Parallel()
	_, ts := project(t)
	h := newHarness(t, 80, 20, withTools(ts))
	h.runShell("!echo hi")
	h.typ("look")
	h.key("enter")
	h.until("the turn", func(string) bool { return len(h.agent.Starts()) == 1 })
	_, n, err := h.m.KeepUnsent(context.Background())
	require.NoError(t, err)
	require.Zero(t, n)
	require.Empty(t, h.agent.notes)
}

// steppedShell is a userTools whose Bash prints "1", reports it as the
// Bash tool does, then waits for the test before it prints the rest.
type steppedShell struct {
	dir     string
	release chan struct{}
}

func (s steppedShell) WorkDir() string { return s.dir }

func (s steppedShell) RunByUser(ctx context.Context, c tools.Call) tools.Result {
	if c.Progress != nil {
		c.Progress(tools.Progress{})
		// A report the channel has no room for is refused (false); the
		// Bash tool's reporter sends it again, and so does this fake.
		for !c.Progress(tools.Progress{Tail: "1\n", Bytes: 2}) && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
	select {
	case <-s.release:
	case <-ctx.Done():
	}
	return tools.Result{Content: "1\n2\n3\n[exit code 0]"}
}

// A "!command"'s output shows while it runs, as a model's Bash call's
// does: "1" before the command ends, then its whole output in its place.
func TestShellCommandStreamsItsOutput(t *testing.T) {
	t.Parallel()
	sh := steppedShell{dir: t.TempDir(), release: make(chan struct{})}
	h := newHarness(t, 80, 20, func(o *harnessSetup) { o.Tools = sh })
	h.typ("!for i in 1 2 3; do echo $i; sleep 1; done")
	h.key("enter")
	h.until("the first line while it runs", func(v string) bool { return strings.Contains(v, "⎿ 1") })
	v := h.view()
	require.Contains(t, v, "Bash(for i in 1 2 3; do echo $i; sleep 1; done)")
	require.NotContains(t, v, "[exit code 0]")
	close(sh.release)
	h.until("the output", func(v string) bool { return strings.Contains(v, "[exit code 0]") })
	v = h.view()
	require.Contains(t, v, "3")
	require.NotContains(t, v, "⎿ 1", "the output replaced the live view")
	require.Equal(t, 1, strings.Count(v, "$ for i in 1 2 3"), "one block:\n%s", v)
}
