package openaitest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sashabaranov/go-openai"
)

// CheckMessageRules reports the first way msgs break the chat-completions
// message rules that gencode must respect:
//   - at most one system message, and only as the first message (several system
//     messages, or one mid-conversation, break some local models' chat templates);
//   - an assistant message with tool_calls is followed immediately by exactly one
//     tool message per call, in the calls' order (OpenAI accepts any order; we
//     require the same one);
//   - every tool message answers a call of the assistant message just before it;
//   - tool call ids are non-empty and unique in the conversation;
//   - a call's arguments are a JSON object (local chat templates parse them, and
//     strict providers refuse anything else);
//   - an assistant message has text or tool calls (an empty one is refused by
//     strict providers and templates).
//
// The error names the index of the offending message.
func CheckMessageRules(msgs []openai.ChatCompletionMessage) error {
	seen := make(map[string]int) // call id -> index of the assistant message
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case openai.ChatMessageRoleSystem:
			if i != 0 {
				return fmt.Errorf("message %d: system message after the start of the conversation", i)
			}
		case openai.ChatMessageRoleTool:
			return fmt.Errorf("message %d: tool message (tool_call_id %q) without a preceding assistant tool call", i, m.ToolCallID)
		case openai.ChatMessageRoleAssistant:
			if len(m.ToolCalls) == 0 {
				if strings.TrimSpace(m.Content) == "" && len(m.MultiContent) == 0 {
					return fmt.Errorf("message %d: assistant message without content or tool calls", i)
				}
				continue
			}
			for _, tc := range m.ToolCalls {
				if tc.ID == "" {
					return fmt.Errorf("message %d: tool call %q has no id", i, tc.Function.Name)
				}
				var args map[string]json.RawMessage
				if json.Unmarshal([]byte(tc.Function.Arguments), &args) != nil || args == nil {
					return fmt.Errorf("message %d: tool call %q: arguments are not a JSON object: %q", i, tc.ID, tc.Function.Arguments)
				}
				if at, dup := seen[tc.ID]; dup {
					return fmt.Errorf("message %d: duplicate tool call id %q (first used in message %d)", i, tc.ID, at)
				}
				seen[tc.ID] = i
			}
			for k, tc := range m.ToolCalls {
				j := i + 1 + k
				if j >= len(msgs) || msgs[j].Role != openai.ChatMessageRoleTool {
					return fmt.Errorf("message %d: tool call %q has no tool message answering it", i, tc.ID)
				}
				if msgs[j].ToolCallID != tc.ID {
					return fmt.Errorf("message %d: tool message answers %q, want %q (answers must follow the calls in order)", j, msgs[j].ToolCallID, tc.ID)
				}
			}
			i += len(m.ToolCalls)
		}
	}
	return nil
}

// CheckRoleAlternation reports the first way msgs break the role order that
// strict local chat templates enforce (Mistral's and Gemma's raise
// "conversation roles must alternate user/assistant"): after the one
// optional leading system message, the conversation starts with a user
// message; a user message is answered by an assistant message; an assistant
// message without tool calls is followed by a user message; tool results
// are followed by the assistant's next message.
//
// The error names the index of the offending message.
func CheckRoleAlternation(msgs []openai.ChatCompletionMessage) error {
	prev := "" // role of the previous message; "" at the start
	for i, m := range msgs {
		switch m.Role {
		case openai.ChatMessageRoleSystem:
			if i != 0 {
				return fmt.Errorf("message %d: system message after the start of the conversation", i)
			}
			continue
		case openai.ChatMessageRoleUser:
			if prev == openai.ChatMessageRoleUser || prev == openai.ChatMessageRoleTool {
				return fmt.Errorf("message %d: user message after a %s message; roles must alternate", i, prev)
			}
		case openai.ChatMessageRoleAssistant:
			if prev == "" || prev == openai.ChatMessageRoleAssistant {
				what := "an assistant message"
				if prev == "" {
					what = "the start of the conversation"
				}
				return fmt.Errorf("message %d: assistant message after %s; roles must alternate", i, what)
			}
		case openai.ChatMessageRoleTool:
			if prev != openai.ChatMessageRoleAssistant+"+calls" && prev != openai.ChatMessageRoleTool {
				return fmt.Errorf("message %d: tool message not after an assistant's tool calls", i)
			}
		}
		prev = m.Role
		if m.Role == openai.ChatMessageRoleAssistant && len(m.ToolCalls) > 0 {
			prev = openai.ChatMessageRoleAssistant + "+calls"
		}
	}
	return nil
}
