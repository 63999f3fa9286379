package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitRepo makes the files of a git directory at dir: what git checks to
// take it for one (HEAD, objects, refs), a config and a hook.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(dir, "config"), "[core]\n\tbare = false\n")
	writeFile(t, filepath.Join(dir, "hooks", "pre-commit.sample"), "#!/bin/sh\n")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "objects"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "refs", "heads"), 0o755))
}

// gitProject is a project that is a git repository, holding a nested
// repository (sub), one whose .git is a link (alias -> plain), one whose .git file links to a git directory under
// another name (linked -> store), a bare repository (bare.git), links
// into .git, and files whose names only look like git's.
func gitProject(t *testing.T) string {
	t.Helper()
	work, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	gitRepo(t, filepath.Join(work, ".git"))
	gitRepo(t, filepath.Join(work, "sub", ".git"))
	gitRepo(t, filepath.Join(work, "store"))
	writeFile(t, filepath.Join(work, "linked", ".git"), "gitdir: ../store\n")
	gitRepo(t, filepath.Join(work, "bare.git"))
	writeFile(t, filepath.Join(work, ".gitignore"), "*.o\n")
	writeFile(t, filepath.Join(work, ".github", "x"), "x\n")
	writeFile(t, filepath.Join(work, "notes.git.txt"), "x\n")
	require.NoError(t, os.Symlink(".git/config", filepath.Join(work, "cfg")))
	require.NoError(t, os.Symlink(".git/hooks", filepath.Join(work, "hooks")))
	writeFile(t, filepath.Join(work, "plain", "config"), "[core]\n")
	require.NoError(t, os.MkdirAll(filepath.Join(work, "alias"), 0o755))
	require.NoError(t, os.Symlink("../plain", filepath.Join(work, "alias", ".git")))
	return work
}

