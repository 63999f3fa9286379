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

// TestNoTerminalQueryStall: on a terminal that never answers, gencode does
// not wait 5 s for a colour query (Bubble Tea v1's init asked on every
// run; the renderer asked again): --help and non-drawing output ask
// nothing, a report drawn on the terminal and the TUI ask once, briefly.
// What is asserted is the stall itself, not the speed of the run: a run
// that asks nothing cannot wait for an answer, and a run that asks must
// not wait after asking for anything near the 5 s a stall took. The
// bound leaves room for a loaded CI machine (a whole run took 2 s there);
// the times measured are logged.
func TestNoTerminalQueryStall(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.seedSession(3, 2)
	const bound = 3 * time.Second // a stall is 5 s
	tests := []struct {
		name    string
		shell   string
		queries int
		want    string
	}{
		{"help", `"$GENCODE" --help`, 0, "gencode is a terminal coding agent"},
		{"history --full", `"$GENCODE" history --full`, 1, "The tests of p3 pass."},
		{"history --full piped", `"$GENCODE" history --full | cat`, 0, "The tests of p3 pass."},
		{"history --json", `"$GENCODE" history --json`, 0, `"role"`},
		{"export", `"$GENCODE" export`, 0, "The tests of p3 pass."},
		{"theme set", `GENCODE_THEME=light "$GENCODE" history --full`, 0, "The tests of p3 pass."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startPty(t, sb, tt.shell)
			took := r.wait()
			out := r.output()
			t.Logf("%s on a pty that never answers: %s", tt.name, took.Round(time.Millisecond))
			require.Contains(t, out, tt.want)
			require.Equal(t, tt.queries, strings.Count(out, oscBackgroundQuery), "colour queries; output:\n%q", out)
			if tt.queries > 0 {
				r.mu.Lock()
				asked := r.queryAt
				r.mu.Unlock()
				t.Logf("asked at %s, ended %s after asking", asked.Round(time.Millisecond), (took - asked).Round(time.Millisecond))
				require.Less(t, took-asked, bound, "ended too long after the colour query")
			}
		})
	}

	// The TUI asks once and draws its first frame without the stall,
	// and quits on Ctrl+C twice. What it does before asking (building the
	// agent, loading the tokenizer) is not what this test is about: the
	// stall asserted is from the query to the first frame.
	r := startPty(t, sb, `stty cols 100 rows 30 && exec "$GENCODE" -c`)
	first := r.waitText("Message gencode")
	loaded := r.waitText("FACT-BLUEFALCON")
	r.mu.Lock()
	asked := r.queryAt
	r.mu.Unlock()
	require.NotZero(t, asked, "the TUI did not ask for the background")
	t.Logf("TUI on a pty that never answers: asked at %s, first frame %s (%s after asking), history shown %s",
		asked.Round(time.Millisecond), first.Round(time.Millisecond), (first - asked).Round(time.Millisecond),
		loaded.Round(time.Millisecond))
	_, err := r.stdin.Write([]byte{3})
	require.NoError(t, err)
	r.waitText("ctrl+c again to quit")
	_, err = r.stdin.Write([]byte{3})
	require.NoError(t, err)
	r.wait()
	require.Equal(t, 1, strings.Count(r.output(), oscBackgroundQuery), "colour queries")
	require.Less(t, first-asked, bound)
}
