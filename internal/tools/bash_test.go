//go:build unix

package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBash(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	tests := []struct {
		name     string
		command  string
		want     string
		wantCode int
	}{
		{"output and exit code", "echo hello", "hello\n[exit code 0]", 0},
		{"non-zero exit", "echo failing; exit 3", "failing\n[exit code 3]", 3},
		{"stderr combined in order", "echo out; echo err >&2; echo out2", "out\nerr\nout2\n[exit code 0]", 0},
		{"no output", "true", "(no output)\n[exit code 0]", 0},
		{"no trailing newline", "printf abc", "abc\n[exit code 0]", 0},
		{"runs in the working directory", "pwd", dir + "\n[exit code 0]", 0},
		{"stdin is closed", "cat; read x; echo \"got:[$x]\"", "got:[]\n[exit code 0]", 0},
		{"escape sequences stripped", `printf '\033[31mred\033[0m \033]0;title\007done\r\n'`, "red done\n[exit code 0]", 0},
		{"invalid utf8 replaced", `printf 'a\377b\n'`, "a\uFFFDb\n[exit code 0]", 0},
		{"pagers off", "echo $PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT", "cat cat 0\n[exit code 0]", 0},
		{"killed by a signal", "kill -KILL $$", "(no output)\n[killed by signal 9 (killed); exit code 137]", 137},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, s, ToolBash, map[string]any{"command": tt.command})
			assert.Equal(t, tt.want, r.Content, "Bash(%q)", tt.command)
			require.NotNil(t, r.ExitCode)
			assert.Equal(t, tt.wantCode, *r.ExitCode)
			assert.Equal(t, tt.wantCode != 0, r.IsError)
			m := r.Meta
			require.NotNil(t, m.Changes, "what the command changed was not observed")
			m.Changes = nil
			assert.Equal(t, Meta{Tool: ToolBash, Command: tt.command, Success: tt.wantCode == 0}, m)
			assert.Empty(t, r.Full)
		})
	}
}

func TestBashOutputIsCapped(t *testing.T) {
	t.Parallel()
	s, _ := newTestSet(t, Options{Yolo: true, OutputCapTokens: 1000})
	r := run(t, s, ToolBash, map[string]any{"command": "seq 1 100000"})
	require.False(t, r.IsError, r.Content[:100])
	assert.LessOrEqual(t, len(r.Content)/4, 1000)
	assert.True(t, strings.HasPrefix(r.Content, "1\n2\n3\n"), "head kept")
	assert.True(t, strings.HasSuffix(r.Content, "99999\n100000\n[exit code 0]"), "tail kept")
	m := regexp.MustCompile(`\n\.\.\. \[(\d+) lines \(\d+ bytes\) elided\] \.\.\.\n`).FindStringSubmatch(r.Content)
	require.NotNil(t, m, "marker in %q", r.Content)
	elided, _ := strconv.Atoi(m[1])
	shown := strings.Count(r.Content, "\n") - 1
	assert.Equal(t, 100000, elided+shown, "elided + shown lines = all lines")
	assert.Equal(t, 100001, strings.Count(r.Full, "\n")+1, "Full keeps every line")
	assert.True(t, strings.HasPrefix(r.Full, "1\n2\n"))
}

// Output beyond what Bash keeps in memory is dropped from the middle of Full
// too, and the marker in Content still counts every line that was cut.
func TestBashHugeOutputIsBounded(t *testing.T) {
	t.Parallel()
	s, _ := yoloSet(t)
	r := run(t, s, ToolBash, map[string]any{"command": "yes | head -n 3000000"})
	require.False(t, r.IsError)
	assert.Less(t, len(r.Full), 2*bashCaptureBytes+200)
	assert.Contains(t, r.Full, "elided] ...")
	m := regexp.MustCompile(`\[(\d+) lines \(\d+ bytes\) elided\]`).FindStringSubmatch(r.Content)
	require.NotNil(t, m)
	elided, _ := strconv.Atoi(m[1])
	shown := strings.Count(r.Content, "y\n")
	assert.Equal(t, 3000000, elided+shown, "elided + shown lines = all lines")
}

