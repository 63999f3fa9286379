package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	llsandbox "github.com/gencode/gencode/internal/sandbox"
)

// bashCall is the model's Bash call of command.
func bashCall(command string) openaitest.Reply {
	args, _ := json.Marshal(map[string]string{"command": command})
	return openaitest.Calls(openaitest.ToolCall{Name: "Bash", Arguments: string(args)})
}

// toolResultsInOrder are the tool messages the model was sent, in order.
func toolResultsInOrder(srv *openaitest.Server) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			if m.Role == openai.ChatMessageRoleTool && !seen[m.ToolCallID] {
				seen[m.ToolCallID] = true
				out = append(out, m.Content)
			}
		}
	}
	return out
}

// writeScript writes an executable script into the sandbox's home.
func (s *sandbox) writeScript(name, body string) string {
	s.t.Helper()
	path := filepath.Join(s.home, name)
	require.NoError(s.t, os.WriteFile(path, []byte("#!/bin/bash\n"+body), 0o755))
	return path
}

// TestPreToolUseHookBlocksRmRf: a PreToolUse hook in config.toml refuses
// a Bash call that runs rm -rf (exit 2, the reason on stderr): the command
// does not run, the file stays, and the model is told the hook's reason.
// A call the hook lets through runs.
func TestPreToolUseHookBlocksRmRf(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	guard := sb.writeScript("guard.sh", `in=$(cat)
if grep -q 'rm -rf' <<<"$in"; then echo "rm -rf is not allowed here: delete files one by one" >&2; exit 2; fi
exit 0
`)
	sb.writeConfig(fmt.Sprintf("[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = %q\n", guard))
	victim := filepath.Join(sb.work, "precious.txt")
	require.NoError(t, os.WriteFile(victim, []byte("keep me\n"), 0o600))
	srv.Enqueue(bashCall("rm -rf precious.txt"), bashCall("echo fine > ok.txt"), openaitest.Text("done"))
	res := sb.run("-p", "clean up", "--allow", "Bash")
	require.Equal(t, 0, res.code, res.stderr)
	require.FileExists(t, victim, "the hook blocked rm -rf")
	require.FileExists(t, filepath.Join(sb.work, "ok.txt"), "the hook let the other call run")
	results := toolResultsInOrder(srv)
	require.Len(t, results, 2)
	require.Equal(t, "blocked by a PreToolUse hook: rm -rf is not allowed here: delete files one by one", results[0])
	require.Contains(t, results[1], "[exit code 0]")
}

// TestHangingHookIsKilledAndTheTurnGoesOn: a hook that never ends is
// killed at its timeout, said once for two calls, and the calls run.
func TestHangingHookIsKilledAndTheTurnGoesOn(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.writeConfig("[[hooks.PreToolUse]]\ncommand = \"sleep 300\"\ntimeout = 1\n")
	srv.Enqueue(bashCall("echo one > one.txt"), bashCall("echo two > two.txt"), openaitest.Text("both written"))
	start := time.Now()
	res := sb.run("-p", "write two files", "--allow", "Bash")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "both written\n", res.stdout)
	require.Less(t, time.Since(start), 30*time.Second, "the hook was not waited for")
	require.FileExists(t, filepath.Join(sb.work, "one.txt"))
	require.FileExists(t, filepath.Join(sb.work, "two.txt"))
	require.Equal(t, 1, strings.Count(res.stderr, "timeout and was killed"), "said once, not per call: %s", res.stderr)
}

// TestUnapprovedProjectHookDoesNotRun: a repository's
// .claude/settings.json hook is code the user has not seen: print mode
// does not run it, and says so, until gencode hooks --approve.
func TestUnapprovedProjectHookDoesNotRun(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	marker := filepath.Join(sb.work, "pwned") // inside the project: hooks run under the sandbox
	settings := fmt.Sprintf(`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"touch %s"}]}]}}`, marker)
	require.NoError(t, os.MkdirAll(filepath.Join(sb.work, ".claude"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, ".claude", "settings.json"), []byte(settings), 0o644))

	srv.Enqueue(bashCall("true"), openaitest.Text("ok"))
	res := sb.run("-p", "go", "--allow", "Bash")
	require.Equal(t, 0, res.code, res.stderr)
	require.NoFileExists(t, marker, "an unapproved project hook ran")
	require.Contains(t, res.stderr, "not running the project's hook PreToolUse [Bash]")
	require.Contains(t, res.stderr, "gencode hooks --approve")

	res = sb.run("hooks")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "not approved  PreToolUse [Bash] touch")

	res = sb.run("hooks", "--approve")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "Approved 1 project hook(s)")

	srv.Enqueue(bashCall("true"), openaitest.Text("ok"))
	res = sb.run("-p", "go", "--allow", "Bash")
	require.Equal(t, 0, res.code, res.stderr)
	require.FileExists(t, marker, "the approved hook runs")
	require.NotContains(t, res.stderr, "not running")
}

