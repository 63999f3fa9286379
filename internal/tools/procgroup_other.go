//go:build !unix

package tools

import (
	"os"
	"os/exec"
)

// Without process groups only the shell itself can be stopped; its children
// may outlive a timeout.

func setProcessGroup(*exec.Cmd) {}

func terminateGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

func groupAlive(*exec.Cmd) bool { return false }

func exitStatus(ps *os.ProcessState) (int, string) { return ps.ExitCode(), "" }
