package cli_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
)

// cutFacts are planted in a session built before any agent turn.
var cutFacts = map[int]string{1: "FACT-CUT-EARLY-1187", 2: "FACT-CUT-MIDDLE-4420", 3: "FACT-CUT-LATE-9035"}

// fromCut marks a summary the fake model wrote from a prompt the emulated
// Ollama cut.
const fromCut = "ANSWERED-FROM-A-CUT-PROMPT"

// TestSummaryRequestCutIsNotUsed: an Ollama before v0.10 at 2048 tokens
// (its /api/ps has no context_length: gencode assumes Ollama's 4096). A
// session built before the first agent turn (six turns of ~270 tokens)
// is summarized with `gencode summarize`: the first summary request is
// larger than the real window and the server cuts it silently. The
// summarizer sees the shortfall in prompt_tokens, as the agent would, sets
// the answer aside, learns the window the server kept and summarizes in
// smaller requests: no summary is written from a cut request, and every
// fact is in the summary.
func TestSummaryRequestCutIsNotUsed(t *testing.T) {
	t.Parallel()
	const model = "qwen2.5-coder:7b"
	var turns atomic.Int64
	recall := recallResponder(&turns)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithModels(model),
		openaitest.WithTokenizer(counter.Count),
		openaitest.WithEmulation(openaitest.Emulation{Flavor: openaitest.Ollama, Window: 2048, Trained: 32768, Version: "0.9.6"}),
		openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
			if r.Dropped > 0 && openaitest.DefaultPurpose(r) == openaitest.PurposeSummary {
				reply := recall(r)
				reply.Content += "- " + fromCut + "\n"
				return reply
			}
			return recall(r)
		}))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_MODEL"] = model

	st := sb.openStore()
	sess, err := st.CreateSession(context.Background(), sb.work, model)
	require.NoError(t, err)
	var msgs []session.Message
	for i := 1; i <= 6; i++ {
		user := windowTurn(i)
		if f, ok := cutFacts[i]; ok {
			user = strings.Replace(user, ". ", fmt.Sprintf(". Remember this for later, it matters: %s. ", f), 1)
		}
		msgs = append(msgs,
			session.Message{Role: session.RoleUser, Content: user},
			session.Message{Role: session.RoleAssistant, Content: fmt.Sprintf("Done with turn %d.", i)})
	}
	for i := range msgs {
		msgs[i].Tokens = agent.MessageTokens(counter, msgs[i])
	}
	_, err = st.Append(context.Background(), sess.ID, msgs...)
	require.NoError(t, err)
	require.NoError(t, st.Close())

	res := sb.run("summarize")
	require.Equal(t, 0, res.code, res.stderr)

	cut, summaries := 0, 0
	for _, a := range srv.Accounts() {
		t.Logf("request %d: %s, %d prompt tokens, %d messages, %d dropped", a.Seq, a.Purpose, a.Prompt, a.Messages, a.Dropped)
		if a.Purpose == openaitest.PurposeSummary {
			summaries++
			if a.Dropped > 0 {
				cut++
			}
		}
	}
	t.Logf("%d summary requests, %d cut", summaries, cut)
	require.Positive(t, cut, "the test's first summary request should have been cut")
	require.NotContains(t, res.stdout, fromCut, "no summary written from a cut request")
	require.Less(t, cut, summaries, "a request that fits followed the cut")
	require.Contains(t, res.stdout, "written by "+model, "the model's summary, not the fallback")
	for _, f := range cutFacts {
		require.Contains(t, res.stdout, f, "every fact is in the summary")
	}
}
