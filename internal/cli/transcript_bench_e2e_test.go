//go:build linux

package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/cli"
	"github.com/gencode/gencode/internal/session"
)

// The benchmarks of sessions as text (issue 11, goal 4). They run the
// built binary, or cli.Run in-process, on sessions of 1k and 100k messages
// made in the store directly (counted roughly: they are read, not sent).
//
//	go test ./internal/cli -run '^$' -bench 'HistoryPeakRSS|HistoryPlain|Import1MB' -benchtime 3x
//
// GENCODE_BENCH_BINARY=path/to/an/older/gencode measures that build
// instead.

// benchHome is a data directory holding one session of n messages that
// look like a coding session (~1.2 KB a message), and that session's id.
func benchHome(b *testing.B, n int) (home, id string) {
	b.Helper()
	home = b.TempDir()
	ctx := context.Background()
	st, err := session.Open(ctx, filepath.Join(home, "data"))
	require.NoError(b, err)
	defer st.Close()
	work := filepath.Join(home, "project")
	require.NoError(b, os.MkdirAll(work, 0o755))
	sess, err := st.CreateSession(ctx, work, "gpt-4o-mini")
	require.NoError(b, err)
	r := rand.New(rand.NewPCG(uint64(n), 7))
	words := strings.Fields("the session store append index query token count line path run build fix change add remove " +
		"update check func return error nil string int file test value type message summary tool result call")
	text := func(size int) string {
		var s strings.Builder
		for s.Len() < size {
			s.WriteString(words[r.IntN(len(words))])
			if r.IntN(10) == 0 {
				s.WriteString(".\n")
			} else {
				s.WriteByte(' ')
			}
		}
		return s.String()
	}
	var batch []session.Message
	for i := 0; i < n; i++ {
		var m session.Message
		switch i % 4 {
		case 0:
			m = session.Message{Role: session.RoleUser, Content: text(200)}
		case 1:
			args, _ := json.Marshal(map[string]string{"command": "go test ./internal/" + words[r.IntN(len(words))]})
			m = session.Message{Role: session.RoleAssistant, Content: text(150),
				ToolCalls: []session.ToolCall{{ID: fmt.Sprintf("call_%d", i), Name: "Bash", Arguments: string(args)}}}
		case 2:
			code := 0
			m = session.Message{Role: session.RoleTool, ToolCallID: fmt.Sprintf("call_%d", i-1), Name: "Bash", Content: text(3500),
				Meta: session.Meta{Tool: "Bash", Command: "go test", ExitCode: &code}}
		default:
			m = session.Message{Role: session.RoleAssistant, Content: text(900)}
		}
		m.Tokens = len(m.Content) / 4
		batch = append(batch, m)
		if len(batch) == 2000 || i == n-1 {
			_, err := st.Append(ctx, sess.ID, batch...)
			require.NoError(b, err)
			batch = batch[:0]
		}
	}
	return home, sess.ID
}

// runChild runs the binary with a data dir and returns its stdout size,
// wall time and peak RSS. GENCODE_BENCH_BINARY names another binary to
// measure (an older build, for a before and after).
func runChild(b *testing.B, home string, args ...string) (out int64, wall time.Duration, rssMB float64) {
	b.Helper()
	cmd := exec.Command(benchBinary(), args...)
	cmd.Dir = filepath.Join(home, "project")
	cmd.Env = []string{"HOME=" + home, "GENCODE_HOME=" + filepath.Join(home, "data"), "PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".state")}
	var errb bytes.Buffer
	cw := &countWriter{}
	cmd.Stdout, cmd.Stderr = cw, &errb
	start := time.Now()
	require.NoError(b, cmd.Run(), "gencode %v: %s", args, errb.String())
	wall = time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	require.True(b, ok, "no rusage")
	return cw.n, wall, float64(ru.Maxrss) / 1024 // Linux: KB
}

// benchBinary is the binary the benchmarks measure: the one built for the
// tests, or GENCODE_BENCH_BINARY.
func benchBinary() string {
	if other := os.Getenv("GENCODE_BENCH_BINARY"); other != "" {
		return other
	}
	return binary
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkHistoryPeakRSS reports the peak RSS of the gencode process
// printing a whole session with `history --full --json` and `export
// --format jsonl`, at 1k and 100k messages (goal: under 150 MB at 100k).
func BenchmarkHistoryPeakRSS(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		home, id := benchHome(b, n)
		for _, c := range []struct {
			name string
			args []string
		}{
			{"history-json", []string{"history", "--full", "--json", "--session", id}},
			{"export-jsonl", []string{"export", "--format", "jsonl", "--session", id}},
		} {
			b.Run(fmt.Sprintf("%s/messages=%d", c.name, n), func(b *testing.B) {
				var peak float64
				var out int64
				for b.Loop() {
					o, _, rss := runChild(b, home, c.args...)
					peak, out = max(peak, rss), o
				}
				b.ReportMetric(peak, "peak-RSS-MB")
				b.ReportMetric(float64(out)/(1<<20), "output-MB")
			})
		}
	}
}

// BenchmarkHistoryPlain runs plain `gencode history` (the last 10
// messages) in-process at 1k and 100k messages: its cost must not grow
// with the session (compare the two ns/op).
func BenchmarkHistoryPlain(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		home, id := benchHome(b, n)
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			env := cli.Env{Args: []string{"history", "--session", id}, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
				Getenv: func(k string) string {
					switch k {
					case "GENCODE_HOME":
						return filepath.Join(home, "data")
					case "HOME":
						return home
					}
					return ""
				},
				Getwd:      func() (string, error) { return filepath.Join(home, "project"), nil },
				IsTerminal: func() bool { return false }}
			for b.Loop() {
				require.Equal(b, cli.ExitOK, cli.Run(context.Background(), env))
			}
		})
	}
}

