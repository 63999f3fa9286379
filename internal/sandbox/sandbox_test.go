package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStatus: what gencode says of the sandbox at start, in /config and
// in /permissions, and whether Bash may run without asking, for each ABI
// and setting.
func TestStatus(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	home := filepath.Join(dir, "home")
	proj := filepath.Join(home, "proj")
	tree(t, dir, "home/proj/", "tmp/", "home/.config/gencode/")
	base := Config{Enabled: true, WorkDir: proj, TempDir: filepath.Join(dir, "tmp"), Executable: "/bin/gencode",
		Protected: []string{filepath.Join(home, ".config", "gencode"), filepath.Join(home, ".local", "share", "gencode")}}
	with := func(f func(*Config)) Config {
		c := base
		f(&c)
		return c
	}
	tests := []struct {
		name       string
		cfg        Config
		sup        Support
		wantStatus string
		wantLines  []string // each must be among Lines
		wantAuto   bool
		wantWhy    string // part of AutoAllow's reason
	}{
		{
			name: "ABI 7", cfg: base, sup: Support{ABI: 7},
			wantStatus: "Landlock ABI 7: writes confined to the project and " + filepath.Join(dir, "tmp") + "; gencode's config, data and state dirs read-only; reads open",
			wantLines:  []string{"auto_allow = false: Bash asks as usual; the sandbox holds what you approve"},
		},
		{
			name: "writable dirs are named", cfg: with(func(c *Config) { c.Writable = []string{filepath.Join(dir, "cache")} }), sup: Support{ABI: 7},
			wantStatus: "Landlock ABI 7: writes confined to the project, " + filepath.Join(dir, "tmp") + " and " + filepath.Join(dir, "cache") + "; gencode's config, data and state dirs read-only; reads open",
		},
		{
			name: "auto-allow without network", cfg: with(func(c *Config) { c.AutoAllow = true }), sup: Support{ABI: 7}, wantAuto: true,
			wantLines: []string{"auto_allow: Bash runs without asking, with no network (TCP connect and bind refused by the kernel; UDP stays open below ABI 10); commands you approve keep the network",
				"auto-allowed commands also get .git read-only (git runs code from its config and hooks, and your own git commands would run it) and cannot create, remove or rename entries at the project's top level (nor beside a nested .git); commands you approve can"},
		},
		{
			name: "auto-allow with network", cfg: with(func(c *Config) { c.AutoAllow, c.Network = true, true }), sup: Support{ABI: 7}, wantAuto: true,
			wantLines: []string{"auto_allow: Bash runs without asking; writes stay confined; the network is open ([sandbox] network = true)"},
		},
		{
			name: "auto-allow on a kernel that cannot take the network", cfg: with(func(c *Config) { c.AutoAllow = true }), sup: Support{ABI: 3},
			wantWhy: "cannot take the network away (ABI 4 can)",
		},
		{
			name: "ABI 3 with network allowed may auto-allow", cfg: with(func(c *Config) { c.AutoAllow, c.Network = true, true }), sup: Support{ABI: 3}, wantAuto: true,
		},
		{
			name: "ABI 1", cfg: base, sup: Support{ABI: 1},
			wantLines: []string{"ABI 1: moving or linking a file between directories is refused, also inside the project",
				"ABI 1: truncating a file by name (truncate(2)) is not confined"},
		},
		{
			name: "no Landlock", cfg: with(func(c *Config) { c.AutoAllow = true }), sup: Support{Why: "this Linux kernel has no Landlock"},
			wantStatus: "no sandbox: Bash and !commands run with your full rights (this Linux kernel has no Landlock)",
			wantWhy:    "auto_allow does nothing: no sandbox is in force",
		},
		{
			name: "another OS", cfg: base, sup: Support{Why: "gencode has a sandbox on Linux only (Landlock), not on darwin"},
			wantStatus: "no sandbox: Bash and !commands run with your full rights (gencode has a sandbox on Linux only (Landlock), not on darwin)",
		},
		{
			name: "turned off", cfg: with(func(c *Config) { c.Enabled = false }), sup: Support{ABI: 7},
			wantStatus: "no sandbox: Bash and !commands run with your full rights ([sandbox] enabled = false)",
		},
		{
			name: "home as the project", sup: Support{ABI: 7}, wantAuto: true,
			cfg: with(func(c *Config) {
				c.WorkDir, c.AutoAllow = home, true
				// The config file inside the config dir is not named twice.
				c.Protected = append(slices.Clone(c.Protected), filepath.Join(home, ".config", "gencode", "config.toml"))
			}),
			wantLines: []string{"the project holds gencode's .config/gencode, .local/share/gencode: they stay read-only; the project's other entries are writable, but no new entry can be created at its top level or beside them"},
		},
		{
			name: "a project inside gencode's config dir", cfg: with(func(c *Config) { c.WorkDir, c.AutoAllow = filepath.Join(home, ".config", "gencode"), true }), sup: Support{ABI: 7},
			wantStatus: "Landlock ABI 7: writes confined to " + filepath.Join(dir, "tmp") + "; gencode's config, data and state dirs read-only; reads open",
			wantWhy:    "the project lies inside gencode's own directories",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := New(tt.cfg, tt.sup)
			if tt.wantStatus != "" {
				assert.Equal(t, tt.wantStatus, s.Status())
			}
			lines := s.Lines()
			assert.Equal(t, s.Status(), lines[0])
			for _, w := range tt.wantLines {
				assert.Contains(t, lines, w)
			}
			notices := s.Notices()
			assert.Equal(t, s.Status(), notices[0])
			if tt.wantAuto {
				assert.Contains(t, notices, autoGitLine, "the start does not say what auto-allowed commands may not write")
			} else {
				assert.NotContains(t, notices, autoGitLine)
			}
			for _, n := range notices {
				assert.Contains(t, lines, n, "a notice at start that /config does not show")
			}
			auto, why := s.AutoAllow()
			assert.Equal(t, tt.wantAuto, auto, "AutoAllow: %s", why)
			if tt.wantWhy != "" {
				assert.Contains(t, why, tt.wantWhy)
				assert.Contains(t, strings.Join(lines, "\n"), why, "Lines do not say why auto_allow is off")
				assert.Contains(t, notices, why, "the start does not say why auto_allow is off")
			}
		})
	}
}

