package cli_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// oscBackgroundQuery is the colour query a terminal that never answers
// would make gencode wait for.
const oscBackgroundQuery = "\x1b]11;?"

// ptyRun is one run of the binary under script(1): on a pseudo-terminal
// that relays the output and never answers a query, as ssh without a
// terminal, CI ptys and expect do.
type ptyRun struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	start time.Time

	mu      sync.Mutex
	out     bytes.Buffer
	queryAt time.Duration // when the colour query was written; 0: not yet
}

func needScript(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("script")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("script(1) is needed for the terminal tests in CI: %v", err)
		}
		t.Skip("script(1) is not installed")
	}
	return p
}

// startPty runs shell (a command line; the binary is "$GENCODE") in the
// sandbox's working directory on a pty, with TERM=xterm-256color.
func startPty(t *testing.T, sb *sandbox, shell string) *ptyRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, needScript(t), "-qefc", shell, "/dev/null")
	cmd.Dir = sb.work
	keys := make([]string, 0, len(sb.env))
	for k := range sb.env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+sb.env[k])
	}
	cmd.Env = append(cmd.Env, "TERM=xterm-256color", "GENCODE="+binary)
	r := &ptyRun{t: t, cmd: cmd}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	r.stdin = stdin
	cmd.Stdout, cmd.Stderr = r, r
	r.start = time.Now()
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return r
}

func (r *ptyRun) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, err := r.out.Write(p)
	if r.queryAt == 0 && bytes.Contains(r.out.Bytes(), []byte(oscBackgroundQuery)) {
		r.queryAt = time.Since(r.start)
	}
	return n, err
}

func (r *ptyRun) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

// wait waits for the run to end and returns how long it took.
func (r *ptyRun) wait() time.Duration {
	r.t.Helper()
	err := r.cmd.Wait()
	took := time.Since(r.start)
	require.NoError(r.t, err, "output:\n%q", r.output())
	return took
}

// waitFor waits until cond holds for the output without its styles.
func (r *ptyRun) waitFor(what string, cond func(out string) bool) {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond(ansi.Strip(r.output())) {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %s; output:\n%q", what, r.output())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitText waits until the output, without its styles, shows text and returns the time since
// the start.
func (r *ptyRun) waitText(text string) time.Duration {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(ansi.Strip(r.output()), text) {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %q; output:\n%q", text, r.output())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(r.start)
}

// TestNoTerminalQueryStall: on a terminal that never answers, gencode
// never waits for it. Bubble Tea v1's init asked for the background on
// every run and waited up to 5 s; the picker's default styles asked again
// while the TUI owned stdin. Now --help, --version and every report ask
// nothing (they draw for the theme setting, COLORFGBG, else a dark
// background), and the TUI asks once, through Bubble Tea, without waiting
// for the answer: it draws its first frame, /model and /resume without a
// wait. Each is bound by 1.5 s past what --version takes on the machine
// at that moment (the same start, nothing drawn), under the shortest wait
// a terminal query adds (2 s), so a loaded machine does not fail the test
// and a wait on the terminal does.
func TestNoTerminalQueryStall(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithModels("gpt-4o-mini", "llama3.2"))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.seedSession(3, 2)
	// A wait on the terminal is at least lipgloss v2's query timeout (2 s;
	// Bubble Tea v1's was 5 s): a bound 1.5 s past a run that draws nothing
	// fails on any of them, and a loaded machine's slower start does not
	// fail it (0.5 s did, at a load average of 15-30).
	const draw = 1500 * time.Millisecond

	// What a run costs here and now without drawing anything.
	base := startPty(t, sb, `"$GENCODE" --version`)
	baseline := base.wait()
	require.Contains(t, base.output(), "gencode")
	t.Logf("--version on a pty that never answers: %s", baseline.Round(time.Millisecond))

	tests := []struct {
		name  string
		shell string
		want  string
	}{
		{"help", `"$GENCODE" --help`, "gencode is a terminal coding agent"},
		{"history", `"$GENCODE" history`, "The tests of p3 pass."},
		{"history --full", `"$GENCODE" history --full`, "The tests of p3 pass."},
		{"history --full piped", `"$GENCODE" history --full | cat`, "The tests of p3 pass."},
		{"history --json", `"$GENCODE" history --json`, `"role"`},
		{"sessions", `"$GENCODE" sessions`, "MESSAGES"},
		{"export", `"$GENCODE" export`, "The tests of p3 pass."},
		{"summarize", `"$GENCODE" summarize`, "files"},
		{"theme set", `GENCODE_THEME=light "$GENCODE" history --full`, "The tests of p3 pass."},
		{"mcp list", `"$GENCODE" mcp list`, "MCP servers"},
		{"hooks", `"$GENCODE" hooks`, "hooks"},
	}
	// summarize's one model request (the others ask the model nothing).
	srv.Enqueue(openaitest.Text("## Goal\nShip p3.\n## Key decisions\n- keep the log\n## Topics\n- tests"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startPty(t, sb, tt.shell)
			took := r.wait()
			out := r.output()
			t.Logf("%s on a pty that never answers: %s", tt.name, took.Round(time.Millisecond))
			require.Contains(t, ansi.Strip(out), tt.want)
			require.Zero(t, strings.Count(out, oscBackgroundQuery), "colour queries; output:\n%q", out)
			require.Less(t, took, baseline+draw, "drawn more than %s after a run that draws nothing (%s)", draw, baseline)
		})
	}

	// The TUI asks once, through Bubble Tea, and never waits for the
	// answer: its first frame, /model's list and /resume's each come
	// without a wait (draw). It quits on Ctrl+C twice.
	r := startPty(t, sb, `stty cols 100 rows 30 && exec "$GENCODE"`)
	first := r.waitText("Message gencode")
	// The query goes out beside the first frame, not necessarily before it.
	var asked time.Duration
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		asked = r.queryAt
		return asked != 0
	}, 30*time.Second, 5*time.Millisecond, "the TUI did not ask for the background")
	t.Logf("TUI on a pty that never answers: asked at %s, first frame %s", asked.Round(time.Millisecond), first.Round(time.Millisecond))
	require.Less(t, first, baseline+draw, "first frame more than %s after a run that draws nothing (%s)", draw, baseline)
	for _, pick := range []struct{ line, title string }{{"/model", "Switch the model"}, {"/resume", "Resume a session"}} {
		sent := time.Since(r.start)
		_, err := r.stdin.Write([]byte(pick.line + "\r"))
		require.NoError(t, err)
		shown := r.waitText(pick.title) - sent
		t.Logf("%s drawn %s after Enter", pick.line, shown.Round(time.Millisecond))
		require.Less(t, shown, draw, "%s drawn too late", pick.line)
		_, err = r.stdin.Write([]byte{0x1b}) // Esc closes the list
		require.NoError(t, err)
		r.waitFor(pick.title+" closed", func(out string) bool {
			return strings.LastIndex(out, "Message gencode") > strings.LastIndex(out, pick.title)
		})
	}
	_, err := r.stdin.Write([]byte{3})
	require.NoError(t, err)
	r.waitText("ctrl+c again to quit")
	_, err = r.stdin.Write([]byte{3})
	require.NoError(t, err)
	r.wait()
	require.Equal(t, 1, strings.Count(r.output(), oscBackgroundQuery), "colour queries")
}
