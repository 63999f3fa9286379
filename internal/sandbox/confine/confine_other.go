//go:build !linux

package confine

import (
	"fmt"
	"io"
	"runtime"
)

// Main is the helper; there is none here.
func Main(_ []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "gencode sandbox: no sandbox on "+runtime.GOOS+"; the command was not run")
	return 126
}
