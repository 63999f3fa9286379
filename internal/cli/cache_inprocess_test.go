package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/summarize"
)

// TestCompactionKeepsTheCacheWarm is issue 11's bill in one session: the
// summarizer is the agent's model, so its request continues the
// conversation the agent sent (same messages, same tools, tool_choice
// "none") and the provider serves all of it but the instruction from its
// cache; after the summary is applied, the system prompt and every
// message up to the summary are still the cached prefix. Every request
// keeps the message rules and the roles a strict chat template wants.
func TestCompactionKeepsTheCacheWarm(t *testing.T) {
	t.Parallel()
	counter := tokenCache.Counter("gpt-4o-mini")
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithRoleAlternation(),
		openaitest.WithTokenizer(counter.Count),
		openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
			if r.ToolChoice == "none" {
				return openaitest.Text(fakeSummary(r))
			}
			return openaitest.Text("Answered: " + strings.Repeat("the handler keeps its state in the store ", 12))
		}))
	store, sess := newStoreSession(t)
	h := newHarness(t, srv, store, sess, 32768, func(c *summarize.Config) {
		c.Model, c.CachedPrefix = "gpt-4o-mini", true // what the CLI sets when one model does both
	})
	for i := 1; i <= 8; i++ {
		h.turn(fmt.Sprintf("Question %d: %s", i, strings.Repeat("how does the cache behave here? ", 10)))
	}
	rep, err := h.sum.SummarizeNow(context.Background(), sess.ID, "")
	require.NoError(t, err)
	require.NotNil(t, rep.Summary)
	require.False(t, rep.Fallback, "%v", rep.Err)
	h.turn("and after the summary?")

	reqs, accts := srv.Requests(), srv.Accounts()
	require.Len(t, reqs, 10)
	agentReq, sumReq, after := reqs[7], reqs[8], reqs[9]
	require.Equal(t, "none", sumReq.ToolChoice)
	require.Equal(t, agentReq.Tools, sumReq.Tools, "the agent's tools, so that the cached prefix holds")
	n := len(sumReq.Messages) - 1
	require.Equal(t, agentReq.Messages[:n], sumReq.Messages[:n], "the conversation as the agent sent it")
	last := sumReq.Messages[n]
	require.Equal(t, "user", last.Role)
	require.Contains(t, last.Content, fmt.Sprintf("Summarize messages 1-%d", rep.Summary.ToSeq))
	require.Equal(t, openaitest.PurposeSummary, accts[8].Purpose)
	require.Greater(t, accts[8].Cached, accts[8].Prompt*3/4, "the summary request is read from the cache: %+v", accts[8])

	// After the summary: the system prompt is unchanged, the summary
	// follows it as a user message with its answer, and the request after
	// that reuses the system prompt and tools from the cache.
	require.Equal(t, agentReq.Messages[0], after.Messages[0])
	require.Equal(t, "user", after.Messages[1].Role)
	require.Contains(t, after.Messages[1].Content, fmt.Sprintf("summary of messages 1-%d", rep.Summary.ToSeq))
	require.Equal(t, "assistant", after.Messages[2].Role)
	require.Equal(t, 1, accts[9].SharedMessages, "the system prompt is still cached")
	for i, a := range accts {
		require.Empty(t, a.Rejected, "request %d refused", i+1)
	}
}
