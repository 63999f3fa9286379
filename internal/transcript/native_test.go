package transcript

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gencode/gencode/internal/session"
)

func claudeLine(typ, content string) string {
	return `{"type":"` + typ + `","cwd":"/w","sessionId":"s","uuid":"u","timestamp":"2025-01-01T00:00:00Z","message":{"id":"m","role":"` + typ + `","model":"claude-x","content":` + content + `}}`
}

// TestNativeDeniedCallNotRun: cause 4, a denied call and a call without a
// result are marked not run.
func TestNativeDeniedCallNotRun(t *testing.T) {
	in := strings.Join([]string{
		claudeLine("user", `"remove notes"`),
		claudeLine("assistant", `[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"rm -f notes.txt"}},{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"rm -f b"}}]`),
		`{"type":"user","cwd":"/w","uuid":"u2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"The user doesn't want to proceed with this tool use. The tool use was rejected."}]}}`,
	}, "\n")
	msgs, _, src, err := ReadFormat(strings.NewReader(in), "s.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	if src.Format != FormatClaudeCode || src.Root != "/w" || src.Model != "claude-x" {
		t.Fatalf("source %+v", src)
	}
	n := 0
	for _, m := range msgs {
		if m.Role == session.RoleTool {
			n++
			if !m.Meta.NotRun {
				t.Fatalf("%s: not marked not run", m.ToolCallID)
			}
		}
	}
	if n != 2 {
		t.Fatalf("%d results", n)
	}
}

// TestNativeOneRootForTwoSpellings: cause 2, without a recorded cwd the
// root is inferred from the absolute paths and a relative call runs in it.
func TestNativeOneRootForTwoSpellings(t *testing.T) {
	in := `{"info":{"config":{}},"trajectory_format":"mini-swe-agent-1","messages":[` +
		`{"role":"user","content":"task"},` +
		`{"role":"assistant","content":"` + "```bash\\ncd /testbed && touch x.py\\n```" + `"},` +
		`{"role":"user","content":"<returncode>0</returncode>"},` +
		`{"role":"assistant","content":"` + "```bash\\nrm x.py\\n```" + `"},` +
		`{"role":"user","content":"<returncode>0</returncode>"}]}`
	msgs, _, src, err := ReadFormat(strings.NewReader(in), "t.traj.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if src.Format != FormatMiniSWEAgent || src.Root != "/testbed" {
		t.Fatalf("source %+v", src)
	}
	for _, m := range msgs {
		if m.Role == session.RoleTool && (m.Meta.Dir != "/testbed" || m.Meta.Root != "/testbed") {
			t.Fatalf("%s ran in %q (root %q)", m.ToolCallID, m.Meta.Dir, m.Meta.Root)
		}
	}
	if msgs[0].Meta.Imported == nil || msgs[0].Meta.Imported.Root != "/testbed" {
		t.Fatalf("first message %+v", msgs[0].Meta)
	}
}

// TestDetectRefusesUnknown says what was seen and what is accepted.
func TestDetectRefusesUnknown(t *testing.T) {
	_, err := Detect([]byte("{\"kind\":1}\n{\"kind\":2}\n"), "f")
	if err == nil || !strings.Contains(err.Error(), "the first with the keys kind") || !strings.Contains(err.Error(), "openhands") {
		t.Fatalf("err %v", err)
	}
}

