package fschange

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIgnoreReadsGitignoreAsGit: the walk's .gitignore rules are go-git's
// (package ignore, which the tools use too), not a second reading of the
// format: a pattern anchored to its file's directory, a deeper file's
// negation, and "**" all mean what git says.
func TestIgnoreReadsGitignoreAsGit(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".gitignore"), []byte("/top.log\n*.log\nbuild/**/*.o\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sub", ".gitignore"), []byte("!keep.log\n"), 0o644))
	var g ignorer
	require.True(t, g.push(filepath.Join(root, ".gitignore"), ""))
	require.True(t, g.push(filepath.Join(root, "sub", ".gitignore"), "sub"))
	for rel, want := range map[string]bool{
		"build/x/y/z.o": true,
		"x/build/z.o":   false,
		"sub/top.log":   true, // *.log, not /top.log
		"top.log":       true,
		"sub/x.log":     true,
		"sub/keep.log":  false,
		"keep.log":      true, // the negation is sub's
		"sub/main.go":   false,
	} {
		require.Equal(t, want, g.ignored(rel, false), rel)
	}
	g.pop()
	require.True(t, g.ignored("sub/keep.log", false), "popped: the parent's rules alone")
}
