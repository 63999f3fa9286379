//go:build unix

package permstore

import (
	"errors"
	"os"
	"syscall"
)

// lockFile waits for an exclusive flock on f.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			if err != nil {
				return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}
