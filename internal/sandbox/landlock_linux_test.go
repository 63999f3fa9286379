//go:build linux

package sandbox_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/gencode/gencode/internal/sandbox"
	"github.com/gencode/gencode/internal/sandbox/confine"
)

// TestMain makes the test binary the sandbox helper when it is run as one
// (gencode's main does the same), so the tests confine real commands.
func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args[1:]) {
		os.Exit(confine.Main(os.Args[1:], os.Stderr))
	}
	os.Exit(m.Run())
}

// TestProbeIsTheKernelsABI: the parent asks the kernel itself (no
// go-landlock, no psx) and hears what go-landlock, which the helper
// enforces with, hears.
func TestProbeIsTheKernelsABI(t *testing.T) {
	t.Parallel()
	want, err := ll.LandlockGetABIVersion()
	if err != nil {
		require.Zero(t, sandbox.Probe().ABI, "no Landlock: %v", err)
		return
	}
	require.Equal(t, want, sandbox.Probe().ABI)
}

// TestCommandsAreConfined runs shell commands through the helper, as the
// Bash tool does: writes inside the project, its temp dir and /dev/null
// succeed; writes outside, into gencode's directories (beside and inside
// the project) and a TCP connection without the network are refused by
// the kernel.
func TestCommandsAreConfined(t *testing.T) {
	t.Parallel()
	sup := sandbox.Probe()
	if sup.ABI == 0 {
		t.Skip("no sandbox to test: " + sup.Why)
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	sandbox.Tree(t, dir, "proj/a.txt", "proj/sub/", "proj/.config/gencode/config.toml", "proj/.config/git/config",
		"tmp/", "outside/", "data/gencode/sessions.db")
	proj := filepath.Join(dir, "proj")
	sb := sandbox.New(sandbox.Config{Enabled: true, WorkDir: proj, TempDir: filepath.Join(dir, "tmp"), Executable: exe,
		Protected: []string{filepath.Join(proj, ".config", "gencode"), filepath.Join(dir, "data", "gencode")}}, sup)
	require.True(t, sb.Active())

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

	tests := []struct {
		name    string
		command string
		network bool
		ok      bool
		needABI int
	}{
		{"write in the project", "echo hi > a.txt && echo new > sub/new.txt && mkdir -p sub/deep && echo x > sub/deep/f", true, true, 1},
		{"write in the temp dir", "echo hi > $TMPDIR/t.txt", true, true, 1},
		{"devices", "echo hi > /dev/null && head -c1 /dev/urandom > /dev/null && echo ok > /dev/stderr && echo ok > /dev/stdout", true, true, 1},
		{"rename inside the project", "mkdir -p sub/d1 sub/d2 && touch sub/d1/f && mv sub/d1/f sub/d2/f && rm -r sub/d1", true, true, 2},
		// The cost of keeping gencode's dir out: the levels on the way to
		// it get no new entries (documented).
		{"a new entry beside gencode's dir", "touch new.txt", true, false, 1},
		{"other config beside gencode's", "echo x >> .config/git/config", true, true, 1},
		{"write outside", "echo hi > ../outside/x", true, false, 1},
		{"gencode's config inside the project", "echo 'allow = [\"Bash\"]' >> .config/gencode/config.toml", true, false, 1},
		{"a new file in gencode's config dir", "touch .config/gencode/permissions.toml", true, false, 1},
		{"remove gencode's config dir", "rm -rf .config/gencode", true, false, 1},
		{"move gencode's config dir away", "mv .config .config.old", true, false, 1},
		{"gencode's data dir", "echo x > ../data/gencode/sessions.db", true, false, 1},
		{"signal a process outside (the test, as it would gencode)", "kill -0 $PPID", true, false, 6},
		{"signal its own child", "sleep 5 & kill $!; wait $! || true", true, true, 6},
		{"connect with the network", connect, true, true, 4},
		{"connect without the network", connect, false, false, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if sup.ABI < tt.needABI {
				t.Skipf("needs Landlock ABI %d, the kernel has %d", tt.needABI, sup.ABI)
			}
			path, args, err := sb.Command([]string{"bash", "-c", tt.command}, sandbox.Limits{Network: tt.network})
			require.NoError(t, err)
			cmd := &exec.Cmd{Path: path, Args: args, Dir: proj, Env: []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + filepath.Join(dir, "tmp")}}
			out, err := cmd.CombinedOutput()
			if tt.ok {
				require.NoError(t, err, "%s: %s", tt.command, out)
				return
			}
			require.Error(t, err, "%s ran unconfined: %s", tt.command, out)
			assert.Regexp(t, "(?i)permission denied|operation not permitted", string(out))
			code := cmd.ProcessState.ExitCode()
			assert.Contains(t, sb.Blocked(string(out), code, sandbox.Limits{Network: tt.network}), "blocked by the sandbox")
		})
	}
	b, err := os.ReadFile(filepath.Join(proj, ".config", "gencode", "config.toml"))
	require.NoError(t, err)
	assert.Empty(t, b, "gencode's config was written")
	assert.NoFileExists(t, filepath.Join(dir, "outside", "x"))
	assert.FileExists(t, filepath.Join(proj, "sub", "new.txt"))
}

