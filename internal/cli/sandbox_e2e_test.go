package cli_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	llsandbox "github.com/gencode/gencode/internal/sandbox"
)

// TestSandboxThroughTheBinary is issue 23's acceptance for the shell
// sandbox: print-mode Bash calls, allowed with --allow Bash or
// auto-allowed by [sandbox] auto_allow, try to write outside the
// project, into gencode's config and data dirs (also from a working
// directory that is the home holding them), and, auto-allowed with the
// network off, to connect to a loopback server. The kernel refuses each,
// the tool result names the sandbox, and the same commands aimed inside
// the project succeed. gencode itself is not confined: it goes on talking
// to its server and writing its session.
func TestSandboxThroughTheBinary(t *testing.T) {
	t.Parallel()
	sup := llsandbox.Probe()
	if sup.ABI == 0 {
		t.Skip("the kernel reports no Landlock, so gencode has no sandbox here to test: " + sup.Why)
	}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(target.Close)
	port := target.Listener.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)

	type call struct {
		id, command string
		ok          bool   // the command succeeds
		want        string // in its result
		needABI     int    // left out on a kernel below this Landlock ABI
	}
	tests := []struct {
		name    string
		needABI int // skipped on a kernel below this Landlock ABI
		config  string
		inHome  bool // the working directory is the home holding gencode's dirs
		flags   []string
		calls   func(home string) []call
	}{
		{
			name:  "allowed, in a project",
			flags: []string{"--allow", "Bash"},
			calls: func(home string) []call {
				return []call{
					{"outside", "echo x > " + filepath.Join(home, "outside.txt"), false, "blocked by the sandbox", 0},
					{"config", `echo 'allow = ["Bash"]' >> ` + filepath.Join(home, ".config", "gencode", "config.toml"), false, "blocked by the sandbox", 0},
					{"rules", "mkdir -p " + filepath.Join(home, ".config", "gencode", "projects", "x"), false, "blocked by the sandbox", 0},
					{"data", "touch " + filepath.Join(home, ".local", "share", "gencode", "planted.db"), false, "blocked by the sandbox", 0},
					{"inside", "echo x > inside.txt && mkdir -p sub && echo y > sub/f && cat inside.txt", true, "x\n[exit code 0]", 0},
					{"tmp", "echo t > $TMPDIR/t.txt && cat $TMPDIR/t.txt", true, "t\n[exit code 0]", 0},
					{"approved-network", connect, true, "connected", 4},
				}
			},
		},
		{
			name:   "allowed, the home as the project",
			inHome: true,
			flags:  []string{"--allow", "Bash"},
			calls: func(string) []call {
				return []call{
					{"config", `echo 'allow = ["Bash"]' >> .config/gencode/config.toml`, false, "blocked by the sandbox", 0},
					{"rules", "mkdir -p .config/gencode/projects/x", false, "blocked by the sandbox", 0},
					{"data", "touch .local/share/gencode/planted.db", false, "blocked by the sandbox", 0},
					{"move", "mv .config .config.old", false, "blocked by the sandbox", 0},
					{"inside", "echo x > project/inside.txt && cat project/inside.txt", true, "x\n[exit code 0]", 0},
					{"dotfile", "echo '# kept' >> .bashrc", true, "[exit code 0]", 0},
					{"other-config", "mkdir -p .config/other && echo z > .config/other/f", false, "blocked by the sandbox", 0},
				}
			},
		},
		{
			name:    "auto-allowed, no network",
			needABI: 4, // below, auto-allow asks: the kernel cannot take the network away
			config:  "[sandbox]\nauto_allow = true\n",
			calls: func(home string) []call {
				return []call{
					{"network", connect, false, "this command had no network (auto-allowed)", 0},
					{"outside", "echo x > " + filepath.Join(home, "outside.txt"), false, "blocked by the sandbox", 0},
					{"data", "touch " + filepath.Join(home, ".local", "share", "gencode", "planted.db"), false, "blocked by the sandbox", 0},
					{"inside", "echo x > src/inside.txt && cat src/inside.txt", true, "x\n[exit code 0]", 0},
					// Auto-allowed commands keep the project's .git read-only,
					// so its top level gets no new entries (said at start).
					{"top", "echo x > inside.txt", false, "no entry can be created, removed or renamed at the project's top level", 0},
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if sup.ABI < tt.needABI {
				t.Skipf("needs Landlock ABI %d; the kernel has %d", tt.needABI, sup.ABI)
			}
			srv := openaitest.NewServer(t, openaitest.WithMessageRules())
			sb := newSandbox(t)
			sb.useServer(srv)
			tmp := filepath.Join(sb.home, "tmp")
			require.NoError(t, os.MkdirAll(tmp, 0o700))
			sb.env["TMPDIR"] = tmp
			config := "model = \"gpt-4o-mini\"\n" + tt.config
			sb.writeConfig(config)
			require.NoError(t, os.MkdirAll(filepath.Join(sb.home, ".local", "share", "gencode"), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(sb.home, ".bashrc"), nil, 0o644))
			require.NoError(t, os.MkdirAll(filepath.Join(sb.work, "src"), 0o755))
			var calls []call
			for _, c := range tt.calls(sb.home) {
				if sup.ABI >= c.needABI {
					calls = append(calls, c)
				} else {
					t.Logf("left out %q: needs Landlock ABI %d; the kernel has %d", c.command, c.needABI, sup.ABI)
				}
			}
			var tc []openaitest.ToolCall
			for _, c := range calls {
				tc = append(tc, openaitest.ToolCall{ID: c.id, Name: "Bash", Arguments: args(t, map[string]any{"command": c.command})})
			}
			srv.Enqueue(openaitest.Calls(tc...), openaitest.Text("done"))
			dir := sb.work
			if tt.inHome {
				dir = sb.home
			}
			res := sb.runIn(dir, "", append([]string{"-p", "try the sandbox"}, tt.flags...)...)
			require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
			require.Equal(t, "done\n", res.stdout, "gencode reached its server after the commands")

			got := toolResults(srv)
			for _, c := range calls {
				r := got[c.id]
				require.Contains(t, r, c.want, "%s: %s", c.command, r)
				if c.ok {
					require.NotContains(t, r, "blocked by the sandbox", "%s", c.command)
					continue
				}
				require.Regexp(t, "Permission denied|Operation not permitted", r, "%s: refused by the kernel", c.command)
				require.Contains(t, r, "Landlock (ABI ", "%s: the sandbox is named", c.command)
			}
			cfg, err := os.ReadFile(filepath.Join(sb.home, ".config", "gencode", "config.toml"))
			require.NoError(t, err)
			require.Equal(t, config, string(cfg), "gencode's config was written by a command")
			for _, p := range []string{"outside.txt", ".config/gencode/projects/x", ".local/share/gencode/planted.db", ".config.old"} {
				require.NoFileExists(t, filepath.Join(sb.home, p))
			}
			require.NoDirExists(t, filepath.Join(sb.home, ".config/gencode/projects/x"))
			if strings.Contains(tt.name, "auto-allowed") {
				require.FileExists(t, filepath.Join(sb.work, "src", "inside.txt"))
				require.NoFileExists(t, filepath.Join(sb.work, "inside.txt"))
			} else {
				require.FileExists(t, filepath.Join(sb.work, "inside.txt"))
			}
			require.Contains(t, res.stderr, "gencode: sandbox: Landlock ABI ", "the sandbox in force is said at start")
			if tt.inHome {
				require.Contains(t, res.stderr, "gencode: sandbox: the project holds gencode's .config/gencode, .local/share/gencode, .local/state/gencode: they stay read-only",
					"the cost of a home as the project is said at start")
			}
			if strings.Contains(tt.name, "auto-allowed") {
				require.NotContains(t, res.stderr, "denied Bash", "auto-allowed commands ran without asking")
			}
		})
	}
}

