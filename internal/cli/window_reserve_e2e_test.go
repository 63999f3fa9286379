package cli_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestAnswerReserveOnVLLM: vLLM counts max_tokens inside the window and
// refuses a request whose prompt and max_tokens pass it. With the model's
// table setting max_tokens = 1024 against vLLM's 4096, the view plans
// with 3,072 for the prompt: a session of 20 print-mode turns of ~250
// tokens grows well past 3,072, and no request is refused, the agent's or
// the summarizer's; the first fact is recalled.
func TestAnswerReserveOnVLLM(t *testing.T) {
	t.Parallel()
	const model = "qwen2.5-coder:7b"
	var turns atomic.Int64
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithModels(model),
		openaitest.WithTokenizer(counter.Count),
		openaitest.WithEmulation(openaitest.Emulation{Flavor: openaitest.VLLM, Window: 4096, Trained: 32768}),
		openaitest.WithResponder(recallResponder(&turns)))
	sb := newSandbox(t)
	sb.useServer(srv)
	// Compaction late (85% and 90%): without the reserve the prompt
	// would reach 3,686 tokens before it is compacted.
	sb.writeConfig("model = \"" + model + "\"\n[summarize]\nsoft_ratio = 0.85\nhard_ratio = 0.9\n" +
		"[models.\"" + model + "\"]\nmax_tokens = 1024\n")
	for i := 1; i <= 20; i++ {
		args := []string{"-p", windowTurn(i)}
		if i > 1 {
			args = append([]string{"-c"}, args...)
		}
		res := sb.run(args...)
		require.Equal(t, 0, res.code, "turn %d: %s", i, res.stderr)
	}
	res := sb.run("-c", "-p", "recall every fact I asked you to remember")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, windowFacts[3], "recalled")

	most := 0
	for _, a := range srv.Accounts() {
		if a.Purpose == openaitest.PurposeAgent && a.Rejected == "" {
			most = max(most, a.Prompt)
		}
	}
	bill := openaitest.Total(srv.Accounts())
	t.Logf("%d requests (%d summaries), %d refused (%d of them summaries); largest agent prompt %d",
		bill.Requests, bill.SummaryRequests, bill.OverWindow, bill.SummaryOverWindow, most)
	require.Greater(t, bill.Requests+bill.OverWindow, 21, "the session was compacted")
	require.Zero(t, bill.OverWindow, "no request refused: the answer's 1,024 tokens were kept out of the prompt's budget")
}
