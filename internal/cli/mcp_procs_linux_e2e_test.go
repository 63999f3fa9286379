//go:build linux

package cli_test

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// kill -9 of gencode while an MCP call hangs leaves no server process,
// also one that would stay when its stdin closes (-linger).
func TestKilledGencodeLeavesNoMCPServer(t *testing.T) {
	t.Parallel()
	bin := buildMCPServer(t)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	pidFile := filepath.Join(sb.home, "server.pid")
	sb.writeConfig(fmt.Sprintf("[mcp.t]\ncommand = %q\nargs = [\"-linger\", \"-pidfile\", %q]\n", bin, pidFile))
	killMidMCPCall(t, sb, srv, pidFile, "the MCP server")
}

// killMidMCPCall starts gencode on a turn that calls the server's slow
// tool, kills it with SIGKILL while the call is under way, and requires
// the server whose pid is in pidFile (what) to be gone soon after.
func killMidMCPCall(t *testing.T, sb *sandbox, srv *openaitest.Server, pidFile, what string) {
	t.Helper()
	srv.Enqueue(openaitest.Calls(openaitest.ToolCall{ID: "h", Name: "mcp__t__slow", Arguments: `{"ms":0}`}))
	cmd := sb.command(context.Background(), "-p", "hang", "--allow", "mcp__t")
	// gencode leads a group of its own, so that what it started besides
	// the server (a checkpoint's git) can be ended before the sandbox is
	// removed: a killed gencode's git still writing there failed the
	// cleanup. The kill under test is gencode's alone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	pid := readPid(t, pidFile)
	require.Eventually(t, func() bool { return len(srv.Requests()) >= 1 }, 30*time.Second, 20*time.Millisecond)
	time.Sleep(300 * time.Millisecond) // the call is under way
	require.False(t, gone(pid), "the server runs")

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.Eventually(t, func() bool { return gone(pid) }, 20*time.Second, 20*time.Millisecond, // soon, on a loaded machine too
		"%s (pid %d) outlived gencode", what, pid)
	group := cmd.Process.Pid
	_ = syscall.Kill(-group, syscall.SIGKILL)
	require.Eventually(t, func() bool { return groupGone(group) }, 20*time.Second, 20*time.Millisecond,
		"gencode's other children outlived it")
}

// A stdio server behind a wrapper (npx, uvx: a child that does the work)
// leaves nothing running, whether gencode ends normally or gets kill -9:
// the server leads its own process group, which a watcher process kills
// when gencode dies, and which gencode reaps when the session ends.
func TestMCPServerGrandchildrenDieWithGencode(t *testing.T) {
	t.Parallel()
	bin := buildMCPServer(t)
	tests := []struct {
		name string
		kill bool
	}{
		{"gencode ends", false},
		{"gencode gets kill -9", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithMessageRules())
			sb := newSandbox(t)
			sb.useServer(srv)
			pidFile := filepath.Join(sb.home, "server.pid")
			// sh forks the server (the command is not its last), which
			// stays alive when its stdin closes: gencode's grandchild.
			script := fmt.Sprintf("%q -linger -pidfile %q; :", bin, pidFile)
			sb.writeConfig(fmt.Sprintf("[mcp.t]\ncommand = \"sh\"\nargs = [\"-c\", %q]\n", script))
			if !tt.kill {
				srv.Enqueue(openaitest.Calls(openaitest.ToolCall{ID: "e", Name: "mcp__t__echo", Arguments: `{"text":"wrapped"}`}), openaitest.Text("Done."))
				res := sb.run("-p", "echo", "--allow", "mcp__t")
				require.Equal(t, 0, res.code, res.stderr)
				require.Equal(t, "echo: wrapped", toolResults(srv)["e"])
				pid := readPid(t, pidFile)
				require.Eventually(t, func() bool { return gone(pid) }, 20*time.Second, 20*time.Millisecond, // soon, on a loaded machine too
					"the wrapped server (pid %d) outlived gencode", pid)
				return
			}
			killMidMCPCall(t, sb, srv, pidFile, "the wrapped server")
		})
	}
}