// TestHelperRefusesWhatItCannotEnforce: a spec asking for more than the
// kernel offers is not run weaker; the helper says so and runs nothing.
func TestHelperRefusesWhatItCannotEnforce(t *testing.T) {
	t.Parallel()
	sup := sandbox.Probe()
	if sup.ABI == 0 {
		t.Skip("no sandbox to test: " + sup.Why)
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	marker := filepath.Join(t.TempDir(), "ran")
	spec := fmt.Sprintf(`{"abi":%d,"writable":["/"],"network":true}`, sup.ABI+1)
	cmd := exec.Command(exe, sandbox.HelperArg, spec, "/bin/sh", "sh", "-c", "touch "+marker)
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Equal(t, 126, cmd.ProcessState.ExitCode())
	assert.True(t, strings.HasPrefix(string(out), "gencode sandbox: the kernel offers Landlock ABI"), "%s", out)
	assert.NoFileExists(t, marker)
}

// TestGitDirsReadOnlyForAutoAllowed: on the kernel, an auto-allowed
// command cannot write the project's .git (its config, a hook), a nested
// repository's .git, where a .git file points, nor make a new entry at
// the project's top level; it writes the project's other files. An
// approved command writes .git.
func TestGitDirsReadOnlyForAutoAllowed(t *testing.T) {
	t.Parallel()
	sup := sandbox.Probe()
	if sup.ABI == 0 {
		t.Skip("no sandbox to test: " + sup.Why)
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	proj := filepath.Join(dir, "proj")
	sandbox.WriteRepoTree(t, proj)
	sandbox.Tree(t, dir, "tmp/")
	sb := sandbox.New(sandbox.Config{Enabled: true, AutoAllow: true, Network: true, WorkDir: proj, TempDir: filepath.Join(dir, "tmp"), Executable: exe}, sup)
	auto, err := sb.AutoLimits()
	require.NoError(t, err)
	run := func(command string, lim sandbox.Limits) (string, error) {
		path, args, err := sb.Command([]string{"bash", "-c", command}, lim)
		require.NoError(t, err)
		cmd := &exec.Cmd{Path: path, Args: args, Dir: proj, Env: []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + filepath.Join(dir, "tmp")}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, c := range []string{
		"echo '[core] fsmonitor = evil' >> .git/config",
		"printf '#!/bin/sh\\nevil\\n' > .git/hooks/pre-commit",
		"rm -rf .git/hooks",
		"mv .git .git.old",
		"echo x >> nested/.git/config",
		"mkdir nested/.git/hooks",
		"echo x >> store/linked.git/HEAD",
		"echo x >> store/common.git/config",
		"touch backup.git/config",
		"echo 'gitdir: evil' > linked/.git",
		"touch new-at-the-top",
	} {
		out, err := run(c, auto)
		require.Error(t, err, "%s ran: %s", c, out)
		assert.Regexp(t, "(?i)permission denied|operation not permitted", out, c)
	}
	for _, c := range []string{
		"echo x > src/new.go && echo y >> README.md && echo z >> .gitignore",
		"mkdir -p nested/lib/deep && echo x > nested/lib/deep/f && echo x >> nested/README",
	} {
		out, err := run(c, auto)
		require.NoError(t, err, "%s: %s", c, out)
	}
	out, err := run("echo '# approved' >> .git/config && touch .git/hooks/x nested/.git/x new-at-the-top", sandbox.Approved())
	require.NoError(t, err, "approved: %s", out)
	b, err := os.ReadFile(filepath.Join(proj, ".git", "config"))
	require.NoError(t, err)
	assert.Equal(t, "# approved\n", string(b))
	assert.NoFileExists(t, filepath.Join(proj, ".git", "hooks", "pre-commit"))
}

// TestSubmodulesNotInitialised: a submodule registered in the index whose
// directory has no .git yet gets its .git kept read-only too (git status
// in the repository would run git there, with the config an auto-allowed
// command made), whatever the index's version, split or not, SHA-1 or
// SHA-256; an index that cannot be read is an error (the command asks).
// On the kernel, an auto-allowed command cannot make that .git.
func TestSubmodulesNotInitialised(t *testing.T) {
	t.Parallel()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	env := []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
	git := func(wd string, args ...string) {
		t.Helper()
		cmd := exec.Command(gitPath, args...)
		cmd.Dir, cmd.Env = wd, env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	repo := func(name string, sha256 bool, then ...[]string) string {
		p := filepath.Join(dir, name)
		args := []string{"init", "-q"}
		id := strings.Repeat("1", 40)
		if sha256 {
			args, id = append(args, "--object-format=sha256"), strings.Repeat("1", 64)
		}
		git(dir, append(args, p)...)
		sandbox.Tree(t, p, "mod/", "src/a.go", "g")
		git(p, "add", "src/a.go")
		git(p, "add", "-N", "g") // an extended flag: index version 3
		git(p, "update-index", "--add", "--cacheinfo", "160000,"+id+",mod")
		git(p, "update-index", "--add", "--cacheinfo", "160000,"+id+",libs/sub")
		for _, a := range then {
			git(p, a...)
		}
		return p
	}
	for _, tt := range []struct {
		name   string
		sha256 bool
		then   [][]string
	}{
		{name: "version 3"},
		{name: "version 4", then: [][]string{{"update-index", "--index-version", "4"}}},
		{name: "version 2", then: [][]string{{"rm", "-q", "--cached", "g"}, {"update-index", "--index-version", "2"}}},
		{name: "split index", then: [][]string{{"update-index", "--split-index"}, {"update-index", "--add", "--cacheinfo", "160000," + strings.Repeat("2", 40) + ",late"}}},
		{name: "sha256", sha256: true},
	} {
		p := repo(strings.ReplaceAll(tt.name, " ", "-"), tt.sha256, tt.then...)
		got, err := sandbox.GitDirs(p, 1000)
		require.NoError(t, err, tt.name)
		assert.Contains(t, got, filepath.Join(p, "mod", ".git"), tt.name)
		assert.Contains(t, got, filepath.Join(p, "libs", "sub", ".git"), tt.name)
		if strings.Contains(tt.name, "split") {
			assert.Contains(t, got, filepath.Join(p, "late", ".git"), tt.name)
		}
		assert.NotContains(t, got, filepath.Join(p, "src", ".git"), tt.name)
	}
	broken := repo("broken", false)
	require.NoError(t, os.WriteFile(filepath.Join(broken, ".git", "index"), []byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x05garbage"), 0o644))
	_, err = sandbox.GitDirs(broken, 1000)
	assert.ErrorContains(t, err, "for its submodules")

	sup := sandbox.Probe()
	if sup.ABI == 0 {
		t.Skip("no sandbox to test: " + sup.Why)
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	p := filepath.Join(dir, "version-3")
	sandbox.Tree(t, dir, "tmp/")
	sb := sandbox.New(sandbox.Config{Enabled: true, AutoAllow: true, Network: true, WorkDir: p, TempDir: filepath.Join(dir, "tmp"), Executable: exe}, sup)
	auto, err := sb.AutoLimits()
	require.NoError(t, err)
	for _, c := range []string{"mkdir mod/.git", "mkdir -p libs/sub/.git", "git init -q mod"} {
		path, args, err := sb.Command([]string{"bash", "-c", c}, auto)
		require.NoError(t, err)
		cmd := &exec.Cmd{Path: path, Args: args, Dir: p, Env: env}
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "%s ran: %s", c, out)
	}
	assert.NoDirExists(t, filepath.Join(p, "mod", ".git"))
	assert.NoDirExists(t, filepath.Join(p, "libs"))
}
