package commands_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/commands"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}

func TestLoadUserCommands(t *testing.T) {
	t.Parallel()
	proj, user := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(proj, "review.md"), "---\ndescription: review a file\nargument-hint: FILE\nmodel: gpt-4o\nallowed-tools: Read, Grep\n---\nReview $1 carefully.\n")
	writeFile(t, filepath.Join(proj, "frontend", "component.md"), "Make a component named $ARGUMENTS.\n")
	writeFile(t, filepath.Join(proj, "notes.txt"), "not a command")
	writeFile(t, filepath.Join(user, "review.md"), "my own review\n")
	writeFile(t, filepath.Join(user, "clear.md"), "clear what?\n")
	writeFile(t, filepath.Join(user, "broken.md"), "---\ndescription: [unclosed\n---\nbody\n")
	got, probs := commands.LoadUserCommands([]commands.CommandDir{{Path: proj, Label: ".gencode/commands"}, {Path: user, Label: "~/.config/gencode/commands"},
		{Path: filepath.Join(proj, "missing"), Label: "missing"}})
	require.Len(t, probs, 1)
	require.Contains(t, probs[0], "broken.md: front matter")
	type row struct{ name, desc, hint, model, tools, source, hidden string }
	var rows []row
	for _, c := range got {
		rows = append(rows, row{c.Name, c.Description, c.ArgumentHint, c.Model, strings.Join(c.AllowedTools, ","), c.Source, c.Hidden})
	}
	require.Equal(t, []row{
		{"frontend:component", "", "", "", "", ".gencode/commands/frontend/component.md", ""},
		{"review", "review a file", "FILE", "gpt-4o", "Read,Grep", ".gencode/commands/review.md", ""},
		{"broken", "", "", "", "", "~/.config/gencode/commands/broken.md", ""},
		{"clear", "", "", "", "", "~/.config/gencode/commands/clear.md", ""},
		{"review", "", "", "", "", "~/.config/gencode/commands/review.md", ".gencode/commands/review.md"},
	}, rows)
	require.Equal(t, "Review $1 carefully.\n", got[1].Body)
}

func TestSubstitute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, args, want string
	}{
		{name: "all arguments", body: "Fix $ARGUMENTS now", args: "issue 12", want: "Fix issue 12 now"},
		{name: "positional", body: "Move $1 to $2 ($3)", args: `a.go "b c.go"`, want: "Move a.go to b c.go ()"},
		{name: "none referenced: appended", body: "Review this.\n", args: "src/main.go", want: "Review this.\n\nsrc/main.go"},
		{name: "no arguments", body: "Say $ARGUMENTS.", args: "", want: "Say ."},
		{name: "dollar ten is $1 then 0", body: "$10", args: "x", want: "x0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := commands.UserCommand{Body: tt.body}.Substitute(tt.args)
			require.Equal(t, tt.want, got, "Substitute(%q)", tt.args)
		})
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	var ran []string
	x := commands.Expander{
		Shell: func(_ context.Context, cmd string) (string, error) {
			ran = append(ran, cmd)
			if cmd == "forbidden" {
				return "", errors.New("permission denied")
			}
			return "output of " + cmd + "\n", nil
		},
		Attach: func(_ context.Context, path string) (string, bool, error) {
			if path == "main.go" {
				return "1\tpackage main", true, nil
			}
			return "", false, nil
		},
	}
	c := commands.UserCommand{Name: "review", Body: "Status: !`git status`\nReview @$1 for @alice."}
	got, err := c.Expand(context.Background(), "main.go", x)
	require.NoError(t, err)
	require.Equal(t, "Status: output of git status\nReview @main.go for @alice.\n\n<file path=\"main.go\">\n1\tpackage main\n</file>", got)
	require.Equal(t, []string{"git status"}, ran)

	_, err = commands.UserCommand{Name: "x", Body: "!`forbidden`"}.Expand(context.Background(), "", x)
	require.EqualError(t, err, "/x: !`forbidden`: permission denied")
}

func TestRegistryUserCommands(t *testing.T) {
	t.Parallel()
	user := []commands.UserCommand{
		{Name: "review", Description: "review a file", ArgumentHint: "FILE", Body: "Review $1", Source: ".gencode/commands/review.md"},
		{Name: "frontend:component", Body: "Component $ARGUMENTS", Source: ".claude/commands/frontend/component.md"},
		{Name: "clear", Body: "mine", Source: "~/.config/gencode/commands/clear.md"},
	}
	r := commands.New(commands.Deps{UserCommands: user})
	ctx := context.Background()

	res, err := r.Run(ctx, commands.State{}, "/review src/main.go")
	require.NoError(t, err)
	require.Equal(t, commands.ActionPrompt, res.Action)
	require.Equal(t, "Review src/main.go", res.Prompt)

	res, err = r.Run(ctx, commands.State{}, "/frontend:component Button big")
	require.NoError(t, err)
	require.Equal(t, "Component Button big", res.Prompt)

	res, err = r.Run(ctx, commands.State{}, "/clear")
	require.NoError(t, err)
	require.Equal(t, commands.ActionNewSession, res.Action, "the built-in wins")
	require.Equal(t, "~/.config/gencode/commands/clear.md", r.ShadowedBy("/clear"))

	_, err = r.Run(ctx, commands.State{}, "/reveiw x")
	require.ErrorContains(t, err, "did you mean /review?")

	require.Equal(t, []string{"/frontend:component"}, r.Complete("/fro"))
	require.Equal(t, []string{"/resume", "/review", "/rewind"}, r.Complete("/re"))

	help, err := r.Run(ctx, commands.State{}, "/help")
	require.NoError(t, err)
	text := help.Report.Plain()
	require.Contains(t, text, "Your commands")
	require.Contains(t, text, "/review FILE")
	require.Contains(t, text, "review a file (.gencode/commands/review.md)")
	require.Contains(t, text, "not run: the built-in /clear wins (rename ~/.config/gencode/commands/clear.md)")
}

// fakeHooks is a fixed set of hooks with an approval counter.
type fakeHooks struct {
	states   []commands.HookState
	approved int
}

func (f *fakeHooks) HookStates() ([]commands.HookState, []string) { return f.states, nil }
func (f *fakeHooks) ApproveProjectHooks() (int, error) {
	n := 0
	for i := range f.states {
		if f.states[i].Project && !f.states[i].Approved {
			f.states[i].Approved = true
			n++
		}
	}
	f.approved += n
	return n, nil
}

func TestHooksCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line string
		want       []string // in the text or the report
		wantErr    string
	}{
		{name: "list", line: "/hooks", want: []string{"runs          PreToolUse [Bash] guard.sh (config.toml)",
			"not approved  PostToolUse [*] fmt.sh (.claude/settings.json)", "1 project hook(s) are code from the repository: /hooks approve"}},
		{name: "approve", line: "/hooks approve", want: []string{"Approved 1 project hook(s)"}},
		{name: "bad usage", line: "/hooks drop", wantErr: "/hooks: usage: /hooks [approve]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := &fakeHooks{states: []commands.HookState{{Line: "PreToolUse [Bash] guard.sh (config.toml)"},
				{Line: "PostToolUse [*] fmt.sh (.claude/settings.json)", Project: true}}}
			res, err := commands.New(commands.Deps{Hooks: h}).Run(context.Background(), commands.State{}, tt.line)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			got := res.Text
			if res.Report != nil {
				got += res.Report.Plain()
			}
			for _, w := range tt.want {
				require.Contains(t, got, w, "Run(%q)", tt.line)
			}
		})
	}
}
