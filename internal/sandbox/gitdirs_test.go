package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoTree is a project that is a repository and holds git directories of
// every kind, and files that only look like them.
var repoTree = []string{
	".git/HEAD", ".git/config", ".git/hooks/", ".git/objects/", ".git/refs/", ".git/modules/mod/config",
	"mod/.git", // a submodule: its gitdir is in .git/modules
	"nested/.git/config", "nested/lib/x.go", "nested/README",
	"linked/.git", "store/linked.git/HEAD", "store/linked.git/commondir", "store/common.git/config", "store/other/",
	"backup.git/HEAD", "backup.git/objects/", "backup.git/refs/",
	"sym/.git->../nested/.git",
	"out/.git", // points outside the project
	".gitignore", ".github/workflows/ci.yml", "notes.git.txt", "src/main.go", "README.md",
	"escape->/",
}

func writeRepoTree(t *testing.T, dir string) {
	t.Helper()
	tree(t, dir, repoTree...)
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("mod/.git", "gitdir: ../.git/modules/mod\n")
	write("linked/.git", "gitdir: ../store/linked.git\n")
	write("store/linked.git/commondir", "../common.git\n")
	write("out/.git", "gitdir: /nonexistent/elsewhere.git\n")
}

// TestGitDirs: every git directory beneath the project is found (its own
// .git, also before there is one; a nested repository's, a submodule's
// .git file, where a .git file or link points inside the project and its
// common directory, a bare repository), and nothing that only looks like
// one; symbolic links are not followed; a tree too large to search, or a
// project inside a git directory, is an error.
func TestGitDirs(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	proj := filepath.Join(dir, "proj")
	writeRepoTree(t, proj)
	got, err := GitDirs(proj, 1000)
	require.NoError(t, err)
	rel := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			r, err := filepath.Rel(proj, p)
			require.NoError(t, err)
			out = append(out, r)
		}
		return out
	}
	assert.Equal(t, []string{".git", "backup.git", "linked/.git", "mod/.git", "nested/.git", "out/.git",
		"store/common.git", "store/linked.git", "sym/.git"}, rel(got))

	// Not a repository yet: its .git is kept all the same (a `git init`
	// would make one).
	plain := filepath.Join(dir, "plain")
	tree(t, plain, "src/a.go")
	got, err = GitDirs(plain, 1000)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(plain, ".git")}, got)

	_, err = GitDirs(proj, 5)
	assert.ErrorContains(t, err, "more than 5 directories")
	_, err = GitDirs(filepath.Join(proj, ".git", "hooks"), 1000)
	assert.ErrorContains(t, err, "inside the git directory "+filepath.Join(proj, ".git"))
	_, err = GitDirs(filepath.Join(proj, "backup.git"), 1000)
	assert.ErrorContains(t, err, "itself a git directory")
}

// TestPlanAroundGitDirs: the plan of an auto-allowed command grants every
// entry of the project except its git directories and the directories on
// the way to them; no grant holds a git directory; the plan of an
// approved command grants the project whole.
func TestPlanAroundGitDirs(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	proj := filepath.Join(dir, "proj")
	writeRepoTree(t, proj)
	tree(t, dir, "tmp/", "data/gencode/")
	sb := New(Config{Enabled: true, AutoAllow: true, WorkDir: proj, TempDir: filepath.Join(dir, "tmp"), Executable: "/bin/gencode",
		Protected: []string{filepath.Join(dir, "data", "gencode")}}, Support{ABI: 7})
	lim, err := sb.AutoLimits()
	require.NoError(t, err)
	assert.True(t, lim.Auto)
	assert.False(t, lim.Network)
	require.Len(t, lim.GitDirs, 9)

	grants, skipped, err := Plan(sb.roots, append(sb.prot, lim.GitDirs...))
	require.NoError(t, err)
	assert.Empty(t, skipped)
	var got []string
	for _, g := range grants {
		for _, gd := range lim.GitDirs {
			assert.False(t, within(gd, g.Path), "grant %s holds the git directory %s", g.Path, gd)
		}
		rel, err := filepath.Rel(dir, g.Path)
		require.NoError(t, err)
		kind := "f:"
		if g.Dir {
			kind = "d:"
		}
		got = append(got, kind+rel)
	}
	assert.ElementsMatch(t, []string{
		"d:tmp", // the temp dir holds no git directory: whole
		"f:proj/.gitignore", "d:proj/.github", "f:proj/notes.git.txt", "d:proj/src", "f:proj/README.md",
		"d:proj/nested/lib", "f:proj/nested/README", "d:proj/store/other",
		// Not granted: proj itself, mod, nested, linked, store, sym, out
		// (on the way), the git dirs, and the links (escape).
	}, got)

	// Approved: the project whole, .git and all.
	grants, _, err = Plan(sb.roots, sb.prot)
	require.NoError(t, err)
	assert.Contains(t, grants, Grant{Path: proj, Dir: true})
}
