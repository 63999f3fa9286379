package cli_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/tokens"
)

// realCount counts a request as a provider with c's tokenizer: its
// messages, tool schemas as sent, and the reply priming.
func realCount(c *tokens.Counter, r openaitest.Request) int {
	n := tokens.ReplyPriming
	for _, m := range r.Messages {
		tm := tokens.Message{Role: m.Role, Content: m.Content, Name: m.Name}
		for _, tc := range m.ToolCalls {
			tm.ToolCalls = append(tm.ToolCalls, tokens.ToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		n += c.CountMessage(tm)
	}
	if i := strings.Index(string(r.Body), `"tools":`); i >= 0 {
		n += c.Count(string(r.Body[i:])) // the schemas and what follows them: about their size
	}
	return n
}

// TestServerWindowSmallerThanConfiguredInTmux is issue 12.3 in the real
// binary: the server holds 6,000 tokens, the model table says 128,000. A
// pasted message too large for the server used to stay in every later
// request, each refused, until /clear. Now the first refusal teaches the
// window, which the status bar and /context show; the message is cut in
// the view (the log keeps it) and every later turn goes through.
func TestServerWindowSmallerThanConfiguredInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	var mu sync.Mutex
	var refused int
	c := tokens.New("gpt-4o-mini")
	count := func(r openaitest.Request) int { return realCount(c, r) }
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithContextWindow(6000, count),
		openaitest.WithRequestHook(func(r openaitest.Request) {
			if count(r) > 6000 {
				mu.Lock()
				refused++
				mu.Unlock()
			}
		}),
		openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
			if len(r.Tools) == 0 { // the summarizer
				return openaitest.Text("## Goal\n- read the log\n## Key decisions\n- none\n## Topics\n- the log\n## Current state\n- read\n## Next steps\n- wait")
			}
			last := r.Messages[len(r.Messages)-1].Content
			return openaitest.Text(fmt.Sprintf("Answer to a message of %d characters.", len(last)))
		}))
	sb := newSandbox(t)
	sb.useServer(srv)
	p := startTUI(t, sb)
	p.waitText("Message gencode")

	var big strings.Builder
	for i := 0; big.Len() < 16000; i++ { // about 5,000 tokens
		fmt.Fprintf(&big, "line %d of the pasted log: status ok, value %d\n", i, i*31)
	}
	p.paste(big.String())
	p.waitText("[pasted text #1")
	p.keys("Enter")
	s := p.waitText("Answer to a message of")
	require.Contains(t, s, "the server's context window is 6000 tokens, not 128000")
	require.Regexp(t, `ctx [\d.]+k/6\.0k \d+% \(server\)`, s)

	p.typeLine("/context")
	s = p.waitText("The server's window: 6,000 tokens (configured 128,000)")
	require.Contains(t, s, "of 6,000 tokens")

	for _, q := range []string{"and the next question?", "one more"} {
		p.typeLine(q)
		p.waitText(fmt.Sprintf("Answer to a message of %d characters.", len(q)))
	}
	s = p.screen()
	require.NotContains(t, s, "✗")
	require.NotContains(t, s, "does not fit")
	mu.Lock()
	require.Equal(t, 1, refused, "only the request that taught the window was refused")
	mu.Unlock()
	for i, r := range srv.Requests() {
		require.NoError(t, openaitest.CheckMessageRules(r.Messages), "request %d", i)
	}
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}
