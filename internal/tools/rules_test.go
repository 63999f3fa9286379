package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gencode/gencode/internal/shellfx"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func bashRequest(dir, command string) Request {
	b, _ := json.Marshal(map[string]string{"command": command})
	return Request{Tool: ToolBash, Summary: command, Args: string(b), Path: dir}
}

// ruleProject is a project for the rule tests: a file, a directory, a
// link that stays inside and two that lead out of it.
func ruleProject(t testing.TB) string {
	t.Helper()
	top, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	dir := filepath.Join(top, "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "internal", "x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("hi\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(top, "secret"), []byte("s\n"), 0o644))
	require.NoError(t, os.Symlink("internal", filepath.Join(dir, "in")))
	require.NoError(t, os.Symlink("..", filepath.Join(dir, "up")))
	require.NoError(t, os.Symlink("../secret", filepath.Join(dir, "notes.md")))
	return dir
}

// TestProjectRule: what "always for this project" saves for a command.
// A command is saved exactly, unless it only reads or tests (widenPrefix)
// and its arguments are already confined; destructive and writing
// commands are only ever saved exactly; a command naming a path outside
// the project is not offered at all.
func TestProjectRule(t *testing.T) {
	t.Parallel()
	dir := ruleProject(t)
	const wide, exact, none = "wide", "exact", "none"
	tests := []struct {
		command string
		kind    string // what is saved
		want    string // Rule.String(); "" for none
	}{
		// Widened: the prefix, then confined arguments.
		{"go test ./...", wide, "go test [+ paths inside the project; no options]"},
		{"go test ./internal/x", wide, "go test [+ paths inside the project; no options]"},
		{"go test", wide, "go test [+ paths inside the project; no options]"},
		{"go vet ./...", wide, "go vet [+ paths inside the project; no options]"},
		{"cat README.md", wide, "cat [+ paths inside the project; no options]"},
		{"cat in/x", wide, "cat [+ paths inside the project; no options]"},
		{"grep TODO README.md", wide, "grep [+ paths inside the project; no options]"},
		{"ls", wide, "ls [+ paths inside the project; no options]"},
		{"ls internal", wide, "ls [+ paths inside the project; no options]"},
		{"git status", wide, "git status [+ paths inside the project; no options]"},
		{"git log main", wide, "git log [+ paths inside the project; no options]"},
		{"git diff HEAD~1", wide, "git diff [+ paths inside the project; no options]"},
		{"git show HEAD:README.md", wide, "git show [+ paths inside the project; no options]"},
		{"cargo test parser", wide, "cargo test [+ paths inside the project; no options]"},
		{"pytest tests/test_a.py", wide, "pytest [+ paths inside the project; no options]"},
		// Exact: an option, or a command that is never widened.
		{"go test -race ./...", exact, "go test -race ./... (exactly this command)"},
		{"ls -la src", exact, "ls -la src (exactly this command)"},
		{"git -C sub status", exact, "git -C sub status (exactly this command)"},
		{`grep -rn "a b" .`, exact, "grep -rn 'a b' . (exactly this command)"},
		{"make", exact, "make (exactly this command)"},
		{"make test", exact, "make test (exactly this command)"},
		{"npm run build", exact, "npm run build (exactly this command)"},
		{"echo one", exact, "echo one (exactly this command)"},
		{"rm tmp.txt", exact, "rm tmp.txt (exactly this command)"},
		{"rm -rf build", exact, "rm -rf build (exactly this command)"},
		{"mv a.txt b.txt", exact, "mv a.txt b.txt (exactly this command)"},
		{"cp a.txt b.txt", exact, "cp a.txt b.txt (exactly this command)"},
		{"dd if=a.img of=b.img", exact, "dd if=a.img of=b.img (exactly this command)"},
		{"tee out.txt", exact, "tee out.txt (exactly this command)"},
		{"chmod +x run.sh", exact, "chmod +x run.sh (exactly this command)"},
		{"chown me a.txt", exact, "chown me a.txt (exactly this command)"},
		{"ln a b", exact, "ln a b (exactly this command)"},
		{"sed s/a/b/ a.txt", exact, "sed s/a/b/ a.txt (exactly this command)"},
		{"git reset --hard", exact, "git reset --hard (exactly this command)"},
		{"git clean -fdx", exact, "git clean -fdx (exactly this command)"},
		{"git checkout main", exact, "git checkout main (exactly this command)"},
		{"git push --force", exact, "git push --force (exactly this command)"},
		{"git rebase main", exact, "git rebase main (exactly this command)"},
		{"git commit -m fix", exact, "git commit -m fix (exactly this command)"},
		{"./gradlew test", exact, "./gradlew test (exactly this command)"},
		{"python3 -c 'print(1)'", exact, "python3 -c 'print(1)' (exactly this command)"},
		// None: a path outside the project, a list, an expansion, or a
		// command that runs what it is given.
		{"cat ../secret", none, ""},
		{"cat /etc/passwd", none, ""},
		{"cat up/secret", none, ""},
		{"cat notes.md", none, ""},
		{"cat README.md ../secret", none, ""},
		{"rm tmp.txt -rf ../outside/dir", none, ""},
		{"grep --file=/etc/shadow x", none, ""},
		{"gcc -I/usr/include a.c", none, ""},
		{"git show HEAD:../secret", none, ""},
		{"scp a host:/etc/x", none, ""},
		{"cat '~/x'", none, ""},
		{"curl file:///etc/passwd", none, ""},
		{"go build ./... && go test ./...", none, ""},
		{"go test ./... | tail", none, ""},
		{"go test ./... > out.txt", none, ""},
		{"go test $(go list ./...)", none, ""},
		{"rm -rf $DIR", none, ""},
		{"CGO_ENABLED=0 go build", none, ""},
		{"bash -c 'go test'", none, ""},
		{"sh script.sh", none, ""},
		{"/bin/bash script.sh", none, ""},
		{"sudo make install", none, ""},
		{"env GOOS=linux go build", none, ""},
		{"xargs rm", none, ""},
		{"timeout 10 go test", none, ""},
		{"find . -name x", none, ""},
		{"eval echo hi", none, ""},
		{"uv run pytest", none, ""},
		{"go run ./cmd/x", none, ""},
		{"echo 'a\x1b[2Jb'", none, ""},
	}
	require.GreaterOrEqual(t, len(tests), 40)
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			t.Parallel()
			r, ok := ProjectRule(bashRequest(dir, tt.command))
			kind := none
			if ok {
				kind = map[bool]string{true: exact, false: wide}[r.Exact]
				require.NoError(t, r.Validate(dir), "a saved rule validates when the file is read")
				assert.Equal(t, tt.want, r.String(), "ProjectRule(%q)", tt.command)
			}
			assert.Equal(t, tt.kind, kind, "ProjectRule(%q) = %+v", tt.command, r)
		})
	}
	for _, tt := range []struct {
		name string
		req  Request
		want string
	}{
		{"write", Request{Tool: ToolWrite, Summary: "a.go"}, "Write"},
		{"edit", Request{Tool: ToolEdit, Summary: "a.go"}, "Edit"},
		{"write outside", Request{Tool: ToolWrite, OutsideWorkDir: true}, ""},
		{"read outside", Request{Tool: ToolRead, OutsideWorkDir: true}, ""},
	} {
		r, ok := ProjectRule(tt.req)
		got := ""
		if ok {
			got = r.String()
		}
		assert.Equal(t, tt.want, got, tt.name)
	}
}

