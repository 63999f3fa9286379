package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBinary runs the built command the way end-to-end tests do: with stdin
// from /dev/null it serves until killed; with a pipe it stops when the pipe closes.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the binary")
	}
	bin := filepath.Join(t.TempDir(), "fakeopenai")
	out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	script := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, os.WriteFile(script, []byte(`{"fallback":{"content":"ok"}}`), 0o600))

	start := func(t *testing.T, cmd *exec.Cmd) string {
		t.Helper()
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err)
		url := strings.TrimSpace(line)
		resp, err := http.Post(url+"/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return url
	}
	exited := func(cmd *exec.Cmd) <-chan error {
		c := make(chan error, 1)
		go func() { c <- cmd.Wait() }()
		return c
	}

	t.Run("stdin from /dev/null: serves until killed", func(t *testing.T) {
		cmd := exec.CommandContext(context.Background(), bin, "-script", script)
		start(t, cmd)
		done := exited(cmd)
		select {
		case err := <-done:
			t.Fatalf("exited on its own: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		require.NoError(t, cmd.Process.Signal(os.Interrupt))
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatal("did not stop on interrupt")
		}
	})

	t.Run("stdin pipe: stops when it closes", func(t *testing.T) {
		cmd := exec.CommandContext(context.Background(), bin, "-script", script)
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		start(t, cmd)
		done := exited(cmd)
		require.NoError(t, stdin.Close())
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatal("did not stop when stdin closed")
		}
	})
}
