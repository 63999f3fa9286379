package instructions

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// tree writes files (path -> content) under a new directory and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			require.NoError(t, os.MkdirAll(full, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	return root
}

func shown(s Set) []string {
	var out []string
	for _, f := range s.Files {
		out = append(out, f.Shown+"="+strings.TrimSpace(f.Content))
	}
	return out
}

func TestLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		work  string // the working directory, under the tree
		user  string // the user's AGENTS.md, "" for none
		want  []string
	}{
		{
			name:  "git root down to the working directory",
			files: map[string]string{".git/": "", "AGENTS.md": "root", "a/AGENTS.md": "a", "a/b/c/AGENTS.md": "c", "a/b/c/d/AGENTS.md": "below"},
			work:  "a/b/c",
			want:  []string{"AGENTS.md=root", "a/AGENTS.md=a", "a/b/c/AGENTS.md=c"},
		},
		{
			name:  "CLAUDE.md where a directory has no AGENTS.md; AGENTS.md wins where both are",
			files: map[string]string{".git": "gitdir: ../x", "CLAUDE.md": "claude root", "sub/AGENTS.md": "agents sub", "sub/CLAUDE.md": "not read"},
			work:  "sub",
			want:  []string{"CLAUDE.md=claude root", "sub/AGENTS.md=agents sub"},
		},
		{
			name:  "outside a repository only the working directory",
			files: map[string]string{"AGENTS.md": "above", "w/AGENTS.md": "here"},
			work:  "w",
			want:  []string{"AGENTS.md=here"},
		},
		{
			name:  "the user's file first",
			files: map[string]string{".git/": "", "AGENTS.md": "project"},
			user:  "mine",
			want:  []string{"<user>=mine", "AGENTS.md=project"},
		},
		{
			name:  "none",
			files: map[string]string{".git/": "", "README.md": "x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := tree(t, tt.files)
			cfg := ""
			if tt.user != "" {
				cfg = filepath.Join(t.TempDir(), "gencode")
				require.NoError(t, os.MkdirAll(cfg, 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(cfg, "AGENTS.md"), []byte(tt.user), 0o600))
			}
			s := Load(filepath.Join(root, tt.work), cfg)
			got := shown(s)
			if cfg != "" {
				for i := range got {
					got[i] = strings.Replace(got[i], filepath.Join(cfg, "AGENTS.md"), "<user>", 1)
				}
			}
			require.Equal(t, tt.want, got)
			require.Empty(t, s.Problems)
			if len(tt.want) == 0 {
				require.Empty(t, s.Render())
			}
		})
	}
}

// TestRenderIsStable: the block depends only on the files, so the system
// prompt built from it is byte-identical from one load to the next.
func TestRenderIsStable(t *testing.T) {
	t.Parallel()
	root := tree(t, map[string]string{".git/": "", "AGENTS.md": "Run `make test` before you finish.\n", "pkg/CLAUDE.md": "No globals.\n"})
	a := Load(filepath.Join(root, "pkg"), "").Render()
	b := Load(filepath.Join(root, "pkg"), "").Render()
	require.Equal(t, a, b)
	require.True(t, strings.HasPrefix(a, Header+"\n"))
	require.Contains(t, a, "\n## AGENTS.md (project)\nRun `make test` before you finish.\n")
	require.Contains(t, a, "\n## pkg/CLAUDE.md (project)\nNo globals.\n")
	require.Less(t, strings.Index(a, "make test"), strings.Index(a, "No globals"), "the more specific file comes last")
}

// TestSizeIsBounded: past MaxBytes in all, a file is cut at a line end and
// the cut is said to the model and to the user; files after the budget
// are left out, and said.
func TestSizeIsBounded(t *testing.T) {
	t.Parallel()
	line := strings.Repeat("é", 40) + "\n" // 81 bytes, two-byte runes
	big := strings.Repeat(line, MaxBytes/len(line)+100)
	root := tree(t, map[string]string{".git/": "", "AGENTS.md": big, "sub/AGENTS.md": "never read"})
	s := Load(filepath.Join(root, "sub"), "")
	require.Equal(t, 1, len(s.Files), "files read")
	f := s.Files[0]
	require.True(t, f.Cut)
	require.LessOrEqual(t, len(f.Content), MaxBytes)
	require.Greater(t, len(f.Content), MaxBytes-len(line))
	require.True(t, strings.HasSuffix(f.Content, "\n"), "cut at a line end")
	require.Equal(t, int64(len(big)), f.Size)
	require.LessOrEqual(t, s.Bytes(), MaxBytes)
	require.Contains(t, s.Render(), "[... cut here: the file is")
	require.Len(t, s.Problems, 2, "%q", s.Problems)
	require.Contains(t, s.Problems[0], "AGENTS.md is 39.9 KB; only its first 32.0 KB are used")
	require.Contains(t, s.Problems[0], "only its first")
	require.Contains(t, s.Problems[1], "sub/AGENTS.md left out")
}

// TestOddFiles: invalid UTF-8 is replaced, a FIFO named AGENTS.md is not
// opened (it would block), and an unreadable file is said, not fatal.
func TestOddFiles(t *testing.T) {
	t.Parallel()
	root := tree(t, map[string]string{".git/": "", "AGENTS.md": "bad \xff byte", "fifo/": "", "locked/AGENTS.md": "secret"})
	s := Load(root, "")
	require.Equal(t, "bad \uFFFD byte", s.Files[0].Content)

	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "fifo", "AGENTS.md"), 0o644))
	s = Load(filepath.Join(root, "fifo"), "")
	require.Equal(t, []string{"AGENTS.md=bad \uFFFD byte"}, shown(s), "the FIFO is skipped")

	t.Run("unreadable", func(t *testing.T) {
		locked := filepath.Join(root, "locked", "AGENTS.md")
		require.NoError(t, os.Chmod(locked, 0))
		if f, err := os.Open(locked); err == nil {
			f.Close()
			t.Skip("running as root: the file stays readable")
		}
		s := Load(filepath.Join(root, "locked"), "")
		require.Len(t, s.Files, 1)
		require.Len(t, s.Problems, 1)
		require.Contains(t, s.Problems[0], "locked/AGENTS.md not read: open: permission denied")
	})
}
