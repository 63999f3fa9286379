package transcript

import (
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
