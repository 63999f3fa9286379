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

func startTime(int) uint64 { return 0 }

func leftovers(int, string, uint64) []int { return nil }

func signalProcs(int, []int, bool) {}

func exitStatus(ps *os.ProcessState) (int, string) { return ps.ExitCode(), "" }

// watcher: nothing watches a call here.
type watcher struct{}

func startWatcher(string) *watcher { return nil }

func (*watcher) started(int) {}

func (*watcher) done() {}
