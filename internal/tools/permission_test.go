package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// confinedTree makes ROOT/work (the working directory) and ROOT/outside
// with a secret, plus symlinks in work that point out.
func confinedTree(t *testing.T) (work, outside string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	work, outside = filepath.Join(root, "work"), filepath.Join(root, "outside")
	writeFile(t, filepath.Join(outside, "secret.txt"), "secret\n")
	writeFile(t, filepath.Join(work, "sub", "in.txt"), "inside\n")
	for link, target := range map[string]string{
		"linkfile": "../outside/secret.txt",          // file pointing out
		"linkdir":  outside,                          // directory pointing out (absolute)
		"dangling": "../outside/new.txt",             // pointing out to nothing yet
		"inner":    "sub",                            // pointing inside
		"sneaky":   "sub/../nowhere/../../outside/x", // ".." after a missing dir
		"chain":    "linkdir",                        // link to a link out
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(work, link)))
	}
	return work, outside
}

func TestResolveConfinement(t *testing.T) {
	t.Parallel()
	work, outside := confinedTree(t)
	s := New(Options{WorkDir: work})
	tests := []struct {
		path        string
		wantAbs     string
		wantDisplay string
		wantOutside bool
	}{
		{"sub/in.txt", filepath.Join(work, "sub/in.txt"), "sub/in.txt", false},
		{"new/dir/file.txt", filepath.Join(work, "new/dir/file.txt"), "new/dir/file.txt", false},
		{".", work, ".", false},
		{"a/b/../c.txt", filepath.Join(work, "a/c.txt"), "a/c.txt", false},
		{"inner/in.txt", filepath.Join(work, "sub/in.txt"), "inner/in.txt", false},
		{"inner/new.txt", filepath.Join(work, "sub/new.txt"), "inner/new.txt", false},
		{filepath.Join(work, "sub/in.txt"), filepath.Join(work, "sub/in.txt"), "sub/in.txt", false},
		{"../x", filepath.Join(filepath.Dir(work), "x"), filepath.Join(filepath.Dir(work), "x"), true},
		{"sub/../../outside/secret.txt", filepath.Join(outside, "secret.txt"), filepath.Join(outside, "secret.txt"), true},
		{filepath.Join(outside, "secret.txt"), filepath.Join(outside, "secret.txt"), filepath.Join(outside, "secret.txt"), true},
		{"/etc/passwd", "/etc/passwd", "/etc/passwd", true},
		{"linkfile", filepath.Join(outside, "secret.txt"), filepath.Join(outside, "secret.txt"), true},
		{"linkdir/secret.txt", filepath.Join(outside, "secret.txt"), filepath.Join(outside, "secret.txt"), true},
		{"linkdir/new/deeper.txt", filepath.Join(outside, "new/deeper.txt"), filepath.Join(outside, "new/deeper.txt"), true},
		{"dangling", filepath.Join(outside, "new.txt"), filepath.Join(outside, "new.txt"), true},
		{"sneaky", filepath.Join(outside, "x"), filepath.Join(outside, "x"), true},
		{"chain/secret.txt", filepath.Join(outside, "secret.txt"), filepath.Join(outside, "secret.txt"), true},
		{"missing/../linkdir/x", filepath.Join(outside, "x"), filepath.Join(outside, "x"), true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := s.resolve(tt.path)
			require.NoError(t, err)
			assert.Equal(t, target{abs: tt.wantAbs, display: tt.wantDisplay, outside: tt.wantOutside}, got, "resolve(%q)", tt.path)
		})
	}
}

func TestResolveSymlinkLoop(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Symlink("b", filepath.Join(dir, "a")))
	require.NoError(t, os.Symlink("a", filepath.Join(dir, "b")))
	s := New(Options{WorkDir: dir, Yolo: true})
	r := run(t, s, ToolRead, map[string]any{"file_path": "a"})
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content, "too many levels of symbolic links")
}

