package tools

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ignoreTree is a repository whose .gitignore files, at the top and in a
// subdirectory, and .git/info/exclude leave some files out. Every file
// holds "hit" so Grep finds each one it searches.
func ignoreTree(t *testing.T, dir string) {
	t.Helper()
	makeTree(t, dir, map[string]string{
		".git/HEAD":         "ref: refs/heads/main\n",
		".git/info/exclude": "# local\nsecret.env\n",
		".gitignore":        "*.log\n!keep.log\nbuild/\n/root-only.txt\n\n# comment\n",
		"app.go":            "hit\n",
		"debug.log":         "hit\n",
		"keep.log":          "hit\n",
		"root-only.txt":     "hit\n",
		"secret.env":        "hit\n",
		"build/out.go":      "hit\n",
		"docs/build":        "hit\n", // a file: "build/" names directories only
		"sub/.gitignore":    "gen/\r\n*.tmp\r\n",
		"sub/a.go":          "hit\n",
		"sub/root-only.txt": "hit\n", // "/root-only.txt" is anchored to the top
		"sub/x.tmp":         "hit\n",
		"sub/b.log":         "hit\n",
		"sub/gen/g.go":      "hit\n",
		"other/x.tmp":       "hit\n", // sub's rules stay in sub
	})
}

func TestToolsHonourGitignore(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	ignoreTree(t, dir)

	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"glob everything", ToolGlob, map[string]any{"pattern": "**/*"},
			".gitignore\napp.go\ndocs/build\nkeep.log\nother/x.tmp\nsub/.gitignore\nsub/a.go\nsub/root-only.txt"},
		{"glob negation re-includes", ToolGlob, map[string]any{"pattern": "*.log"}, "keep.log"},
		{"glob in a subdirectory keeps the rules above it", ToolGlob, map[string]any{"pattern": "**/*", "path": "sub"},
			"sub/.gitignore\nsub/a.go\nsub/root-only.txt"},
		{"glob in an ignored directory named as the path", ToolGlob, map[string]any{"pattern": "**/*.go", "path": "build"}, "build/out.go"},
		{"glob naming an ignored directory in the pattern", ToolGlob, map[string]any{"pattern": "build/*.go"}, "build/out.go"},
		{"glob says what it left out", ToolGlob, map[string]any{"pattern": "**/*.tmp", "path": "sub"},
			"no files match **/*.tmp in sub (2 entries ignored by .gitignore were not searched)"},
		{"grep everything", ToolGrep, map[string]any{"pattern": "hit"},
			"app.go:1:hit\ndocs/build:1:hit\nkeep.log:1:hit\nother/x.tmp:1:hit\nsub/a.go:1:hit\nsub/root-only.txt:1:hit"},
		{"grep in a subdirectory", ToolGrep, map[string]any{"pattern": "hit", "path": "sub"}, "sub/a.go:1:hit\nsub/root-only.txt:1:hit"},
		{"grep in an ignored directory named as the path", ToolGrep, map[string]any{"pattern": "hit", "path": "sub/gen"}, "sub/gen/g.go:1:hit"},
		{"grep an ignored file named as the path", ToolGrep, map[string]any{"pattern": "hit", "path": "debug.log"}, "debug.log:1:hit"},
		{"grep says what it left out", ToolGrep, map[string]any{"pattern": "nothing", "include": "*.go"},
			"no matches for nothing in . (2 entries ignored by .gitignore were not searched)"},
		{"ls", ToolLS, map[string]any{"path": "sub"},
			filepath.Join(dir, "sub") + "/\n  .gitignore\n  a.go\n  root-only.txt\n[3 ignored by .gitignore not shown]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, s, tt.tool, tt.args)
			require.False(t, r.IsError, r.Content)
			assert.Equal(t, tt.want, r.Content, "%s(%v)", tt.tool, tt.args)
		})
	}
}

// Without a repository the .gitignore files from the working directory
// down still count; inside one, those above the working directory count too.
func TestGitignoreScope(t *testing.T) {
	t.Parallel()
	t.Run("no repository", func(t *testing.T) {
		s, dir := yoloSet(t)
		makeTree(t, dir, map[string]string{".gitignore": "*.log\n", "a.go": "", "a.log": ""})
		r := run(t, s, ToolGlob, map[string]any{"pattern": "*"})
		assert.Equal(t, ".gitignore\na.go", r.Content)
	})
	t.Run("working directory below the repository's top", func(t *testing.T) {
		top, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		makeTree(t, top, map[string]string{
			".git/HEAD": "", ".gitignore": "*.log\nproj/vendor/\n",
			"proj/a.go": "", "proj/a.log": "", "proj/vendor/v.go": "",
		})
		s := New(Options{WorkDir: filepath.Join(top, "proj"), Yolo: true})
		r := run(t, s, ToolGlob, map[string]any{"pattern": "**/*"})
		assert.Equal(t, "a.go", r.Content)
	})
}
