//go:build unix

package session

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// leaseDirEnv makes the test binary run as the lease helper: a process
// that takes a session's lease and holds it until it is killed.
const leaseDirEnv = "GENCODE_TEST_LEASE_DIR"

func TestLeaseHelper(t *testing.T) {
	dir := os.Getenv(leaseDirEnv)
	if dir == "" {
		t.Skip("only runs as TestLeaseFreedWhenTheHolderIsKilled's subprocess")
	}
	ctx := context.Background()
	s, err := Open(ctx, dir)
	if err == nil {
		_, err = s.Lease(ctx, os.Getenv(leaseDirEnv+"_SESSION"), 0)
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("leased")
	time.Sleep(time.Minute)
	os.Exit(3) // never: the parent kills it
}

// TestLeaseFreedWhenTheHolderIsKilled: a holder killed with SIGKILL leaves
// the session free at once, without a stale lease to wait out.
func TestLeaseFreedWhenTheHolderIsKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	s, err := Open(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	sess, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)

	cmd := exec.Command(os.Args[0], "-test.run=^TestLeaseHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), leaseDirEnv+"="+dir, leaseDirEnv+"_SESSION="+sess.ID)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "leased", strings.TrimSpace(line))

	_, err = s.Lease(ctx, sess.ID, 0)
	var busy *BusyError
	require.ErrorAs(t, err, &busy)
	require.Equal(t, cmd.Process.Pid, busy.Holder.PID, "the error names the holding process")

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	l, err := s.Lease(ctx, sess.ID, 0)
	require.NoError(t, err, "a killed holder's lease is free at once")
	l.Release()
}