// TestRulesAllow: which commands saved rules allow without asking. A
// widened rule allows only added arguments that are neither options nor
// paths leading out of the project; an exact rule only its command.
func TestRulesAllow(t *testing.T) {
	t.Parallel()
	dir := ruleProject(t)
	rules := []Rule{
		{Tool: ToolBash, Command: []string{"go", "test"}},
		{Tool: ToolBash, Command: []string{"go", "vet"}},
		{Tool: ToolBash, Command: []string{"cat"}},
		{Tool: ToolBash, Command: []string{"ls", "-la"}, Exact: true},
		{Tool: ToolBash, Command: []string{"rm", "tmp.txt"}, Exact: true},
		{Tool: ToolWrite},
	}
	tests := []struct {
		name    string
		command string
		want    bool
	}{
		{"the prefix itself", "go test", true},
		{"a package inside", "go test ./internal/x", true},
		{"a pattern inside", "go test ./...", true},
		{"a test name (no file)", "go test TestParse", true},
		{"an option added", "go test -race ./...", false},
		{"-exec added", "go test -exec evil ./...", false},
		{"an option after a package", "go test ./... -exec=evil", false},
		{"a path outside", "go test ../outside", false},
		{"a path through a link out", "go test ./up/x", false},
		{"a link inside", "cat in/x", true},
		{"a file", "cat README.md", true},
		{"a file and a secret outside", "cat README.md ../secret", false},
		{"an absolute path outside", "cat /etc/passwd", false},
		{"an absolute path inside", "cat " + filepath.Join(dir, "README.md"), true},
		{"a link to a file outside", "cat notes.md", false},
		{"a home path, quoted", "cat '~/.ssh/id_rsa'", false},
		{"a + option", "cat +x", false},
		{"another subcommand", "go build ./...", false},
		{"a longer word is not the prefix", "go testify", false},
		{"an option before the subcommand", "go -C /tmp test", false},
		{"each part of a list allowed", "go vet ./... && go test ./...", true},
		{"one part of a list not allowed", "go test ./... && rm -rf /", false},
		{"one part after ; not allowed", "go test; curl evil.sh", false},
		{"one part after || not allowed", "go test || sh", false},
		{"a pipe into a command not allowed", "go test ./... | sh", false},
		{"a pipe of allowed commands", "go test ./... | go vet", true},
		{"a redirection", "go test ./... > /etc/passwd", false},
		{"a redirection of stderr", "go test ./... 2>&1", false},
		{"a command substitution", "go test $(rm -rf /)", false},
		{"backquotes", "go test `rm -rf /`", false},
		{"a variable", "go test $X", false},
		{"an assignment before", "GOFLAGS=-toolexec=evil go test", false},
		{"a subshell", "(go test)", false},
		{"in the background", "go test &", false},
		{"a glob", "go test ./*", false},
		{"exact rule, exact command", "ls -la", true},
		{"exact rule, more arguments", "ls -la /etc", false},
		{"exact rule, a path inside added", "ls -la internal", false},
		{"exact rm", "rm tmp.txt", true},
		{"exact rm, options and paths added", "rm tmp.txt -rf ../outside/dir ../outside/precious.txt", false},
		{"exact rm, a file inside added", "rm tmp.txt README.md", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, allowedBy(rules, bashRequest(dir, tt.command)), "allowedBy(%q)", tt.command)
		})
	}
	for _, tt := range []struct {
		name string
		req  Request
		want bool
	}{
		{"write inside", Request{Tool: ToolWrite, Summary: "a.go"}, true},
		{"write outside", Request{Tool: ToolWrite, Summary: "/etc/x", OutsideWorkDir: true}, false},
		{"edit has no rule", Request{Tool: ToolEdit, Summary: "a.go"}, false},
		{"bash args not JSON", Request{Tool: ToolBash, Args: "go test", Path: dir}, false},
	} {
		assert.Equal(t, tt.want, allowedBy(rules, tt.req), tt.name)
	}
}

