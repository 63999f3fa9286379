package sessiontest

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/gencode/gencode/internal/session"
)

// ReadOpenAI reads the first n messages of a recorded session file (OpenAI
// chat messages, one a line), as the facts, view and summarizer tests
// replay them.
func ReadOpenAI(t testing.TB, path string, n int) []session.Message {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	type wireCall struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	var batch []session.Message
	names := map[string]string{}
	for len(batch) < n && sc.Scan() {
		var w struct {
			Role       string          `json:"role"`
			Content    *string         `json:"content"`
			ToolCalls  json.RawMessage `json:"tool_calls"`
			ToolCallID string          `json:"tool_call_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &w); err != nil {
			t.Fatal(err)
		}
		m := session.Message{Role: session.Role(w.Role), ToolCallID: w.ToolCallID}
		if w.Content != nil {
			m.Content = *w.Content
		}
		if len(w.ToolCalls) > 0 && string(w.ToolCalls) != "null" {
			var calls []wireCall
			raw := w.ToolCalls
			var s string
			if json.Unmarshal(raw, &s) == nil { // some lines hold the calls as a JSON string
				raw = json.RawMessage(s)
			}
			if err := json.Unmarshal(raw, &calls); err != nil {
				t.Fatal(err, string(raw))
			}
			for _, c := range calls {
				m.ToolCalls = append(m.ToolCalls, session.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
				names[c.ID] = c.Function.Name
			}
		}
		if m.Role == session.RoleTool {
			m.Name = names[m.ToolCallID]
		}
		batch = append(batch, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return batch
}
