//go:build unix

package tools

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// terminateGroup sends SIGTERM to the command's process group, and SIGCONT
// so that stopped members get it too.
func terminateGroup(cmd *exec.Cmd) {
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
}

// killGroup sends SIGKILL to the command's process group.
func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// groupExists reports whether any process, zombies included, is in group pgid.
func groupExists(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// signalProcs sends SIGTERM (and SIGCONT, so that stopped ones get it) or
// SIGKILL to the group pgid and to each process of pids.
func signalProcs(pgid int, pids []int, kill bool) {
	sigs := []syscall.Signal{syscall.SIGTERM, syscall.SIGCONT}
	if kill {
		sigs = []syscall.Signal{syscall.SIGKILL}
	}
	for _, sig := range sigs {
		_ = syscall.Kill(-pgid, sig)
		for _, pid := range pids {
			if pid > 0 {
				_ = syscall.Kill(pid, sig)
			}
		}
	}
}

// exitStatus returns the shell's exit code, 128+N when signal N killed it
// (as shells report it), and the signal's description.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig := ws.Signal()
		return 128 + int(sig), fmt.Sprintf("signal %d (%s)", int(sig), sig)
	}
	return ps.ExitCode(), ""
}

// watchScript is run by a watcher: bash -c watchScript gencode-watch TAG.
// It reads the call's process group, then waits. "done" means the call
// ended and cleaned up after itself. The end of input without it means
// gencode died mid-call (kill -9): then it kills the group and every
// process whose environment holds TAG, found through /proc.
const watchScript = `IFS= read -r pg
IFS= read -r msg
[ "$msg" = done ] && exit 0
[ -n "$pg" ] && kill -KILL -- "-$pg"
for f in /proc/[0-9]*/environ; do
	p=${f#/proc/}; p=${p%/environ}
	[ "$p" = "$$" ] && continue
	while IFS= read -r -d '' kv; do
		if [ "$kv" = "$1" ]; then kill -KILL "$p"; break; fi
	done < "$f"
done 2>/dev/null
exit 0`

// watcher is a process that outlives gencode to end a Bash call's
// processes if gencode is killed during the call. It reads a pipe only
// gencode holds the other end of (close-on-exec keeps it out of every
// child), so gencode's death, however sudden, is the end of its input.
// It lives exactly as long as the call: done ends it.
type watcher struct {
	cmd *exec.Cmd
	w   io.WriteCloser
}

// startWatcher starts the watcher of the call tagged tag; nil (watching
// nothing) if it cannot be started.
func startWatcher(tag string) *watcher {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil
	}
	defer pr.Close()
	cmd := exec.Command("bash", "-c", watchScript, "gencode-watch", tag)
	cmd.Stdin = pr
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	// Its own group: signals meant for the call or for gencode's terminal
	// group (Ctrl+C) do not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		pw.Close()
		return nil
	}
	return &watcher{cmd: cmd, w: pw}
}

// started tells the watcher the call's process group.
func (w *watcher) started(pgid int) {
	if w != nil {
		_, _ = fmt.Fprintf(w.w, "%d\n", pgid)
	}
}

// done tells the watcher the call cleaned up, and waits for it to exit.
func (w *watcher) done() {
	if w == nil {
		return
	}
	_, _ = io.WriteString(w.w, "done\n")
	w.w.Close()
	_ = w.cmd.Wait()
}
