package permstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/permstore"
	"github.com/gencode/gencode/internal/tools"
)

var (
	goTest = tools.Rule{Tool: tools.ToolBash, Command: []string{"go", "test"}}
	write  = tools.Rule{Tool: tools.ToolWrite}
)

func TestRulesPersistAcrossReopen(t *testing.T) {
	t.Parallel()
	conf, project := t.TempDir(), t.TempDir()
	s := permstore.Open(conf, project)
	rules, err := s.Rules()
	require.NoError(t, err)
	assert.Empty(t, rules, "no file: no rules")

	require.NoError(t, s.Add(goTest))
	require.NoError(t, s.Add(write))
	require.NoError(t, s.Add(goTest), "a rule saved twice is kept once")

	again := permstore.Open(conf, project) // a later run
	rules, err = again.Rules()
	require.NoError(t, err)
	assert.Equal(t, []tools.Rule{goTest, write}, rules)
	assert.Empty(t, mustRules(t, permstore.Open(conf, t.TempDir())), "another project has its own")

	fi, err := os.Stat(s.Path())
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the rules file")
	for _, d := range []string{filepath.Dir(s.Path()), filepath.Dir(filepath.Dir(s.Path()))} {
		fi, err := os.Stat(d)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), d)
	}
	assert.Equal(t, filepath.Join(conf, "projects"), filepath.Dir(filepath.Dir(s.Path())))
	assert.True(t, strings.HasPrefix(filepath.Base(filepath.Dir(s.Path())), filepath.Base(project)+"-"), "the directory names the project")
	data, err := os.ReadFile(s.Path())
	require.NoError(t, err)
	assert.Contains(t, string(data), project, "the file says which project it is for")
}

func mustRules(t *testing.T, s *permstore.Store) []tools.Rule {
	t.Helper()
	rules, err := s.Rules()
	require.NoError(t, err)
	return rules
}

func TestRevoke(t *testing.T) {
	t.Parallel()
	conf, project := t.TempDir(), t.TempDir()
	s := permstore.Open(conf, project)
	require.NoError(t, s.Add(goTest))
	require.NoError(t, s.Add(write))
	gone, err := s.Revoke(1)
	require.NoError(t, err)
	assert.Equal(t, goTest, gone)
	assert.Equal(t, []tools.Rule{write}, mustRules(t, permstore.Open(conf, project)))

	_, err = s.Revoke(2)
	var re *permstore.RangeError
	require.ErrorAs(t, err, &re)
	assert.EqualError(t, err, "revoke permission rule 2: no rule 2: the rules are numbered 1 to 1")
	assert.Equal(t, []tools.Rule{write}, mustRules(t, s))
}

func TestAnotherGencodeSeesChanges(t *testing.T) {
	t.Parallel()
	conf, project := t.TempDir(), t.TempDir()
	a, b := permstore.Open(conf, project), permstore.Open(conf, project)
	assert.Empty(t, mustRules(t, b))
	require.NoError(t, a.Add(goTest))
	assert.Equal(t, []tools.Rule{goTest}, mustRules(t, b), "a rule saved by another run counts at once")
	require.NoError(t, a.Add(write))
	assert.Equal(t, []tools.Rule{goTest, write}, mustRules(t, b), "b read the file before: it reads it again")
	_, err := a.Revoke(1)
	require.NoError(t, err)
	assert.Equal(t, []tools.Rule{write}, mustRules(t, b), "and so does a revocation")
	edit := tools.Rule{Tool: tools.ToolEdit}
	require.NoError(t, b.Add(edit))
	assert.Equal(t, []tools.Rule{write, edit}, mustRules(t, a), "b's save keeps a's rules")
}

func TestBrokenFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, want string
	}{
		{"syntax", "project = \"x\"\n[[rule]]\ntool = \"Bash\ncommand = [\"go\"]\n", ":3: basic strings cannot have new lines"},
		{"unknown key", "[[rule]]\ntool = \"Bash\"\ncommand = [\"go\", \"test\"]\nprefix = true\n", ":4: unknown key rule.prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			conf, project := t.TempDir(), t.TempDir()
			s := permstore.Open(conf, project)
			require.NoError(t, s.Add(write))
			require.NoError(t, os.WriteFile(s.Path(), []byte(tt.content), 0o600))

			rules, err := s.Rules()
			assert.Empty(t, rules)
			var be *permstore.BrokenError
			require.ErrorAs(t, err, &be)
			assert.Contains(t, err.Error(), s.Path()+tt.want)
			assert.Contains(t, err.Error(), "(no saved rule applies until the file is fixed or removed)")
			assert.Equal(t, err, s.Problem())

			// Nothing is saved over it: the user's text stays to be fixed.
			require.ErrorAs(t, s.Add(goTest), &be)
			_, err = s.Revoke(1)
			require.ErrorAs(t, err, &be)
			data, err := os.ReadFile(s.Path())
			require.NoError(t, err)
			assert.Equal(t, tt.content, string(data))

			// Fixed, it counts again.
			require.NoError(t, os.Remove(s.Path()))
			require.NoError(t, s.Add(goTest))
			assert.Equal(t, []tools.Rule{goTest}, mustRules(t, s))
			assert.NoError(t, s.Problem())
		})
	}
}

func TestUnwritableConfigDir(t *testing.T) {
	t.Parallel()
	conf := t.TempDir()
	// Where the project's directory would go is a file: nothing can be
	// made under it, whoever runs the test.
	require.NoError(t, os.WriteFile(filepath.Join(conf, "projects"), nil, 0o600))
	s := permstore.Open(conf, t.TempDir())
	err := s.Add(goTest)
	require.ErrorIs(t, err, syscall.ENOTDIR)
	assert.Contains(t, err.Error(), "save permission rule go test [+ paths inside the project; no options]")
	require.ErrorIs(t, s.Problem(), syscall.ENOTDIR, "said by /permissions")
}

// asker answers with decision and counts the questions.
type asker struct {
	decision tools.Decision
	mu       sync.Mutex
	asked    int
}

func (a *asker) Ask(context.Context, tools.Request) (tools.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked++
	return a.decision, nil
}

func (a *asker) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked
}

func bash(t *testing.T, s *tools.Set, command string) tools.Result {
	t.Helper()
	return s.Run(context.Background(), tools.Call{Name: tools.ToolBash, Arguments: `{"command":"` + command + `"}`})
}

// TestAlwaysForThisProject is the feature end to end in process: the
// answer is saved, a later run (a new Set on a reopened store) runs the
// command without asking, print mode too, and a revoked rule asks again.
func TestAlwaysForThisProject(t *testing.T) {
	t.Parallel()
	conf := t.TempDir()
	project, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)

	for _, f := range []string{"saved.txt", "again.txt", "print.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(project, f), []byte(f+"\n"), 0o644))
	}

	first := &asker{decision: tools.AllowProject}
	s1 := tools.New(tools.Options{WorkDir: project, Asker: first, Project: permstore.Open(conf, project)})
	res := bash(t, s1, "cat saved.txt")
	require.False(t, res.IsError, res.Content)
	require.Equal(t, 1, first.count())

	later := &asker{decision: tools.Deny}
	s2 := tools.New(tools.Options{WorkDir: project, Asker: later, Project: permstore.Open(conf, project)})
	res = bash(t, s2, "cat saved.txt again.txt")
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, 0, later.count(), "the saved rule allows it without asking")

	printMode := tools.New(tools.Options{WorkDir: project, Project: permstore.Open(conf, project)})
	res = bash(t, printMode, "cat print.txt")
	require.False(t, res.IsError, res.Content)
	assert.True(t, bash(t, printMode, "echo other").Denied, "print mode asks nobody: other commands are denied")
	assert.True(t, bash(t, printMode, "cat ../x").Denied, "nor a path outside the project")

	_, err = permstore.Open(conf, project).Revoke(1)
	require.NoError(t, err)
	res = bash(t, s2, "cat saved.txt")
	assert.True(t, res.Denied)
	assert.Equal(t, 1, later.count(), "a revoked rule asks again")
}

