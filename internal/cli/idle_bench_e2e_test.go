//go:build linux

package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// BenchmarkIdleTUICPU runs the built binary's TUI in a tmux pane, lets it
// draw its first frame and settle, then reports the CPU it uses while
// nothing happens (user + system of all its threads, from
// /proc/PID/task/*/schedstat), in milliseconds per second of idling
// (issue 30 section 3: at most 1). GENCODE_IDLE_SECONDS sets how long it
// idles (default 20); GENCODE_BASELINE_BIN names another build to
// measure in the same run (the one before a change):
//
//	GENCODE_BASELINE_BIN=/tmp/gencode-before go test ./internal/cli -run '^$' -bench IdleTUICPU -benchtime 1x
func BenchmarkIdleTUICPU(b *testing.B) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		b.Skip("tmux is not installed")
	}
	idle := 20 * time.Second
	if s, err := strconv.Atoi(os.Getenv("GENCODE_IDLE_SECONDS")); err == nil && s > 0 {
		idle = time.Duration(s) * time.Second
	}
	bins := [][2]string{{"this", binary}}
	if base := os.Getenv("GENCODE_BASELINE_BIN"); base != "" {
		bins = append(bins, [2]string{"baseline", base})
	}
	srv := openaitest.NewServer(b, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		return openaitest.Text("ok")
	}))
	for _, bin := range bins {
		b.Run(bin[0], func(b *testing.B) {
			var total float64
			for b.Loop() {
				total += idleCPU(b, tmux, bin[1], srv.URL(), idle)
			}
			b.ReportMetric(total/float64(b.N), "idle-cpu-ms/s")
		})
	}
}

// idleCPU is the CPU, in ms per second, that bin's TUI uses over idle
// once its first frame is drawn.
func idleCPU(b *testing.B, tmux, bin, url string, idle time.Duration) float64 {
	b.Helper()
	home := b.TempDir()
	work := filepath.Join(home, "project")
	require.NoError(b, os.MkdirAll(work, 0o755))
	socket := fmt.Sprintf("gencode-idle-%d-%d", os.Getpid(), tmuxSeq.Add(1))
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"OPENAI_BASE_URL=" + url, "OPENAI_API_KEY=sk-test", "GENCODE_THEME=dark", "TERM=tmux-256color"}
	var script strings.Builder
	script.WriteString("cd " + shellQuote(work) + " && exec env -i")
	for _, e := range env {
		script.WriteString(" " + shellQuote(e))
	}
	script.WriteString(" " + shellQuote(bin))
	tm := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-L", socket}, args...)...).CombinedOutput()
		require.NoError(b, err, "tmux %v: %s", args, out)
		return string(out)
	}
	tm("new-session", "-d", "-x", "120", "-y", "40", "-s", "idle", script.String())
	defer func() { _ = exec.Command(tmux, "-L", socket, "kill-server").Run() }()
	pid := strings.TrimSpace(tm("display-message", "-p", "-t", "idle", "#{pane_pid}"))
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(tm("capture-pane", "-p", "-t", "idle"), "summarizer") {
		require.True(b, time.Now().Before(deadline), "no first frame in 30 s")
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // the first frame's follow-ups (the context figure, the prompts) settle
	before := threadsCPU(b, pid)
	time.Sleep(idle)
	after := threadsCPU(b, pid)
	return float64(after-before) / float64(time.Millisecond) / idle.Seconds()
}

// threadsCPU is the time pid's threads have run, from their schedstat
// (nanoseconds, unlike /proc/PID/stat's 10 ms ticks).
func threadsCPU(b *testing.B, pid string) time.Duration {
	b.Helper()
	tasks, err := filepath.Glob("/proc/" + pid + "/task/*/schedstat")
	require.NoError(b, err)
	require.NotEmpty(b, tasks, "no process %s", pid)
	var ns int64
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended meanwhile
		}
		f := strings.Fields(string(raw))
		require.NotEmpty(b, f)
		n, err := strconv.ParseInt(f[0], 10, 64)
		require.NoError(b, err)
		ns += n
	}
	return time.Duration(ns)
}
