package sessionbench

import (
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

var benchTools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "Read"}}}

func msg(role, content string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: role, Content: content}
}

// TestModelScript checks the scripted model a scenario plays against:
// what it answers decides what the harness measures.
func TestModelScript(t *testing.T) {
	t.Parallel()
	b := ScenarioB()
	long := ScenarioLong()
	sys := msg("system", "you are gencode")
	tests := []struct {
		name      string
		sc        Scenario
		req       openaitest.Request
		wantText  string   // substring of the text answer
		wantCalls []string // tool names called
	}{
		{
			name:     "a plain turn is answered with its filler",
			sc:       b,
			req:      openaitest.Request{Tools: benchTools, Messages: []openai.ChatCompletionMessage{sys, msg("user", b.Prompt(7))}},
			wantText: "Done with turn 7.",
		},
		{
			name:      "every ReadEvery-th turn reads the README",
			sc:        b,
			req:       openaitest.Request{Tools: benchTools, Messages: []openai.ChatCompletionMessage{sys, msg("user", b.Prompt(b.ReadEvery))}},
			wantCalls: []string{"Read"},
		},
		{
			name:      "a long-scenario turn writes and runs",
			sc:        long,
			req:       openaitest.Request{Tools: benchTools, Messages: []openai.ChatCompletionMessage{sys, msg("user", long.Prompt(9))}},
			wantCalls: []string{"Write", "Bash"},
		},
		{
			name: "the recall question is answered from the context",
			sc:   b,
			req: openaitest.Request{Tools: benchTools, Messages: []openai.ChatCompletionMessage{
				sys, msg("user", "summary: the release codename is "+Fact), msg("assistant", "ok"), msg("user", b.Prompt(b.Turns+1))}},
			wantText: "The release codename you gave me is " + Fact,
		},
		{
			name: "without the fact in context the model searches the log",
			sc:   b,
			req: openaitest.Request{Tools: benchTools, Messages: []openai.ChatCompletionMessage{
				sys, msg("user", b.Prompt(b.Turns+1))}},
			wantCalls: []string{"SearchHistory"},
		},
		{
			name: "and answers from what the search found",
			sc:   b,
			req: openaitest.Request{Tools: benchTools, Messages: []openai.ChatCompletionMessage{
				sys, msg("user", b.Prompt(b.Turns+1)),
				{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Function: openai.FunctionCall{Name: "SearchHistory"}}}},
				{Role: "tool", ToolCallID: "c1", Name: "SearchHistory", Content: "[12] user: The release codename is " + Fact}}},
			wantText: Fact,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := model{sc: tt.sc}.reply(tt.req)
			var names []string
			for _, c := range rep.ToolCalls {
				names = append(names, c.Name)
			}
			require.Equal(t, tt.wantCalls, names)
			require.Contains(t, rep.Content, tt.wantText)
		})
	}
}

// TestModelSummary: the summarizer keeps the facts of its input and
// writes about 70% of the words it is asked for, whichever message asks.
func TestModelSummary(t *testing.T) {
	t.Parallel()
	m := model{sc: ScenarioB()}
	for _, where := range []string{"system", "user"} {
		req := openaitest.Request{Messages: []openai.ChatCompletionMessage{
			msg("system", "summarize"), msg("user", "<history>"+ScenarioB().Prompt(3)+"</history>")}}
		i := 0
		if where == "user" {
			i = 1
		}
		req.Messages[i].Content += " Be brief: about 400 words in all."
		got := m.reply(req).Content
		require.Contains(t, got, "## Goal")
		require.Contains(t, got, "## Next steps")
		require.Contains(t, got, Fact)
		words := len(strings.Fields(got))
		require.InDelta(t, 280, words, 40, "asked in the %s message: %d words", where, words)
	}
}

// TestPromptHidesTheFact: the fact sits where no deterministic extraction
// keeps it (not the first line, not a "remember" sentence).
func TestPromptHidesTheFact(t *testing.T) {
	t.Parallel()
	sc := ScenarioB()
	p := sc.Prompt(sc.FactTurn)
	require.Contains(t, p, Fact)
	require.NotContains(t, strings.SplitN(p, ".", 2)[0], Fact)
	require.NotContains(t, strings.ToLower(p), "remember")
	require.Equal(t, sc.Prompt(8), sc.Prompt(8), "the same text on every run")
	require.Equal(t, recallQuestion, sc.Prompt(sc.Turns+1))
}