// TestHandEditedRulesIgnored: a rule the dialog would never save (a
// shell, an interpreter or a destructive command widened, a path outside
// the project, an unknown tool) is ignored when the file is read, and
// Problem says which line and why; the other rules apply, and the
// ignored ones stay in the file for the user to fix.
func TestHandEditedRulesIgnored(t *testing.T) {
	t.Parallel()
	conf := t.TempDir()
	project, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	s := permstore.Open(conf, project)
	require.NoError(t, s.Add(write)) // makes the directory
	content := `project = "x"

[[rule]]
tool = "Bash"
command = ["bash"]

[[rule]]
tool = "Bash"
command = ["go", "test"]

[[rule]]
tool = "Bash"
command = ["sh", "-c"]

[[rule]]
tool = "Bash"
command = ["env"]
exact = true

[[rule]]
tool = "Bash"
command = ["python3", "-c"]

[[rule]]
tool = "Bash"
command = ["rm", "tmp.txt"]

[[rule]]
tool = "Bash"
command = ["cat", "../secret"]
exact = true

[[rule]]
tool = "Shell"

  [[ rule ]]
tool = "Write"
`
	require.NoError(t, os.WriteFile(s.Path(), []byte(content), 0o600))
	assert.Equal(t, []tools.Rule{goTest, write}, mustRules(t, s), "only the rules the dialog would save apply")
	perr := s.Problem()
	var ie *permstore.IgnoredError
	require.ErrorAs(t, perr, &ie)
	msg := perr.Error()
	for _, want := range []string{
		s.Path() + `:3: ignored: rule for Bash "bash": bash runs the commands or code it is given, so a rule for it would allow anything`,
		s.Path() + `:11: ignored: rule for Bash "sh -c": sh runs the commands or code it is given`,
		s.Path() + `:15: ignored: rule for Bash "env": env runs the commands or code it is given`,
		s.Path() + `:20: ignored: rule for Bash "python3 -c": allows more arguments, but gencode saves this command only exactly`,
		s.Path() + `:24: ignored: rule for Bash "rm tmp.txt": allows more arguments, but gencode saves this command only exactly`,
		s.Path() + `:28: ignored: rule for Bash "cat ../secret": "../secret" is a path outside the project`,
		s.Path() + `:33: ignored: rule for "Shell": unknown tool`,
		"(the other rules apply; fix or remove the line)",
	} {
		assert.Contains(t, msg, want)
	}
	assert.Len(t, ie.Rules, 7)

	// None of them runs anything in print mode; the valid one does.
	ts := tools.New(tools.Options{WorkDir: project, Project: s})
	for _, c := range []string{"bash", "sh -c 'echo pwned'", "env", "python3 -c 'print(1)'", "rm tmp.txt -rf x", "cat ../secret"} {
		assert.True(t, bash(t, ts, c).Denied, "%q ran on an ignored rule", c)
	}
	assert.False(t, bash(t, ts, "go test").Denied)

	// Saving and revoking keep the ignored rules as the user wrote them;
	// the numbers are those /permissions shows (applying rules only).
	edit := tools.Rule{Tool: tools.ToolEdit}
	require.NoError(t, s.Add(edit))
	gone, err := s.Revoke(1)
	require.NoError(t, err)
	assert.Equal(t, goTest, gone)
	assert.Equal(t, []tools.Rule{write, edit}, mustRules(t, s))
	require.ErrorAs(t, s.Problem(), &ie)
	assert.Len(t, ie.Rules, 7, "still said after the file was rewritten")
}

// TestConcurrentSavesKeepEveryRule: gencodes in one project saving rules
// at the same moment (each its own Store, as separate processes have) keep
// all of them; a save is a read, a change and a rename, and without a lock
// the last rename dropped what the others saved meanwhile.
func TestConcurrentSavesKeepEveryRule(t *testing.T) {
	t.Parallel()
	conf, project := t.TempDir(), t.TempDir()
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := permstore.Open(conf, project)
			assert.NoError(t, s.Add(tools.Rule{Tool: tools.ToolBash, Command: []string{"make", fmt.Sprintf("target%d", i)}, Exact: true}))
		}()
	}
	wg.Wait()
	rules := mustRules(t, permstore.Open(conf, project))
	require.Len(t, rules, n, "rules lost to a concurrent save: %v", rules)

	// Revokes at the same moment remove one rule each.
	for range n / 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := permstore.Open(conf, project).Revoke(1)
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	require.Len(t, mustRules(t, permstore.Open(conf, project)), n/2)
}
