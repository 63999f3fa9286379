package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// stalledSummarizer answers the main model at once and never answers the
// summarizer (no byte, not even headers), as a summarizer endpoint that
// hangs.
func stalledSummarizer(r openaitest.Request) openaitest.Reply {
	if isSummarizer(r) {
		return openaitest.Reply{Content: "never", Delay: time.Hour}
	}
	return openaitest.Text("The answer.")
}

func summarizerCalls(srv *openaitest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if isSummarizer(r) {
			n++
		}
	}
	return n
}

// TestPrintModeDoesNotWaitForAStalledSummary: a print-mode turn used to
// wait, after printing its answer, up to 60 s for a background summary
// whose summarizer never answered. Now it waits a few seconds at most,
// then stops the summary (the originals are kept; the next run starts it
// again) and exits.
func TestPrintModeDoesNotWaitForAStalledSummary(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithResponder(stalledSummarizer))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
	// Past the soft threshold (a background summary starts), far below the
	// hard one (the turn does not wait for it before its request).
	sb.writeConfig("context_window = 40000\n[summarize]\nsoft_ratio = 0.05\nhard_ratio = 0.95\n")
	id, _ := sb.seedSession(20, 5)
	res := sb.run("-r", id, "-p", "one more question")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	require.Equal(t, "The answer.\n", res.stdout)
	require.Equal(t, 1, summarizerCalls(srv), "a background summary was started")
	require.Contains(t, res.stderr, "stopped a background summary still running")
	// Generous for a loaded 2-core machine, far below the 60 s it was.
	require.Less(t, res.took, 15*time.Second, "stderr: %s", res.stderr)
}

// TestSummarizeStalledSummarizerFallsBackOnce: `gencode summarize` used
// to wait for a summarizer that never answered once per attempt (three,
// of up to 2 minutes each): about 6 minutes before the deterministic
// summary. A summarizer that stays silent past request_idle_timeout is
// now not asked again in that compaction (no retry, no next chunk): the
// command falls back after one idle timeout.
func TestSummarizeStalledSummarizerFallsBackOnce(t *testing.T) {
	t.Parallel()
	const idle = 2 * time.Second
	srv := openaitest.NewServer(t, openaitest.WithResponder(stalledSummarizer))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
	sb.writeConfig("request_idle_timeout = \"" + idle.String() + "\"\n")
	// Larger than one summarizer request may carry: it goes in chunks.
	sb.seedSession(60, 12)
	res := sb.run("summarize")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	require.Contains(t, res.stdout, "deterministic summary (no LLM narrative)")
	var first string
	for _, r := range srv.Requests() {
		if isSummarizer(r) {
			first = r.Messages[len(r.Messages)-1].Content
		}
	}
	require.Contains(t, first, "This is part 1 of ", "the range goes in chunks")
	require.Equal(t, 1, summarizerCalls(srv), "asked once, not once per attempt or chunk")
	require.GreaterOrEqual(t, res.took, idle)
	require.Less(t, res.took, idle+8*time.Second, "about one idle timeout; stdout: %s", res.stdout)
	require.False(t, strings.Contains(res.stdout, "no answer within 2m"), "the attempt timeout was not waited for")
}
