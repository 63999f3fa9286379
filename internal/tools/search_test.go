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

// makeTree creates files (path -> content) under dir.
func makeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(p)), content)
	}
}

func TestGlob(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	makeTree(t, dir, map[string]string{
		"main.go":                "package main\n",
		"README.md":              "# x\n",
		"cmd/app/app.go":         "package app\n",
		"cmd/app/app_test.go":    "package app\n",
		"internal/a/b/c/deep.go": "package c\n",
		"web/x.ts":               "",
		"web/y.tsx":              "",
		".git/config.go":         "",
		"node_modules/m/i.go":    "",
		"node_modules/m/i.js":    "",
	})
	require.NoError(t, os.Symlink(filepath.Join(dir, "cmd"), filepath.Join(dir, "cmdlink")))

	tests := []struct {
		name    string
		args    map[string]any
		want    string
		wantErr string
	}{
		{"doublestar", map[string]any{"pattern": "**/*.go"}, "cmd/app/app.go\ncmd/app/app_test.go\ninternal/a/b/c/deep.go\nmain.go", ""},
		{"single level", map[string]any{"pattern": "*.go"}, "main.go", ""},
		{"literal prefix", map[string]any{"pattern": "cmd/**/*_test.go"}, "cmd/app/app_test.go", ""},
		{"braces", map[string]any{"pattern": "web/*.{ts,tsx}"}, "web/x.ts\nweb/y.tsx", ""},
		{"path argument", map[string]any{"pattern": "**/*.go", "path": "internal"}, "internal/a/b/c/deep.go", ""},
		{"absolute pattern inside", map[string]any{"pattern": filepath.ToSlash(dir) + "/cmd/**/app.go"}, "cmd/app/app.go", ""},
		{"node_modules when named", map[string]any{"pattern": "node_modules/**/*.js"}, "node_modules/m/i.js", ""},
		{"no match", map[string]any{"pattern": "**/*.rs"}, "no files match **/*.rs in .", ""},
		{"dotdot after wildcard", map[string]any{"pattern": "*/../*.go"}, "", ".. may only come before the first wildcard"},
		{"missing dir", map[string]any{"pattern": "*", "path": "nope"}, "", "nope does not exist"},
		{"file as path", map[string]any{"pattern": "*", "path": "main.go"}, "", "main.go is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, s, ToolGlob, tt.args)
			if tt.wantErr != "" {
				assert.True(t, r.IsError)
				assert.Contains(t, r.Content, tt.wantErr)
				return
			}
			require.False(t, r.IsError, r.Content)
			assert.Equal(t, tt.want, r.Content, "Glob(%v)", tt.args)
			assert.Equal(t, tt.args["pattern"], r.Meta.Pattern)
		})
	}
}

func TestGlobCap(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	files := map[string]string{}
	for i := range globMaxResults + 25 {
		files[fmt.Sprintf("d%d/f%03d.txt", i%3, i)] = ""
	}
	makeTree(t, dir, files)
	r := run(t, s, ToolGlob, map[string]any{"pattern": "**/*.txt"})
	require.False(t, r.IsError)
	lines := strings.Split(r.Content, "\n")
	require.Len(t, lines, globMaxResults+1)
	assert.Equal(t, "d0/f000.txt", lines[0])
	assert.Equal(t, "[25 more files not shown; narrow the pattern or path]", lines[globMaxResults])
}

func TestGrep(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	makeTree(t, dir, map[string]string{
		"a.go":              "package a\n\nfunc Hello() string {\n\treturn \"hello\"\n}\n",
		"b.txt":             "say Hello\nsay bye\n",
		"sub/c.go":          "// hello again\nvar x = 1\n",
		"sub/bin.dat":       "Hello\x00\x01\x02",
		"sub/image.png":     "\x89PNG\r\n\x1a\nHello",
		".git/HEAD":         "Hello from git\n",
		"node_modules/m.js": "Hello from deps\n",
		"esc.txt":           "\x1b[31mHello\x1b[0m colored\n",
		"long.txt":          strings.Repeat("x", 500) + "Hello" + strings.Repeat("y", 500) + "\n",
	})
	require.NoError(t, os.Symlink(filepath.Join(dir, "b.txt"), filepath.Join(dir, "link.txt")))

	tests := []struct {
		name    string
		args    map[string]any
		want    string
		wantErr string
	}{
		{"all text files", map[string]any{"pattern": "Hello"},
			"a.go:3:func Hello() string {\nb.txt:1:say Hello\nesc.txt:1:Hello colored\nlong.txt:1:" + strings.Repeat("x", grepMaxLineText) + " …\n[2 binary files skipped]", ""},
		{"case insensitive", map[string]any{"pattern": "(?i)hello", "include": "*.go"},
			"a.go:3:func Hello() string {\na.go:4:\treturn \"hello\"\nsub/c.go:1:// hello again", ""},
		{"include with a path", map[string]any{"pattern": "hello", "include": "sub/**/*.go"}, "sub/c.go:1:// hello again", ""},
		{"path is a directory", map[string]any{"pattern": "x", "path": "sub"}, "sub/c.go:2:var x = 1\n[2 binary files skipped]", ""},
		{"path is a file", map[string]any{"pattern": "say", "path": "b.txt"}, "b.txt:1:say Hello\nb.txt:2:say bye", ""},
		{"regexp", map[string]any{"pattern": `^func \w+\(\)`, "include": "*.go"}, "a.go:3:func Hello() string {", ""},
		{"one binary file", map[string]any{"pattern": "Hello", "path": "sub/bin.dat"}, "no matches for Hello in sub/bin.dat\n[1 binary file skipped]", ""},
		{"no match", map[string]any{"pattern": "zzz", "include": "*.go"}, "no matches for zzz in .", ""},
		{"missing path", map[string]any{"pattern": "x", "path": "nope"}, "", "nope does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, s, ToolGrep, tt.args)
			if tt.wantErr != "" {
				assert.True(t, r.IsError)
				assert.Contains(t, r.Content, tt.wantErr)
				return
			}
			require.False(t, r.IsError, r.Content)
			assert.Equal(t, tt.want, r.Content, "Grep(%v)", tt.args)
		})
	}
}

