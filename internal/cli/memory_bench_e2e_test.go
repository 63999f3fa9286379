//go:build linux

package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// BenchmarkMemory measures the paths that read a whole session (issue 30,
// section 1): the peak RSS and the CPU time of the built binary on a
// session of 10k and of 100k messages (~1.2 KB each, never summarized),
// and the 100k/10k ratio of each path's CPU (goal: at most 10).
//
//	go test ./internal/cli -run '^$' -bench Memory -benchtime 1x -timeout 60m
//
// GENCODE_BENCH_BINARY=path/to/an/older/gencode measures that build
// instead; -bench 'Memory/first-turn' runs one path.
func BenchmarkMemory(b *testing.B) {
	var srvURL string // the fake server of the running sub-benchmark
	type path struct {
		name string
		// run runs the path once on a fresh copy of the session's home
		// and returns the child's rusage.
		run func(b *testing.B, home, id, export string) *syscall.Rusage
	}
	var floor float64   // the benchmark's own RSS when it started a child
	var stdout *os.File // where the child's stdout goes when not nil
	child := func(b *testing.B, home string, args ...string) (*syscall.Rusage, string) {
		cmd := exec.Command(benchBinary(), args...)
		cmd.Dir = filepath.Join(home, "project")
		cmd.Env = []string{"HOME=" + home, "GENCODE_HOME=" + filepath.Join(home, "data"), "PATH=" + os.Getenv("PATH"),
			"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".state"),
			"OPENAI_BASE_URL=" + srvURL, "OPENAI_API_KEY=sk-test", "GENCODE_SUMMARY_MODEL=" + summaryModel}
		var out headWriter // the output's head: an id, not a whole history
		var errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if stdout != nil {
			cmd.Stdout = stdout
		}
		floor = max(floor, lowerPeakRSS(b))
		require.NoError(b, cmd.Run(), "gencode %v: %s", args, errb.String())
		return cmd.ProcessState.SysUsage().(*syscall.Rusage), out.b.String()
	}
	paths := []path{
		{"first-turn", func(b *testing.B, home, id, _ string) *syscall.Rusage {
			ru, _ := child(b, home, "-r", id, "-p", "hi")
			return ru
		}},
		{"summarize", func(b *testing.B, home, id, _ string) *syscall.Rusage {
			ru, _ := child(b, home, "summarize", "--session", id)
			return ru
		}},
		{"history-full", func(b *testing.B, home, id, _ string) *syscall.Rusage {
			ru, _ := child(b, home, "history", "--full", "--session", id)
			return ru
		}},
		{"history-json", func(b *testing.B, home, id, _ string) *syscall.Rusage {
			ru, _ := child(b, home, "history", "--json", "--session", id)
			return ru
		}},
		{"import", func(b *testing.B, home, _, export string) *syscall.Rusage {
			ru, _ := child(b, home, "import", export)
			return ru
		}},
		{"turn-after-import", func(b *testing.B, home, _, export string) *syscall.Rusage {
			_, out := child(b, home, "import", export)
			ru, _ := child(b, home, "-r", strings.TrimSpace(out), "-p", "hi")
			return ru
		}},
	}
	cpu := map[string]map[int]float64{}
	for _, n := range []int{10_000, 100_000} {
		// The session and its export are made for the first path run at
		// this size (-bench may select none).
		var home, id, export string
		// They live in the benchmark's directories, not a path's.
		outer := b
		setup := func() {
			if home != "" {
				return
			}
			home, id = benchHome(outer, n)
			export = filepath.Join(outer.TempDir(), "session.jsonl")
			f, err := os.Create(export)
			require.NoError(outer, err)
			stdout = f
			_, _ = child(outer, home, "export", "--format", "jsonl", "--session", id)
			stdout = nil
			require.NoError(outer, f.Close())
		}
		for _, p := range paths {
			b.Run(fmt.Sprintf("%s/messages=%d", p.name, n), func(b *testing.B) {
				setup()
				// A server per path: what it records is dropped with it.
				srvURL = openaitest.NewServer(b, openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
					if isSummarizer(r) {
						return summarize(r)
					}
					return openaitest.Text("ok")
				})).URL()
				var peak float64
				floor = 0
				var spent time.Duration
				for b.Loop() {
					b.StopTimer()
					fresh := filepath.Join(b.TempDir(), "home")
					require.NoError(b, exec.Command("cp", "-a", home, fresh).Run())
					b.StartTimer()
					ru := p.run(b, fresh, id, export)
					peak = max(peak, float64(ru.Maxrss)/1024) // Linux: KB
					spent += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
				}
				b.ReportMetric(peak, "peak-RSS-MB")
				// A child's peak is at least this (see lowerPeakRSS).
				b.ReportMetric(floor, "floor-RSS-MB")
				b.ReportMetric(spent.Seconds()/float64(b.N), "cpu-s")
				if cpu[p.name] == nil {
					cpu[p.name] = map[int]float64{}
				}
				cpu[p.name][n] = spent.Seconds() / float64(b.N)
				if small := cpu[p.name][10_000]; n == 100_000 && small > 0 {
					b.ReportMetric(cpu[p.name][n]/small, "cpu-100k/10k")
				}
			})
		}
	}
}

// lowerPeakRSS brings this process's peak RSS down to what it holds now,
// little, before it starts a child: a child starts in its parent's memory
// (os/exec clones with CLONE_VM and then execs), and Linux counts the
// parent's peak RSS until then in the child's ru_maxrss.
func lowerPeakRSS(b *testing.B) (rssMB float64) {
	b.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	// 5: reset the peak RSS ("VmHWM") to the current RSS (Linux 4.0).
	require.NoError(b, os.WriteFile("/proc/self/clear_refs", []byte("5"), 0))
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(b, err)
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, err := strconv.Atoi(f[1])
			require.NoError(b, err)
			return float64(kb) / 1024
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// headWriter keeps the first 4 KB written to it.
type headWriter struct{ b bytes.Buffer }

func (w *headWriter) Write(p []byte) (int, error) {
	if room := 4<<10 - w.b.Len(); room > 0 {
		w.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
