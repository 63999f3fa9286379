//go:build unix

package session

import (
	"errors"
	"os"
	"syscall"
)

// removeWhileOpen: a lock file can be removed while it is open and locked.
const removeWhileOpen = true

// tryLock takes an exclusive flock on f without waiting; false when
// another open file description holds it.
func tryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		default:
			return false, &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
	}
}
