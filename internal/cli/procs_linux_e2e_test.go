//go:build linux

package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// gone reports whether pid has exited (a zombie has: it waits to be reaped).
func gone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && (s[i+2] == 'Z' || s[i+2] == 'X')
}

// groupGone reports whether no process of process group pgrp runs. A
// zombie counts as gone (as in gone): a killed process's orphans go to
// PID 1, which does not reap them on every machine (this one's does not),
// and kill(-pgrp, 0) still finds a zombie.
func groupGone(pgrp int) bool {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		// after the name: state, ppid, pgrp
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[2] != strconv.Itoa(pgrp) {
			continue
		}
		if !gone(pid) {
			return false
		}
	}
	return true
}

// readPid waits for a command to write its pid to path.
func readPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 60*time.Second, 20*time.Millisecond, "%s was not written", path)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// kill -9 of gencode while Bash runs leaves nothing of the command
// running: neither the job in the shell's group nor a daemon that left it.
func TestKilledGencodeLeavesNoCommandRunning(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t).withRace()
	sb.useServer(srv)
	srv.Enqueue(openaitest.Calls(openaitest.ToolCall{ID: "b", Name: "Bash", Arguments: args(t, map[string]any{
		"command": "setsid sleep 301 > /dev/null 2>&1 < /dev/null & echo $! > daemon.pid\n" +
			"sleep 300 & echo $! > sleep.pid\nwait",
	})}))
	cmd := sb.command(context.Background(), "-p", "run it", "--allow", "Bash")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	daemon := readPid(t, filepath.Join(sb.work, "daemon.pid"))
	sleep := readPid(t, filepath.Join(sb.work, "sleep.pid"))
	require.False(t, gone(sleep), "the command runs")

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.Empty(t, sb.raced(stderr.String()), "a data race before the kill")
	for name, pid := range map[string]int{"sleep": sleep, "setsid daemon": daemon} {
		require.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 20*time.Millisecond,
			"%s (pid %d) outlived gencode", name, pid)
	}
}
