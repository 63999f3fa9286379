//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// openNoBlock opens a FIFO without waiting for a writer.
const openNoBlock = syscall.O_NONBLOCK

// Self is the program to run as the helper: this very binary, also when
// its file was replaced or removed since it started (a rebuild of gencode
// from a session of it).
func Self() string { return "/proc/self/exe" }

// Probe asks the kernel which Landlock ABI it offers
// (landlock_create_ruleset with LANDLOCK_CREATE_RULESET_VERSION). It is
// the one Landlock call the parent makes: go-landlock, which restricts
// every thread through libcap's psx, is linked by the helper's package
// alone (sandbox/confine).
func Probe() Support {
	r, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	v, err := int(r), error(nil)
	if e != 0 {
		err = e
	}
	switch {
	case err != nil && (errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EOPNOTSUPP)):
		return Support{Why: "this Linux kernel has no Landlock, or it is off (needs 5.13+ with landlock in the lsm= list)"}
	case err != nil:
		return Support{Why: fmt.Sprintf("asking the kernel for Landlock failed: %v", err)}
	case v <= 0:
		return Support{Why: "this Linux kernel has no Landlock"}
	}
	return Support{ABI: v}
}
