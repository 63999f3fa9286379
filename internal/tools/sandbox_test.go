package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/sandbox"
)

// TestAutoAllowThatCannotApplySaysWhy: with [sandbox] auto_allow set but
// not applicable, Bash asks, and the question says why it was not spared;
// without auto_allow the question carries no note.
func TestAutoAllowThatCannotApplySaysWhy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		auto     bool
		sup      sandbox.Support
		wantNote string
	}{
		{"kernel without network restriction", true, sandbox.Support{ABI: 3}, "cannot take the network away (ABI 4 can)"},
		{"no sandbox", true, sandbox.Support{Why: "not Linux"}, "auto_allow does nothing: no sandbox is in force (not Linux)"},
		{"auto_allow not set", false, sandbox.Support{ABI: 3}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			asker := &fakeAsker{decision: Deny}
			s, dir := newTestSet(t, Options{Asker: asker})
			s.sandbox = sandbox.New(sandbox.Config{Enabled: true, AutoAllow: tt.auto, WorkDir: dir, TempDir: dir, Executable: "/nonexistent"}, tt.sup)
			r := s.Run(context.Background(), Call{ID: "c", Name: ToolBash, Arguments: `{"command":"true"}`})
			assert.True(t, r.Denied)
			asked := asker.asked()
			require.Len(t, asked, 1, "Bash did not ask")
			if tt.wantNote == "" {
				assert.Empty(t, asked[0].Note)
				return
			}
			assert.Contains(t, asked[0].Note, tt.wantNote)
		})
	}
}

// TestAutoAllowThatCannotKeepGitAsks: where the sandbox cannot keep the
// project's git directories read-only (here the working directory is
// inside one), an auto-allowed Bash call asks instead, and says why.
func TestAutoAllowThatCannotKeepGitAsks(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	work := filepath.Join(root, ".git", "hooks")
	require.NoError(t, os.MkdirAll(work, 0o755))
	asker := &fakeAsker{decision: Deny}
	s := New(Options{WorkDir: work, Asker: asker,
		Sandbox: sandbox.New(sandbox.Config{Enabled: true, AutoAllow: true, WorkDir: work, TempDir: root, Executable: "/nonexistent"}, sandbox.Support{ABI: 7})})
	r := s.Run(context.Background(), Call{ID: "c", Name: ToolBash, Arguments: `{"command":"true"}`})
	assert.True(t, r.Denied)
	asked := asker.asked()
	require.Len(t, asked, 1, "Bash ran without asking")
	assert.Contains(t, asked[0].Note, "auto_allow did not apply to this command: its git directories cannot be kept read-only: the project lies inside the git directory "+filepath.Join(root, ".git"))
}
