//go:build !unix

package logfile

import "testing"

func mkfifo(t *testing.T, _ string) {
	t.Helper()
	t.Skip("no FIFOs on this OS")
}
