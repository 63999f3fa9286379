package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tree makes the entries under root: a name ending in / is a directory,
// "name->target" a symbolic link, anything else an empty file.
func tree(t *testing.T, root string, entries ...string) {
	t.Helper()
	for _, e := range entries {
		if name, target, ok := strings.Cut(e, "->"); ok {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
			require.NoError(t, os.Symlink(target, filepath.Join(root, name)))
			continue
		}
		p := filepath.Join(root, e)
		if strings.HasSuffix(e, "/") {
			require.NoError(t, os.MkdirAll(p, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
}

// TestPlan: the grants around gencode's directories. A root that holds
// none is granted whole; one that holds some gets every entry met on the
// way down except the directories on the way and the protected ones;
// symbolic links are never granted; a root inside a protected directory
// gets nothing.
func TestPlan(t *testing.T) {
	t.Parallel()
	home := []string{
		".bashrc", "notes.txt", "src/app/main.go", "link->/etc",
		".config/gencode/config.toml", ".config/git/config", ".config/nvim/",
		".local/share/gencode/sessions.db", ".local/share/fonts/", ".local/bin/tool",
	}
	tests := []struct {
		name        string
		entries     []string
		roots       []string // relative to the test's directory
		protected   []string
		want        []string // "d:path" or "f:path", relative
		wantSkipped []string
	}{
		{
			name:    "a root without protected dirs is granted whole",
			entries: []string{"proj/a.go"},
			roots:   []string{"proj"}, protected: []string{"home/.config/gencode"},
			want: []string{"d:proj"},
		},
		{
			name:    "home as the project: everything but the way to gencode's dirs",
			entries: home,
			roots:   []string{"."}, protected: []string{".config/gencode", ".local/share/gencode", ".local/state/gencode"},
			want: []string{
				"f:.bashrc", "f:notes.txt", "d:src",
				"d:.config/git", "d:.config/nvim",
				"d:.local/bin", "d:.local/share/fonts",
			},
		},
		{
			name:    "a protected dir that does not exist yet is still kept out",
			entries: []string{"a.txt", ".config/other/"},
			roots:   []string{"."}, protected: []string{".config/gencode", ".local/state/gencode"},
			want: []string{"f:a.txt", "d:.config/other"},
		},
		{
			name:    "a protected file beneath the root (a --config file)",
			entries: []string{"conf/gencode.toml", "conf/other.toml", "main.go"},
			roots:   []string{"."}, protected: []string{"conf/gencode.toml"},
			want: []string{"f:conf/other.toml", "f:main.go"},
		},
		{
			name:    "a root inside a protected dir gets nothing",
			entries: []string{".config/gencode/projects/x/"},
			roots:   []string{".config/gencode/projects/x"}, protected: []string{".config/gencode"},
			wantSkipped: []string{".config/gencode/projects/x"},
		},
		{
			name:    "a root that is a protected dir gets nothing",
			entries: []string{".config/gencode/"},
			roots:   []string{".config/gencode"}, protected: []string{".config/gencode"},
			wantSkipped: []string{".config/gencode"},
		},
		{
			name:    "nested protected dirs: nothing inside the outer one",
			entries: []string{"p/inner/x", "p/y", "q"},
			roots:   []string{"."}, protected: []string{"p", "p/inner"},
			want: []string{"f:q"},
		},
		{
			name:    "a writable dir not made yet is left out",
			entries: []string{"proj/a.go"},
			roots:   []string{"proj", "cache/go-build"}, protected: []string{"home/.config/gencode"},
			want: []string{"d:proj"},
		},
		{
			name:    "several roots: each on its own",
			entries: []string{"proj/a.go", "tmp/data/x.db", "tmp/other/", "tmp/f"},
			roots:   []string{"proj", "tmp"}, protected: []string{"tmp/data"},
			want: []string{"d:proj", "f:tmp/f", "d:tmp/other"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			tree(t, dir, tt.entries...)
			abs := func(ps []string) []string {
				var out []string
				for _, p := range ps {
					out = append(out, filepath.Join(dir, p))
				}
				return out
			}
			grants, skipped, err := Plan(abs(tt.roots), abs(tt.protected))
			require.NoError(t, err)
			var got []string
			for _, g := range grants {
				rel, err := filepath.Rel(dir, g.Path)
				require.NoError(t, err)
				kind := "f:"
				if g.Dir {
					kind = "d:"
				}
				got = append(got, kind+rel)
			}
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			assert.Equal(t, want, got, "Plan(%v, %v)", tt.roots, tt.protected)
			assert.Equal(t, abs(tt.wantSkipped), skipped)
			for _, g := range grants {
				for _, p := range abs(tt.protected) {
					assert.False(t, within(p, g.Path), "grant %s holds protected %s", g.Path, p)
				}
			}
		})
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	tree(t, dir, "real/sub/", "alias->real")
	tests := []struct{ in, want string }{
		{filepath.Join(dir, "alias", "sub"), filepath.Join(dir, "real", "sub")},
		{filepath.Join(dir, "alias", "missing", "x"), filepath.Join(dir, "real", "missing", "x")},
		{"alias/../real/./sub", filepath.Join(dir, "real", "sub")},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Resolve(tt.in, dir), "Resolve(%q)", tt.in)
	}
}