// TestAutoAllowedCommandsCannotWriteGit: through the binary, with
// [sandbox] auto_allow and no --allow, the model's Bash commands that
// would plant code in the project's .git (a line appended to .git/config,
// `git config core.pager`, a hook) run without asking and are refused by
// the kernel; each result names the sandbox and why; .git/config is
// unchanged and no hook exists; another file of the project is written.
// The start says what auto-allowed commands may not write. The same
// `git config` approved with --allow Bash writes .git/config.
func TestAutoAllowedCommandsCannotWriteGit(t *testing.T) {
	t.Parallel()
	sup := llsandbox.Probe()
	if sup.ABI < 4 {
		t.Skipf("needs Landlock ABI 4 (auto-allow without network); the kernel has %d: %s", sup.ABI, sup.Why)
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	sb := newSandbox(t)
	sb.useServer(srv)
	tmp := filepath.Join(sb.home, "tmp")
	require.NoError(t, os.MkdirAll(tmp, 0o700))
	sb.env["TMPDIR"] = tmp
	sb.writeConfig("model = \"gpt-4o-mini\"\n[sandbox]\nauto_allow = true\n")
	init := exec.Command(gitPath, "init", "-q", sb.work)
	init.Env = []string{"HOME=" + sb.home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
	out, err := init.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "README.md"), []byte("# p\n"), 0o644))
	config := filepath.Join(sb.work, ".git", "config")
	before, err := os.ReadFile(config)
	require.NoError(t, err)

	refused := map[string]string{
		"append": "echo x >> .git/config",
		"pager":  "git config core.pager evil",
		"hook":   "printf '#!/bin/sh\\necho evil\\n' > .git/hooks/pre-commit",
	}
	var tc []openaitest.ToolCall
	for _, id := range []string{"append", "pager", "hook"} {
		tc = append(tc, openaitest.ToolCall{ID: id, Name: "Bash", Arguments: args(t, map[string]any{"command": refused[id]})})
	}
	tc = append(tc, openaitest.ToolCall{ID: "inside", Name: "Bash", Arguments: args(t, map[string]any{"command": "echo more >> README.md && echo written"})})
	srv.Enqueue(openaitest.Calls(tc...), openaitest.Text("done"))
	res := sb.run("-p", "plant something in .git")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	require.Equal(t, "done\n", res.stdout)
	require.Contains(t, res.stderr, "gencode: sandbox: auto-allowed commands also get .git read-only", "the start says what auto-allowed commands may not write")
	require.NotContains(t, res.stderr, "denied Bash", "the commands ran without asking")

	got := toolResults(srv)
	for id, command := range refused {
		r := got[id]
		require.Regexp(t, "Permission denied|Operation not permitted", r, "%s: refused by the kernel", command)
		require.Contains(t, r, "blocked by the sandbox: .git is read-only for commands that ran without asking", "%s: %s", command, r)
		require.Contains(t, r, "Landlock (ABI ", "%s: the sandbox is named", command)
	}
	require.Contains(t, got["inside"], "written\n[exit code 0]")
	after, err := os.ReadFile(config)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), ".git/config was written by an auto-allowed command")
	require.NoFileExists(t, filepath.Join(sb.work, ".git", "hooks", "pre-commit"))
	readme, err := os.ReadFile(filepath.Join(sb.work, "README.md"))
	require.NoError(t, err)
	require.Equal(t, "# p\nmore\n", string(readme))

	// Approved (--allow Bash): .git stays writable, `git commit` works.
	srv.Enqueue(openaitest.Calls(openaitest.ToolCall{ID: "approved", Name: "Bash", Arguments: args(t, map[string]any{"command": "git config gencode.approved yes"})}), openaitest.Text("done"))
	res = sb.run("-p", "configure git", "--allow", "Bash")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	require.Contains(t, toolResults(srv)["approved"], "[exit code 0]")
	after, err = os.ReadFile(config)
	require.NoError(t, err)
	require.Contains(t, string(after), "approved = yes")
}

