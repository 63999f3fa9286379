//go:build linux

package tools

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/sandbox"
)

// TestBashUnderTheSandbox: with a sandbox, every Bash command (the
// model's, approved or auto-allowed, and the user's !command) runs
// confined; a refused one says the sandbox blocked it; auto-allowed ones
// have no network, approved ones do; auto-allow that cannot hold the
// network keeps asking and says why.
func TestBashUnderTheSandbox(t *testing.T) {
	t.Parallel()
	sup := sandbox.Probe()
	if sup.ABI == 0 {
		t.Skip("no sandbox to test: " + sup.Why)
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	proj := filepath.Join(root, "proj")
	for _, d := range []string{"proj/src", "proj/.config/gencode", "tmp", "outside", "data/gencode"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", ln.Addr().(*net.TCPAddr).Port)
	box := func(auto bool, sup sandbox.Support) *sandbox.Sandbox {
		return sandbox.New(sandbox.Config{Enabled: true, AutoAllow: auto, WorkDir: proj, TempDir: filepath.Join(root, "tmp"),
			Executable: exe, Protected: []string{filepath.Join(proj, ".config", "gencode"), filepath.Join(root, "data", "gencode")}}, sup)
	}
	allowBash := Permissions{ToolBash: ModeAllow}
	tests := []struct {
		name      string
		opts      Options
		byUser    bool
		command   string
		needABI   int
		wantOK    bool
		wantParts []string
	}{
		{name: "approved, inside the project", opts: Options{Permissions: allowBash, Sandbox: box(false, sup)},
			command: "echo hi > src/a.txt && cat src/a.txt", wantOK: true, wantParts: []string{"hi\n[exit code 0]"}},
		{name: "approved, outside", opts: Options{Permissions: allowBash, Sandbox: box(false, sup)},
			command: "echo hi > ../outside/x", wantParts: []string{"Permission denied", "[blocked by the sandbox?", "Landlock (ABI"}},
		{name: "approved, gencode's config inside the project", opts: Options{Permissions: allowBash, Sandbox: box(false, sup)},
			command: "echo 'allow = [\"Bash\"]' > .config/gencode/config.toml", wantParts: []string{"Permission denied", "[blocked by the sandbox?"}},
		{name: "approved, gencode's data dir", opts: Options{Permissions: allowBash, Sandbox: box(false, sup)},
			command: "touch ../data/gencode/x.db", wantParts: []string{"Permission denied", "[blocked by the sandbox?"}},
		{name: "yolo is confined too", opts: Options{Yolo: true, Sandbox: box(false, sup)},
			command: "echo hi > ../outside/y", wantParts: []string{"[blocked by the sandbox?"}},
		{name: "the user's !command is confined", byUser: true, opts: Options{Sandbox: box(false, sup)},
			command: "echo hi > ../outside/z", wantParts: []string{"[blocked by the sandbox?"}},
		{name: "approved commands keep the network", opts: Options{Permissions: allowBash, Sandbox: box(true, sup)},
			command: connect, needABI: 4, wantOK: true, wantParts: []string{"connected"}},
		{name: "auto-allowed without asking, inside the project", opts: Options{Sandbox: box(true, sup)},
			command: "echo hi > src/b.txt", wantOK: true},
		{name: "auto-allowed commands have no network", opts: Options{Sandbox: box(true, sup)},
			command: connect, needABI: 4, wantParts: []string{"Permission denied", "this command had no network (auto-allowed)"}},
		{name: "auto-allow that cannot hold the network asks", opts: Options{Sandbox: box(true, sandbox.Support{ABI: 3})},
			command: "true", wantParts: []string{"permission denied: Bash needs approval (auto_allow is off: this kernel's Landlock (ABI 3) cannot take the network away"}},
		{name: "no sandbox, no auto-allow", opts: Options{Sandbox: box(true, sandbox.Support{Why: "none here"})},
			command: "true", wantParts: []string{"auto_allow does nothing: no sandbox is in force (none here)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if sup.ABI < tt.needABI {
				t.Skipf("needs Landlock ABI %d, the kernel has %d", tt.needABI, sup.ABI)
			}
			opts := tt.opts
			opts.WorkDir = proj
			s := New(opts)
			c := Call{ID: "c", Name: ToolBash, Arguments: fmt.Sprintf(`{"command":%q}`, tt.command)}
			var r Result
			if tt.byUser {
				r = s.RunByUser(context.Background(), c)
			} else {
				r = s.Run(context.Background(), c)
			}
			assert.Equal(t, !tt.wantOK, r.IsError, "Bash(%q) = %s", tt.command, r.Content)
			for _, p := range tt.wantParts {
				assert.Contains(t, r.Content, p, "Bash(%q)", tt.command)
			}
		})
	}
	// The model is told what the sandbox confines, and only under one.
	desc := func(s *Set) string {
		for _, d := range s.Definitions() {
			if d.Name == ToolBash {
				return d.Description
			}
		}
		return ""
	}
	assert.Contains(t, desc(New(Options{WorkDir: proj, Sandbox: box(false, sup)})), "Sandboxed: it can write only inside the working directory, the temp dir")
	assert.NotContains(t, desc(New(Options{WorkDir: proj, Sandbox: box(false, sandbox.Support{Why: "none"})})), "Sandboxed")
	assert.NotContains(t, desc(New(Options{WorkDir: proj})), "Sandboxed")
	for _, p := range []string{"outside/x", "outside/y", "outside/z", "data/gencode/x.db"} {
		assert.NoFileExists(t, filepath.Join(root, p))
	}
	b, err := os.ReadFile(filepath.Join(proj, ".config", "gencode", "config.toml"))
	if err == nil {
		assert.Empty(t, b)
	}
}

// TestAutoAllowedBashCannotWriteGit: an auto-allowed Bash command (one
// that ran without any user decision) cannot write the project's
// .git/config or a hook, nor a nested repository's .git, and its result
// says why; it writes the project's other files. A command the user
// approved (allowed, in the dialog, or typed as !command) writes .git.
func TestAutoAllowedBashCannotWriteGit(t *testing.T) {
	t.Parallel()
	sup := sandbox.Probe()
	if sup.ABI < 4 {
		t.Skipf("needs Landlock ABI 4 (auto-allow without network); the kernel has %d: %s", sup.ABI, sup.Why)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	proj := filepath.Join(root, "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(proj, "src"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "tmp"), 0o755))
	gitEnv := []string{"HOME=" + root, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
	for _, d := range []string{proj, filepath.Join(proj, "sub")} {
		out, err := (&exec.Cmd{Path: mustLookPath(t, "git"), Args: []string{"git", "init", "-q", d}, Env: gitEnv}).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	config := filepath.Join(proj, ".git", "config")
	before, err := os.ReadFile(config)
	require.NoError(t, err)
	box := func(auto bool) *sandbox.Sandbox {
		return sandbox.New(sandbox.Config{Enabled: true, AutoAllow: auto, WorkDir: proj, TempDir: filepath.Join(root, "tmp"), Executable: exe}, sup)
	}
	const gitNote = "blocked by the sandbox: .git is read-only for commands that ran without asking"
	run := func(s *Set, byUser bool, command string) Result {
		c := Call{ID: "c", Name: ToolBash, Arguments: fmt.Sprintf(`{"command":%q}`, command)}
		if byUser {
			return s.RunByUser(context.Background(), c)
		}
		return s.Run(context.Background(), c)
	}

	auto := New(Options{WorkDir: proj, Env: gitEnv, Sandbox: box(true)})
	for _, c := range []string{
		"echo '[core]\n\tfsmonitor = evil' >> .git/config",
		"git config core.pager evil",
		"printf '#!/bin/sh\\necho evil\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
		"echo x > .git/hooks/x",
		"echo '[core]\n\tfsmonitor = evil' >> sub/.git/config",
		"git -C sub config core.pager evil",
	} {
		r := run(auto, false, c)
		assert.True(t, r.IsError, "%s ran: %s", c, r.Content)
		assert.Contains(t, r.Content, gitNote, c)
	}
	require.NoError(t, os.WriteFile(filepath.Join(proj, "sub", "README"), nil, 0o644))
	r := run(auto, false, "echo x > src/a.txt && mkdir -p src/deep && echo y >> sub/README && echo z >> .git/../src/deep/c && cat src/a.txt")
	assert.False(t, r.IsError, r.Content)
	assert.Contains(t, r.Content, "x\n[exit code 0]")
	// The cost: no new entry at the top level, nor beside a nested .git.
	for _, c := range []string{"touch new.txt", "touch sub/new.txt"} {
		r := run(auto, false, c)
		assert.True(t, r.IsError, "%s ran: %s", c, r.Content)
		assert.Contains(t, r.Content, "no entry can be created, removed or renamed at the project's top level nor beside a nested .git", c)
	}
	after, err := os.ReadFile(config)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), ".git/config was written by an auto-allowed command")
	assert.NoFileExists(t, filepath.Join(proj, ".git", "hooks", "pre-commit"))
	assert.NoFileExists(t, filepath.Join(proj, ".git", "hooks", "x"))

	// Approved: with --allow (auto_allow set or not), in the dialog, or
	// typed by the user.
	for i, s := range []struct {
		set    *Set
		byUser bool
	}{
		{New(Options{WorkDir: proj, Env: gitEnv, Permissions: Permissions{ToolBash: ModeAllow}, Sandbox: box(true)}), false},
		{New(Options{WorkDir: proj, Env: gitEnv, Asker: &fakeAsker{decision: AllowOnce}, Sandbox: box(false)}), false},
		{New(Options{WorkDir: proj, Env: gitEnv, Sandbox: box(true)}), true},
	} {
		c := fmt.Sprintf("git config gencode.approved%d yes && git -C sub config gencode.approved yes && touch .git/hooks/approved", i)
		r := run(s.set, s.byUser, c)
		assert.False(t, r.IsError, "%s: %s", c, r.Content)
	}
	after, err = os.ReadFile(config)
	require.NoError(t, err)
	assert.Contains(t, string(after), "approved2 = yes")

	// The model is told, when its commands run without asking.
	desc := func(s *Set) string {
		for _, d := range s.Definitions() {
			if d.Name == ToolBash {
				return d.Description
			}
		}
		return ""
	}
	assert.Contains(t, desc(auto), "such commands cannot write .git")
	assert.NotContains(t, desc(New(Options{WorkDir: proj, Sandbox: box(false)})), "cannot write .git")
	assert.NotContains(t, desc(New(Options{WorkDir: proj, Permissions: Permissions{ToolBash: ModeAllow}, Sandbox: box(true)})), "cannot write .git")
	assert.NotContains(t, string(after), "evil")
}

func mustLookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	require.NoError(t, err)
	return p
}