func TestBashTimeoutArgument(t *testing.T) {
	t.Parallel()
	s, _ := yoloSet(t)
	r := run(t, s, ToolBash, map[string]any{"command": "echo ok", "timeout": 9999})
	assert.Equal(t, "[timeout 9999s lowered to the maximum, 600s]\nok\n[exit code 0]", r.Content)
}

// pidsIn returns the numbers printed as NAME=PID in out.
func pidsIn(t *testing.T, out string) map[string]int {
	t.Helper()
	pids := map[string]int{}
	for _, m := range regexp.MustCompile(`(\w+)=(\d+)`).FindAllStringSubmatch(out, -1) {
		pid, err := strconv.Atoi(m[2])
		require.NoError(t, err)
		pids[m[1]] = pid
	}
	return pids
}

// processGone reports whether pid has exited. A zombie counts as gone: it
// has run its course and waits for its parent (or init) to reap it.
func processGone(pid int) bool {
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		i := strings.LastIndexByte(string(stat), ')')
		return i >= 0 && len(stat) > i+2 && (stat[i+2] == 'Z' || stat[i+2] == 'X')
	} else if _, statErr := os.Stat("/proc/self"); statErr == nil {
		return true // Linux: no /proc entry means no process
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// liveProcesses lists live processes in process group pgid or whose
// command line has marker. It needs /proc; elsewhere it finds nothing.
func liveProcesses(pgid int, marker string) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || processGone(pid) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		inGroup := false
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 2 {
				inGroup = f[2] == strconv.Itoa(pgid)
			}
		}
		if inGroup || marker != "" && strings.Contains(string(cmdline), marker) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return found
}

// assertAllGone checks that the processes named in pids (pg= being the
// group leader) and everything else in that group or carrying marker ended.
func assertAllGone(t *testing.T, pids map[string]int, marker string) {
	t.Helper()
	// Orphans are killed before Run returns; allow a moment for the kernel
	// to finish tearing them down.
	deadline := time.Now().Add(time.Second)
	for name, pid := range pids {
		for !processGone(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		assert.True(t, processGone(pid), "process %s (pid %d) was left running", name, pid)
	}
	pgid, ok := pids["pg"]
	require.True(t, ok, "the script prints pg=$$")
	assert.Empty(t, liveProcesses(pgid, marker), "processes left behind")
}

// bashWithMarker returns a Set whose Bash command `exec -a MARKER bash -c
// "$SCRIPT"` runs script under a process name that /proc scans can find.
func bashWithMarker(t *testing.T, script, marker string) (*Set, string) {
	t.Helper()
	s, _ := newTestSet(t, Options{Yolo: true, Env: append(os.Environ(), "TOOLS_TEST_SCRIPT=echo pg=$$; "+script)})
	return s, fmt.Sprintf(`exec -a %s bash -c "$TOOLS_TEST_SCRIPT" %s`, marker, marker)
}

func TestBashTimeoutKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		script  string
		maxTime time.Duration
	}{
		// The bounds guard against waiting for the 100 s sleep, with room
		// for a loaded machine.
		{"sleep in the foreground", `sleep 100`, 10 * time.Second},
		{"background child and wait", `sleep 100 & echo bg=$!; wait`, 10 * time.Second},
		{"grandchild in a subshell", `( sleep 100 & echo gc=$!; wait ) & echo sub=$!; wait`, 10 * time.Second},
		{"child ignoring SIGTERM", `trap '' TERM; sleep 100 & echo bg=$!; wait; wait`, 3*time.Second + killGrace + 5*time.Second},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := fmt.Sprintf("gencode-timeout-marker-%d-%d", os.Getpid(), i)
			s, script := bashWithMarker(t, tt.script, marker)
			start := time.Now()
			r := run(t, s, ToolBash, map[string]any{"command": script, "timeout": 3})
			elapsed := time.Since(start)
			t.Logf("returned after %s: %q", elapsed, r.Content)
			assert.GreaterOrEqual(t, elapsed, 3*time.Second)
			assert.Less(t, elapsed, tt.maxTime)
			assert.True(t, r.IsError)
			assert.Contains(t, r.Content, "[timed out after 3s; the process group was killed; exit code ")
			pids := pidsIn(t, r.Content)
			require.NotEmpty(t, pids)
			assertAllGone(t, pids, marker)
		})
	}
}

