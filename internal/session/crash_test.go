//go:build unix

package session

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// crashDirEnv makes the test binary run as the crash helper: a process
// that appends and indexes in that data directory until it is killed.
const crashDirEnv = "GENCODE_TEST_CRASH_DIR"

// TestCrashHelper is the subprocess of TestCrashKeepsIndexConsistent. It
// loops: append a burst of messages (each with a word unique to its seq),
// sometimes summarize-and-delete the oldest ones (rewriting indexed rows
// through the triggers), then catch the index up in its short batches. It
// prints what is committed, so the parent can kill it in each phase.
func TestCrashHelper(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("only runs as the crash test's subprocess")
	}
	ctx := context.Background()
	s, err := Open(ctx, dir)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	sess, err := s.LatestSession(ctx, "/crash")
	if err != nil {
		sess, err = s.CreateSession(ctx, "/crash", "m")
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	pad := strings.Repeat("filler words for the index ", 4)
	for round := 0; ; round++ {
		fmt.Println("appending")
		for i := 0; i < 20; i++ {
			seq := sess.LastSeq + 1
			m := Message{Role: RoleUser, Content: fmt.Sprintf("message u%d %s", seq, pad)}
			if i%3 == 1 {
				m = Message{Role: RoleAssistant, Content: fmt.Sprintf("calling for u%d", seq),
					ToolCalls: []ToolCall{{ID: fmt.Sprintf("c%d", seq), Name: "Bash", Arguments: fmt.Sprintf(`{"command":"echo v%d"}`, seq)}}}
			}
			if _, err := s.Append(ctx, sess.ID, m); err != nil {
				fmt.Println("error", err)
				os.Exit(2)
			}
			sess.LastSeq = seq
			fmt.Println("appended", seq)
		}
		if round%2 == 1 {
			fmt.Println("summarizing")
			sums, err := s.Summaries(ctx, sess.ID, false)
			if err == nil {
				var from int64 = 1
				for _, x := range sums {
					from = max(from, x.ToSeq+1)
				}
				_, err = s.ApplySummary(ctx, Summary{SessionID: sess.ID, FromSeq: from, ToSeq: from + 9}, nil, true)
			}
			if err != nil {
				fmt.Println("error", err)
				os.Exit(2)
			}
		}
		fmt.Println("indexing")
		if _, err := s.CatchUpIndex(ctx); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println("indexed")
	}
}

// TestCrashKeepsIndexConsistent: acceptance 2, first half. A process
// appending and indexing is killed (SIGKILL) in each phase, at several
// delays; after each kill the database is reopened and the index must hold
// exactly the log up to its watermark, and once caught up every message
// must be found by its own word.
func TestCrashKeepsIndexConsistent(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	kills := []struct {
		phase string // kill after this line ...
		delay time.Duration
	}{
		{"appending", 0}, {"appended", 300 * time.Microsecond}, {"summarizing", 0}, {"summarizing", time.Millisecond},
		{"indexing", 0}, {"indexing", 500 * time.Microsecond}, {"indexing", 2 * time.Millisecond}, {"indexed", 0},
	}
	var committed int64         // the last seq the helper reported committed
	checked := map[int64]bool{} // messages found since their last change
	for i, k := range kills {
		last := runUntilKilled(t, dir, k.phase, k.delay)
		committed = max(committed, last)

		s, err := Open(ctx, dir)
		require.NoError(t, err, "kill %d", i)
		// Before any catch-up: the index is exactly the log up to the
		// watermark, wherever the kill landed.
		checkIndex(t, s)
		backlog, err := s.IndexBacklog(ctx)
		require.NoError(t, err)
		sess, err := s.LatestSession(ctx, "/crash")
		require.NoError(t, err)
		require.GreaterOrEqual(t, sess.LastSeq, committed, "kill %d: committed messages survive", i)
		t.Logf("kill %d (%s + %v): %d messages, %d not indexed yet", i, k.phase, k.delay, sess.LastSeq, backlog)

		checkAllFound(t, s, sess.ID, checked)
		checkCaughtUp(t, s)
		require.NoError(t, s.Close())
	}
}

// runUntilKilled runs the helper on dir and SIGKILLs it delay after it
// prints a line starting with phase (the second such line, so that the
// log grows between kills). It returns the last seq reported appended.
func runUntilKilled(t *testing.T, dir, phase string, delay time.Duration) int64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	var last int64
	seen := 0
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "appended "); ok {
			last, _ = strconv.ParseInt(n, 10, 64)
		}
		if strings.HasPrefix(line, "error") {
			t.Errorf("helper: %s", line)
		}
		if !killed && strings.HasPrefix(line, phase) {
			if seen++; seen >= 2 {
				time.Sleep(delay)
				require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
				killed = true
			}
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the helper was killed, not ended: %v", err)
	ws, ok := ee.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "helper ended with %v", err)
	return last
}

// checkAllFound searches each message of the session that is new or was
// deleted since the last check (checkIndex compares all of them): by the
// word unique to it (u<seq>), or for a deleted original by the summary
// that replaced it.
func checkAllFound(t *testing.T, s *Store, sessionID string, checked map[int64]bool) {
	t.Helper()
	ctx := context.Background()
	msgs, err := s.Messages(ctx, sessionID, 1, 0)
	require.NoError(t, err)
	for _, m := range msgs {
		key := m.Seq
		if m.Meta.Deleted {
			key = -m.Seq
		}
		if checked[key] {
			continue
		}
		checked[key] = true
		word := fmt.Sprintf("u%d", m.Seq)
		if m.Meta.Deleted {
			word = strings.TrimSuffix(strings.TrimPrefix(m.Content, "[deleted: summarized by "), "]")
		}
		hits, _, err := s.Search(ctx, sessionID, word, 20) // prefixes: u12 finds u120-u129 too
		require.NoError(t, err)
		found := false
		for _, h := range hits {
			found = found || h.Seq == m.Seq
		}
		require.True(t, found, "message %d (%q) not found by %q", m.Seq, m.Content, word)
	}
}
