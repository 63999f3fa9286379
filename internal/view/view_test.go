package view

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
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

// TestSummariesFollowAStableSystemPrompt: the summaries never change the
// system message, which starts every request byte for byte (the prefix a
// provider caches); each summary is a user message of its own, answered,
// so that applying one more leaves the ones before it as they were; and
// the roles stay valid for strict chat templates whether the kept
// messages start with the user or with the assistant.
func TestSummariesFollowAStableSystemPrompt(t *testing.T) {
	t.Parallel()
	p := NewPolicy(Config{Window: 32000, SystemPrompt: "You are gencode."})
	s1 := session.Summary{FromSeq: 1, ToSeq: 4, Content: "## Goal\n- FACT-ONE", TokenCount: 10}
	s2 := session.Summary{FromSeq: 5, ToSeq: 8, Content: "## Goal\n- FACT-TWO", TokenCount: 10}
	fromUser := []session.Message{
		{Seq: 9, Role: session.RoleUser, Content: "next question", Tokens: 5},
		{Seq: 10, Role: session.RoleAssistant, Content: "an answer", Tokens: 5},
		{Seq: 11, Role: session.RoleUser, Content: "and now?", Tokens: 5},
	}
	fromAssistant := []session.Message{
		{Seq: 9, Role: session.RoleAssistant, Content: "the end of a long turn", Tokens: 5},
		{Seq: 10, Role: session.RoleUser, Content: "and now?", Tokens: 5},
	}
	build := func(sums []session.Summary, msgs []session.Message) Prompt {
		return p.Build(session.View{Session: session.Session{ID: "s"}, Summaries: sums, Messages: msgs})
	}
	none := build(nil, fromUser)
	one := build([]session.Summary{s1}, fromUser)
	two := build([]session.Summary{s1, s2}, fromUser)
	twoA := build([]session.Summary{s1, s2}, fromAssistant)

	for _, pr := range []Prompt{none, one, two, twoA} {
		require.Equal(t, session.Message{Role: session.RoleSystem, Content: "You are gencode."}, pr.Messages[0],
			"the system message is the prompt alone")
		require.NoError(t, openaitest.CheckRoleAlternation(wire(pr.Messages)))
		require.NoError(t, openaitest.CheckMessageRules(wire(pr.Messages)))
	}
	require.Len(t, two.Messages, 1+4+3)
	require.Equal(t, session.RoleUser, two.Messages[1].Role)
	require.Contains(t, two.Messages[1].Content, "FACT-ONE")
	require.Contains(t, two.Messages[1].Content, "summary of messages 1-4")
	require.Equal(t, session.RoleAssistant, two.Messages[2].Role)
	require.Contains(t, two.Messages[3].Content, "FACT-TWO")
	require.Equal(t, one.Messages[:3], two.Messages[:3], "a new summary leaves the ones before it as they were")
	require.Len(t, twoA.Messages, 1+3+2, "no acknowledgement before an assistant message")
	require.Equal(t, two.Messages[:4], twoA.Messages[:4])

	require.Equal(t, none.Fixed, two.Fixed, "summaries are not part of the fixed cost")
	require.Positive(t, two.Summaries)
	require.Equal(t, two.Tokens, two.Fixed+two.Summaries+two.User+two.Assistant)
	require.InDelta(t, BlockTokens([]session.Summary{s1, s2}), two.Summaries, 60,
		"the budgets' estimate of the summaries is close to what they take")
}

// TestPromptTokensAreWhatIsSent checks the view policy's accounting on a
// view that uses every rule: a summary block, masked and cut outputs,
// mended calls, a synthetic result. Each message sent weighs what Count
// says of it as sent (untouched log messages keep their stored count,
// which was made by the same Count), and the total is their sum plus the
// overhead: the figure /context shows is the request.
func TestPromptTokensAreWhatIsSent(t *testing.T) {
	t.Parallel()
	count := func(m session.Message) int { return roughCount(m) + len(m.Name) }
	p := NewPolicy(Config{Window: 4000, SystemPrompt: "You are a test.", Overhead: 77, MaskAfter: 3, MaskBatch: 1, Count: count})
	var msgs []session.Message
	add := func(m session.Message) {
		m.Seq = int64(len(msgs) + 1)
		m.Tokens = count(m)
		msgs = append(msgs, m)
	}
	add(session.Message{Role: session.RoleUser, Content: "go"})
	for i := 0; i < 4; i++ {
		id := fmt.Sprintf("c%d", i)
		add(session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: id, Name: "Bash", Arguments: `{"command":"ls"}`}}})
		add(session.Message{Role: session.RoleTool, ToolCallID: id, Name: "Bash", Content: strings.Repeat("out\n", 10+i*400)})
	}
	add(session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "c0", Name: "Read", Arguments: `not json`}, {ID: "x", Name: "LS"}}})
	add(session.Message{Role: session.RoleTool, ToolCallID: "c0", Name: "Read", Content: "invalid arguments"})
	add(session.Message{Role: session.RoleAssistant, Content: ""})
	v := session.View{Session: session.Session{ID: "s1"}, Messages: msgs,
		Summaries: []session.Summary{{FromSeq: 1, ToSeq: 1, Content: "## Goal\n- test", TokenCount: 9}}}

	r := p.Build(v)
	require.Equal(t, 3, r.MaskedCount)
	require.Equal(t, 1, r.CutCount)
	require.Equal(t, 4, r.Repaired, "a repeated id, bad arguments, a missing result, an empty message")
	require.Equal(t, session.Message{Role: session.RoleSystem, Content: "You are a test."}, r.Messages[0])
	// The head (the system prompt, the summary and its answer) is written
	// by the policy; the rest comes from the log.
	sum, head := 77, 0
	for ; head < len(r.Messages) && r.Messages[head].Seq == 0; head++ {
		sum += count(r.Messages[head])
	}
	require.GreaterOrEqual(t, head, 2)
	require.Contains(t, r.Messages[1].Content, "- test")
	for _, m := range r.Messages[head:] {
		require.Equal(t, count(m), m.Tokens, "message %d (%s) as sent", m.Seq, m.Role)
		sum += m.Tokens
	}
	require.Equal(t, sum, r.Tokens)
	require.Equal(t, r.Tokens, r.Fixed+r.Summaries+r.User+r.Assistant+r.ToolOutputs+r.Masked)
	require.Equal(t, 77+count(session.Message{Role: session.RoleSystem, Content: "You are a test."}), r.Fixed)
	require.Equal(t, r.Tokens, p.Build(v).Tokens, "the same view makes the same prompt")
	require.Equal(t, msgs, v.Messages, "the view's messages are not changed")
}

