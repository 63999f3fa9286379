package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/facts"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/rewind"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/transcript"
)

// TestSummarizeLongLogSessionFacts: `gencode summarize` on a log far
// larger than the window (compacted a page at a time) prints the facts of
// the whole session as the log has them through its rewinds: a code
// rewind's changes where it was made, not the turns a conversation rewind
// took out, the commands unredacted as the log keeps them, the turns after
// the compaction's range.
func TestSummarizeLongLogSessionFacts(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithResponder(summarize))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
	id, seeded := sb.seedSession(150, 3)
	total := 0
	for _, m := range seeded {
		total += m.Tokens
	}
	const window = 4000
	require.Greater(t, total, 3*window, "the log must be far larger than the window")
	sb.writeConfig(fmt.Sprintf("context_window = %d\n", window))

	ctx := context.Background()
	st := sb.openStore()
	// Turn 150 taken out of the conversation; two turns after it, a
	// code-only rewind between them.
	_, err := st.RecordRewind(ctx, session.Rewind{SessionID: id, Kind: session.RewindTurn, Turn: 150, FromSeq: 597})
	require.NoError(t, err)
	for i, cmd := range []string{"go vet ./...", "curl -H 'Authorization: Bearer sk-proj-Zq8vN3xLm2Kp7Rt5Wy9Bd4Fh6Jc1Ge0Ta'"} {
		call := fmt.Sprintf("call_after_%d", i)
		args, _ := json.Marshal(map[string]string{"command": cmd})
		exit := i
		turn := []session.Message{
			{Role: session.RoleUser, Content: "Run " + cmd},
			{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: call, Name: "Bash", Arguments: string(args)}}},
			{Role: session.RoleTool, ToolCallID: call, Name: "Bash", Content: "done",
				Meta: session.Meta{Tool: "Bash", Command: cmd, ExitCode: &exit}},
			{Role: session.RoleAssistant, Content: "Done."},
		}
		for i := range turn {
			turn[i].Tokens = agent.MessageTokens(counter, turn[i])
		}
		_, err = st.Append(ctx, id, turn...)
		require.NoError(t, err)
		if i == 0 {
			_, err = st.RecordRewind(ctx, session.Rewind{SessionID: id, Kind: session.RewindTurn, Turn: 151, Code: true,
				Changes: []string{"- gone.txt", "~ kept.txt"}})
			require.NoError(t, err)
		}
	}
	all, err := facts.OfSeq(rewind.FactsLog(ctx, st, id))
	require.NoError(t, err)
	require.NoError(t, st.Close())
	want, err := json.Marshal(transcript.FactsOf(transcript.RelativeFacts(all, sb.work)))
	require.NoError(t, err)

	res := sb.run("summarize", "--json", "--session", id)
	require.Equal(t, 0, res.code, res.stderr)
	var out struct {
		Facts   json.RawMessage  `json:"session_facts"`
		Summary *session.Summary `json:"summary"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
	require.NotNil(t, out.Summary, "the long log was compacted")
	summarizer := 0
	for _, r := range srv.Requests() {
		if isSummarizer(r) {
			summarizer++
		}
	}
	require.Greater(t, summarizer, 1, "in chunks")
	require.JSONEq(t, string(want), string(out.Facts))
	for _, w := range []string{"go vet ./...", "sk-proj-Zq8vN3xLm2Kp7Rt5Wy9Bd4Fh6Jc1Ge0Ta", "gone.txt", "go test ./pkg/p1"} {
		require.Contains(t, string(out.Facts), w)
	}
	require.NotContains(t, string(out.Facts), "go test ./pkg/p150", "turn 150 was taken out")
}
