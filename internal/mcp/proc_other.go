//go:build !linux

package mcp

import "os/exec"

// dieWithUs: elsewhere the process ends when Close closes its stdin (and
// signals it); a killed gencode may leave it running.
func dieWithUs(*exec.Cmd) {}
