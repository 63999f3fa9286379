//go:build unix

package tools

import "syscall"

// openNoBlock makes opening a FIFO return at once instead of waiting for a
// writer; it changes nothing for regular files.
const openNoBlock = syscall.O_NONBLOCK
