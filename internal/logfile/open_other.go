//go:build !unix

package logfile

// noFollow: this OS has no O_NOFOLLOW; the Lstat before the open and the
// Stat of what was opened refuse a link or another non-regular file.
const noFollow = 0

func isLinkRefused(error) bool { return false }