// TestBlocked: a failing confined command that printed a permission error
// is said to be blocked by the sandbox; anything else gets no note.
func TestBlocked(t *testing.T) {
	t.Parallel()
	on := New(Config{Enabled: true, WorkDir: "/p", TempDir: "/tmp", Executable: "/bin/gencode"}, Support{ABI: 7})
	off := New(Config{Enabled: false}, Support{ABI: 7})
	tests := []struct {
		name string
		s    *Sandbox
		out  string
		code int
		want bool
	}{
		{"bash redirection", on, "bash: line 1: /etc/x: Permission denied\n", 1, true},
		{"coreutils", on, "touch: cannot touch '/x': Permission denied\n", 1, true},
		{"EPERM", on, "mv: cannot move 'a' to '/b': Operation not permitted\n", 1, true},
		{"node", on, "Error: EACCES: permission denied, open '/x'\n", 1, true},
		{"succeeded", on, "Permission denied (publickey).\nretrying... ok\n", 0, false},
		{"another failure", on, "no such file\n", 1, false},
		{"no sandbox", off, "Permission denied\n", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.s.Blocked(tt.out, tt.code, Limits{})
			assert.Equal(t, tt.want, got != "", "Blocked(%q, %d) = %q", tt.out, tt.code, got)
			if tt.want {
				assert.Contains(t, got, "blocked by the sandbox")
				assert.Contains(t, got, "Landlock (ABI 7)")
				assert.Contains(t, got, "no network")
			}
		})
	}
}

// TestBlockedGit: an auto-allowed command refused a write its output
// places in a .git is told that .git is read-only for it; other refusals
// of an auto-allowed command say what it may not do; an approved
// command's refusal does not speak of .git.
func TestBlockedGit(t *testing.T) {
	t.Parallel()
	on := New(Config{Enabled: true, WorkDir: "/p", TempDir: "/tmp", Executable: "/bin/gencode"}, Support{ABI: 7})
	auto := Limits{Auto: true, GitDirs: []string{"/p/.git"}}
	const gitNote = "[blocked by the sandbox: .git is read-only for commands that ran without asking."
	tests := []struct {
		name, out string
		lim       Limits
		want      string
		not       string
	}{
		{"bash redirection", "bash: line 1: .git/config: Permission denied\n", auto, gitNote, "blocked by the sandbox?"},
		{"git config", "error: could not lock config file .git/config: Permission denied\n", auto, gitNote, ""},
		{"a nested repository", "touch: cannot touch '/p/sub/.git/hooks/x': Permission denied\n", auto, gitNote, ""},
		{"the top level", "touch: cannot touch 'new': Permission denied\n", auto, "no entry can be created, removed or renamed at the project's top level", gitNote},
		{".gitignore is not .git", "bash: .gitignore: Permission denied\n", auto, "[blocked by the sandbox?", gitNote},
		{"approved", "bash: line 1: .git/config: Permission denied\n", Approved(), "[blocked by the sandbox?", ".git is read-only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := on.Blocked(tt.out, 1, tt.lim)
			assert.Contains(t, got, tt.want)
			if tt.not != "" {
				assert.NotContains(t, got, tt.not)
			}
		})
	}
}