// Print mode with --allow Write,Edit: nothing outside the working
// directory is written, whatever the path looks like, and the model is told
// why; inside, the same tools work.
func TestPrintModeConfinement(t *testing.T) {
	t.Parallel()
	work, outside := confinedTree(t)
	perms := DefaultPermissions()
	require.NoError(t, perms.Allow("Write,Edit"))
	s := New(Options{WorkDir: work, Permissions: perms})

	tests := []struct {
		name       string
		tool       string
		args       map[string]any
		wantDenied string // "" means allowed
	}{
		{"write ../x", ToolWrite, map[string]any{"file_path": "../x", "content": "x"}, "permission denied: Write outside the working directory (" + filepath.Join(filepath.Dir(work), "x") + ") is refused; only --yolo allows it"},
		{"write absolute outside", ToolWrite, map[string]any{"file_path": filepath.Join(outside, "abs.txt"), "content": "x"}, "is refused; only --yolo allows it"},
		{"write through a file symlink", ToolWrite, map[string]any{"file_path": "linkfile", "content": "pwned"}, "is refused"},
		{"write under a dir symlink", ToolWrite, map[string]any{"file_path": "linkdir/new.txt", "content": "x"}, "is refused"},
		{"write through a dangling symlink", ToolWrite, map[string]any{"file_path": "dangling", "content": "x"}, "is refused"},
		{"write via .. after a missing dir", ToolWrite, map[string]any{"file_path": "sneaky", "content": "x"}, "is refused"},
		{"edit through a symlink", ToolEdit, map[string]any{"file_path": "linkfile", "old_string": "secret", "new_string": "pwned"}, "permission denied: Edit outside the working directory"},
		{"read outside", ToolRead, map[string]any{"file_path": "../outside/secret.txt"}, "permission denied: Read outside the working directory (" + filepath.Join(outside, "secret.txt") + ") needs approval; the user can rerun with --yolo"},
		{"read through a symlink", ToolRead, map[string]any{"file_path": "linkfile"}, "permission denied: Read outside the working directory"},
		{"glob outside", ToolGlob, map[string]any{"pattern": "*", "path": "linkdir"}, "permission denied: Glob outside"},
		{"glob absolute pattern outside", ToolGlob, map[string]any{"pattern": filepath.ToSlash(outside) + "/*.txt"}, "permission denied: Glob outside"},
		{"glob ../ pattern", ToolGlob, map[string]any{"pattern": "../outside/*"}, "permission denied: Glob outside"},
		{"grep outside", ToolGrep, map[string]any{"pattern": "secret", "path": "linkdir"}, "permission denied: Grep outside"},
		{"ls outside", ToolLS, map[string]any{"path": ".."}, "permission denied: LS outside"},
		{"write inside", ToolWrite, map[string]any{"file_path": "inner/ok.txt", "content": "ok\n"}, ""},
		{"edit inside", ToolEdit, map[string]any{"file_path": "sub/in.txt", "old_string": "inside", "new_string": "edited"}, ""},
		{"read inside", ToolRead, map[string]any{"file_path": "inner/in.txt"}, ""},
		{"grep inside skips symlinks out", ToolGrep, map[string]any{"pattern": "secret"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, s, tt.tool, tt.args)
			if tt.wantDenied == "" {
				assert.False(t, r.IsError, r.Content)
				assert.False(t, r.Denied)
				return
			}
			assert.True(t, r.Denied, "Denied: %s", r.Content)
			assert.True(t, r.IsError)
			assert.False(t, r.Meta.Success)
			assert.Contains(t, r.Content, tt.wantDenied)
		})
	}
	got, err := os.ReadFile(filepath.Join(outside, "secret.txt"))
	require.NoError(t, err)
	assert.Equal(t, "secret\n", string(got), "the secret is untouched")
	for _, p := range []string{filepath.Join(filepath.Dir(work), "x"), filepath.Join(outside, "abs.txt"), filepath.Join(outside, "new.txt"), filepath.Join(outside, "x")} {
		assert.NoFileExists(t, p)
	}
	assert.FileExists(t, filepath.Join(work, "sub", "ok.txt"))
}

func TestYoloAllowsOutside(t *testing.T) {
	t.Parallel()
	work, outside := confinedTree(t)
	s := New(Options{WorkDir: work, Yolo: true})
	r := run(t, s, ToolWrite, map[string]any{"file_path": "../outside/yolo.txt", "content": "y\n"})
	require.False(t, r.IsError, r.Content)
	assert.Equal(t, filepath.Join(outside, "yolo.txt"), r.Meta.FilePath, "outside paths are shown absolute")
	assert.FileExists(t, filepath.Join(outside, "yolo.txt"))
	r = run(t, s, ToolBash, map[string]any{"command": "echo ran"})
	assert.Equal(t, "ran\n[exit code 0]", r.Content)
}

