package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
)

// TestLogFile: every run appends to $XDG_STATE_HOME/gencode/gencode.log,
// private; a failed turn is there with its session id, the API key is
// not; --debug adds each model request.
func TestLogFile(t *testing.T) {
	t.Parallel()
	const key = "sk-test-0123456789abcdefghij"
	srv := openaitest.NewServer(t)
	home := t.TempDir()
	env := map[string]string{"HOME": home, "GENCODE_HOME": filepath.Join(home, "data"),
		"XDG_STATE_HOME": filepath.Join(home, "state"), "OPENAI_API_KEY": key, "OPENAI_BASE_URL": srv.URL()}
	logPath := filepath.Join(home, "state", "gencode", "gencode.log")

	srv.Enqueue(openaitest.Error(400, `{"error":{"message":"bad request: key `+key+` refused"}}`))
	_, errOut, code := runCLI(t, env, nil, "-p", "hi")
	require.NotEqual(t, 0, code, errOut)
	st, err := session.Open(context.Background(), env["GENCODE_HOME"])
	require.NoError(t, err)
	sessions, err := st.Sessions(context.Background(), 0)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	require.Len(t, sessions, 1)

	b, err := os.ReadFile(logPath)
	require.NoError(t, err)
	log := string(b)
	require.Contains(t, logLine(log, `msg="turn failed"`), " session="+sessions[0].ID+" ")
	require.NotContains(t, log, key, "the API key is redacted")
	require.Contains(t, log, "[REDACTED:api-key]")
	require.NotContains(t, log, "model request", "request records are --debug's")
	for path, want := range map[string]os.FileMode{logPath: 0o600, filepath.Dir(logPath): 0o700} {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, want, fi.Mode().Perm(), path)
	}

	srv.Enqueue(openaitest.Text("fine"))
	out, errOut, code := runCLI(t, env, nil, "--debug", "-p", "hi")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "fine\n", out)
	b, err = os.ReadFile(logPath)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), log), "appended")
	require.Contains(t, logLine(string(b)[len(log):], `level=DEBUG msg="model request"`), " session=")
}

// logLine is the last line of log that holds s ("" if none).
func logLine(log, s string) string {
	var line string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			line = l
		}
	}
	return line
}
