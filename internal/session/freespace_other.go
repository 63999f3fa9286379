//go:build !(linux || darwin || freebsd)

package session

// freeSpace is unknown here: only SQLITE_FULL tells a full disk.
func freeSpace(string) (int64, bool) { return -1, false }