func TestPrintModePermissions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		allow   string
		yolo    bool
		deny    string // a tool set to ModeDeny
		tool    string
		args    map[string]any
		wantErr string // "" means it ran
	}{
		{"bash denied by default", "", false, "", ToolBash, map[string]any{"command": "touch ran"}, "permission denied: Bash needs approval; the user can rerun with --allow Bash or --yolo"},
		{"write denied by default", "", false, "", ToolWrite, map[string]any{"file_path": "ran", "content": ""}, "permission denied: Write needs approval; the user can rerun with --allow Write or --yolo"},
		{"edit denied by default", "", false, "", ToolEdit, map[string]any{"file_path": "f.txt", "old_string": "a", "new_string": "b"}, "permission denied: Edit needs approval; the user can rerun with --allow Edit or --yolo"},
		{"read allowed by default", "", false, "", ToolRead, map[string]any{"file_path": "f.txt"}, ""},
		{"ls allowed by default", "", false, "", ToolLS, map[string]any{}, ""},
		{"bash allowed by --allow", "Bash", false, "", ToolBash, map[string]any{"command": "touch ran"}, ""},
		{"allow is case-insensitive", "write, edit", false, "", ToolWrite, map[string]any{"file_path": "ran", "content": ""}, ""},
		{"allow one does not allow another", "Write", false, "", ToolBash, map[string]any{"command": "touch ran"}, "--allow Bash"},
		{"yolo", "", true, "", ToolBash, map[string]any{"command": "touch ran"}, ""},
		{"deny beats yolo", "", true, ToolBash, ToolBash, map[string]any{"command": "touch ran"}, "permission denied: Bash is disabled by configuration"},
		{"deny a read tool", "", false, ToolRead, ToolRead, map[string]any{"file_path": "f.txt"}, "permission denied: Read is disabled by configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			perms := DefaultPermissions()
			require.NoError(t, perms.Allow(tt.allow))
			if tt.deny != "" {
				perms[tt.deny] = ModeDeny
			}
			s, dir := newTestSet(t, Options{Permissions: perms, Yolo: tt.yolo})
			writeFile(t, filepath.Join(dir, "f.txt"), "a\n")
			r := run(t, s, tt.tool, tt.args)
			if tt.wantErr == "" {
				assert.False(t, r.IsError, r.Content)
				if tt.tool == ToolBash || tt.tool == ToolWrite {
					assert.FileExists(t, filepath.Join(dir, "ran"))
				}
				return
			}
			assert.True(t, r.Denied)
			assert.True(t, r.IsError)
			assert.Equal(t, Meta{Tool: tt.tool, FilePath: r.Meta.FilePath, Command: r.Meta.Command}, r.Meta)
			assert.Contains(t, r.Content, tt.wantErr)
			assert.NoFileExists(t, filepath.Join(dir, "ran"), "the denied call did not run")
			got, _ := os.ReadFile(filepath.Join(dir, "f.txt"))
			assert.Equal(t, "a\n", string(got))
		})
	}
}

func TestPermissionsAllowRejectsUnknownTools(t *testing.T) {
	tests := []struct{ allow, want string }{
		{"Write,Wrte", `allow "Wrte": unknown tool (did you mean Write? tools: Read, Write, Edit, Bash, Glob, Grep, LS)`},
		{"Bassh", `allow "Bassh": unknown tool (did you mean Bash? tools: Read, Write, Edit, Bash, Glob, Grep, LS)`},
		{"grpe", `allow "grpe": unknown tool (did you mean Grep? tools: Read, Write, Edit, Bash, Glob, Grep, LS)`},
		{"WebFetch", `allow "WebFetch": unknown tool (tools: Read, Write, Edit, Bash, Glob, Grep, LS)`},
	}
	for _, tt := range tests {
		perms := DefaultPermissions()
		err := perms.Allow(tt.allow)
		require.EqualError(t, err, tt.want)
		assert.Equal(t, ModeAsk, perms[ToolWrite], "nothing changed")
	}
}

