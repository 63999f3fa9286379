package summarize

import (
	"github.com/gencode/gencode/internal/session"
	"github.com/sashabaranov/go-openai"
)

// wire is a request's messages as the provider reads them (roles, texts
// and calls), for the fake's rule checkers.
func wire(msgs []session.Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		out[i] = openai.ChatCompletionMessage{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			out[i].ToolCalls = append(out[i].ToolCalls, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		}
	}
	return out
}
