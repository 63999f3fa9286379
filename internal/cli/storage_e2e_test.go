//go:build linux

package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session/sessiontest"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestReadCommandsOnAReadOnlyDataDir: with the data directory and database
// read-only (issue 14, item 12), sessions, history (plain, --json,
// --search) and export work; a turn says the store cannot be written.
// Changes a killed writer left in the write-ahead log are read too.
func TestReadCommandsOnAReadOnlyDataDir(t *testing.T) {
	t.Parallel()
	t.Run("closed cleanly", func(t *testing.T) {
		t.Parallel()
		srv := openaitest.NewServer(t)
		sb := newSandbox(t)
		sb.useServer(srv)
		srv.Enqueue(openaitest.Text("The lighthouse keeper answers."))
		res := sb.run("-p", "first question about the lighthouse")
		require.Equal(t, 0, res.code, res.stderr)
		data := filepath.Join(sb.home, ".local", "share", "gencode")
		sessiontest.MakeReadOnly(t, data, filepath.Join(data, "gencode.db"))

		res = sb.run("sessions")
		require.Equal(t, 0, res.code, res.stderr)
		require.Contains(t, res.stdout, "first question about the lighthouse")
		res = sb.run("history")
		require.Equal(t, 0, res.code, res.stderr)
		require.Contains(t, res.stdout, "The lighthouse keeper answers.")
		res = sb.run("history", "--json")
		require.Equal(t, 0, res.code, res.stderr)
		var h historyJSON
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &h))
		require.Len(t, h.Messages, 2)
		res = sb.run("export", "--format", "jsonl")
		require.Equal(t, 0, res.code, res.stderr)
		require.Equal(t, 2, strings.Count(res.stdout, "\n"))
		res = sb.run("history", "--search", "lighthouse")
		require.Equal(t, 0, res.code, res.stderr)
		require.Contains(t, res.stderr, "not in the search index", "print mode did not index: say what was not searched")

		res = sb.run("-c", "-p", "and now?")
		require.Equal(t, 1, res.code)
		require.Contains(t, res.stderr, "gencode: cannot write the session store: ")
		require.Contains(t, res.stderr, "sessions, history and export still read it")
	})
	t.Run("killed writer left its WAL", func(t *testing.T) {
		t.Parallel()
		gate := make(chan struct{}) // never opened: the second turn hangs
		srv := openaitest.NewServer(t)
		sb := newSandbox(t)
		sb.useServer(srv)
		srv.Enqueue(openaitest.Text("first answer"), openaitest.Reply{Content: "never sent", Gate: gate})
		res := sb.run("-p", "first question")
		require.Equal(t, 0, res.code, res.stderr)

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, binary, "-c", "-p", "second question, stored before the kill")
		cmd.Dir = sb.work
		for k, v := range sb.env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool { return len(srv.Requests()) == 2 }, 30*time.Second, 10*time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()

		data := filepath.Join(sb.home, ".local", "share", "gencode")
		db := filepath.Join(data, "gencode.db")
		fi, err := os.Stat(db + "-wal")
		require.NoError(t, err, "the killed writer left its WAL")
		require.Positive(t, fi.Size())
		sessiontest.MakeReadOnly(t, data, db, db+"-wal", db+"-shm")

		res = sb.run("history", "--json")
		require.Equal(t, 0, res.code, res.stderr)
		require.Empty(t, res.stderr)
		var h historyJSON
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &h))
		require.Len(t, h.Messages, 3)
		require.Equal(t, "second question, stored before the kill", h.Messages[2].Content)
	})
}

// TestFullDiskAtStartup: on a full disk (a 256 KB tmpfs filled up, in a
// user and mount namespace, so no root is needed) a turn says "no space
// left on device" and where, not "disk I/O error (4874)" (issue 14, item
// 13); listing sessions still works, read-only.
func TestFullDiskAtStartup(t *testing.T) {
	t.Parallel()
	if err := exec.Command("unshare", "-Urm", "true").Run(); err != nil {
		t.Skipf("no unprivileged user and mount namespaces for a small full filesystem: %v", err)
	}
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	disk := filepath.Join(sb.home, "disk")
	require.NoError(t, os.MkdirAll(disk, 0o700))
	const script = `
mount -t tmpfs -o size=256k tmpfs "$1" || exit 97
export GENCODE_HOME="$1/data"
"$2" sessions >/dev/null || exit 98
fill() { dd if=/dev/zero of="$1/fill$2" bs=4k 2>/dev/null; :; }
fill "$1" 1
echo "== existing database"
"$2" -p hi 2>&1
echo "== sessions"
"$2" sessions 2>&1
rm -f "$1"/data/gencode.db*
fill "$1" 2
echo "== new database"
"$2" -p hi 2>&1
rm -rf "$1"/data "$1"/fill*
"$2" sessions >/dev/null || exit 98
dd if=/dev/zero of="$1/spare" bs=4k count=12 2>/dev/null
fill "$1" 3
rm "$1/spare"
echo "== 48 KB left"
"$2" -p "$(head -c 60000 /dev/zero | tr '\0' x)" 2>&1
exit 0
`
	cmd := exec.Command("unshare", "-Urm", "sh", "-c", script, "sh", disk, binary)
	cmd.Dir = sb.work
	for k, v := range sb.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	parts := strings.Split(string(out), "== ")
	require.Len(t, parts, 5, "%s", out)
	for _, p := range []string{parts[1], parts[3], parts[4]} {
		name, msg, _ := strings.Cut(p, "\n")
		t.Logf("%s: %s", name, strings.TrimSpace(msg))
		require.Regexp(t, `^gencode: no space left on device: the disk holding \S+/data/gencode.db is full \(\d+ [KM]?B free\); free some space and try again \(`, msg, name)
		require.Equal(t, 1, strings.Count(strings.TrimSpace(msg), "\n")+1, "one line: %q", msg)
	}
	// Where a full disk first bites depends on the file's layout (the
	// issue's case was the shared-memory file: "disk I/O error (4874)";
	// with the meter's indexes the first page write fails first); either
	// way SQLite's own word stays in the detail.
	require.Regexp(t, `disk I/O error \(4874\)|database or disk is full \(13\)`, parts[1], "SQLite's word for it stays in the detail")
	require.Contains(t, parts[4], "database or disk is full (13)", "a write that finds no space")
	require.Contains(t, parts[2], "ID  UPDATED", "sessions lists, read-only")
}