func TestInteractivePermissions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		decision  Decision
		askErr    error
		tool      string
		args      map[string]any
		calls     int
		wantAsks  int
		wantErr   string
		wantFirst Request
	}{
		{
			name: "allow once asks every time", decision: AllowOnce, tool: ToolBash,
			args: map[string]any{"command": "echo one\necho two"}, calls: 2, wantAsks: 2,
			wantFirst: Request{Tool: ToolBash, Summary: "echo one …", Args: `{"command":"echo one\necho two"}`},
		},
		{
			name: "allow for session is remembered", decision: AllowSession, tool: ToolBash,
			args: map[string]any{"command": "true"}, calls: 3, wantAsks: 1,
		},
		{
			name: "deny", decision: Deny, tool: ToolBash,
			args: map[string]any{"command": "true"}, calls: 1, wantAsks: 1,
			wantErr: "permission denied: the user declined this Bash call; do not retry it unchanged, ask the user how to proceed",
		},
		{
			name: "asker error denies", decision: AllowOnce, askErr: errors.New("dialog closed"), tool: ToolBash,
			args: map[string]any{"command": "true"}, calls: 1, wantAsks: 1,
			wantErr: "permission denied: asking the user about Bash failed: dialog closed",
		},
		{
			name: "write inside shows a diff", decision: AllowOnce, tool: ToolWrite,
			args: map[string]any{"file_path": "new.txt", "content": "hi\n"}, calls: 1, wantAsks: 1,
			wantFirst: Request{Tool: ToolWrite, Summary: "new.txt (1 line)", Args: `{"content":"hi\n","file_path":"new.txt"}`, Diff: "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n"},
		},
		{
			name: "read inside does not ask", decision: Deny, tool: ToolRead,
			args: map[string]any{"file_path": "f.txt"}, calls: 2, wantAsks: 0,
		},
		{
			name: "read outside asks; session grant is remembered", decision: AllowSession, tool: ToolRead,
			args: map[string]any{"file_path": "../outside.txt"}, calls: 2, wantAsks: 1,
			wantFirst: Request{Tool: ToolRead, Summary: "OUTSIDE", Args: `{"file_path":"../outside.txt"}`, OutsideWorkDir: true},
		},
		{
			name: "write outside asks every time, even for the session", decision: AllowSession, tool: ToolWrite,
			args: map[string]any{"file_path": "../outside.txt", "content": "x"}, calls: 2, wantAsks: 2,
		},
		{
			name: "write outside denied by the user", decision: Deny, tool: ToolWrite,
			args: map[string]any{"file_path": "../outside.txt", "content": "x"}, calls: 1, wantAsks: 1,
			wantErr: "the user declined this Write call",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			work := filepath.Join(root, "work")
			writeFile(t, filepath.Join(work, "f.txt"), "a\n")
			writeFile(t, filepath.Join(root, "outside.txt"), "outside\n")
			asker := &fakeAsker{decision: tt.decision, err: tt.askErr}
			s := New(Options{WorkDir: work, Asker: asker})
			var r Result
			for range tt.calls {
				r = run(t, s, tt.tool, tt.args)
			}
			reqs := asker.asked()
			assert.Len(t, reqs, tt.wantAsks)
			if tt.wantErr != "" {
				assert.True(t, r.Denied)
				assert.Contains(t, r.Content, tt.wantErr)
			} else {
				assert.False(t, r.IsError, r.Content)
			}
			if tt.wantFirst.Tool != "" {
				require.NotEmpty(t, reqs)
				want := tt.wantFirst
				switch {
				case want.Summary == "OUTSIDE":
					want.Summary = filepath.Join(root, "outside.txt")
					want.Path = want.Summary
				case want.Tool == ToolBash:
					want.Path = work
				default:
					want.Path = filepath.Join(work, "new.txt")
				}
				assert.Equal(t, want, reqs[0])
			}
		})
	}
}

// A session grant for Write inside the working directory does not cover
// writing outside it.
func TestSessionGrantStaysInside(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	work := filepath.Join(root, "work")
	require.NoError(t, os.Mkdir(work, 0o755))
	asker := &fakeAsker{decision: AllowSession}
	s := New(Options{WorkDir: work, Asker: asker})
	r := run(t, s, ToolWrite, map[string]any{"file_path": "a.txt", "content": "a"})
	require.False(t, r.IsError, r.Content)
	r = run(t, s, ToolWrite, map[string]any{"file_path": "b.txt", "content": "b"})
	require.False(t, r.IsError, r.Content)
	require.Len(t, asker.asked(), 1, "inside: asked once")

	asker.decision = Deny
	r = run(t, s, ToolWrite, map[string]any{"file_path": "../x.txt", "content": "x"})
	assert.True(t, r.Denied)
	reqs := asker.asked()
	require.Len(t, reqs, 2, "outside: asked again")
	assert.True(t, reqs[1].OutsideWorkDir)
	assert.NoFileExists(t, filepath.Join(root, "x.txt"))
}

