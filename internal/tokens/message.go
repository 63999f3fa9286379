package tokens

import "context"

// ReplyPriming is the number of tokens added once per chat request: every
// reply is primed with <|start|>assistant<|message|>.
const ReplyPriming = 3

// Per-message overheads of the chat format, from the OpenAI cookbook
// ("How to count tokens with tiktoken", num_tokens_from_messages), whose
// example matched the API's prompt_tokens for gpt-3.5-turbo, gpt-4 and
// gpt-4o (TestCountMessageCookbook checks the same numbers).
const (
	// perMessage frames every message: <|start|>{role}<|message|>...<|end|>.
	perMessage = 3
	// perName is added when a message has a name.
	perName = 1
	// perToolCall frames each tool call of an assistant message. OpenAI does
	// not publish how tool calls are rendered, so this is an approximation:
	// like a message, a call needs start, separator and end markers.
	perToolCall = 3
)

// Message is the part of a chat message that costs prompt tokens.
type Message struct {
	Role      string
	Content   string
	Name      string
	ToolCalls []ToolCall
}

// ToolCall is a function call made by the assistant.
type ToolCall struct {
	Name      string
	Arguments string
}

// CountMessage returns the tokens m takes in a chat request, following the
// cookbook: 3 for the framing, plus the role and content, plus the name and
// 1 when a name is set, plus for each tool call its name, its arguments and
// 3 for its framing (an approximation). Add ReplyPriming once per request.
// Without tool calls this is the cookbook's formula, which OpenAI checked
// against the API; it is still an estimate, not a guarantee.
func (c *Counter) CountMessage(m Message) int {
	n, _ := c.CountMessageContext(context.Background(), m)
	return n
}

// CountMessageContext is CountMessage that stops counting when ctx is done,
// as CountContext does: the rest is estimated and the error wraps ctx.Err().
func (c *Counter) CountMessageContext(ctx context.Context, m Message) (int, error) {
	var firstErr error
	count := func(s string) int {
		n, err := c.CountContext(ctx, s)
		if firstErr == nil {
			firstErr = err
		}
		return n
	}
	return MessageTokens(count, m), firstErr
}

// MessageTokens is the one formula for what a message takes in a chat
// request, whatever counts its texts (a tokenizer, or an estimate where
// none is at hand): the cookbook's framing, role and content, the name and
// 1 when a name is set, and for each tool call its framing, name and
// arguments. Every count of a message's tokens goes through it.
func MessageTokens(count func(string) int, m Message) int {
	n := perMessage + count(m.Role) + count(m.Content)
	if m.Name != "" {
		n += count(m.Name) + perName
	}
	for _, tc := range m.ToolCalls {
		n += perToolCall + count(tc.Name) + count(tc.Arguments)
	}
	return n
}
