//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// progressLog collects a call's progress reports.
type progressLog struct {
	mu      sync.Mutex
	reports []Progress
	after   bool // a report came after Run returned
	done    bool
}

func (l *progressLog) report(p Progress) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		l.after = true
	}
	l.reports = append(l.reports, p)
	return true
}

func (l *progressLog) last() (Progress, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.reports) == 0 {
		return Progress{}, 0
	}
	return l.reports[len(l.reports)-1], len(l.reports)
}

// bashCall is a Bash call of command.
func bashCall(t *testing.T, command string) Call {
	t.Helper()
	b, err := json.Marshal(map[string]string{"command": command})
	require.NoError(t, err)
	return Call{ID: "c1", Name: ToolBash, Arguments: string(b)}
}

// TestBashReportsProgressWhileRunning: a command prints, then waits on a
// FIFO the test holds; its output is reported before it ends (sanitized,
// secrets redacted, a redrawn line shown as it stands), and the Result is
// the one a call without a listener gets.
func TestBashReportsProgressWhileRunning(t *testing.T) {
	t.Parallel()
	s, _ := newTestSet(t, Options{Yolo: true, Secrets: []string{testKey}})
	gate := filepath.Join(t.TempDir(), "gate")
	require.NoError(t, syscall.Mkfifo(gate, 0o600))
	command := `printf 'one\n\033]0;pwned\007\033[31mred\033[0m ` + testKey + `\n'; printf 'bar 10%%\rbar 50%%\r'; cat '` + gate + `'; echo after`
	open := func() { // lets the command go on
		f, err := os.OpenFile(gate, os.O_WRONLY, 0)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}

	log := &progressLog{}
	c := bashCall(t, command)
	c.Progress = log.report
	done := make(chan Result, 1)
	go func() {
		r := s.Run(context.Background(), c)
		log.mu.Lock()
		log.done = true
		log.mu.Unlock()
		done <- r
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if p, _ := log.last(); strings.Contains(p.Tail, "bar 50%") {
			break
		}
		if time.Now().After(deadline) {
			p, n := log.last()
			t.Fatalf("no report of the output before the command ended; %d reports, last %+v", n, p)
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case r := <-done:
		t.Fatalf("the command ended before the test let it: %+v", r)
	default:
	}
	p, _ := log.last()
	require.Equal(t, "one\nred [REDACTED:api-key]\nbar 50%", p.Tail)
	require.NotContains(t, p.Tail, "\x1b")
	require.Equal(t, int64(len("one\n\x1b]0;pwned\x07\x1b[31mred\x1b[0m "+testKey+"\nbar 10%\rbar 50%\r")), p.Bytes)
	log.mu.Lock()
	first := log.reports[0]
	log.mu.Unlock()
	require.Equal(t, Progress{}, first, "the first report says the command started")

	open()
	withProgress := <-done
	log.mu.Lock()
	require.False(t, log.after, "a report came after Run returned")
	log.mu.Unlock()

	// The same command without a listener: the same Result.
	go open()
	plain := s.Run(context.Background(), bashCall(t, command))
	require.Equal(t, "one\nred [REDACTED:api-key]\nbar 10%\nbar 50%\nafter\n[exit code 0]", plain.Content)
	require.Equal(t, plain, withProgress)
}

// TestBashProgressIsThrottled: a command printing as fast as it can is
// reported at most once per ProgressInterval (plus the start), each
// report a bounded tail that starts at a line.
func TestBashProgressIsThrottled(t *testing.T) {
	t.Parallel()
	s, _ := yoloSet(t)
	log := &progressLog{}
	// Output as fast as it comes, for over a second.
	c := bashCall(t, "for i in $(seq 1 20); do seq 1 100000; sleep 0.02; done")
	c.Progress = log.report
	start := time.Now()
	r := s.Run(context.Background(), c)
	elapsed := time.Since(start)
	require.False(t, r.IsError, r.Content)
	log.mu.Lock()
	defer log.mu.Unlock()
	require.Greater(t, len(log.reports), 2, "reports in %s", elapsed)
	require.LessOrEqual(t, len(log.reports), 2+int(elapsed/ProgressInterval), "reports in %s", elapsed)
	for _, p := range log.reports[1:] {
		require.LessOrEqual(t, len(p.Tail), ProgressTailBytes)
		first, _, _ := strings.Cut(p.Tail, "\n")
		require.Regexp(t, `^[1-9][0-9]*$`, first, "the tail starts at a whole line")
	}
}

func TestScreenLines(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain\nlines\n", "plain\nlines\n"},
		{"10%\r50%\r100%\ndone\n", "100%\ndone\n"},
		{"crlf\r\nline\r\n", "crlf\nline\n"},
		{"bar 10%\rbar 50%\r", "bar 50%"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, screenLines(tt.in), "screenLines(%q)", tt.in)
	}
}
