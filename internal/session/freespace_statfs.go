//go:build linux || darwin || freebsd

package session

import (
	"path/filepath"
	"syscall"
)

// freeSpace is how many bytes an unprivileged user may still write on the
// filesystem holding path.
func freeSpace(path string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(path), &st); err != nil {
		return -1, false
	}
	return int64(uint64(st.Bavail) * uint64(st.Bsize)), true
}
