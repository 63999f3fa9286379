//go:build unix

package instructions

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// unreadableEnv names the directory the unprivileged copy of the test
// binary loads (see loadUnprivileged).
const unreadableEnv = "GENCODE_TEST_LOAD_AS_NOBODY"

// loaded is what Load found, as the unprivileged process reports it.
type loaded struct {
	Files    int
	Problems []string
}

func TestMain(m *testing.M) {
	if dir := os.Getenv(unreadableEnv); dir != "" {
		s := Load(dir, "")
		if err := json.NewEncoder(os.Stdout).Encode(loaded{len(s.Files), s.Problems}); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// loadUnprivileged is Load(dir) as this user, or, for root (who reads any
// file, so a mode of 0 proves nothing), as nobody: a copy of this test
// binary run through setpriv(1). CI runs as root.
func loadUnprivileged(t *testing.T, dir string) loaded {
	t.Helper()
	if os.Geteuid() != 0 {
		s := Load(dir, "")
		return loaded{len(s.Files), s.Problems}
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("running as root without setpriv(1) to drop privileges: the file stays readable")
	}
	// nobody must reach dir and the binary: open the test's directories to it.
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	binDir := t.TempDir()
	require.NoError(t, os.Chmod(binDir, 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(binDir), 0o755))
	bin := filepath.Join(binDir, "instructions.test")
	self, err := os.Open(os.Args[0])
	require.NoError(t, err)
	defer self.Close()
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, self)
	require.NoError(t, err)
	require.NoError(t, out.Close())
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin)
	cmd.Env = append(os.Environ(), unreadableEnv+"="+dir)
	cmd.Dir = binDir
	b, err := cmd.Output()
	require.NoError(t, err, "the unprivileged Load: %s", b)
	var l loaded
	require.NoError(t, json.Unmarshal(b, &l), "%s", b)
	return l
}
