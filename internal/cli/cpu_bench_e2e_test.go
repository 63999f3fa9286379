//go:build unix

package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// BenchmarkPrintTurnCPU runs the built binary as a user does and reports
// the CPU time (user + system, from the child's rusage) of a trivial
// print-mode turn in a new session against the fake server, of
// `gencode --help`, and their ratio (issue 11, goal 3: at most 5).
//
//	go test ./internal/cli -run '^$' -bench PrintTurnCPU -benchtime 20x
func BenchmarkPrintTurnCPU(b *testing.B) {
	srv := openaitest.NewServer(b, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		return openaitest.Text("ok")
	}))
	home := b.TempDir()
	work := filepath.Join(home, "project")
	require.NoError(b, os.MkdirAll(work, 0o755))
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"PATH=" + os.Getenv("PATH"),
		"OPENAI_BASE_URL=" + srv.URL(),
		"OPENAI_API_KEY=sk-test",
	}
	cpu := func(args ...string) time.Duration {
		cmd := exec.Command(binary, args...)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		require.NoError(b, err, "gencode %v: %s", args, out)
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		require.True(b, ok, "no rusage")
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	cpu("-p", "warm up") // creates the database: not part of a turn
	var help, turn time.Duration
	for b.Loop() {
		help += cpu("--help")
		turn += cpu("-p", "hi")
	}
	n := float64(b.N)
	b.ReportMetric(help.Seconds()*1000/n, "help-cpu-ms")
	b.ReportMetric(turn.Seconds()*1000/n, "turn-cpu-ms")
	b.ReportMetric(float64(turn)/float64(help), "turn/help")
}
