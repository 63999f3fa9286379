package cli_test

// End-to-end tests of the terminal UI: the built binary runs in a tmux
// pane against the fake OpenAI server; keys are sent with send-keys and
// the screen is read with capture-pane. tmux is required when CI=true
// (.ci/run installs it) and the tests are skipped without it otherwise.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/cli"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
)

var tmuxSeq atomic.Int64

// tmuxPane is one gencode run in its own tmux server, driven through a
// tmux client in control mode (tmuxControl).
type tmuxPane struct {
	t      *testing.T
	tmux   string
	socket string
	exit   string // file the wrapper writes the exit status to
	stderr string
	stty   string // file the wrapper writes `stty -a` to once gencode has exited
	ctl    *tmuxControl
}

func needTmux(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tmux is needed for the terminal UI tests in CI: %v", err)
		}
		t.Skip("tmux is not installed")
	}
	return p
}

// startTUI runs gencode with args in a 120x40 tmux pane, in the sandbox's
// environment only. The tmux server reads no configuration file (-f
// /dev/null): the pane is the same whatever the user's tmux.conf says.
func startTUI(t *testing.T, sb *sandbox, args ...string) *tmuxPane {
	t.Helper()
	p := &tmuxPane{t: t, tmux: needTmux(t), socket: fmt.Sprintf("gencode-e2e-%d-%d", os.Getpid(), tmuxSeq.Add(1))}
	dir := t.TempDir()
	p.exit, p.stderr, p.stty = filepath.Join(dir, "exit"), filepath.Join(dir, "stderr"), filepath.Join(dir, "stty")
	var script strings.Builder
	script.WriteString("cd " + shellQuote(sb.work) + "\nexec env -i")
	keys := make([]string, 0, len(sb.env))
	for k := range sb.env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		script.WriteString(" " + shellQuote(k+"="+sb.env[k]))
	}
	// After gencode, the terminal's modes as the shell finds them, then
	// gencode's exit status (last: exitCode waits for it).
	script.WriteString(" TERM=tmux-256color sh -c " + shellQuote(shellQuote(sb.bin)+` "$@" 2>`+shellQuote(p.stderr)+
		`; code=$?; stty -a >`+shellQuote(p.stty)+` 2>&1; echo $code >`+shellQuote(p.exit)) + " gencode")
	for _, a := range args {
		script.WriteString(" " + shellQuote(a))
	}
	run := filepath.Join(dir, "run.sh")
	require.NoError(t, os.WriteFile(run, []byte(script.String()+"\n"), 0o700))
	ctl, err := startTmuxControl(p.tmux, "-L", p.socket, "-f", "/dev/null", "-C",
		"new-session", "-x", "120", "-y", "40", "-s", "e2e", "-f", "no-output", "sh "+shellQuote(run))
	if err != nil {
		t.Fatalf("tmux new-session: %v", err)
	}
	p.ctl = ctl
	t.Cleanup(func() {
		ctl.close()
		if t.Failed() {
			b, _ := os.ReadFile(p.stderr)
			t.Logf("gencode stderr:\n%s", b)
		}
	})
	return p
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (p *tmuxPane) cmd(args ...string) string {
	p.t.Helper()
	out, err := p.ctl.run(args...)
	if err != nil {
		p.t.Fatalf("tmux %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// styled is the screen with its escape sequences.
func (p *tmuxPane) styled() string {
	out, _ := p.ctl.run("capture-pane", "-p", "-e", "-t", "e2e")
	return out
}

// screen is what the pane shows now ("" once gencode has exited).
func (p *tmuxPane) screen() string {
	out, err := p.ctl.run("capture-pane", "-p", "-t", "e2e")
	if err != nil {
		return ""
	}
	return out
}

// waitFor polls the screen until cond holds, failing after a deadline.
func (p *tmuxPane) waitFor(what string, cond func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := p.screen()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %s; the screen:\n%s", what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *tmuxPane) waitText(text string) string {
	p.t.Helper()
	return p.waitFor(fmt.Sprintf("%q", text), func(s string) bool { return strings.Contains(s, text) })
}

// typeLine types text literally and presses Enter.
func (p *tmuxPane) typeLine(text string) {
	p.t.Helper()
	p.cmd("send-keys", "-t", "e2e", "-l", text)
	p.cmd("send-keys", "-t", "e2e", "Enter")
}

func (p *tmuxPane) keys(keys ...string) {
	p.t.Helper()
	p.cmd(append([]string{"send-keys", "-t", "e2e"}, keys...)...)
}

// exitCode waits for gencode to exit and returns its status.
func (p *tmuxPane) exitCode() int {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(p.exit); err == nil && len(b) > 0 {
			var code int
			_, err := fmt.Sscan(string(b), &code)
			require.NoError(p.t, err)
			return code
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("gencode did not exit; the screen:\n%s", p.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// requireSaneTerminal fails unless the shell found the terminal, once
// gencode had exited, in its cooked mode: lines edited by the terminal and
// echoed (call exitCode first: the wrapper writes `stty -a` before it).
func (p *tmuxPane) requireSaneTerminal() {
	p.t.Helper()
	b, err := os.ReadFile(p.stty)
	require.NoError(p.t, err)
	fields := strings.Fields(string(b))
	for _, mode := range []string{"icanon", "echo", "isig", "icrnl", "opost"} {
		require.Contains(p.t, fields, mode, "the terminal gencode left:\n%s", b)
	}
}

func TestTUIInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	long := strings.TrimSpace(strings.Repeat("and then the next part of a very long answer ", 60))
	srv.Enqueue(
		openaitest.Text("Hello from the **fake** model.\x1b]0;pwned\x07\x1b[2J Still here."),
		openaitest.Calls(openaitest.ToolCall{Name: "Write", Arguments: `{"file_path":"hello.txt","content":"hi there\n"}`}),
		openaitest.Text("Wrote hello.txt."),
		openaitest.Reply{Content: long, ChunkDelay: 150 * time.Millisecond},
	)

	p := startTUI(t, sb)
	p.waitText("Message gencode")

	// A message and its reply; escape sequences in it are shown inert.
	p.typeLine("hi there")
	// The finished message is drawn as markdown in a Cmd: until then the
	// raw text shows (with its ** marks).
	s := p.waitText("Hello from the fake model.")
	require.Contains(t, s, "❯ hi there")
	require.Contains(t, s, "Still here.")

	// Without --yolo, Write asks; y allows it once.
	p.typeLine("write hello.txt")
	s = p.waitText("Allow Write?")
	require.Contains(t, s, "+hi there")
	time.Sleep(700 * time.Millisecond) // the dialog takes keys once the user has seen it
	p.keys("y")
	s = p.waitText("Wrote hello.txt.")
	// The change stays in the transcript once the dialog is gone.
	require.NotContains(t, s, "Allow Write?")
	require.Contains(t, s, "@@ -0,0 +1 @@")
	require.Contains(t, s, "+hi there")
	b, err := os.ReadFile(filepath.Join(sb.work, "hello.txt"))
	require.NoError(t, err)
	require.Equal(t, "hi there\n", string(b))

	// Esc cancels a long turn; the partial answer stays, marked.
	p.typeLine("tell me everything")
	p.waitText("next part of a very")
	p.keys("Escape")
	s = p.waitText("⎿ interrupted")
	require.NotContains(t, s, "esc to cancel")

	// Tab completes a slash command; its report is boxed.
	p.cmd("send-keys", "-t", "e2e", "-l", "/he")
	p.keys("Tab")
	p.waitText("❯ /help")
	p.keys("Enter")
	// The report is taller than the pane: its end shows, its top a page up.
	p.waitText("esc                clear the filter, else close without a change")
	p.keys("PPage")
	s = p.waitText("╭─ Commands")
	require.Contains(t, s, "/summarize")
	p.keys("C-End")

	// Ctrl+C twice quits: the first only warns.
	p.keys("C-c")
	p.waitText("press ctrl+c again to quit")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
	p.requireSaneTerminal()

	// The log holds the interrupted answer and the answered tool call.
	st, err := session.Open(context.Background(), filepath.Join(sb.env["XDG_DATA_HOME"], "gencode"))
	require.NoError(t, err)
	defer st.Close()
	list, err := st.Sessions(context.Background(), 0)
	require.NoError(t, err)
	require.Len(t, list, 1)
	msgs, err := st.Messages(context.Background(), list[0].ID, 1, 0)
	require.NoError(t, err)
	last := msgs[len(msgs)-1]
	require.True(t, last.Meta.Interrupted, "last message: %+v", last)
	require.Contains(t, last.Content, "next part")
	require.Equal(t, "hi there", list[0].Title)
	var diff string
	for _, m := range msgs {
		if m.Role == session.RoleTool && m.Name == "Write" {
			diff = m.Meta.Diff
		}
	}
	require.Equal(t, "--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1 @@\n+hi there\n", diff, "the log keeps the change for the transcript")

	// -c reopens it with its history, in colour.
	p = startTUI(t, sb, "-c")
	s = p.waitText("Still here.")
	require.Contains(t, s, "Wrote hello.txt.")
	require.Regexp(t, colour, p.styled())
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())

	// NO_COLOR: the same screen without a colour, the cursor still shown.
	sb.env["NO_COLOR"] = "1"
	p = startTUI(t, sb, "-c")
	p.waitText("Still here.")
	styled := p.styled()
	require.NotRegexp(t, colour, styled)
	require.Regexp(t, `\x1b\[(?:\d+;)*7m`, styled, "the cursor in reverse video")
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}

// colour matches an SGR sequence that sets a colour (39 and 49, the
// default colours, set none).
var colour = regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])[;m]`)

// TestTUIStartupErrors: what can be known before the screen is taken is
// said on stderr, like print mode does, and the TUI never starts.
func TestTUIStartupErrors(t *testing.T) {
	t.Parallel()
	dead := "http://" + deadAddr(t) + "/v1"
	tests := []struct {
		name     string
		terminal bool
		env      map[string]string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no endpoint", true, nil, nil, 1, "set OPENAI_API_KEY"},
		{"no session to continue", true, map[string]string{"OPENAI_API_KEY": "sk"}, []string{"-c"}, 1, "no session to continue"},
		{"not a terminal", false, map[string]string{"OPENAI_API_KEY": "sk"}, nil, 2, "needs a terminal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			env := map[string]string{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "data"), "XDG_CONFIG_HOME": filepath.Join(home, "cfg")}
			for k, v := range tt.env {
				env[k] = v
			}
			var out, errb strings.Builder
			code := cli.Run(context.Background(), cli.Env{
				Args: tt.args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
				Getenv: func(k string) string { return env[k] }, Getwd: func() (string, error) { return home, nil },
				IsTerminal: func() bool { return tt.terminal }, LocalServers: []string{dead},
			})
			require.Equal(t, tt.wantCode, code, "stderr: %s", errb.String())
			require.Contains(t, errb.String(), tt.wantErr)
			require.Empty(t, out.String(), "the screen was touched")
		})
	}
}

// lastUser is the last user message a request carried.
func lastUser(t *testing.T, req openaitest.Request) string {
	t.Helper()
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	t.Fatalf("no user message in the request")
	return ""
}

// paste pastes text as a terminal does (tmux paste-buffer -p: bracketed,
// each newline sent as CR).
func (p *tmuxPane) paste(text string) {
	p.t.Helper()
	f := filepath.Join(p.t.TempDir(), "paste")
	require.NoError(p.t, os.WriteFile(f, []byte(text), 0o600))
	p.cmd("load-buffer", "-b", "p", f)
	p.cmd("paste-buffer", "-p", "-d", "-b", "p", "-t", "e2e")
}

// TestTUIKeyboardInTmux is what a person at the keyboard relies on, in the
// real binary on a real terminal: pastes keep their lines, keys typed
// while a permission dialog opens cannot answer it and stay in the draft,
// and Ctrl+C cancels the turn, then clears the draft, then quits.
func TestTUIKeyboardInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	p := startTUI(t, sb)
	p.waitText("Message gencode")

	// A 3-line paste is inserted as typed; a 500-line one as a
	// placeholder. Both reach the model with every line break.
	small := "func a() {\n    return 1\n}"
	var big strings.Builder
	for i := range 500 {
		fmt.Fprintf(&big, "line %03d of the log\n", i)
	}
	srv.Enqueue(openaitest.Text("Three lines received."), openaitest.Text("Five hundred lines received."))
	p.paste(small)
	p.waitText("    return 1")
	p.keys("Enter")
	p.waitText("Three lines received.")
	require.Equal(t, small, lastUser(t, srv.Requests()[0]))
	p.paste(big.String())
	p.waitText("[pasted text #1: 500 lines")
	p.keys("Enter")
	p.waitText("Five hundred lines received.")
	require.Equal(t, big.String(), lastUser(t, srv.Requests()[1]))

	// Type-ahead: the model asks to run a command while the next message
	// is being typed. Its "a", "y" and "n" must not answer the dialog.
	// The request is held (a gate) until half the draft is typed, then
	// the rest is typed at once as the dialog opens: no pause the machine's
	// load could make between two keys is taken for the user reading the
	// dialog, so nothing here depends on the machine being idle.
	marker := filepath.Join(sb.work, "ran.txt")
	gate := make(chan struct{})
	srv.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "Bash", Arguments: `{"command":"touch ran.txt"}`}}, Gate: gate},
		openaitest.Text("Cleaned up."),
	)
	p.typeLine("clean up")
	const draft = "so what do you think about my plan"
	p.cmd("send-keys", "-t", "e2e", "-l", draft[:10])
	p.waitText("❯ " + draft[:10])
	close(gate)
	p.cmd("send-keys", "-t", "e2e", "-l", draft[10:])
	ran := func() bool { _, err := os.Stat(marker); return err == nil }
	// Answered (allowed or denied), the turn goes on to its last reply.
	s := p.waitFor("the dialog", func(s string) bool {
		return strings.Contains(s, "Allow Bash?") || strings.Contains(s, "Cleaned up.")
	})
	require.NotContains(t, s, "Cleaned up.", "typed-ahead keys answered the dialog")
	require.False(t, ran(), "the command ran on typed-ahead keys")
	s = p.waitText("❯ " + draft)
	require.Contains(t, s, "Allow Bash?", "the dialog is still open")
	time.Sleep(700 * time.Millisecond) // the user reads the dialog
	p.keys("y")
	p.waitText("Cleaned up.")
	require.True(t, ran(), "a deliberate y approved the command")
	p.waitText("❯ " + draft) // the draft is still there to send

	// Ctrl+C during a turn cancels it, like Esc; the draft stays.
	long := strings.TrimSpace(strings.Repeat("and then the next part of a very long answer ", 60))
	srv.Enqueue(openaitest.Reply{Content: long, ChunkDelay: 150 * time.Millisecond})
	p.keys("Enter") // the draft is sent
	p.waitText("next part of a very")
	p.cmd("send-keys", "-t", "e2e", "-l", "a new draft")
	p.keys("C-c")
	p.waitText("⎿ interrupted")
	p.waitText("❯ a new draft")
	// Then it clears the draft, then it quits.
	p.keys("C-c")
	p.waitText("draft cleared")
	require.NotContains(t, p.screen(), "❯ a new draft")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())

	// -c shows the 500-line paste as its placeholder again, not its lines.
	p = startTUI(t, sb, "-c")
	s = p.waitText("Five hundred lines received.")
	require.Contains(t, s, "❯ [pasted text #1: 500 lines")
	require.NotContains(t, s, "of the log")
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}

// TestTUIQueueInTmux: two messages typed while a turn runs are queued,
// shown as queued, and each is answered after it, in order.
func TestTUIQueueInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	gate := make(chan struct{})
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
		q := lastUser(t, r)
		rep := openaitest.Reply{Content: "Answer to " + strings.ToUpper(q) + "."}
		if q == "first question" {
			rep.Gate = gate
		}
		return rep
	}))
	sb := newSandbox(t)
	sb.useServer(srv)
	p := startTUI(t, sb)
	p.waitText("Message gencode")

	p.typeLine("first question")
	p.waitText("esc to cancel")
	p.typeLine("second question")
	p.typeLine("third question")
	s := p.waitText("queued ❯ third question")
	require.Contains(t, s, "queued ❯ second question")
	// The turn shows before its request reaches the server, which under
	// make test's load can take longer than typing two lines.
	require.Eventually(t, func() bool { return len(srv.Requests()) > 0 }, 10*time.Second, 10*time.Millisecond)
	require.Len(t, srv.Requests(), 1, "a queued message was sent while the turn ran")
	close(gate)

	s = p.waitText("Answer to THIRD QUESTION.")
	require.NotContains(t, s, "queued ❯")
	order := []string{"❯ first question", "Answer to FIRST QUESTION.", "❯ second question", "Answer to SECOND QUESTION.",
		"❯ third question", "Answer to THIRD QUESTION."}
	at := 0
	for _, want := range order {
		i := strings.Index(s[at:], want)
		require.GreaterOrEqual(t, i, 0, "%q is not after the text before it:\n%s", want, s)
		at += i + len(want)
	}
	var asked []string
	for _, r := range srv.Requests() {
		asked = append(asked, lastUser(t, r))
	}
	require.Equal(t, []string{"first question", "second question", "third question"}, asked)
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}

// TestTUIHabitsInTmux: a new session's Up recalls what was sent in the
// project's earlier sessions, and quitting prints how to resume.
func TestTUIHabitsInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	srv.Enqueue(openaitest.Text("Ran them again."))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.seedSession(2, 1)
	p := startTUI(t, sb)
	// What gencode prints after it gives the screen back is gone from the
	// pane once it dies: keep all it writes.
	out := filepath.Join(t.TempDir(), "out")
	p.cmd("pipe-pane", "-t", "e2e", "-o", "cat >>"+shellQuote(out))
	p.waitText("Message gencode")

	p.keys("Up")
	p.waitText("❯ Turn 2: run the tests of package p2.")
	p.keys("Up")
	p.waitText("❯ Turn 1: run the tests of package p1.")
	p.keys("Enter")
	p.waitText("Ran them again.")
	require.Equal(t, "Turn 1: run the tests of package p1.", lastUser(t, srv.Requests()[0]))
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())

	st, err := session.Open(context.Background(), filepath.Join(sb.env["XDG_DATA_HOME"], "gencode"))
	require.NoError(t, err)
	defer st.Close()
	list, err := st.Sessions(context.Background(), 0)
	require.NoError(t, err)
	require.Len(t, list, 2)
	want := "resume with: " + binary + " -r " + list[0].ID + "\r\n" // the binary as it was called
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if strings.HasSuffix(string(b), want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q after the TUI quit; its output ends with %q", want, b[max(len(b)-200, 0):])
		}
		time.Sleep(50 * time.Millisecond)
	}
}
