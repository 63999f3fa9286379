package cli

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/summarize"
)

// TestGarbageSummaryIsNotStored is issue 14's item 17 through the real
// client and the fake server: a summarizer answering garbage (no headings,
// NUL bytes, escape codes) gets the deterministic summary stored, flagged
// with the reason; an answer that is a summary but carries escape codes is
// stored without them.
func TestGarbageSummaryIsNotStored(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		answer      string
		wantWhy     string
		wantContent string
	}{
		{
			name:    "garbage",
			answer:  "\x00\x00\x1b[2J\x1b[H\x1b]52;c;cm0gLXJmIH4=\x07\x00 \x1b[31m\x00\x00\x00 ok \x1b[0m\x00\x1b[?1049h",
			wantWhy: "unusable summarizer answer: no summary structure",
		},
		{
			name:        "a summary with escape codes",
			answer:      "\x1b]0;owned\x07## Goal\n- run the tests of every package\x00\n## Current state\n- \x1b[32mall pass\x1b[0m",
			wantContent: "## Goal\n- run the tests of every package\n## Current state\n- all pass",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
				if r.Model == fakeSummaryModel {
					return openaitest.Reply{Content: tt.answer}
				}
				return openaitest.Text("Here is the answer.")
			}))
			store, sess := newStoreSession(t)
			seedTurns(t, store, sess.ID, 1, 24, 6)
			h := newHarness(t, srv, store, sess, 100000, func(c *summarize.Config) { c.RetryBackoff = time.Millisecond })

			rep, err := h.sum.SummarizeNow(context.Background(), sess.ID, "")
			require.NoError(t, err)
			sums, err := store.Summaries(context.Background(), sess.ID, true)
			require.NoError(t, err)
			require.Len(t, sums, 1)
			row, err := json.Marshal(sums[0])
			require.NoError(t, err)
			for _, c := range []string{`\u0000`, `\u001b`, `\u0007`} {
				require.NotContains(t, string(row), c, "a control character reached the store")
			}
			if tt.wantWhy == "" {
				require.False(t, sums[0].Fallback, sums[0].FallbackReason)
				require.Equal(t, tt.wantContent, sums[0].Content)
				require.Equal(t, 1, summarizerRequests(srv))
				return
			}
			require.True(t, rep.Fallback)
			require.True(t, sums[0].Fallback)
			require.Contains(t, sums[0].FallbackReason, tt.wantWhy)
			require.ErrorContains(t, rep.Err, tt.wantWhy)
			require.Empty(t, sums[0].Content)
			require.Contains(t, sums[0].Commands, "go test ./pkg/p1")
			require.Equal(t, 3, summarizerRequests(srv), "asked again, up to the attempts allowed")
		})
	}
}
