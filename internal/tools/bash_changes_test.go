//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/fschange"
)

// TestBashRecordsObservedChanges: a Bash call's result says which files
// under the working directory the command created, modified and deleted,
// as seen on the filesystem, whatever the command line looks like.
func TestBashRecordsObservedChanges(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d0.txt"), []byte("d\n"), 0o644))
	r := run(t, s, ToolBash, map[string]any{"command": `f=a.txt; sed -i 's/a/A/' "$f"; printf x > "new.txt"; rm d0.txt; exit 3`})
	require.True(t, r.IsError)
	c := r.Meta.Changes
	require.NotNil(t, c)
	require.True(t, c.Observed)
	require.Equal(t, []string{"new.txt"}, c.Created)
	require.Equal(t, []string{"a.txt"}, c.Modified)
	require.Equal(t, []string{"d0.txt"}, c.Deleted)
	require.NotContains(t, r.Content, "new.txt", "the changes are not text the model sees")

	r = run(t, s, ToolBash, map[string]any{"command": "ls"})
	require.True(t, r.Meta.Changes.Observed)
	require.Empty(t, r.Meta.Changes.Created)
}

// TestBashTooLargeToObserve: past the observation budget the call still
// runs, and its changes say they were not observed, and why.
func TestBashTooLargeToObserve(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	for _, n := range []string{"a", "b", "c"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o644))
	}
	s.obs = fschange.New(s.workDir, fschange.Options{MaxFiles: 2})
	r := run(t, s, ToolBash, map[string]any{"command": "echo x > d"})
	require.False(t, r.IsError, r.Content)
	require.False(t, r.Meta.Changes.Observed)
	require.Contains(t, r.Meta.Changes.Reason, "over 2 files")
}
