//go:build linux

package cli_test

import (
	"fmt"
	"os/exec"
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
	srv.Enqueue(openaitest.Calls(openaitest.ToolCall{ID: "h", Name: "mcp__t__slow", Arguments: `{"ms":0}`}))
	cmd := exec.Command(binary, "-p", "hang", "--allow", "mcp__t")
	cmd.Dir = sb.work
	for k, v := range sb.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	pid := readPid(t, pidFile)
	require.Eventually(t, func() bool { return len(srv.Requests()) >= 1 }, 30*time.Second, 20*time.Millisecond)
	time.Sleep(300 * time.Millisecond) // the call is under way
	require.False(t, gone(pid), "the server runs")

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 20*time.Millisecond,
		"the MCP server (pid %d) outlived gencode", pid)
}