// TestUserTurnsAlternateAfterAFailedTurn: a turn that failed leaves its
// message unanswered in the log. Its resend (Ctrl+R) and a new message
// after it would make two user messages in a row, which strict local chat
// templates refuse; the request joins them, sends a resend once, and says
// how many tokens that is. The log keeps every message.
func TestUserTurnsAlternateAfterAFailedTurn(t *testing.T) {
	t.Parallel()
	count := func(m session.Message) int { return roughCount(m) + len(m.Name) }
	p := NewPolicy(Config{Window: 8000, SystemPrompt: "You are a test.", Overhead: 50, Count: count})
	var msgs []session.Message
	add := func(role session.Role, text string) {
		m := session.Message{Seq: int64(len(msgs) + 1), Role: role, Content: text}
		m.Tokens = count(m)
		msgs = append(msgs, m)
	}
	add(session.RoleUser, "fix the parser")   // failed: the provider was down
	add(session.RoleUser, "fix the parser")   // Ctrl+R
	add(session.RoleAssistant, "")            // canceled before any text: left out
	add(session.RoleUser, "and add a test")   // typed next
	add(session.RoleUser, "and add a test")   // and resent
	add(session.RoleAssistant, "Done: both.") // answered
	add(session.RoleUser, "now the docs")     // a new turn
	v := session.View{Session: session.Session{ID: "s1"}, Messages: msgs}

	r := p.Build(v)
	var roles []session.Role
	var users []string
	sum := r.Fixed
	for _, m := range r.Messages {
		roles = append(roles, m.Role)
		if m.Role == session.RoleUser {
			users = append(users, m.Content)
		}
		if m.Role != session.RoleSystem {
			require.Equal(t, count(m), m.Tokens, "%s message %q as sent", m.Role, m.Content)
			sum += m.Tokens
		}
	}
	require.Equal(t, []session.Role{session.RoleSystem, session.RoleUser, session.RoleAssistant, session.RoleUser}, roles)
	require.NoError(t, openaitest.CheckRoleAlternation(wire(r.Messages)))
	require.Equal(t, []string{"fix the parser\n\nand add a test", "now the docs"}, users)
	require.Equal(t, sum, r.Tokens)
	require.Equal(t, r.Tokens, r.Fixed+r.Summaries+r.User+r.Assistant+r.ToolOutputs+r.Masked)
	require.Equal(t, 4, r.Repaired, "two resends, the empty answer, the join")
	require.Len(t, v.Messages, 7, "the log keeps every message")
	require.Equal(t, "fix the parser", v.Messages[0].Content, "the log's messages are not changed")
}

// TestAnswerReserve: a configured max_tokens is kept out of the window the
// prompt plans with (vLLM counts it inside the window), and only then.
func TestAnswerReserve(t *testing.T) {
	t.Parallel()
	p := NewPolicy(Config{Window: 4096, AnswerReserve: 1024})
	require.Equal(t, 4096, p.Window(), "the server's window")
	require.Equal(t, 3072, p.Usable())
	require.Equal(t, 1024, p.AnswerReserve())
	require.Equal(t, 3072*9/10-p.Fixed(), p.MessageRoom())
	b := p.Build(session.View{})
	require.Equal(t, 3072, b.Window)
	require.Equal(t, 1024, b.Reserve)
	require.True(t, p.LearnFrom(2048, "server, cut"), "a smaller window is learned against the whole window")
	require.Equal(t, 1024, p.Usable())
	require.Equal(t, 512, NewPolicy(Config{Window: 2048, AnswerReserve: 4000}).Usable(), "a quarter is left to the prompt")

	none := NewPolicy(Config{Window: 4096})
	require.Equal(t, 4096, none.Usable(), "no max_tokens: nothing kept")
	require.Zero(t, none.Build(session.View{}).Reserve)
}
