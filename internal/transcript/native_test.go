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
		if m.Role == session.RoleTool && m.Meta.Dir != "/testbed" {
			t.Fatalf("%s ran in %q", m.ToolCallID, m.Meta.Dir)
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
