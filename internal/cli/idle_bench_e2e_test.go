//go:build linux

package cli_test

import (
	"encoding/json"
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
	pid := startPane(b, tmux, bin, url, b.TempDir(), "summarizer")
	time.Sleep(3 * time.Second) // the first frame's follow-ups (the context figure, the prompts) settle
	before := threadsCPU(b, pid)
	time.Sleep(idle)
	after := threadsCPU(b, pid)
	return float64(after-before) / float64(time.Millisecond) / idle.Seconds()
}

// startPane runs bin's TUI (with args) in a 120x40 tmux pane with home as
// its home, the endpoint at url, waits for its screen to show want, and
// returns its pid; the pane is killed when b ends.
func startPane(b *testing.B, tmux, bin, url, home, want string, args ...string) string {
	b.Helper()
	work := filepath.Join(home, "project")
	require.NoError(b, os.MkdirAll(work, 0o755))
	socket := fmt.Sprintf("gencode-bench-%d-%d", os.Getpid(), tmuxSeq.Add(1))
	var script strings.Builder
	script.WriteString("cd " + shellQuote(work) + " && exec env -i")
	for _, e := range benchEnv(home, url) {
		script.WriteString(" " + shellQuote(e))
	}
	script.WriteString(" TERM=tmux-256color " + shellQuote(bin))
	for _, a := range args {
		script.WriteString(" " + shellQuote(a))
	}
	tm := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-L", socket}, args...)...).CombinedOutput()
		require.NoError(b, err, "tmux %v: %s", args, out)
		return string(out)
	}
	tm("new-session", "-d", "-x", "120", "-y", "40", "-s", "bench", script.String())
	b.Cleanup(func() { _ = exec.Command(tmux, "-L", socket, "kill-server").Run() })
	pid := strings.TrimSpace(tm("display-message", "-p", "-t", "bench", "#{pane_pid}"))
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(tm("capture-pane", "-p", "-t", "bench"), want) {
		require.True(b, time.Now().Before(deadline), "%q not on the screen in 60 s", want)
		time.Sleep(50 * time.Millisecond)
	}
	return pid
}

// benchEnv is the environment gencode runs in for these benchmarks.
func benchEnv(home, url string) []string {
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"OPENAI_BASE_URL=" + url, "OPENAI_API_KEY=sk-test", "GENCODE_THEME=dark"}
}

// BenchmarkBigMessageTUIRSS is the TUI's peak RSS (VmHWM) showing a
// session whose request or answer is 1 MB or 10 MB of text (imported with
// the binary), measured 3 s after its first frame (the context figure and
// Up's history loaded meanwhile); issue 30 section 1: at most 80 MB at
// 10 MB. GENCODE_BASELINE_BIN measures another build in the same run:
//
//	GENCODE_BASELINE_BIN=/tmp/gencode-before go test ./internal/cli -run '^$' -bench BigMessageTUIRSS -benchtime 1x
func BenchmarkBigMessageTUIRSS(b *testing.B) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		b.Skip("tmux is not installed")
	}
	bins := [][2]string{{"this", binary}}
	if base := os.Getenv("GENCODE_BASELINE_BIN"); base != "" {
		bins = append(bins, [2]string{"baseline", base})
	}
	srv := openaitest.NewServer(b, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		return openaitest.Text("ok")
	}))
	files := b.TempDir()
	line := strings.Repeat("0123456789abcdef ", 7) + "\n"
	for _, bin := range bins {
		for _, who := range []string{"user", "assistant"} {
			for _, mb := range []int{1, 10} {
				big := strings.Repeat(line, (mb<<20)/len(line))
				msgs := []map[string]string{{"role": "user", "content": big}, {"role": "assistant", "content": "ok, read it"}}
				if who == "assistant" {
					msgs = []map[string]string{{"role": "user", "content": "print it"}, {"role": "assistant", "content": big}}
				}
				var jsonl []byte
				for _, m := range msgs {
					l, err := json.Marshal(m)
					require.NoError(b, err)
					jsonl = append(append(jsonl, l...), '\n')
				}
				file := filepath.Join(files, fmt.Sprintf("%s-%d.jsonl", who, mb))
				require.NoError(b, os.WriteFile(file, jsonl, 0o600))
				b.Run(fmt.Sprintf("%s/%s/%dMB", bin[0], who, mb), func(b *testing.B) {
					var peak float64
					for b.Loop() {
						home := b.TempDir()
						cmd := exec.Command(bin[1], "import", file)
						cmd.Dir, cmd.Env = home, append(benchEnv(home, srv.URL()), "PATH="+os.Getenv("PATH"))
						var stderr strings.Builder
						cmd.Stderr = &stderr
						out, err := cmd.Output()
						require.NoError(b, err, "import: %s", stderr.String())
						outs := strings.TrimSpace(string(out))
						id := outs[strings.LastIndexByte(outs, '\n')+1:]
						pid := startPane(b, tmux, bin[1], srv.URL(), home, "0123456789abcdef", "-r", id)
						time.Sleep(3 * time.Second)
						peak = max(peak, vmHWM(b, pid))
					}
					b.ReportMetric(peak, "peak-RSS-MB")
				})
			}
		}
	}
}

// vmHWM is pid's peak resident set, in MB.
func vmHWM(b *testing.B, pid string) float64 {
	b.Helper()
	raw, err := os.ReadFile("/proc/" + pid + "/status")
	require.NoError(b, err)
	for _, l := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, err := strconv.Atoi(f[1])
			require.NoError(b, err)
			return float64(kb) / 1024
		}
	}
	b.Fatalf("no VmHWM for %s", pid)
	return 0
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