// TestDetectFormats: each format is recognised by its content.
func TestDetectFormats(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"role":"user","content":"hi"}`, FormatOpenAI},
		{`{"type":"summary","summary":"x","leafUuid":"u"}` + "\n" + claudeLine("user", `"hi"`), FormatClaudeCode},
		{claudeLine("user", `"hi"`), FormatClaudeCode},
		{`{"timestamp":"t","type":"session_meta","payload":{"cwd":"/w"}}`, FormatCodex},
		{`{"id":"x","timestamp":"t","instructions":null}` + "\n" + `{"type":"message","role":"user","content":[]}`, FormatCodex},
		{`{"trajectory":[],"history":[],"info":{}}`, FormatSWEAgent},
		{`{"info":{},"messages":[],"trajectory_format":"mini-swe-agent-1"}`, FormatMiniSWEAgent},
		{`[{"id":1,"source":"user","action":"message","args":{"content":"hi"}}]`, FormatOpenHands},
		{`{"id":1,"source":"user","action":"message","args":{"content":"hi"}}` + "\n" + `{"id":2,"cause":1,"observation":"run","content":""}`, FormatOpenHands},
	} {
		got, err := Detect([]byte(c.in), "f")
		if err != nil || got != c.want {
			t.Errorf("%.60s: got %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := Detect([]byte("{\n \"steps\": []\n}\n"), "f"); err == nil || !strings.Contains(err.Error(), "one JSON object with the keys steps") {
		t.Errorf("pretty-printed object: %v", err)
	}
	for _, bad := range []string{"", "hello", `[1,2]`, `{"a":1}`} {
		if _, err := Detect([]byte(bad), "f"); err == nil || !strings.Contains(err.Error(), "mini-swe-agent") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestNativeKeepsTimesAndModel: a native file's timestamps and model are kept.
func TestNativeKeepsTimesAndModel(t *testing.T) {
	in := claudeLine("user", `"hi"`) + "\n" + claudeLine("assistant", `[{"type":"text","text":"hello"}]`)
	msgs, _, src, err := ReadFormat(strings.NewReader(in), "s.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Time.IsZero() || msgs[0].Time.Year() != 2025 || src.Model != "claude-x" {
		t.Fatalf("msgs %+v, source %+v", msgs, src)
	}
	if im := msgs[0].Meta.Imported; im == nil || im.Format != FormatClaudeCode || im.Model != "claude-x" {
		t.Fatalf("imported %+v", im)
	}
}

// TestRootFromFilesOnly: with no directory in the session, the common
// directory of its absolute files goes up when a relative path starts
// with its name (the agent worked in the parent).
func TestRootFromFilesOnly(t *testing.T) {
	msgs := []session.Message{{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{
		{ID: "1", Name: "Read", Arguments: `{"file_path":"/srv/proj/src/a.go"}`},
		{ID: "2", Name: "Read", Arguments: `{"file_path":"/srv/proj/src/b.go"}`},
		{ID: "3", Name: "Bash", Arguments: `{"command":"rm src/old.go"}`},
	}}}
	if got := inferRoot(msgs, nil); got != "/srv/proj" {
		t.Fatalf("root %q, want /srv/proj", got)
	}
	msgs[0].ToolCalls = msgs[0].ToolCalls[:2]
	if got := inferRoot(msgs, nil); got != "/srv/proj/src" {
		t.Fatalf("root %q, want /srv/proj/src", got)
	}
}

// TestRootOfAViewedDirectory: a path named as a file that other paths lie
// under (an editor's view of /workspace) is a directory: the root is
// /workspace, not "/" (no root at all).
func TestRootOfAViewedDirectory(t *testing.T) {
	msgs := []session.Message{{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{
		{ID: "1", Name: "str_replace_editor", Arguments: `{"command":"view","path":"/workspace"}`},
		{ID: "2", Name: "execute_bash", Arguments: `{"command":"mv /workspace/a.py /workspace/b.py"}`},
	}}}
	if got := inferRoot(msgs, nil); got != "/workspace" {
		t.Fatalf("root %q, want /workspace", got)
	}
}

// openHandsEdit is an OpenHands editor action as the oh_aci editor writes
// it: its args hold no command; the model's call in tool_call_metadata does.
func openHandsEdit(id int, callID, modelArgs string) string {
	return fmt.Sprintf(`{"id":%d,"source":"agent","action":"edit","args":{"path":"/w/x","content":"","start":1,"end":-1,"impl_source":"oh_aci"},`+
		`"tool_call_metadata":{"function_name":"str_replace_editor","tool_call_id":%q,"model_response":{"model":"m-1","choices":[{"message":{"tool_calls":[`+
		`{"id":%q,"type":"function","function":{"name":"str_replace_editor","arguments":%q}}]}}]}}}`, id, callID, callID, modelArgs)
}

// TestNativeOpenHandsCallAsTheModelMadeIt: an OpenHands editor call keeps
// the arguments the model gave (its command: view, create), and the model
// is the one that answered.
func TestNativeOpenHandsCallAsTheModelMadeIt(t *testing.T) {
	in := "[" + strings.Join([]string{
		`{"id":0,"source":"user","action":"message","args":{"content":"make x"}}`,
		openHandsEdit(1, "t1", `{"command":"create","path":"/w/x","file_text":"hi"}`),
		`{"id":2,"source":"agent","cause":1,"observation":"edit","content":"--- /w/x","extras":{"path":"/w/x","prev_exist":false}}`,
	}, ",") + "]"
	msgs, _, src, err := ReadFormat(strings.NewReader(in), "e.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if src.Model != "m-1" {
		t.Errorf("model %q, want m-1", src.Model)
	}
	var args string
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			args = c.Arguments
		}
	}
	if !strings.Contains(args, `"command":"create"`) || !strings.Contains(args, `"file_text":"hi"`) {
		t.Fatalf("call arguments %s, want the model's create", args)
	}
}

// TestNativeOpenHandsObservationsOfNoCall: null observations and agent
// state changes (caused by a message or a state change, not a call) are
// no call's result: nothing is quoted as the result of a missing call.
func TestNativeOpenHandsObservationsOfNoCall(t *testing.T) {
	in := "[" + strings.Join([]string{
		`{"id":0,"source":"environment","action":"change_agent_state","args":{"agent_state":"init"}}`,
		`{"id":1,"cause":0,"observation":"null","content":""}`,
		`{"id":2,"source":"user","action":"message","args":{"content":"hi"}}`,
		`{"id":3,"cause":2,"observation":"null","content":""}`,
		`{"id":4,"observation":"agent_state_changed","content":"","extras":{"agent_state":"running"}}`,
		`{"id":5,"source":"agent","action":"message","args":{"content":"hello"}}`,
	}, ",") + "]"
	msgs, _, _, err := ReadFormat(strings.NewReader(in), "e.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want the user's and the agent's: %+v", len(msgs), msgs)
	}
}

// TestNativeMiniSubmissionRan: mini-swe-agent's submission command runs;
// what it printed (the diff) is the last message, with no <returncode>:
// it is the command's result, not a call that never ran.
func TestNativeMiniSubmissionRan(t *testing.T) {
	in := `{"info":{"exit_status":"Submitted","config":{"environment":{"cwd":"/testbed"}}},"trajectory_format":"mini-swe-agent-1","messages":[` +
		`{"role":"user","content":"task"},` +
		`{"role":"assistant","content":"` + "```bash\\nsed -i s/a/b/ x.py\\n```" + `"},` +
		`{"role":"user","content":"<returncode>0</returncode>\\n<output>\\n</output>"},` +
		`{"role":"assistant","content":"` + "```bash\\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached\\n```" + `"},` +
		`{"role":"user","content":"diff --git a/x.py b/x.py\\n"}]}`
	msgs, _, src, err := ReadFormat(strings.NewReader(in), "t.traj.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(src.NotRun) != 0 {
		t.Fatalf("not run: %q, want none", src.NotRun)
	}
	last := msgs[len(msgs)-1]
	if last.Role != session.RoleTool || !strings.HasPrefix(last.Content, "diff --git") {
		t.Fatalf("last message %s %q, want the submission's result", last.Role, last.Content)
	}
}

// TestNativeSiblingErroredNotRun: Claude Code cancels the calls beside one
// that failed; such a call never ran: no command, no change.
func TestNativeSiblingErroredNotRun(t *testing.T) {
	in := strings.Join([]string{
		claudeLine("user", `"look"`),
		claudeLine("assistant", `[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/w/dir"}},{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"rm -rf build"}}]`),
		`{"type":"user","cwd":"/w","uuid":"u2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"EISDIR: illegal operation on a directory, read"}]}}`,
		`{"type":"user","cwd":"/w","uuid":"u3","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","is_error":true,"content":"<tool_use_error>Sibling tool call errored</tool_use_error>"}]}}`,
	}, "\n")
	msgs, _, src, err := ReadFormat(strings.NewReader(in), "s.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Role == session.RoleTool && m.ToolCallID == "t2" && !m.Meta.NotRun {
			t.Fatalf("the sibling's result %q is not marked not run", m.Content)
		}
		if m.Role == session.RoleTool && m.ToolCallID == "t1" && m.Meta.NotRun {
			t.Fatal("the call that failed ran: it is not a call that never ran")
		}
	}
	if len(src.NotRun) != 1 || !strings.Contains(src.NotRun[0], "rm -rf build") {
		t.Fatalf("not run %q, want the sibling Bash", src.NotRun)
	}
}