// Parallel tool calls share the Set.
func TestRunConcurrently(t *testing.T) {
	t.Parallel()
	asker := &fakeAsker{decision: AllowSession}
	s, dir := newTestSet(t, Options{Asker: asker})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := filepath.Join(dir, "f", string(rune('a'+i))+".txt")
			r := s.Run(context.Background(), Call{Name: ToolWrite, Arguments: `{"file_path": "` + name + `", "content": "x"}`})
			assert.False(t, r.IsError, r.Content)
			r = s.Run(context.Background(), Call{Name: ToolRead, Arguments: `{"file_path": "` + name + `"}`})
			assert.Equal(t, "     1\tx", r.Content)
		}()
	}
	wg.Wait()
}

// The approval dialog never receives raw escape sequences, from the
// model's arguments or from the file being changed.
func TestAskerSeesSanitizedRequests(t *testing.T) {
	t.Parallel()
	asker := &fakeAsker{decision: Deny}
	s, dir := newTestSet(t, Options{Asker: asker})
	writeFile(t, filepath.Join(dir, "f.txt"), "\x1b]0;evil title\x07a\n")
	run(t, s, ToolEdit, map[string]any{"file_path": "f.txt", "old_string": "a", "new_string": "b"})
	run(t, s, ToolBash, map[string]any{"command": "echo \x1b[2J\x1b[31mhi"})
	reqs := asker.asked()
	require.Len(t, reqs, 2)
	assert.Equal(t, "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n", reqs[0].Diff)
	assert.Equal(t, "echo hi", reqs[1].Summary)
	for _, r := range reqs {
		for _, field := range []string{r.Summary, r.Args, r.Path, r.Diff} {
			assert.NotContains(t, field, "\x1b")
		}
	}
}

// The documented limit (README, Security): a hard link inside the working
// directory to an outside file is read like any file of the directory,
// while Write replaces the link and leaves the outside file alone.
func TestHardLinkToOutsideKnownLimit(t *testing.T) {
	t.Parallel()
	work, outside := confinedTree(t)
	if err := os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(work, "hard.txt")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	perms := DefaultPermissions()
	require.NoError(t, perms.Allow("Write"))
	s := New(Options{WorkDir: work, Permissions: perms})
	r := run(t, s, ToolRead, map[string]any{"file_path": "hard.txt"})
	require.False(t, r.IsError, r.Content)
	assert.Contains(t, r.Content, "secret", "the limit: the outside content is readable")

	r = run(t, s, ToolWrite, map[string]any{"file_path": "hard.txt", "content": "mine\n"})
	require.False(t, r.IsError, r.Content)
	got, err := os.ReadFile(filepath.Join(outside, "secret.txt"))
	require.NoError(t, err)
	assert.Equal(t, "secret\n", string(got), "the outside file is not written")
}

// reasonAsker denies, saying why, as the TUI's "deny and tell the model
// why" does.
type reasonAsker struct{ reason string }

func (a reasonAsker) Ask(ctx context.Context, r Request) (Decision, error) {
	d, _, err := a.AskWhy(ctx, r)
	return d, err
}

func (a reasonAsker) AskWhy(context.Context, Request) (Decision, string, error) {
	return Deny, a.reason, nil
}

// TestDenialCarriesTheUsersReason: the reason the user gave with a denial
// reaches the model in the tool result; none given, the plain denial.
func TestDenialCarriesTheUsersReason(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	s := New(Options{WorkDir: work, Asker: reasonAsker{reason: "  use make test, not go test  "}})
	r := run(t, s, ToolBash, map[string]any{"command": "go test ./..."})
	require.True(t, r.Denied)
	require.Contains(t, r.Content, `the user declined this Bash call and said why: "use make test, not go test"`)

	s = New(Options{WorkDir: work, Asker: reasonAsker{}})
	r = run(t, s, ToolBash, map[string]any{"command": "go test ./..."})
	require.True(t, r.Denied)
	require.Contains(t, r.Content, "the user declined this Bash call; do not retry it unchanged")
}

