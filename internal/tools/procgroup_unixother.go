//go:build unix && !linux

package tools

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes the command the leader of a new process group, so
// that it and all its children can be signaled at once.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// startTime is unknown here.
func startTime(int) uint64 { return 0 }

// leftovers is the call's process group while it has members: without
// /proc, processes that left it cannot be found.
func leftovers(pgid int, _ string, _ uint64) []int {
	if groupExists(pgid) {
		return []int{-pgid}
	}
	return nil
}