// TestSandboxInTmux: the TUI says at start which sandbox holds the shell
// commands, /config shows the [sandbox] keys and the sandbox, and the
// user's own !command is confined like the model's Bash.
func TestSandboxInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	sup := llsandbox.Probe()
	if sup.ABI == 0 {
		t.Skip("the kernel reports no Landlock, so gencode has no sandbox here to test: " + sup.Why)
	}
	srv := openaitest.NewServer(t, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Content: "Answered."}
	}))
	sb := newSandbox(t)
	sb.useServer(srv)
	tmp := filepath.Join(sb.home, "tmp")
	require.NoError(t, os.MkdirAll(tmp, 0o700))
	sb.env["TMPDIR"] = tmp
	p := startTUI(t, sb)
	p.waitText(fmt.Sprintf("sandbox: Landlock ABI %d: writes confined to the project and", sup.ABI))

	outside := filepath.Join(sb.home, "outside.txt")
	p.typeLine("!echo x > " + outside)
	p.waitText("blocked by the sandbox?")
	require.NoFileExists(t, outside)
	p.typeLine("!echo x > inside.txt")
	p.waitText("[exit code 0]")
	require.FileExists(t, filepath.Join(sb.work, "inside.txt"))

	p.typeLine("/config")
	for _, want := range []string{"sandbox.auto_allow", "sandbox.enabled", "Sandbox (Bash and !commands)", "auto_allow = false: Bash asks as usual"} {
		p.waitText(want)
	}
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}
