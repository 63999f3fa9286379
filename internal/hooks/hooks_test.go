package hooks_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/hooks"
	"github.com/gencode/gencode/internal/tools"
)

// bashExec runs hooks with the Bash tool's own runner.
type bashExec struct{ ts *tools.Set }

func (b bashExec) RunHook(ctx context.Context, command string, stdin []byte, timeout time.Duration) hooks.Outcome {
	r := b.ts.RunHook(ctx, command, stdin, timeout)
	return hooks.Outcome{Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode, TimedOut: r.TimedOut, Err: r.Err}
}

// approvals is a fixed set of approved hook ids.
type approvals map[string]bool

func (a approvals) HookApproved(id string) bool { return a[id] }

// reports collects what the runner reports.
type reports struct {
	mu   sync.Mutex
	msgs []string
}

func (r *reports) add(m string) { r.mu.Lock(); r.msgs = append(r.msgs, m); r.mu.Unlock() }

func TestRun(t *testing.T) {
	t.Parallel()
	bashInput := hooks.Input{SessionID: "s1", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"rm -rf build"}`)}
	tests := []struct {
		name    string
		hook    hooks.Hook
		target  string
		in      hooks.Input
		want    hooks.Result
		reports int // problems reported after two runs
	}{
		{name: "exit 2 blocks with stderr", hook: hooks.Hook{Event: hooks.PreToolUse, Matcher: "Bash", Command: `echo "no rm -rf here" >&2; exit 2`},
			target: "Bash", in: bashInput, want: hooks.Result{Block: true, Reason: "no rm -rf here", Ran: 1}},
		{name: "exit 0 allows", hook: hooks.Hook{Event: hooks.PreToolUse, Command: `exit 0`},
			target: "Bash", in: bashInput, want: hooks.Result{Ran: 1}},
		{name: "permission decision deny", hook: hooks.Hook{Event: hooks.PreToolUse, Matcher: "Edit|Bash",
			Command: `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not in CI"}}'`},
			target: "Bash", in: bashInput, want: hooks.Result{Block: true, Reason: "not in CI", Ran: 1}},
		{name: "decision block", hook: hooks.Hook{Event: hooks.PostToolUse, Command: `echo '{"decision":"block","reason":"lint failed"}'`},
			target: "Write", in: bashInput, want: hooks.Result{Block: true, Reason: "lint failed", Ran: 1}},
		{name: "continue false", hook: hooks.Hook{Event: hooks.Stop, Command: `echo '{"continue":false,"stopReason":"enough"}'`},
			in: hooks.Input{}, want: hooks.Result{Block: true, Reason: "enough", Ran: 1}},
		{name: "matcher does not match", hook: hooks.Hook{Event: hooks.PreToolUse, Matcher: "Write", Command: `exit 2`},
			target: "Bash", in: bashInput, want: hooks.Result{}},
		{name: "other exit code fails, reported once", hook: hooks.Hook{Event: hooks.PreToolUse, Command: `echo oops >&2; exit 1`},
			target: "Bash", in: bashInput, want: hooks.Result{Ran: 1}, reports: 1},
		{name: "prompt stdout is context", hook: hooks.Hook{Event: hooks.UserPromptSubmit, Command: `echo "branch: main"`},
			in: hooks.Input{Prompt: "hi"}, want: hooks.Result{Context: []string{"branch: main"}, Ran: 1}},
		{name: "additional context", hook: hooks.Hook{Event: hooks.SessionStart, Matcher: "compact",
			Command: `echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"remember X"}}'`},
			target: "compact", in: hooks.Input{Source: "compact"}, want: hooks.Result{Context: []string{"remember X"}, Ran: 1}},
		{name: "unapproved project hook does not run", hook: hooks.Hook{Event: hooks.PreToolUse, Command: `exit 2`, Project: true, Source: ".claude/settings.json"},
			target: "Bash", in: bashInput, want: hooks.Result{}, reports: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var rep reports
			r := hooks.New(hooks.Options{Hooks: []hooks.Hook{tt.hook}, Exec: bashExec{tools.New(tools.Options{WorkDir: dir})},
				Report: rep.add, Cwd: dir})
			for range 2 {
				got := r.Run(context.Background(), tt.hook.Event, tt.target, tt.in)
				require.Equal(t, tt.want, got, "Run(%s, %q)", tt.hook.Event, tt.target)
			}
			require.Len(t, rep.msgs, tt.reports, "reports: %v", rep.msgs)
		})
	}
}

// TestInputHasClaudeCodesFields: a hook reads the event in Claude Code's
// field names on stdin.
func TestInputHasClaudeCodesFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "in.json")
	r := hooks.New(hooks.Options{Hooks: []hooks.Hook{{Event: hooks.PreToolUse, Matcher: "Bash", Command: "cat > " + out}},
		Exec: bashExec{tools.New(tools.Options{WorkDir: dir})}, Cwd: dir})
	r.Run(context.Background(), hooks.PreToolUse, "Bash", hooks.Input{SessionID: "s1", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`)})
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	require.Equal(t, map[string]any{"session_id": "s1", "transcript_path": "", "cwd": dir, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}}, got)
}

// TestHangingHookIsKilled: a hook past its timeout is killed, with what
// it started, and decides nothing.
func TestHangingHookIsKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var rep reports
	r := hooks.New(hooks.Options{Hooks: []hooks.Hook{{Event: hooks.PreToolUse, Command: "sleep 60; exit 2", Timeout: 500 * time.Millisecond}},
		Exec: bashExec{tools.New(tools.Options{WorkDir: dir})}, Report: rep.add})
	start := time.Now()
	got := r.Run(context.Background(), hooks.PreToolUse, "Bash", hooks.Input{})
	require.Less(t, time.Since(start), 10*time.Second)
	require.False(t, got.Block)
	require.Len(t, rep.msgs, 1)
	require.Contains(t, rep.msgs[0], "timeout and was killed")
}

func TestLoad(t *testing.T) {
	t.Parallel()
	home, project := t.TempDir(), t.TempDir()
	write := func(path, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	}
	write(filepath.Join(home, ".claude", "settings.json"), `{"hooks":{"PostToolUse":[{"matcher":"Edit|Write","hooks":[{"type":"command","command":"gofmt -l .","timeout":5}]}],
		"Notification":[{"hooks":[{"type":"command","command":"notify-send hi"}]}]}}`)
	write(filepath.Join(project, ".claude", "settings.json"), `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./check.sh"}]}]}}`)
	write(filepath.Join(project, ".gencode", "hooks.toml"), "[[hooks.Stop]]\ncommand = \"make lint\"\n")
	cfg := map[string][]config.HookConfig{"PreToolUse": {{Matcher: "Bash", Command: "guard", Timeout: 10}}, "Bogus": {{Command: "x"}}}
	got, probs := hooks.Load(cfg, "/c/config.toml", hooks.Files{Home: home, Project: project})
	var lines []string
	for _, h := range got {
		lines = append(lines, strings.Join([]string{string(h.Event), h.Matcher, h.Command, h.Timeout.String(), h.Source, map[bool]string{true: "project"}[h.Project]}, "|"))
	}
	require.Equal(t, []string{
		"PreToolUse|Bash|guard|10s|/c/config.toml|",
		"PostToolUse|Edit|Write|gofmt -l .|5s|~/.claude/settings.json|",
		"PreToolUse|Bash|./check.sh|0s|.claude/settings.json|project",
		"Stop||make lint|0s|.gencode/hooks.toml|project",
	}, lines)
	require.Len(t, probs, 1)
	require.Contains(t, probs[0], "hooks.Bogus: not an event")
}
