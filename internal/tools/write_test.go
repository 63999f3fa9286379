package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	writeFile(t, filepath.Join(dir, "old.txt"), "one\ntwo\n")
	require.NoError(t, os.Chmod(filepath.Join(dir, "old.txt"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "adir"), 0o755))

	tests := []struct {
		name     string
		path     string
		content  string
		want     string
		wantMode os.FileMode
		wantErr  string
	}{
		{"new file", "new.txt", "hello\n", "Created new.txt (6 bytes, 1 line)", 0o644, ""},
		{"parents created", "a/b/c/deep.go", "package c\n\nfunc F() {}\n", "Created a/b/c/deep.go (23 bytes, 3 lines)", 0o644, ""},
		{"overwrite keeps mode", "old.txt", "x", "Overwrote old.txt (1 bytes, 1 line; was 2 lines)", 0o755, ""},
		{"empty content", "empty.txt", "", "Created empty.txt (0 bytes, 0 lines)", 0o644, ""},
		{"directory", "adir", "x", "", 0, "adir is a directory"},
		{"parent is a file", "old.txt/x", "x", "", 0, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, s, ToolWrite, map[string]any{"file_path": tt.path, "content": tt.content})
			if tt.wantErr != "" {
				assert.True(t, r.IsError)
				assert.Contains(t, r.Content, tt.wantErr)
				return
			}
			require.False(t, r.IsError, r.Content)
			assert.Equal(t, tt.want, r.Content)
			assert.Contains(t, r.Meta.Diff, "+++ b/"+tt.path, "the change made")
			r.Meta.Diff = ""
			assert.Equal(t, Meta{Tool: ToolWrite, FilePath: tt.path, Success: true}, r.Meta)
			got, err := os.ReadFile(filepath.Join(dir, tt.path))
			require.NoError(t, err)
			assert.Equal(t, tt.content, string(got))
			fi, err := os.Stat(filepath.Join(dir, tt.path))
			require.NoError(t, err)
			assert.Equal(t, tt.wantMode, fi.Mode().Perm())
		})
	}
	// No temporary files are left behind.
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		require.NoError(t, err)
		assert.NotContains(t, filepath.Base(p), ".tmp-", "leftover temp file %s", p)
		return nil
	})
	require.NoError(t, err)
}

// The write goes through a temporary file and a rename: a reader holding the
// old file keeps seeing the old content, never a truncated file.
func TestWriteIsAtomic(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	path := filepath.Join(dir, "f.txt")
	writeFile(t, path, "old content\n")
	before, err := os.Stat(path)
	require.NoError(t, err)
	held, err := os.Open(path)
	require.NoError(t, err)
	defer held.Close()

	r := run(t, s, ToolWrite, map[string]any{"file_path": "f.txt", "content": "new content\n"})
	require.False(t, r.IsError, r.Content)

	after, err := os.Stat(path)
	require.NoError(t, err)
	assert.False(t, os.SameFile(before, after), "the file was replaced, not rewritten in place")
	old := make([]byte, 64)
	n, _ := held.Read(old)
	assert.Equal(t, "old content\n", string(old[:n]))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new content\n", string(got))
}

// Writing through a symlink inside the working directory replaces its
// target and keeps the link.
func TestWriteThroughSymlinkKeepsLink(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	writeFile(t, filepath.Join(dir, "real.txt"), "old\n")
	require.NoError(t, os.Symlink("real.txt", filepath.Join(dir, "link.txt")))
	r := run(t, s, ToolWrite, map[string]any{"file_path": "link.txt", "content": "new\n"})
	require.False(t, r.IsError, r.Content)
	fi, err := os.Lstat(filepath.Join(dir, "link.txt"))
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSymlink, "still a symlink")
	got, err := os.ReadFile(filepath.Join(dir, "real.txt"))
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(got))
}

func TestUnifiedDiff(t *testing.T) {
	tests := []struct {
		name    string
		old     string
		new     string
		existed bool
		want    string
	}{
		{"new file", "", "a\nb\n", false, "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"one line changed", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n", true,
			"--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n"},
		{"lines added at end", "a\n", "a\nb\n", true, "--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n a\n+b\n"},
		// Two changes far apart are two hunks: the untouched lines between
		// them are not shown as removed and added again.
		{"two distant changes", numbered(1, 30), strings.Replace(strings.Replace(numbered(1, 30), "2\n", "TWO\n", 1), "28\n", "TWENTY-EIGHT\n", 1), true,
			"--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n 1\n-2\n+TWO\n 3\n 4\n 5\n@@ -25,6 +25,6 @@\n 25\n 26\n 27\n-28\n+TWENTY-EIGHT\n 29\n 30\n"},
		// A line moved from the top to the bottom is one removal and one
		// addition, not the whole file rewritten.
		{"line moved", numbered(1, 12), numbered(2, 12) + "1\n", true,
			"--- a/f\n+++ b/f\n@@ -1,4 +1,3 @@\n-1\n 2\n 3\n 4\n@@ -10,3 +9,4 @@\n 10\n 11\n 12\n+1\n"},
		{"no newline at end", "a\nb", "a\nc", true, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"no change", "a\n", "a\n", true, "--- a/f\n+++ b/f\n(no changes)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, unifiedDiff("f", tt.old, tt.new, tt.existed))
		})
	}
	big := strings.Repeat("x\n", maxDiffLines+50)
	// The cap counts every line after the file header: one hunk line and 450 added.
	assert.Contains(t, unifiedDiff("f", "", big, false), "... 51 more diff lines")
}

// numbered is the lines from..to, each its number.
func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}
