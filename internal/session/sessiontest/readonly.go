// Package sessiontest holds test helpers for the store's users.
package sessiontest

import (
	"os"
	"os/exec"
	"testing"
)

// MakeReadOnly makes paths unwritable, as a read-only data directory is
// for its user: by mode for a user, by the immutable attribute for root
// (whom modes do not stop). Cleanup restores them.
func MakeReadOnly(t testing.TB, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if os.Geteuid() == 0 {
			if out, err := exec.Command("chattr", "+i", p).CombinedOutput(); err != nil {
				t.Skipf("as root, making %s read-only needs chattr +i: %v %s", p, err, out)
			}
			t.Cleanup(func() { _ = exec.Command("chattr", "-i", p).Run() })
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("make %s read-only: %v", p, err)
		}
		if err := os.Chmod(p, fi.Mode().Perm()&^0o222); err != nil {
			t.Fatalf("make %s read-only: %v", p, err)
		}
		t.Cleanup(func() { _ = os.Chmod(p, fi.Mode().Perm()) })
	}
}
