package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/permstore"
	"github.com/gencode/gencode/internal/tools"
)

// TestAlwaysForThisProject: a Bash call through the real tools asks with
// the dialog, which names the rule p saves; p runs the call and saves the
// rule, so a later run (a new tool set on the reopened project file) runs
// the same command without a dialog, and a revoked rule asks again.
func TestAlwaysForThisProject(t *testing.T) {
	t.Parallel()
	conf := t.TempDir()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	asker := NewAsker()
	ts := tools.New(tools.Options{WorkDir: dir, Asker: asker, Project: permstore.Open(conf, dir)})
	h := newHarness(t, 120, 24, func(o *harnessSetup) { o.Asker = asker })
	got := make(chan tools.Result, 1)
	h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) {
		got <- ts.Run(ctx, tools.Call{ID: "b", Name: tools.ToolBash, Arguments: `{"command":"echo saved"}`})
		ch <- agent.Event{Kind: agent.EventDone}
	})
	h.typ("run it")
	h.key("enter")
	h.until("the dialog", func(v string) bool { return strings.Contains(v, "Allow Bash?") })
	require.Contains(t, h.view(), "p saves the rule: echo saved (exactly this command)")
	require.Contains(t, h.view(), "p always for this project")
	h.pause(time.Second) // the user reads it
	h.key("p")
	select {
	case res := <-got:
		require.False(t, res.IsError, res.Content)
		require.Contains(t, res.Content, "saved")
	case <-time.After(5 * time.Second):
		t.Fatal("the tool got no answer")
	}
	h.until("the turn's end", func(string) bool { return !h.m.Running() })
	require.NotContains(t, h.view(), "Allow Bash?")
	h.until("the note", func(v string) bool {
		return strings.Contains(v, "Always allowed in this project: Bash echo saved (exactly this command) (/permissions lists or revokes it)")
	})

	// A later run: nobody answers its asker, so a question would block.
	later := tools.New(tools.Options{WorkDir: dir, Asker: NewAsker(), Project: permstore.Open(conf, dir)})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res := later.Run(ctx, tools.Call{Name: tools.ToolBash, Arguments: `{"command":"echo saved"}`})
	require.False(t, res.IsError, "the saved rule did not allow it: %s", res.Content)

	_, err = permstore.Open(conf, dir).Revoke(1)
	require.NoError(t, err)
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res = later.Run(ctx, tools.Call{Name: tools.ToolBash, Arguments: `{"command":"echo saved"}`})
	require.True(t, res.Denied, "a revoked rule must ask again: %s", res.Content)
	require.Contains(t, res.Content, "asking the user about Bash failed")
}

// TestAlwaysForThisProjectNotSaved: a rule that cannot be saved is said
// at once; the approved call still runs. (The config dir's "projects" is
// made a file after the dialog opened: that fails for root too.)
func TestAlwaysForThisProjectNotSaved(t *testing.T) {
	t.Parallel()
	conf := t.TempDir()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	asker := NewAsker()
	ts := tools.New(tools.Options{WorkDir: dir, Asker: asker, Project: permstore.Open(conf, dir)})
	h := newHarness(t, 120, 24, func(o *harnessSetup) { o.Asker = asker })
	got := make(chan tools.Result, 1)
	h.agent.scripts = append(h.agent.scripts, func(ctx context.Context, ch chan<- agent.Event) {
		got <- ts.Run(ctx, tools.Call{ID: "w", Name: tools.ToolWrite, Arguments: `{"file_path":"a.txt","content":"a\n"}`})
		ch <- agent.Event{Kind: agent.EventDone}
	})
	h.typ("write it")
	h.key("enter")
	h.until("the dialog", func(v string) bool { return strings.Contains(v, "p saves the rule: every Write") })
	require.NoError(t, os.WriteFile(filepath.Join(conf, "projects"), nil, 0o600))
	h.pause(time.Second)
	h.key("p")
	res := <-got
	require.False(t, res.IsError, res.Content)
	h.until("the error", func(v string) bool {
		return strings.Contains(v, "could not save the rule (every Write): save permission rule Write: ") &&
			strings.Contains(v, "not a directory") && strings.Contains(v, "later ones ask again")
	})
}
