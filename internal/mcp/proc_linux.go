//go:build linux

package mcp

import (
	"os/exec"
	"syscall"
)

// dieWithUs kills a server process when gencode dies, however it dies.
func dieWithUs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