// BenchmarkImport1MB imports a 1 MB, 144-message session with the binary
// (the vocabulary load, parsing, counting every message, the appends)
// and reports the wall and CPU time of one import (goal: under 1 s).
func BenchmarkImport1MB(b *testing.B) {
	home := b.TempDir()
	require.NoError(b, os.MkdirAll(filepath.Join(home, "project"), 0o755))
	file := filepath.Join(home, "session.jsonl")
	require.NoError(b, os.WriteFile(file, importFile(144, 1<<20), 0o600))
	var cpu, wall time.Duration
	for b.Loop() {
		cmd := exec.Command(benchBinary(), "import", file)
		cmd.Dir = filepath.Join(home, "project")
		cmd.Env = []string{"HOME=" + home, "GENCODE_HOME=" + filepath.Join(home, "data"), "PATH=" + os.Getenv("PATH")}
		start := time.Now()
		out, err := cmd.CombinedOutput()
		wall += time.Since(start)
		require.NoError(b, err, "%s", out)
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s/import")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/import")
}

// importFile is a session of n messages and about size bytes: a request,
// then Read calls whose results are source files, and short answers.
func importFile(n, size int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	idents := strings.Fields("ctx err sess store msgs tokens count view policy summary window append load render " +
		"request response stream delta call result tool name args path file line seq meta cfg opts")
	code := func(bytes int) string {
		var s strings.Builder
		for s.Len() < bytes {
			a, c := idents[r.IntN(len(idents))], idents[r.IntN(len(idents))]
			switch r.IntN(4) {
			case 0:
				fmt.Fprintf(&s, "func (s *%s) %s(ctx context.Context) error {\n", strings.ToUpper(a[:1])+a[1:], c)
			case 1:
				fmt.Fprintf(&s, "\tif %s, err := %s.%s(ctx, %d); err != nil {\n\t\treturn fmt.Errorf(\"%s %%s: %%w\", %s, err)\n\t}\n", a, c, a, r.IntN(1000), c, a)
			case 2:
				fmt.Fprintf(&s, "\t// %s the %s before the %s is %s.\n", a, c, a, c)
			default:
				fmt.Fprintf(&s, "\t%s := %s[%d:]\n}\n\n", a, c, r.IntN(64))
			}
		}
		return s.String()
	}
	var lines []string
	add := func(v any) {
		b, _ := json.Marshal(v)
		lines = append(lines, string(b))
	}
	add(map[string]any{"role": "user", "content": "Review the session store and fix the bug in the view policy."})
	results := (n - 1) / 3
	for i := 0; len(lines) < n; i++ {
		id := fmt.Sprintf("call_%d", i)
		args, _ := json.Marshal(map[string]string{"file_path": fmt.Sprintf("internal/pkg%d/file.go", i)})
		add(map[string]any{"role": "assistant", "content": "Reading the next file.", "tool_calls": []any{
			map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "Read", "arguments": string(args)}}}})
		add(map[string]any{"role": "tool", "tool_call_id": id, "content": code(size / results)})
		add(map[string]any{"role": "assistant", "content": "Nothing wrong in this one; the handlers check their errors."})
	}
	return []byte(strings.Join(lines[:n], "\n") + "\n")
}