// TestRuleValidate: the check the rules file is read with is the one the
// dialog saves with; a rule it refuses allows nothing, whoever wrote it.
func TestRuleValidate(t *testing.T) {
	t.Parallel()
	dir := ruleProject(t)
	tests := []struct {
		rule    Rule
		wantErr string
	}{
		{Rule{Tool: ToolBash, Command: []string{"go", "test"}}, ""},
		{Rule{Tool: ToolBash, Command: []string{"rm", "tmp.txt"}, Exact: true}, ""},
		{Rule{Tool: ToolBash, Command: []string{"python3", "-c"}, Exact: true}, ""},
		{Rule{Tool: ToolWrite}, ""},
		{Rule{Tool: "bash", Command: []string{"ls"}}, "unknown tool"},
		{Rule{Tool: "Nope"}, "unknown tool"},
		{Rule{Tool: ToolBash}, "no command"},
		{Rule{Tool: ToolWrite, Command: []string{"x"}}, "only Bash rules have a command"},
		{Rule{Tool: ToolBash, Command: []string{"go", ""}}, "an empty word"},
		{Rule{Tool: ToolBash, Command: []string{"bash"}}, "bash runs the commands or code it is given"},
		{Rule{Tool: ToolBash, Command: []string{"bash"}, Exact: true}, "bash runs the commands or code it is given"},
		{Rule{Tool: ToolBash, Command: []string{"sh", "-c"}}, "sh runs the commands or code it is given"},
		{Rule{Tool: ToolBash, Command: []string{"env"}}, "env runs the commands or code it is given"},
		{Rule{Tool: ToolBash, Command: []string{"python3", "-c"}}, "saves this command only exactly"},
		{Rule{Tool: ToolBash, Command: []string{"rm", "tmp.txt"}}, "saves this command only exactly"},
		{Rule{Tool: ToolBash, Command: []string{"cat", "README.md"}}, "saves this command only exactly"},
		{Rule{Tool: ToolBash, Command: []string{"cat", "../secret"}, Exact: true}, `"../secret" is a path outside the project`},
		{Rule{Tool: ToolBash, Command: []string{"echo", "a\x1b"}, Exact: true}, "a control character"},
	}
	for _, tt := range tests {
		err := tt.rule.Validate(dir)
		if tt.wantErr == "" {
			assert.NoError(t, err, "Validate(%+v)", tt.rule)
			continue
		}
		if assert.Error(t, err, "Validate(%+v)", tt.rule) {
			assert.Contains(t, err.Error(), tt.wantErr, "Validate(%+v)", tt.rule)
		}
		assert.False(t, allowedBy([]Rule{tt.rule}, bashRequest(dir, strings.Join(tt.rule.Command, " "))), "a refused rule allows nothing: %+v", tt.rule)
	}
}