// TestNativeSidechainBeforeTaskResult: a subagent's records written
// between a Task call and its result (isSidechain) do not cut the call
// from its result: the Task ran, and its result is not quoted as the
// result of a call the transcript does not contain.
func TestNativeSidechainBeforeTaskResult(t *testing.T) {
	side := func(typ, content string) string {
		return strings.Replace(claudeLine(typ, content), `"type":`, `"isSidechain":true,"type":`, 1)
	}
	in := strings.Join([]string{
		claudeLine("user", `"find the cache"`),
		claudeLine("assistant", `[{"type":"tool_use","id":"task1","name":"Task","input":{"description":"Find cache code","prompt":"Find where tiles are cached"}}]`),
		side("user", `"Find where tiles are cached"`),
		strings.Replace(side("assistant", `[{"type":"tool_use","id":"g1","name":"Bash","input":{"command":"grep -rl cache src"}}]`), `"id":"m"`, `"id":"m2"`, 1),
		side("user", `[{"type":"tool_result","tool_use_id":"g1","content":"src/cache.py"}]`),
		claudeLine("user", `[{"type":"tool_result","tool_use_id":"task1","content":"The cache is in src/cache.py"}]`),
	}, "\n")
	msgs, _, src, err := ReadFormat(strings.NewReader(in), "s.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(src.NotRun) != 0 {
		t.Fatalf("not run %q, want none: the Task has its result", src.NotRun)
	}
	results := 0
	for _, m := range msgs {
		if strings.Contains(m.Content, "does not contain") {
			t.Fatalf("a result quoted as of no call: %q", m.Content)
		}
		if m.Role == session.RoleTool {
			results++
		}
	}
	if results != 2 {
		t.Fatalf("%d results, want the Task's and the subagent's Bash's", results)
	}
}

