//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package cli

import (
	"os"
	"time"
)

// queryBackground does not ask the terminal on this platform: the theme
// setting decides, else dark.
func queryBackground(_, _ *os.File, _ time.Duration) (dark, ok bool) { return false, false }