func TestGrepCap(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	var b strings.Builder
	for i := range 250 {
		fmt.Fprintf(&b, "match %d\n", i)
	}
	makeTree(t, dir, map[string]string{"a.txt": b.String(), "b.txt": "match b\n"})
	r := run(t, s, ToolGrep, map[string]any{"pattern": "match"})
	require.False(t, r.IsError)
	lines := strings.Split(r.Content, "\n")
	require.Len(t, lines, grepMaxMatches+1)
	assert.Equal(t, "a.txt:1:match 0", lines[0])
	assert.Equal(t, "[showing 200 of 251 matches in 2 files; narrow the pattern, path or include]", lines[grepMaxMatches])
}

func TestLS(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	makeTree(t, dir, map[string]string{
		"go.mod":              "module x\n",
		"cmd/main.go":         "",
		"internal/a/a.go":     "",
		"internal/b/b.go":     "",
		".git/HEAD":           "",
		"node_modules/x/y.js": "",
	})
	require.NoError(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755))
	require.NoError(t, os.Symlink("go.mod", filepath.Join(dir, "link")))

	tests := []struct {
		name    string
		path    string
		want    string
		wantErr string
	}{
		{"working directory", "", dir + "/\n  .git/ (not expanded)\n  cmd/\n    main.go\n  empty/ (empty)\n  go.mod\n  internal/\n    a/\n      a.go\n    b/\n      b.go\n  link -> go.mod\n  node_modules/ (not expanded)", ""},
		{"subdirectory", "internal", filepath.Join(dir, "internal") + "/\n  a/\n    a.go\n  b/\n    b.go", ""},
		{"empty directory", "empty", filepath.Join(dir, "empty") + "/\n(empty directory)", ""},
		{"file", "go.mod", "go.mod is a file (9 bytes); use Read to see it", ""},
		{"missing", "nope", "", "nope does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{}
			if tt.path != "" {
				args["path"] = tt.path
			}
			r := run(t, s, ToolLS, args)
			if tt.wantErr != "" {
				assert.True(t, r.IsError)
				assert.Contains(t, r.Content, tt.wantErr)
				return
			}
			require.False(t, r.IsError, r.Content)
			assert.Equal(t, tt.want, r.Content, "LS(%q)", tt.path)
		})
	}
}

func TestLSCap(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	files := map[string]string{}
	for i := range 150 {
		files[fmt.Sprintf("top%03d.txt", i)] = ""
	}
	for i := range 100 {
		files[fmt.Sprintf("zdir/f%03d.txt", i)] = ""
		files[fmt.Sprintf("zdir/sub/g%03d.txt", i)] = ""
	}
	makeTree(t, dir, files)
	r := run(t, s, ToolLS, map[string]any{})
	require.False(t, r.IsError)
	lines := strings.Split(r.Content, "\n")
	// Breadth first: all 151 top-level entries, then 49 of zdir's 101.
	assert.Equal(t, dir+"/", lines[0])
	assert.Equal(t, "  top000.txt", lines[1])
	assert.Contains(t, r.Content, "  zdir/\n    f000.txt\n")
	assert.Contains(t, r.Content, "    f048.txt\n    … 52 more\n")
	assert.NotContains(t, r.Content, "g000.txt")
	assert.True(t, strings.HasSuffix(r.Content, "[capped at 200 entries: 52 more entries in listed directories, 0 directories (…) not listed; LS a subdirectory to see more]"), r.Content[len(r.Content)-200:])
}