// TestWritesIntoGitAskEveryTime: a Write or Edit into a git directory
// inside the project is treated as one outside it: with Write and Edit
// allowed (--allow), allowed by the project's rules or for the session,
// it still asks; print mode refuses it, saying why, and only --yolo lets
// it through. Files that only look like git's are the project's.
func TestWritesIntoGitAskEveryTime(t *testing.T) {
	t.Parallel()
	const hook = "#!/bin/sh\ntouch pwned\n"
	fsmonitor := map[string]any{"old_string": "bare = false", "new_string": "bare = false\n\tfsmonitor = touch pwned"}
	tests := []struct {
		name    string
		tool    string
		path    string
		args    map[string]any
		guarded bool
	}{
		{"config edited", ToolEdit, ".git/config", fsmonitor, true},
		{"config", ToolWrite, ".git/config", nil, true},
		{"new hook", ToolWrite, ".git/hooks/pre-commit", nil, true},
		{"absolute path", ToolWrite, "ABS/.git/hooks/post-checkout", nil, true},
		{"through ..", ToolWrite, "src/../.git/hooks/pre-push", nil, true},
		{"other case", ToolWrite, ".GIT/hooks/pre-commit", nil, true},
		{"nested repository edited", ToolEdit, "sub/.git/config", fsmonitor, true},
		{"nested repository", ToolWrite, "sub/.git/config", nil, true},
		{"a .git file (gitdir link)", ToolWrite, "linked/.git", nil, true},
		{"a new .git file", ToolWrite, "plant/.git", nil, true},
		{"git directory a .git file links to", ToolWrite, "store/config", nil, true},
		{"bare repository", ToolWrite, "bare.git/hooks/pre-receive", nil, true},
		{"through a link named .git", ToolWrite, "alias/.git/config", nil, true},
		{"symlink to .git/config", ToolWrite, "cfg", nil, true},
		{"symlink to .git/hooks", ToolWrite, "hooks/pre-commit", nil, true},
		{".gitignore edited", ToolEdit, ".gitignore", map[string]any{"old_string": "*.o", "new_string": "*.a"}, false},
		{".gitignore", ToolWrite, ".gitignore", nil, false},
		{".github", ToolWrite, ".github/x", nil, false},
		{"name with .git in it", ToolWrite, "notes.git.txt", nil, false},
		{"ordinary file", ToolWrite, "src/main.go", nil, false},
	}
	args := func(work string, tool, path string, extra map[string]any) map[string]any {
		if len(path) > 3 && path[:3] == "ABS" {
			path = work + path[3:]
		}
		a := map[string]any{"file_path": path}
		if tool == ToolWrite {
			a["content"] = hook
		}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	snapshot := func(work string) map[string]string {
		files := map[string]string{}
		require.NoError(t, filepath.Walk(work, func(p string, fi os.FileInfo, err error) error {
			require.NoError(t, err)
			if fi.Mode().IsRegular() {
				files[p] = readFile(t, p)
			}
			return nil
		}))
		return files
	}

	for _, mode := range []struct {
		name string
		opts Options
	}{
		{"allowed", Options{Permissions: Permissions{ToolWrite: ModeAllow, ToolEdit: ModeAllow}}},
		{"project rules", Options{Project: &memRules{rules: []Rule{{Tool: ToolWrite}, {Tool: ToolEdit}}}}},
	} {
		t.Run("print mode/"+mode.name, func(t *testing.T) {
			t.Parallel()
			work := gitProject(t)
			opts := mode.opts
			opts.WorkDir = work
			s := New(opts)
			for _, tt := range tests {
				before := snapshot(work)
				res := run(t, s, tt.tool, args(work, tt.tool, tt.path, tt.args))
				if !tt.guarded {
					assert.False(t, res.IsError, "%s: %s", tt.name, res.Content)
					continue
				}
				assert.True(t, res.Denied, "%s ran: %s", tt.name, res.Content)
				assert.Contains(t, res.Content, "writes into .git ask every time: git runs code from its config and hooks", tt.name)
				assert.Contains(t, res.Content, "only --yolo allows it", tt.name)
				assert.Equal(t, LiftYolo, res.Lift, tt.name)
				assert.Equal(t, before, snapshot(work), "%s: nothing changed", tt.name)
			}
			assert.NoFileExists(t, filepath.Join(work, ".git", "hooks", "pre-commit"))
		})
	}

	t.Run("asks every time, also after allow for the session", func(t *testing.T) {
		t.Parallel()
		work := gitProject(t)
		asker := &fakeAsker{decision: AllowSession}
		s := New(Options{WorkDir: work, Asker: asker, Project: &memRules{}})
		res := run(t, s, ToolWrite, map[string]any{"file_path": "first.txt", "content": "x"})
		require.False(t, res.IsError, res.Content)
		res = run(t, s, ToolEdit, map[string]any{"file_path": "first.txt", "old_string": "x", "new_string": "y"})
		require.False(t, res.IsError, res.Content)
		asked := len(asker.asked())
		for _, tt := range tests {
			res := run(t, s, tt.tool, args(work, tt.tool, tt.path, tt.args))
			assert.False(t, res.IsError, "%s: %s", tt.name, res.Content)
			reqs := asker.asked()
			if !tt.guarded {
				assert.Len(t, reqs, asked, "%s: allowed for the session", tt.name)
				continue
			}
			require.Len(t, reqs, asked+1, "%s: asked", tt.name)
			asked++
			r := reqs[len(reqs)-1]
			assert.True(t, r.OutsideWorkDir, tt.name)
			assert.Equal(t, gitGuard, r.Guard, tt.name)
			assert.Empty(t, r.Project, "%s: not offered for the project", tt.name)
			assert.Equal(t, []Decision{AllowOnce, Deny}, r.Choices(), tt.name)
		}
		assert.Equal(t, hook, readFile(t, filepath.Join(work, ".git", "hooks", "pre-commit")), "allowed once, it ran")
	})

	t.Run("yolo", func(t *testing.T) {
		t.Parallel()
		work := gitProject(t)
		s := New(Options{WorkDir: work, Yolo: true})
		for _, tt := range tests {
			res := run(t, s, tt.tool, args(work, tt.tool, tt.path, tt.args))
			assert.False(t, res.IsError, "%s: %s", tt.name, res.Content)
		}
		assert.Equal(t, hook, readFile(t, filepath.Join(work, ".git", "hooks", "pre-commit")))
	})
}

// TestGitDirAroundTheWorkingDirectory: the repository's git directory is
// found as git finds it from the working directory: above it (then it is
// outside anyway), linked to by a .git file under another name, or the
// working directory itself inside a bare repository.
func TestGitDirAroundTheWorkingDirectory(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	allowed := Permissions{ToolWrite: ModeAllow}

	// A working directory below the repository's top.
	gitRepo(t, filepath.Join(root, "repo", ".git"))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "repo", "sub"), 0o755))
	s := New(Options{WorkDir: filepath.Join(root, "repo", "sub"), Permissions: allowed})
	res := run(t, s, ToolWrite, map[string]any{"file_path": "../.git/config", "content": "x"})
	assert.True(t, res.Denied, res.Content)
	assert.Contains(t, res.Content, "outside the working directory")
	res = run(t, s, ToolWrite, map[string]any{"file_path": "ok.txt", "content": "x"})
	assert.False(t, res.IsError, res.Content)

	// The top's .git file links to a directory inside the working
	// directory, which git uses as the repository although nothing says
	// .git on the way and it holds only what git reads.
	writeFile(t, filepath.Join(root, "linked", ".git"), "gitdir: work/meta\n")
	writeFile(t, filepath.Join(root, "linked", "work", "meta", "config"), "[core]\n")
	s = New(Options{WorkDir: filepath.Join(root, "linked", "work"), Permissions: allowed})
	res = run(t, s, ToolWrite, map[string]any{"file_path": "meta/hooks/pre-commit", "content": "x"})
	assert.True(t, res.Denied, res.Content)
	assert.Contains(t, res.Content, gitGuard)
	res = run(t, s, ToolWrite, map[string]any{"file_path": "ok.txt", "content": "x"})
	assert.False(t, res.IsError, res.Content)

	// A working directory inside a bare repository: all of it is git's.
	gitRepo(t, filepath.Join(root, "srv", "proj.git"))
	s = New(Options{WorkDir: filepath.Join(root, "srv", "proj.git", "hooks"), Permissions: allowed})
	res = run(t, s, ToolWrite, map[string]any{"file_path": "post-receive", "content": "x"})
	assert.True(t, res.Denied, res.Content)
	assert.Contains(t, res.Content, gitGuard)
}
