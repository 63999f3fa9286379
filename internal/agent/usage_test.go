package agent

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
)

// TestUsageFromRecordedStreams: the usage real providers reported at the
// end of their streams is stored with the session, by the model that
// answered, with the cached prompt tokens (prompt_tokens_details) and
// xAI's reasoning tokens (outside completion_tokens) billed as output;
// the usage event carries the cached tokens for the front end.
func TestUsageFromRecordedStreams(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(openaitest.SharedTestdata(t), "openai", "streams")
	tests := []struct {
		file  string
		want  session.UsageTotal
		calls bool // the stream asks for a tool: a second request follows
	}{
		{"openai_gpt-4o-mini_text_stream_with_usage.sse", session.UsageTotal{Model: "gpt-4o-mini-2024-07-18", Input: 8, Cached: 5, Output: 9}, false},
		{"azure_gpt-5-nano_model-router_text_stream.sse", session.UsageTotal{Model: "gpt-5-nano-2025-08-07", Input: 15, Output: 78}, false},
		{"deepseek-reasoner_tool_call_stream.sse", session.UsageTotal{Model: "deepseek-reasoner", Input: 339, Cached: 320, Output: 83}, true},
		{"xai_grok-3-mini_tool_call_stream.sse", session.UsageTotal{Model: "grok-3-mini", Input: 307, Cached: 306, Output: 253}, true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t)
			srv.Enqueue(openaitest.SSEFile(filepath.Join(dir, tt.file)))
			// The answer after the tool result reports its own usage, under
			// another model name, so that the two rows stay apart.
			srv.Enqueue(openaitest.Reply{Content: "done", Model: "follow-up", Usage: &openai.Usage{PromptTokens: 3, CompletionTokens: 1, TotalTokens: 4}})
			store := sessiontest.Open(t)
			sess, err := store.CreateSession(context.Background(), "/w", "m")
			require.NoError(t, err)
			client := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "test", MaxRetries: -1})
			a := New(store, client, &echoTools{}, vocabs.Counter("gpt-4o-mini"), Options{Model: "m", WorkDir: "/w", Window: 8192})
			evs := collect(a.Start(context.Background(), sess.ID, "hi"))
			var first *Usage
			for _, ev := range evs {
				if ev.Kind == EventUsage && first == nil {
					first = ev.Usage
				}
			}
			require.NotNil(t, first, "no usage event")
			require.Equal(t, tt.want.Input, first.PromptTokens)
			require.Equal(t, tt.want.Cached, first.CachedTokens)

			got, err := store.UsageBySession(context.Background(), sess.ID)
			require.NoError(t, err)
			want := tt.want
			want.Purpose, want.Requests = session.UsageTurn, 1
			wantAll := []session.UsageTotal{want}
			if tt.calls {
				wantAll = append(wantAll, session.UsageTotal{Purpose: session.UsageTurn, Model: "follow-up", Requests: 1, Input: 3, Output: 1})
			}
			require.ElementsMatch(t, wantAll, got[sess.ID])
			last, err := store.LastTurnUsage(context.Background(), sess.ID)
			require.NoError(t, err)
			require.ElementsMatch(t, wantAll, last, "every request of the turn counts for the turn")
		})
	}
}
