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
	llsandbox "github.com/gencode/gencode/internal/sandbox"
)

// BenchmarkPrintTurnCPU runs the built binary as a user does and reports
// the CPU time (user + system, from the child's rusage) of a trivial
// print-mode turn in a new session against the fake server, of
// `gencode --help`, of the sandbox helper's start (`gencode
// __sandbox-exec` refusing a call without its arguments: the cost every
// sandboxed Bash command pays before its shell starts), and the turn's
// ratio to --help (issue 11, goal 3: at most 5; issue 30: at most 1.3).
//
// GENCODE_BASE_BIN=PATH runs another build (say main's) alongside, each
// of its runs next to the same run of this one, and reports this build's
// CPU over that one's for each command: before/after in one run.
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
	cpu := func(bin string, wantCode int, args ...string) time.Duration {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		if wantCode == 0 {
			require.NoError(b, err, "gencode %v: %s", args, out)
		} else {
			require.Equal(b, wantCode, cmd.ProcessState.ExitCode(), "gencode %v: %s", args, out)
		}
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		require.True(b, ok, "no rusage")
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	type runs struct{ help, turn, helper time.Duration }
	measure := func(bin string, r *runs) {
		r.help += cpu(bin, 0, "--help")
		r.turn += cpu(bin, 0, "-p", "hi")
		r.helper += cpu(bin, 126, llsandbox.HelperArg)
	}
	base := os.Getenv("GENCODE_BASE_BIN")
	cpu(binary, 0, "-p", "warm up") // creates the database: not part of a turn
	if base != "" {
		cpu(base, 0, "-p", "warm up")
	}
	var this, before runs
	for b.Loop() {
		measure(binary, &this)
		if base != "" {
			measure(base, &before)
		}
	}
	n := float64(b.N)
	b.ReportMetric(this.help.Seconds()*1000/n, "help-cpu-ms")
	b.ReportMetric(this.turn.Seconds()*1000/n, "turn-cpu-ms")
	b.ReportMetric(this.helper.Seconds()*1000/n, "helper-cpu-ms")
	b.ReportMetric(float64(this.turn)/float64(this.help), "turn/help")
	if base != "" {
		b.ReportMetric(before.help.Seconds()*1000/n, "base-help-cpu-ms")
		b.ReportMetric(before.turn.Seconds()*1000/n, "base-turn-cpu-ms")
		b.ReportMetric(float64(before.turn)/float64(before.help), "base-turn/help")
		b.ReportMetric(float64(this.help)/float64(before.help), "help/base")
		b.ReportMetric(float64(this.turn)/float64(before.turn), "turn/base")
		b.ReportMetric(float64(this.helper)/float64(before.helper), "helper/base")
	}
}
