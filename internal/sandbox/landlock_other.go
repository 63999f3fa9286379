//go:build !linux

package sandbox

import (
	"os"
	"runtime"
)

// openNoBlock: no sandbox here, and git directories are not searched.
const openNoBlock = 0

// Self is the program to run as the helper: this binary ("" when it
// cannot be found).
func Self() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}

// Probe says there is no sandbox: gencode confines commands with Landlock,
// on Linux only.
func Probe() Support {
	return Support{Why: "gencode has a sandbox on Linux only (Landlock), not on " + runtime.GOOS}
}
