package openaitest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestAccountsPrefixCache follows a conversation through the fake's
// accounting: each request reuses, message by message from the start, what
// it shares with the previous agent request; a summary request is compared
// with that prefix but does not replace it; a changed first message, other
// tools or another model share nothing; a refused request is not billed.
func TestAccountsPrefixCache(t *testing.T) {
	t.Parallel()
	// One token per byte: the expected counts can be read off the texts.
	srv := openaitest.NewServer(t, openaitest.WithTokenizer(func(s string) int { return len(s) }),
		openaitest.WithContextWindow(400, nil),
		openaitest.WithResponder(func(openaitest.Request) openaitest.Reply { return openaitest.Text("ok") }))
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = srv.URL()
	client := openai.NewClientWithConfig(cfg)
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "LS", Parameters: json.RawMessage(`{}`)}}}
	toolsTok := len(mustJSON(t, tools))
	send := func(model string, tl []openai.Tool, choice any, msgs ...openai.ChatCompletionMessage) (openai.Usage, error) {
		resp, err := client.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: model, Messages: msgs, Tools: tl, ToolChoice: choice,
		})
		return resp.Usage, err
	}
	// A message costs 3 + len(role) + len(content).
	tok := func(m openai.ChatCompletionMessage) int { return 3 + len(m.Role) + len(m.Content) }
	s1, u1, a1, u2 := sys("prompt"), user("first question"), assistant("first answer"), user("second question")

	_, err := send("m", tools, nil, s1, u1)
	require.NoError(t, err)
	usage, err := send("m", tools, nil, s1, u1, a1, u2)
	require.NoError(t, err)
	prefix := toolsTok + tok(s1) + tok(u1)
	require.NotNil(t, usage.PromptTokensDetails, "the usage says what the cache served, like OpenAI's")
	require.Equal(t, prefix, usage.PromptTokensDetails.CachedTokens)

	// The summarizer sends the conversation and one instruction more.
	instr := user("summarize the conversation so far")
	_, err = send("m", tools, "none", s1, u1, a1, u2, instr)
	require.NoError(t, err)
	// The next agent request is compared with the last agent request, not
	// with the summary request.
	_, err = send("m", tools, nil, s1, u1, a1, u2, assistant("second answer"), user("third"))
	require.NoError(t, err)
	// A changed system message breaks everything after the tools.
	_, err = send("m", tools, nil, sys("prompt + summary"), u2)
	require.NoError(t, err)
	// Other tools or another model: nothing is shared.
	_, err = send("m", nil, nil, sys("prompt + summary"), u2)
	require.NoError(t, err)
	_, err = send("other", tools, nil, sys("prompt + summary"), u2)
	require.NoError(t, err)
	// Over the window: refused, not billed, not a prefix.
	_, err = send("m", tools, nil, sys("prompt + summary"), u2, user(string(make([]byte, 400))))
	require.Error(t, err)

	all := tok(s1) + tok(u1) + tok(a1) + tok(u2) + toolsTok + 3
	want := []openaitest.Account{
		{Seq: 1, Purpose: openaitest.PurposeAgent, Prompt: toolsTok + tok(s1) + tok(u1) + 3, Messages: 2},
		{Seq: 2, Purpose: openaitest.PurposeAgent, Prompt: all, Cached: prefix, Messages: 4, SharedMessages: 2},
		{Seq: 3, Purpose: openaitest.PurposeSummary, Prompt: all + tok(instr), Cached: all - 3, Messages: 5, SharedMessages: 4},
		{Seq: 4, Purpose: openaitest.PurposeAgent, Prompt: all + tok(assistant("second answer")) + tok(user("third")), Cached: all - 3, Messages: 6, SharedMessages: 4},
		{Seq: 5, Purpose: openaitest.PurposeAgent, Prompt: toolsTok + tok(sys("prompt + summary")) + tok(u2) + 3, Cached: toolsTok, Messages: 2},
		{Seq: 6, Purpose: openaitest.PurposeSummary, Prompt: tok(sys("prompt + summary")) + tok(u2) + 3, Messages: 2},
		{Seq: 7, Purpose: openaitest.PurposeAgent, Prompt: toolsTok + tok(sys("prompt + summary")) + tok(u2) + 3, Messages: 2},
	}
	got := srv.Accounts()
	require.Len(t, got, 8)
	for i, w := range want {
		w.Model = "m"
		if i == 6 {
			w.Model = "other"
		}
		require.Equal(t, w, got[i], "request %d", i+1)
	}
	// PromptTokens, which tests use to hold a request against a window,
	// counts as the server does.
	for i, r := range srv.Requests() {
		require.Equal(t, got[i].Prompt, openaitest.PromptTokens(r, func(s string) int { return len(s) }), "request %d", i+1)
	}
	require.Equal(t, openaitest.RejectWindow, got[7].Rejected)
	require.Zero(t, got[7].Cached, "the previous agent request was the other model's")

	bill := openaitest.Total(got)
	require.Equal(t, 7, bill.Requests)
	require.Equal(t, 2, bill.SummaryRequests)
	require.Equal(t, 1, bill.OverWindow)
	prompt, cached := 0, 0
	for _, a := range got[:7] {
		prompt += a.Prompt
		cached += a.Cached
	}
	require.Equal(t, prompt, bill.Prompt)
	require.Equal(t, cached, bill.Cached)
	require.Equal(t, prompt-cached, bill.Uncached())
	require.InDelta(t, float64(prompt-cached)+0.1*float64(cached), bill.Billed(0.1), 1e-9)
	require.InDelta(t, float64(got[2].Prompt+got[5].Prompt)/float64(prompt), bill.SummaryShare(), 1e-9)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestMemoTokenizerCountsEachTextOnce: the memo gives the tokenizer's
// count, asking the tokenizer once per distinct text.
func TestMemoTokenizerCountsEachTextOnce(t *testing.T) {
	t.Parallel()
	calls := map[string]int{}
	count := openaitest.MemoTokenizer(func(s string) int { calls[s]++; return len(s) })
	for _, s := range []string{"a", "bb", "a", "", "bb", "a"} {
		require.Equal(t, len(s), count(s), "count(%q)", s)
	}
	require.Equal(t, map[string]int{"a": 1, "bb": 1, "": 1}, calls)
}