// TestPostCompactHookGetsTheFacts: a PostCompact hook receives the
// summary and the session's deterministic facts on stdin, the same facts
// gencode summarize --json prints.
func TestPostCompactHookGetsTheFacts(t *testing.T) {
	t.Parallel()
	filler := strings.Repeat("The notes project keeps one file per topic and a short index. ", 40)
	srv := openaitest.NewServer(t, openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
		if isSummarizer(r) {
			return summarize(r)
		}
		last := r.Messages[len(r.Messages)-1]
		if last.Role == openai.ChatMessageRoleUser && strings.HasPrefix(last.Content, "Turn 1:") {
			write, _ := json.Marshal(map[string]string{"file_path": "notes/a.md", "content": "a note\n"})
			return openaitest.Calls(openaitest.ToolCall{Name: "Write", Arguments: string(write)})
		}
		return openaitest.Text("Noted. " + filler)
	}))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
	got := filepath.Join(sb.work, "postcompact.json") // inside the project: hooks run under the sandbox
	sb.writeConfig(fmt.Sprintf("context_window = 6000\n[summarize]\npreserve_recent = 2\n[[hooks.PostCompact]]\ncommand = \"cat > %s\"\n"+
		"[[hooks.SessionStart]]\nmatcher = \"compact\"\ncommand = \"echo DURABLE-CONTEXT-42\"\n"+
		"[[hooks.PreCompact]]\ncommand = \"cat >> precompact.jsonl; echo >> precompact.jsonl\"\n", got))
	var in strings.Builder
	for i := 1; i <= 6; i++ {
		line, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user",
			"content": fmt.Sprintf("Turn %d: %s", i, filler)}})
		in.Write(append(line, '\n'))
	}
	res := sb.runIn(sb.work, in.String(), "-p", "-", "--input-format", "stream-json", "--output-format", "stream-json", "--allow", "Write")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, `"type":"compaction_end"`)
	res0 := res

	b, err := os.ReadFile(got)
	require.NoError(t, err, "the PostCompact hook did not run; stderr: %s", res.stderr)
	var hookIn struct {
		Event   string          `json:"hook_event_name"`
		Trigger string          `json:"trigger"`
		Summary map[string]any  `json:"summary"`
		Facts   json.RawMessage `json:"facts"`
	}
	require.NoError(t, json.Unmarshal(b, &hookIn))
	require.Equal(t, "PostCompact", hookIn.Event)
	require.Equal(t, "auto", hookIn.Trigger)
	require.NotEmpty(t, hookIn.Summary["content"])

	res = sb.run("summarize", "--json")
	require.Equal(t, 0, res.code, res.stderr)
	var sum struct {
		Facts json.RawMessage `json:"session_facts"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &sum))
	require.JSONEq(t, string(sum.Facts), string(hookIn.Facts))
	require.Contains(t, string(hookIn.Facts), `"notes/a.md"`)
	pre, err := os.ReadFile(filepath.Join(sb.work, "precompact.jsonl"))
	require.NoError(t, err)
	require.Contains(t, string(pre), `"hook_event_name":"PreCompact","trigger":"auto"`)
	require.Contains(t, string(pre), `"trigger":"manual"`, "gencode summarize runs PreCompact as manual")

	// SessionStart with source compact put its context back for the turn
	// after the compaction.
	var after bool
	for _, r := range srv.Requests() {
		if isSummarizer(r) {
			continue
		}
		for _, m := range r.Messages {
			after = after || strings.Contains(m.Content, "DURABLE-CONTEXT-42")
		}
	}
	require.True(t, after, "no request after the compaction carried the SessionStart hook's context; stdout:\n%s", res0.stdout)
}

// TestHooksInTmux: in the TUI, a UserPromptSubmit hook that blocks ends
// the turn with its reason (nothing is sent to the model), a SessionStart
// hook's context reaches the model, and a failing PreToolUse hook is shown
// once for two calls, which both run.
func TestHooksInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	gate := sb.writeScript("gate.sh", `grep -q 'secret' && { echo "no secrets in prompts" >&2; exit 2; }
exit 0
`)
	sb.writeConfig(fmt.Sprintf("[tools]\nallow = [\"Bash\"]\n"+
		"[[hooks.UserPromptSubmit]]\ncommand = %q\n"+
		"[[hooks.SessionStart]]\nmatcher = \"startup\"\ncommand = \"echo 'the build is make ci'\"\n"+
		"[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = \"echo hook broke >&2; exit 1\"\n", gate))
	srv.Enqueue(bashCall("echo one > one.txt"), bashCall("echo two > two.txt"), openaitest.Text("Both files written."))

	p := startTUI(t, sb)
	p.waitText("gencode")
	p.typeLine("here is my secret")
	p.waitText("no secrets in prompts")
	p.typeLine("write two files")
	p.waitText("Both files written.")
	s := p.screen()
	require.Equal(t, 1, strings.Count(s, "failed with exit code 1"), "shown once:\n%s", s)
	require.FileExists(t, filepath.Join(sb.work, "one.txt"))
	require.FileExists(t, filepath.Join(sb.work, "two.txt"))
	reqs := srv.Requests()
	require.Len(t, reqs, 3, "the blocked prompt was not sent")
	var sent []string
	for _, m := range reqs[0].Messages {
		sent = append(sent, m.Content)
	}
	all := strings.Join(sent, "\n")
	require.Contains(t, all, "the build is make ci")
	require.NotContains(t, all, "secret")
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}

// TestHooksRunUnderTheSandbox: a hook runs as Bash does, confined where a
// sandbox is in force and without gencode's secrets: it writes in the
// project, not outside it, and sees no API key.
func TestHooksRunUnderTheSandbox(t *testing.T) {
	t.Parallel()
	if sup := llsandbox.Probe(); sup.ABI == 0 {
		t.Skip("the kernel reports no Landlock, so gencode has no sandbox here to test: " + sup.Why)
	}
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	outside := filepath.Join(sb.home, "outside.txt")
	sb.writeConfig(fmt.Sprintf("[[hooks.UserPromptSubmit]]\ncommand = %q\n",
		fmt.Sprintf("echo \"key=${OPENAI_API_KEY:-none}\" > inside.txt; echo x > %s", outside)))
	srv.Enqueue(openaitest.Text("ok"))
	res := sb.run("-p", "hi")
	require.Equal(t, 0, res.code, res.stderr)
	b, err := os.ReadFile(filepath.Join(sb.work, "inside.txt"))
	require.NoError(t, err)
	require.Equal(t, "key=none\n", string(b), "the hook saw the API key")
	require.NoFileExists(t, outside, "the hook wrote outside the project")
	require.Contains(t, res.stderr, "failed with exit code 1", "the refused write is the hook's failure, said once")
}

// TestApproveProjectHookInTmux: the TUI says at start that the project's
// hook is not run, /hooks lists it, and /hooks approve lets it run.
func TestApproveProjectHookInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t)
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.writeConfig("[tools]\nallow = [\"Bash\"]\n")
	marker := filepath.Join(sb.work, "hook-ran")
	settings := fmt.Sprintf(`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"touch %s"}]}]}}`, marker)
	require.NoError(t, os.MkdirAll(filepath.Join(sb.work, ".claude"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, ".claude", "settings.json"), []byte(settings), 0o644))
	srv.Enqueue(bashCall("true"), openaitest.Text("First done."), bashCall("true"), openaitest.Text("Second done."))

	p := startTUI(t, sb)
	p.waitText("not running the project's hook PreToolUse [Bash]")
	p.typeLine("run it")
	p.waitText("First done.")
	require.NoFileExists(t, marker)
	p.typeLine("/hooks")
	p.waitText("not approved  PreToolUse [Bash] touch")
	p.typeLine("/hooks approve")
	p.waitText("Approved 1 project hook(s)")
	p.typeLine("again")
	p.waitText("Second done.")
	require.FileExists(t, marker, "the approved hook ran")
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}
