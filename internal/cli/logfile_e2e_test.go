package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestPlantedLogLinkIsNotFollowed: a symlink planted at gencode.log (by a
// repository's script, another user of a shared state dir) made every run
// append its records to the link's target and chmod it 0600. Now the run
// refuses the log with one warning and goes on; the target is untouched.
func TestPlantedLogLinkIsNotFollowed(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	target := filepath.Join(sb.home, "precious.txt")
	require.NoError(t, os.WriteFile(target, []byte("precious\n"), 0o644))
	dir := filepath.Join(sb.home, ".local", "state", "gencode")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "gencode.log")))

	srv.Enqueue(openaitest.Text("fine"))
	res := sb.run("-p", "hi")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "fine\n", res.stdout)
	require.Contains(t, res.stderr, "gencode: warning: no log file: open log ")
	require.Contains(t, res.stderr, "not a regular file (a symbolic link); refused")
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "precious\n", string(b), "nothing appended to the target")
	fi, err := os.Stat(target)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "the target's mode is kept")
}
