package tools

import (
	"strings"
	"sync"
	"time"

	"github.com/gencode/gencode/internal/termtext"
)

// Progress is what a running tool has done so far, for a front end to
// show while it waits. It never reaches the model or the log: they get
// the Result.
type Progress struct {
	// Tail is the end of Bash's output so far, as the screen shows it: at
	// most ProgressTailBytes, starting at a line when it was cut, a line
	// redrawn with carriage returns shown as its last state, sanitized and
	// with secrets redacted. "" in the first report, sent when the command
	// starts (after any permission dialog).
	Tail string
	// Bytes is how much output there was so far.
	Bytes int64
}

const (
	// ProgressInterval is how often, at most, a running Bash call reports:
	// a chatty command cannot flood the front end.
	ProgressInterval = 100 * time.Millisecond
	// ProgressTailBytes bounds Progress.Tail.
	ProgressTailBytes = 2 << 10
)

// liveTail keeps the last bytes of a running command's output for its
// progress reports. The copy goroutine writes, the reporter reads.
type liveTail struct {
	mu    sync.Mutex
	buf   []byte
	total int64
}

func (l *liveTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total += int64(len(p))
	if len(p) >= ProgressTailBytes {
		l.buf = append(l.buf[:0], p[len(p)-ProgressTailBytes:]...)
		return len(p), nil
	}
	l.buf = append(l.buf, p...)
	if len(l.buf) > 2*ProgressTailBytes { // amortize: shift rarely
		l.buf = append(l.buf[:0], l.buf[len(l.buf)-ProgressTailBytes:]...)
	}
	return len(p), nil
}

// snapshot returns the last ProgressTailBytes of the output and the total.
func (l *liveTail) snapshot() (string, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buf
	cut := l.total > int64(len(b))
	if len(b) > ProgressTailBytes {
		b, cut = b[len(b)-ProgressTailBytes:], true
	}
	s := string(b)
	if cut {
		// Start at a line: a cut line (or escape sequence) is not shown.
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	return s, l.total
}

// screenLines keeps, of each line of s, what a terminal would show after
// its carriage returns (a progress bar redrawn in place shows its last
// state, not every one).
func screenLines(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = l[j+1:]
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// reporter sends a running Bash call's progress: once when it starts,
// then at most every ProgressInterval while its output changes. stop
// ends it; it has returned when stop returns, so nothing is reported
// after the call's Result.
type reporter struct {
	stop func()
}

// startReporter reports live's progress to report, which returns false
// when the front end could not take an update (it is offered again,
// newer, at the next tick).
func (s *Set) startReporter(live *liveTail, report func(Progress) bool) reporter {
	if report == nil {
		return reporter{stop: func() {}}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		sent := report(Progress{})
		var last int64
		t := time.NewTicker(ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			tail, total := live.snapshot()
			if sent && total == last {
				continue
			}
			text := s.redact(termtext.Sanitize(screenLines(tail)))
			if sent = report(Progress{Tail: text, Bytes: total}); sent {
				last = total
			}
		}
	}()
	return reporter{stop: func() { close(quit); <-done }}
}