// A background job that outlives the shell is killed when the command ends,
// and does not hold the call open through the output pipe.
func TestBashKillsLeftoverBackgroundJobs(t *testing.T) {
	t.Parallel()
	s, _ := yoloSet(t)
	start := time.Now()
	r := run(t, s, ToolBash, map[string]any{"command": "echo pg=$$; sleep 100 & echo bg=$!; echo started"})
	elapsed := time.Since(start)
	assert.Less(t, elapsed, killGrace+5*time.Second, "returned after %s (the job sleeps 100 s)", elapsed)
	assert.Contains(t, r.Content, "started\n[exit code 0]")
	assertAllGone(t, pidsIn(t, r.Content), "")
}

// A process that leaves the group (setsid) must not keep the call waiting
// on the pipe it inherited.
func TestBashEscapedProcessDoesNotHang(t *testing.T) {
	t.Parallel()
	s, _ := yoloSet(t)
	start := time.Now()
	r := run(t, s, ToolBash, map[string]any{"command": "setsid sleep 20 & echo escaped"})
	elapsed := time.Since(start)
	assert.Less(t, elapsed, killGrace+drainWait+5*time.Second, "returned after %s (the escaped process sleeps 20 s)", elapsed)
	assert.Contains(t, r.Content, "escaped")
}

func TestBashContextCancelKillsTheGroup(t *testing.T) {
	t.Parallel()
	marker := fmt.Sprintf("gencode-cancel-marker-%d", os.Getpid())
	s, script := bashWithMarker(t, "sleep 100 & echo bg=$!; touch started; wait", marker)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() {
		done <- s.Run(ctx, Call{Name: ToolBash, Arguments: fmt.Sprintf(`{"command": %q}`, script)})
	}()
	// Cancel once the command runs (a loaded machine may take a while to
	// start it).
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(s.WorkDir(), "started"))
		return err == nil
	}, 30*time.Second, 10*time.Millisecond)
	start := time.Now()
	cancel()
	select {
	case r := <-done:
		assert.Less(t, time.Since(start), 10*time.Second, "returned long after the cancel (the command sleeps 100 s)")
		assert.True(t, r.IsError)
		assert.Contains(t, r.Content, "[canceled; the process group was killed; exit code ")
		assertAllGone(t, pidsIn(t, r.Content), marker)
	case <-time.After(10 * time.Second):
		t.Fatal("Bash did not return after its context was canceled")
	}
}

// A daemon that left the call's process group (its own session) and
// ignores SIGTERM is still ended when the call ends: it carries the call's
// tag in its environment.
func TestBashKillsDaemonsThatLeftTheGroup(t *testing.T) {
	t.Parallel()
	s, _ := yoloSet(t)
	r := run(t, s, ToolBash, map[string]any{"command": `setsid bash -c 'trap "" TERM; echo $$ > daemon.pid; exec sleep 300' > /dev/null 2>&1 < /dev/null &
for i in $(seq 250); do [ -s daemon.pid ] && break; sleep 0.02; done
echo pg=$$ daemon=$(cat daemon.pid)`})
	require.False(t, r.IsError, r.Content)
	pids := pidsIn(t, r.Content)
	require.Contains(t, pids, "daemon", r.Content)
	t.Cleanup(func() { _ = syscall.Kill(pids["daemon"], syscall.SIGKILL) })
	require.NotEqual(t, pids["pg"], pids["daemon"])
	assertAllGone(t, pids, "")
}