// FuzzProjectRule: whatever command the user allows for the project, and
// whatever command the model runs later, the saved rule never lets
// through a command that has an argument naming a path outside the
// project, nor one with an option the saved command did not have.
func FuzzProjectRule(f *testing.F) {
	for _, seed := range [][2]string{
		{"rm tmp.txt", "rm tmp.txt -rf ../outside/dir ../outside/precious.txt"},
		{"cat README.md", "cat README.md ../outside/secret"},
		{"cat README.md", "cat notes.md"},
		{"cat README.md", "cat up/secret"},
		{"cat README.md", "cat /etc/passwd"},
		{"cat README.md", "cat in/x README.md"},
		{"go test ./internal/x", "go test -exec evil ./..."},
		{"go test ./internal/x", "go test ../outside"},
		{"go test ./...", "go test ./internal/x && go vet"},
		{"git log main", "git log HEAD:../x"},
		{"git show HEAD:README.md", "git show --output=/tmp/x"},
		{"grep TODO README.md", "grep TODO '~/.aws/credentials'"},
		{"ls", "ls ."},
		{"ls", "ls .."},
		{"ls", "ls in/../.."},
		{"make", "make install"},
		{"python3 -c pass", "python3 -c 'import os'"},
		{"echo hi", "echo hi there"},
	} {
		f.Add(seed[0], seed[1])
	}
	dir := ruleProject(f)
	f.Fuzz(func(t *testing.T, saved, later string) {
		rule, ok := ProjectRule(bashRequest(dir, saved))
		if !ok {
			return
		}
		if err := rule.Validate(dir); err != nil {
			t.Fatalf("ProjectRule(%q) = %+v, which the rules file refuses: %v", saved, rule, err)
		}
		req := bashRequest(dir, later)
		if !allowedBy([]Rule{rule}, req) {
			return
		}
		cmds, _ := shellfx.Commands(later)
		for _, words := range cmds {
			for _, w := range words[1:] {
				if pathOutside(dir, w) || plainOutside(dir, w) {
					t.Fatalf("rule %q (from %q) allows %q, whose argument %q is outside the project", rule, saved, later, w)
				}
			}
			if !rule.Exact {
				for _, w := range words[len(rule.Command):] {
					if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "+") {
						t.Fatalf("rule %q (from %q) allows %q, which adds the option %q", rule, saved, later, w)
					}
				}
			} else if !slices.Equal(words, rule.Command) {
				t.Fatalf("exact rule %q allows %q", rule, later)
			}
		}
	})
}

