//go:build windows

package permstore

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockFile waits for an exclusive lock on f's first byte.
func lockFile(f *os.File) error {
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol); err != nil {
		return &os.PathError{Op: "lock", Path: f.Name(), Err: err}
	}
	return nil
}
