package cli

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPseudoCommit(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"v0.0.0-20261201202237-decfdfd01234", "decfdfd01234"},
		{"v1.2.4-0.20261201202237-decfdfd01234+dirty", "decfdfd01234"},
		{"v1.2.3", ""},
		{"(devel)", ""},
		{"v0.0.0-20261201202237-NOTHEXNOTHEX", ""},
	}
	for _, tt := range tests {
		if got := pseudoCommit(tt.in); got != tt.want {
			t.Errorf("pseudoCommit(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestVersionFlag: --version prints the version, the commit and the Go
// version, and exits 0 without a config or a data directory.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	code := Run(context.Background(), Env{Args: []string{"--version"}, Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return t.TempDir(), nil }})
	require.Equal(t, ExitOK, code, "stderr: %s", errb.String())
	line := out.String()
	require.True(t, strings.HasPrefix(line, "gencode "), "%q", line)
	require.Contains(t, line, "(commit ")
	require.Contains(t, line, runtime.Version())
	require.Equal(t, buildInfo().String(), strings.TrimSuffix(strings.TrimPrefix(line, "gencode "), "\n"))
}

// TestCommandName: the exit hint names the binary as the user can run it
// again: bin/gencode after `make run`, gencode when installed on PATH.
func TestCommandName(t *testing.T) {
	t.Parallel()
	tests := []struct{ arg0, want string }{
		{"./bin/gencode", "bin/gencode"},
		{"bin/gencode", "bin/gencode"},
		{"gencode", "gencode"},
		{"/home/me/go/bin/gencode", "/home/me/go/bin/gencode"},
		{"", "gencode"},
	}
	for _, tt := range tests {
		if got := commandName(tt.arg0); got != tt.want {
			t.Errorf("commandName(%q) = %q, want %q", tt.arg0, got, tt.want)
		}
	}
}
