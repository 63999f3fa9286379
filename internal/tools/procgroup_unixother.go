//go:build unix && !linux

package tools

import "os/exec"

// groupAlive reports whether the command's process group still has a member.
func groupAlive(cmd *exec.Cmd) bool {
	return groupExists(cmd.Process.Pid)
}
