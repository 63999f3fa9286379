package sessiontest

import (
	"encoding/json"
	"fmt"

	"github.com/gencode/gencode/internal/session"
)

// Call is one tool call and its result, for LogOf.
type Call struct {
	Name, Args, Result string
	Meta               session.Meta
}

// LogOf is a log of a user's request ("fix it") followed by each call,
// made by the assistant, and its result.
func LogOf(calls ...Call) []session.Message {
	msgs := []session.Message{{Role: session.RoleUser, Content: "fix it", Tokens: 10}}
	for i, c := range calls {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs, session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: id, Name: c.Name, Arguments: c.Args}}})
		msgs = append(msgs, session.Message{Role: session.RoleTool, ToolCallID: id, Name: c.Name, Content: c.Result, Meta: c.Meta})
	}
	return msgs
}

// Bash is a Bash call of command answered with result.
func Bash(command, result string) Call {
	b, _ := json.Marshal(map[string]string{"command": command})
	return Call{Name: "Bash", Args: string(b), Result: result}
}