// memRules is ProjectRules in memory, with the failures a file can have.
type memRules struct {
	mu      sync.Mutex
	rules   []Rule
	readErr error
	addErr  error
}

func (m *memRules) Rules() ([]Rule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Rule(nil), m.rules...), m.readErr
}

func (m *memRules) Add(r Rule) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.addErr != nil {
		return m.addErr
	}
	m.rules = append(m.rules, r)
	return nil
}

func (m *memRules) revokeAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rules = nil
}

func TestAllowProject(t *testing.T) {
	t.Parallel()
	rules := &memRules{}
	asker := &fakeAsker{decision: AllowProject}
	s, dir := newTestSet(t, Options{Asker: asker, Project: rules})
	writeFile(t, filepath.Join(dir, "a.txt"), "a\n")
	writeFile(t, filepath.Join(dir, "sub", "b.txt"), "b\n")
	writeFile(t, filepath.Join(filepath.Dir(dir), "secret.txt"), "s\n")

	res := run(t, s, ToolBash, map[string]any{"command": "cat a.txt"})
	require.False(t, res.IsError, res.Content)
	require.Len(t, asker.asked(), 1)
	assert.Equal(t, "cat [+ paths inside the project; no options]", asker.asked()[0].Project, "the dialog shows the rule it saves")
	assert.Equal(t, []Decision{AllowOnce, AllowSession, AllowProject, Deny}, asker.asked()[0].Choices())
	assert.Equal(t, []Rule{{Tool: ToolBash, Command: []string{"cat"}}}, rules.rules)

	// Later calls with paths inside the project run without asking ...
	asker.decision = Deny
	res = run(t, s, ToolBash, map[string]any{"command": "cat a.txt sub/b.txt && cat sub/b.txt"})
	require.False(t, res.IsError, res.Content)
	assert.Len(t, asker.asked(), 1)
	// ... a path outside, an option, another command, or the rule's
	// command joined to another one still ask.
	for _, c := range []string{"cat ../" + filepath.Base(filepath.Dir(dir)) + "/secret.txt", "cat " + filepath.Join(filepath.Dir(dir), "secret.txt"), "cat -v a.txt", "echo two", "cat a.txt > f.txt", "cat a.txt; echo two"} {
		res = run(t, s, ToolBash, map[string]any{"command": c})
		assert.True(t, res.Denied, "%q ran without asking", c)
	}
	assert.Len(t, asker.asked(), 7)
	assert.Empty(t, asker.asked()[1].Project, "a command naming a path outside is not offered for the project")
	assert.Empty(t, asker.asked()[6].Project, "a list is not offered for the project")
	assert.Equal(t, []Decision{AllowOnce, AllowSession, Deny}, asker.asked()[6].Choices())

	// A destructive command is saved exactly: the same command with
	// more arguments asks.
	asker.decision = AllowProject
	writeFile(t, filepath.Join(dir, "tmp.txt"), "t\n")
	res = run(t, s, ToolBash, map[string]any{"command": "rm tmp.txt"})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "rm tmp.txt (exactly this command)", asker.asked()[7].Project)
	asker.decision = Deny
	res = run(t, s, ToolBash, map[string]any{"command": "rm tmp.txt -rf a.txt"})
	assert.True(t, res.Denied)
	assert.FileExists(t, filepath.Join(dir, "a.txt"))

	// A rule revoked (by this gencode or another) asks again.
	rules.revokeAll()
	res = run(t, s, ToolBash, map[string]any{"command": "cat a.txt"})
	assert.True(t, res.Denied)
	assert.Len(t, asker.asked(), 10)
}

