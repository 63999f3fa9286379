//go:build unix

package logfile

import (
	"errors"
	"syscall"
)

// noFollow makes the open fail on a symbolic link; O_NONBLOCK keeps a
// planted FIFO from blocking the open until a reader comes (what was
// opened is then refused as not regular).
const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// isLinkRefused reports the error an O_NOFOLLOW open gives on a link.
func isLinkRefused(err error) bool { return errors.Is(err, syscall.ELOOP) }
