//go:build linux

package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// claudeFile is a Claude Code session file of about size bytes whose tool
// results are out bytes each: Bash calls that cd and remove, Edits.
func claudeFile(size, out int) []byte {
	var b bytes.Buffer
	text := strings.Repeat("line of tool output ", out/20+1)[:out]
	fmt.Fprintln(&b, `{"type":"user","cwd":"/w/p","sessionId":"s","uuid":"u0","timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"go"}}`)
	for i := 1; b.Len() < size; i++ {
		call := fmt.Sprintf(`{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"cd /w/p/sub%d && rm -f f%d.txt"}}`, i, i%7, i)
		if i%3 == 0 {
			call = fmt.Sprintf(`{"type":"tool_use","id":"t%d","name":"Edit","input":{"file_path":"/w/p/src/f%d.go","old_string":"a","new_string":"b"}}`, i, i%100)
		}
		fmt.Fprintf(&b, `{"type":"assistant","cwd":"/w/p","uuid":"a%d","timestamp":"2025-01-01T00:00:01Z","message":{"id":"m%d","role":"assistant","model":"claude-x","content":[{"type":"text","text":"Step %d."},%s]}}`+"\n", i, i, i, call)
		fmt.Fprintf(&b, `{"type":"user","cwd":"/w/p","uuid":"r%d","timestamp":"2025-01-01T00:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"%s"}]}}`+"\n", i, i, text)
	}
	return b.Bytes()
}

// BenchmarkImportNative10MB imports a 10 MB Claude Code session with the
// binary (detect, map, repair, directories, counting every message, the
// appends) and reports the CPU time of one import (goal: under 2 s).
// results-1600B is about 10k messages, results-30B about 80k.
func BenchmarkImportNative10MB(b *testing.B) {
	for _, out := range []int{1600, 30} {
		b.Run(fmt.Sprintf("results-%dB", out), func(b *testing.B) {
			home := b.TempDir()
			require.NoError(b, os.MkdirAll(filepath.Join(home, "project"), 0o755))
			file := filepath.Join(home, "session.jsonl")
			require.NoError(b, os.WriteFile(file, claudeFile(10<<20, out), 0o600))
			var cpu, wall time.Duration
			for b.Loop() {
				cmd := exec.Command(benchBinary(), "import", file)
				cmd.Dir = filepath.Join(home, "project")
				cmd.Env = []string{"HOME=" + home, "GENCODE_HOME=" + filepath.Join(home, "data"), "PATH=" + os.Getenv("PATH")}
				start := time.Now()
				res, err := cmd.CombinedOutput()
				wall += time.Since(start)
				require.NoError(b, err, "%s", res)
				ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
			b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s/import")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/import")
		})
	}
}