// A call the user typed runs a ModeAsk tool inside the working directory
// without asking, but a disabled tool stays refused and a path outside
// still asks, as for the model.
func TestRunByUser(t *testing.T) {
	t.Parallel()
	work, outside := confinedTree(t)
	var asked []string
	var mu sync.Mutex
	asker := AskerFunc(func(_ context.Context, r Request) (Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, r.Tool+" "+r.Summary)
		return Deny, nil
	})
	s := New(Options{WorkDir: work, Asker: asker, Env: []string{"PATH=" + os.Getenv("PATH"), "OPENAI_API_KEY=sk-secret"}})
	r := s.RunByUser(context.Background(), Call{Name: ToolBash, Arguments: `{"command":"echo hi; pwd; echo key=$OPENAI_API_KEY"}`})
	require.False(t, r.IsError, r.Content)
	assert.Equal(t, "hi\n"+work+"\nkey=\n[exit code 0]", r.Content)

	r = s.RunByUser(context.Background(), Call{Name: ToolRead, Arguments: `{"file_path":"linkfile"}`})
	assert.True(t, r.Denied, r.Content)
	assert.NotContains(t, r.Content, "secret\n")
	assert.Equal(t, []string{"Read " + filepath.Join(outside, "secret.txt")}, asked, "outside still asks")

	r = s.Run(context.Background(), Call{Name: ToolBash, Arguments: `{"command":"echo hi"}`})
	assert.True(t, r.Denied, "the model's Bash call still asks: %s", r.Content)

	perms := DefaultPermissions()
	perms[ToolBash] = ModeDeny
	s = New(Options{WorkDir: work, Permissions: perms})
	r = s.RunByUser(context.Background(), Call{Name: ToolBash, Arguments: `{"command":"echo hi"}`})
	assert.True(t, r.Denied)
	assert.Contains(t, r.Content, "disabled by configuration")
}

// TestDenialLift: a denied call says what would have allowed it, so that
// print mode names only the flags that would.
func TestDenialLift(t *testing.T) {
	t.Parallel()
	work, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	gitRepo(t, filepath.Join(work, ".git"))
	private := filepath.Join(work, ".config", "gencode")
	tests := []struct {
		name  string
		opts  Options
		tool  string
		args  map[string]any
		want  Lift
		reach string
	}{
		{"needs approval", Options{}, ToolBash, map[string]any{"command": "true"}, LiftAllow, "--allow Bash or --yolo"},
		{"write needs approval", Options{}, ToolWrite, map[string]any{"file_path": "x", "content": "x"}, LiftAllow, "--allow Write or --yolo"},
		{"read outside", Options{}, ToolRead, map[string]any{"file_path": "/etc/hostname"}, LiftYolo, "--yolo"},
		{"write outside", Options{Permissions: Permissions{ToolWrite: ModeAllow}}, ToolWrite, map[string]any{"file_path": "../x", "content": "x"}, LiftYolo, "only --yolo"},
		{"write into .git", Options{Permissions: Permissions{ToolWrite: ModeAllow}}, ToolWrite, map[string]any{"file_path": ".git/config", "content": "x"}, LiftYolo, "only --yolo"},
		{"gencode's own directory", Options{Yolo: true, Private: []string{private}}, ToolWrite, map[string]any{"file_path": ".config/gencode/config.toml", "content": "x"}, LiftNone, "gencode's own directory"},
		{"disabled", Options{Yolo: true, Permissions: Permissions{ToolBash: ModeDeny}}, ToolBash, map[string]any{"command": "true"}, LiftNone, "disabled by configuration"},
		{"declined", Options{Asker: &fakeAsker{decision: Deny}}, ToolBash, map[string]any{"command": "true"}, LiftNone, "declined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := tt.opts
			opts.WorkDir = work
			res := run(t, New(opts), tt.tool, tt.args)
			require.True(t, res.Denied, res.Content)
			assert.Equal(t, tt.want, res.Lift, "Lift of %s", res.Content)
			assert.Contains(t, res.Content, tt.reach)
		})
	}
}
