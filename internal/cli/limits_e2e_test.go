//go:build unix

package cli_test

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestPrintModeSIGTERMWhileCountingHugePrompt: a prompt of megabytes
// without spaces used to be counted for minutes (quadratic) with SIGTERM
// ignored. Counting now stops on the signal and the run exits at once.
func TestPrintModeSIGTERMWhileCountingHugePrompt(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		return openaitest.Text("too late")
	}))
	sb := newSandbox(t)
	sb.useServer(srv)
	// A window large enough that the prompt is counted, not refused by size.
	sb.writeConfig("context_window = 4000000\n")
	prompt := strings.Repeat("x", 16<<20) // seconds to count even when linear

	cmd := exec.Command(binary, "-p", "-", "--no-summarize")
	cmd.Dir = sb.work
	for k, v := range sb.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// Once gencode has read the whole prompt, give it time to start the
	// turn: counting 16 MB takes many seconds, so the signal comes during it.
	_, err = stdin.Write([]byte(prompt))
	require.NoError(t, err)
	require.NoError(t, stdin.Close())
	time.Sleep(2 * time.Second)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("gencode ignored SIGTERM for 20 s; stderr: %s", stderr.String())
	}
	require.Equal(t, 1, cmd.ProcessState.ExitCode(), "stderr: %s", stderr.String())
	require.Equal(t, "gencode: canceled\n", stderr.String())
	require.Empty(t, stdout.String())
	require.Empty(t, srv.Requests(), "nothing was sent after the signal")
}
