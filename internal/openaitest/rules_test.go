package openaitest_test

import (
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

func sys(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: s}
}

func user(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: s}
}

func assistant(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: s}
}

func calls(ids ...string) openai.ChatCompletionMessage {
	m := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, openai.ToolCall{
			ID: id, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "Read", Arguments: `{"file_path":"a.go"}`},
		})
	}
	return m
}

func result(id string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: "ok"}
}

func TestCheckMessageRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		msgs    []openai.ChatCompletionMessage
		wantErr string
	}{
		{name: "empty", msgs: nil},
		{name: "plain chat", msgs: []openai.ChatCompletionMessage{sys("s"), user("hi"), assistant("hello"), user("bye")}},
		{name: "no system message", msgs: []openai.ChatCompletionMessage{user("hi"), assistant("hello")}},
		{
			name: "tool calls answered in order",
			msgs: []openai.ChatCompletionMessage{
				sys("s"), user("read"), calls("call_1", "call_2"), result("call_1"), result("call_2"),
				assistant("done"), user("again"), calls("x9"), result("x9"),
			},
		},
		{
			name:    "orphan tool message",
			msgs:    []openai.ChatCompletionMessage{sys("s"), user("hi"), result("call_1")},
			wantErr: "message 2: tool message (tool_call_id \"call_1\") without a preceding assistant tool call",
		},
		{
			name:    "tool message after plain assistant message",
			msgs:    []openai.ChatCompletionMessage{user("hi"), assistant("hello"), result("call_1")},
			wantErr: "message 2: tool message",
		},
		{
			name:    "extra tool message",
			msgs:    []openai.ChatCompletionMessage{user("hi"), calls("call_1"), result("call_1"), result("call_1")},
			wantErr: "message 3: tool message",
		},
		{
			name:    "missing tool answer",
			msgs:    []openai.ChatCompletionMessage{user("hi"), calls("call_1", "call_2"), result("call_1"), user("next")},
			wantErr: "message 1: tool call \"call_2\" has no tool message answering it",
		},
		{
			name:    "call at the end without answer",
			msgs:    []openai.ChatCompletionMessage{user("hi"), calls("call_1")},
			wantErr: "message 1: tool call \"call_1\" has no tool message answering it",
		},
		{
			name:    "answers out of order",
			msgs:    []openai.ChatCompletionMessage{user("hi"), calls("call_1", "call_2"), result("call_2"), result("call_1")},
			wantErr: "message 2: tool message answers \"call_2\", want \"call_1\"",
		},
		{
			name:    "duplicate ids across turns",
			msgs:    []openai.ChatCompletionMessage{user("hi"), calls("call_1"), result("call_1"), calls("call_1"), result("call_1")},
			wantErr: "message 3: duplicate tool call id \"call_1\" (first used in message 1)",
		},
		{
			name:    "empty id",
			msgs:    []openai.ChatCompletionMessage{user("hi"), calls(""), result("")},
			wantErr: "message 1: tool call \"Read\" has no id",
		},
		{
			name: "arguments not JSON",
			msgs: []openai.ChatCompletionMessage{user("hi"), func() openai.ChatCompletionMessage {
				m := calls("call_1")
				m.ToolCalls[0].Function.Arguments = `{"file_path": "a`
				return m
			}(), result("call_1")},
			wantErr: "message 1: tool call \"call_1\": arguments are not a JSON object",
		},
		{
			name:    "empty assistant message",
			msgs:    []openai.ChatCompletionMessage{user("hi"), assistant(" "), user("again")},
			wantErr: "message 1: assistant message without content or tool calls",
		},
		{
			name:    "mid-conversation system message",
			msgs:    []openai.ChatCompletionMessage{sys("s"), user("hi"), sys("summary"), user("go on")},
			wantErr: "message 2: system message after the start of the conversation",
		},
		{
			name:    "two leading system messages",
			msgs:    []openai.ChatCompletionMessage{sys("s"), sys("summary"), user("hi")},
			wantErr: "message 1: system message",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := openaitest.CheckMessageRules(tt.msgs)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestCheckRoleAlternation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		msgs    []openai.ChatCompletionMessage
		wantErr string
	}{
		{name: "plain chat", msgs: []openai.ChatCompletionMessage{sys("s"), user("hi"), assistant("hello"), user("bye")}},
		{
			name: "tool rounds",
			msgs: []openai.ChatCompletionMessage{sys("s"), user("read"), calls("c1", "c2"), result("c1"), result("c2"),
				calls("c3"), result("c3"), assistant("done"), user("again")},
		},
		{
			name: "summary as a user message and an acknowledgement",
			msgs: []openai.ChatCompletionMessage{sys("s"), user("summary of messages 1-40"), assistant("ok"), user("go on")},
		},
		{
			name:    "assistant first",
			msgs:    []openai.ChatCompletionMessage{sys("s"), assistant("hello"), user("hi")},
			wantErr: "message 1: assistant message after the start of the conversation",
		},
		{
			name:    "two user messages",
			msgs:    []openai.ChatCompletionMessage{sys("s"), user("summary"), user("hi")},
			wantErr: "message 2: user message after a user message",
		},
		{
			name:    "user after tool results",
			msgs:    []openai.ChatCompletionMessage{user("read"), calls("c1"), result("c1"), user("hi")},
			wantErr: "message 3: user message after a tool message",
		},
		{
			name:    "two assistant messages",
			msgs:    []openai.ChatCompletionMessage{user("hi"), assistant("a"), assistant("b")},
			wantErr: "message 2: assistant message after an assistant message",
		},
		{
			name:    "mid-conversation system message",
			msgs:    []openai.ChatCompletionMessage{sys("s"), user("hi"), assistant("a"), sys("summary"), user("go on")},
			wantErr: "message 3: system message",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := openaitest.CheckRoleAlternation(tt.msgs)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}
