//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package cli

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// queryBackground asks the terminal for its background colour and waits
// at most timeout for the answer. It asks only a terminal it can read the
// answer from (in) and only from the foreground; the terminal is in raw
// mode meanwhile, so the answer is neither echoed nor left for the shell.
// ok is false when the terminal did not say.
func queryBackground(in, out *os.File, timeout time.Duration) (dark, ok bool) {
	ifd, ofd := int(in.Fd()), int(out.Fd())
	if !term.IsTerminal(ifd) || !term.IsTerminal(ofd) {
		return false, false
	}
	if pg, err := unix.IoctlGetInt(ifd, unix.TIOCGPGRP); err != nil || pg != unix.Getpgrp() {
		return false, false // in the background: the terminal is not ours to ask
	}
	st, err := term.MakeRaw(ifd)
	if err != nil {
		return false, false
	}
	defer func() { _ = term.Restore(ifd, st) }()
	if _, err := out.WriteString(queryBackgroundSeq + queryAttributesSeq); err != nil {
		return false, false
	}
	deadline := time.Now().Add(timeout)
	var got []byte
	buf := make([]byte, 256)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false, false
		}
		fds := []unix.PollFd{{Fd: int32(ifd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			return false, false
		}
		k, err := unix.Read(ifd, buf)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || k == 0 {
			return false, false
		}
		got = append(got, buf[:k]...)
		if dark, known, done := parseAnswers(got); done {
			return dark, known
		}
		if len(got) > 1024 {
			return false, false
		}
	}
}