func TestAllowProjectForEdits(t *testing.T) {
	t.Parallel()
	rules := &memRules{}
	asker := &fakeAsker{decision: AllowProject}
	s, dir := newTestSet(t, Options{Asker: asker, Project: rules})
	res := run(t, s, ToolWrite, map[string]any{"file_path": "a.txt", "content": "a\n"})
	require.False(t, res.IsError, res.Content)
	asker.decision = Deny
	res = run(t, s, ToolWrite, map[string]any{"file_path": "sub/b.txt", "content": "b\n"})
	require.False(t, res.IsError, res.Content)
	assert.Len(t, asker.asked(), 1, "a second Write inside the project does not ask")
	// Edit is its own tool; a write outside still asks every time.
	writeFile(t, filepath.Join(dir, "e.txt"), "x\n")
	res = run(t, s, ToolEdit, map[string]any{"file_path": "e.txt", "old_string": "x", "new_string": "y"})
	assert.True(t, res.Denied)
	res = run(t, s, ToolWrite, map[string]any{"file_path": "../out.txt", "content": "b\n"})
	assert.True(t, res.Denied)
	assert.Len(t, asker.asked(), 3)
	assert.Empty(t, asker.asked()[2].Project)
}

func TestProjectRulesInPrintMode(t *testing.T) {
	t.Parallel()
	rules := &memRules{rules: []Rule{{Tool: ToolBash, Command: []string{"echo", "hi"}, Exact: true}}}
	s, _ := newTestSet(t, Options{Project: rules}) // no Asker: print mode
	res := run(t, s, ToolBash, map[string]any{"command": "echo hi"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "hi\n")
	res = run(t, s, ToolBash, map[string]any{"command": "echo hi there"})
	assert.True(t, res.Denied)
	assert.Contains(t, res.Content, "--allow Bash")
}

func TestBrokenProjectRules(t *testing.T) {
	t.Parallel()
	rules := &memRules{rules: []Rule{{Tool: ToolBash, Command: []string{"echo", "hi"}}}, readErr: errors.New("line 3: bad")}
	asker := &fakeAsker{decision: AllowProject}
	s, _ := newTestSet(t, Options{Asker: asker, Project: rules})
	res := run(t, s, ToolBash, map[string]any{"command": "echo hi"})
	require.False(t, res.IsError, res.Content, "the user's answer still runs the call")
	require.Len(t, asker.asked(), 1, "an unreadable file applies no rule")
	assert.Empty(t, asker.asked()[0].Project, "and offers no project choice")
	assert.Len(t, rules.rules, 1, "nothing is saved over it")

	// A rule that cannot be saved still lets the approved call run.
	rules = &memRules{addErr: errors.New("read-only")}
	s, _ = newTestSet(t, Options{Asker: &fakeAsker{decision: AllowProject}, Project: rules})
	res = s.Run(context.Background(), Call{Name: ToolBash, Arguments: `{"command":"echo hi"}`})
	require.False(t, res.IsError, res.Content)
}

// TestProjectRuleKeepsSecretsOut: a command whose rule would hold the API
// key is not offered for the project, so the key never reaches the file.
func TestProjectRuleKeepsSecretsOut(t *testing.T) {
	t.Parallel()
	rules := &memRules{}
	asker := &fakeAsker{decision: AllowProject}
	s, _ := newTestSet(t, Options{Asker: asker, Project: rules, Secrets: []string{"sk-secret-0123456789"}})
	res := run(t, s, ToolBash, map[string]any{"command": "echo sk-secret-0123456789"})
	require.False(t, res.IsError, res.Content)
	require.Len(t, asker.asked(), 1)
	assert.Empty(t, asker.asked()[0].Project)
	assert.Empty(t, rules.rules)
}

// plainOutside is the fuzz test's own reading of a word as a path,
// independent of pathOutside: a ~ path, or the word joined to dir (when
// relative), with the symlinks of its longest existing prefix followed
// by the standard library, is not inside dir.
func plainOutside(dir, w string) bool {
	if strings.HasPrefix(w, "~") {
		return true
	}
	p := w
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	if !within(dir, p) {
		return true
	}
	for q := p; within(dir, q); q = filepath.Dir(q) {
		if real, err := filepath.EvalSymlinks(q); err == nil {
			return !within(dir, real)
		}
		if q == dir {
			break
		}
	}
	return false
}