// TestNativeMini2Exit: mini-swe-agent 2 ends a trajectory with an "exit"
// message (the submission, or why it stopped): the file imports, and the
// submit call it answers ran.
func TestNativeMini2Exit(t *testing.T) {
	in := `{"info":{"config":{"environment":{"cwd":"/testbed"}}},"trajectory_format":"mini-swe-agent-1.1","messages":[` +
		`{"role":"user","content":"task"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt\"}"}}]},` +
		`{"role":"exit","content":"diff --git a/x.py b/x.py\n","extra":{"exit_status":"Submitted"}}]}`
	msgs, _, src, err := ReadFormat(strings.NewReader(in), "t.traj.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(src.NotRun) != 0 {
		t.Fatalf("not run %q, want none", src.NotRun)
	}
	last := msgs[len(msgs)-1]
	if last.Role != session.RoleTool || last.ToolCallID != "c1" || !strings.HasPrefix(last.Content, "diff --git") {
		t.Fatalf("last message %s %s %q, want the submit call's result", last.Role, last.ToolCallID, last.Content)
	}
	in = strings.Replace(in, `{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt\"}"}}]},`, "", 1)
	if _, _, _, err := ReadFormat(strings.NewReader(in), "t.traj.json", ""); err != nil {
		t.Fatalf("an exit with no call to answer: %v", err)
	}
}

// TestNativeCodexUserRequests: a Codex rollout's request is a response_item
// message and an event_msg user_message of the same turn; Codex Desktop
// writes only the event. Each request is read once either way.
func TestNativeCodexUserRequests(t *testing.T) {
	t.Parallel()
	meta := `{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s","cwd":"/w"}}` + "\n"
	item := func(text string) string {
		return `{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` + text + `"}]}}` + "\n"
	}
	event := func(text string) string {
		return `{"timestamp":"2026-01-01T00:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"` + text + `","images":[]}}` + "\n"
	}
	answer := `{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}}` + "\n"
	for _, tt := range []struct {
		name, in string
		want     []string
	}{
		{"item then event", meta + item("fix the build") + event("fix the build") + answer + item("and the tests") + event("and the tests") + answer,
			[]string{"fix the build", "and the tests"}},
		{"event then item", meta + event("fix the build") + item("fix the build") + answer, []string{"fix the build"}},
		{"events only (Codex Desktop)", meta + event("fix the build") + answer + event("fix the build") + answer,
			[]string{"fix the build", "fix the build"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msgs, _, _, err := ReadFormat(strings.NewReader(tt.in), "rollout.jsonl", "")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range msgs {
				if m.Role == "user" {
					got = append(got, m.Content)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("requests %q, want %q", got, tt.want)
			}
		})
	}
}
