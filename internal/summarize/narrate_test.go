package summarize

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/view"
)

// countingCounter counts how much text was tokenized.
type countingCounter struct {
	charCounter
	mu    sync.Mutex
	bytes int
}

func (c *countingCounter) Count(s string) int {
	c.mu.Lock()
	c.bytes += len(s)
	c.mu.Unlock()
	return c.charCounter.Count(s)
}

// TestNarrateTokenizesNothingTwice: a summary of a long range reads the
// messages' stored counts to size its chunks; it tokenizes only what it
// writes (the summary) and what the summarizer answered, never the
// range again. (Before, every message was tokenized once more: 54% of
// the first turn after importing a 100,000-message session.)
func TestNarrateTokenizesNothingTwice(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 200)
	var rangeBytes int
	for _, m := range l.allMessages() {
		rangeBytes += len(m.Content)
	}
	counter := &countingCounter{}
	llm := &fakeLLM{answer: func(r Request) (Completion, error) {
		// The prompt as the server counts it (not through counter): a
		// count far below the request would be a cut prompt.
		in := charCounter{}.Count(r.System) + charCounter{}.Count(r.Prompt)
		return Completion{Text: echoSummary(r), PromptTokens: in, CompletionTokens: 100}, nil
	}}
	cfg := testConfig(16000)     // chunks: the range does not fit one call
	cfg.MaskToolOutputsAfter = 0 // the view policy counts its placeholders once; none here
	s := newSummarizer(store, llm, counter, cfg)
	defer s.Close()
	rep, err := s.SummarizeNow(context.Background(), l.id, "")
	require.NoError(t, err)
	require.NotNil(t, rep.Summary)
	require.Greater(t, rep.Summary.Chunks, 1)
	require.Less(t, counter.bytes, rangeBytes/4, "tokenized %d bytes for a range of %d", counter.bytes, rangeBytes)
}

// TestSummaryRequestContinuesTheConversation: with the agent's model as
// summarizer, a summary request is the conversation as the agent sends it
// (system prompt, summaries, messages) up to the range's end, then one
// instruction; no transcript is pasted unless the range ends inside a
// turn, where the messages after the last answer are pasted so that the
// roles stay valid. Without CachedPrefix, or when the conversation would
// not fit the summarizer's window, the range is pasted as before.
func TestSummaryRequestContinuesTheConversation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		cached      bool
		window      int
		midTurn     bool // the last turn is one long tool loop
		wantPrefix  bool
		wantPasted  bool
		wantRangeTo int64
	}{
		{name: "whole turns", cached: true, window: 100000, wantPrefix: true},
		{name: "range ending inside a turn", cached: true, window: 100000, midTurn: true, wantPrefix: true, wantPasted: true},
		{name: "another summarizer model", cached: false, window: 100000},
		{name: "conversation larger than the window", cached: true, window: 1200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := openStore(t)
			l := newLog(t, store)
			for i := 0; i < 12; i++ {
				l.turn(fmt.Sprintf("Step %d: FACT-S%d change the handler", i, i), writeCall(fmt.Sprintf("/w/f%d.go", i), "package f"))
			}
			if tt.midTurn {
				// One turn of many tool rounds: the cut falls inside it.
				l.add(session.Message{Role: session.RoleUser, Content: "now run every test"})
				for i := 0; i < 8; i++ {
					c := bashCall(fmt.Sprintf("go test ./p%d", i), strings.Repeat("ok ", 200), 0)
					id := fmt.Sprintf("mid_%d", i)
					l.add(session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: id, Name: c.name, Arguments: c.args}}},
						session.Message{Role: session.RoleTool, ToolCallID: id, Name: c.name, Content: c.output, Meta: c.meta})
				}
			}
			llm := &fakeLLM{}
			cfg := testConfig(tt.window)
			cfg.CachedPrefix, cfg.PreserveRecent = tt.cached, 4
			policy := view.NewPolicy(view.Config{Window: tt.window, SystemPrompt: "You are gencode.", Overhead: 300, MaskAfter: 4})
			s := New(store, llm, charCounter{}, policy, cfg)
			defer s.Close()
			v := l.view()
			sent := s.View().Build(v).Messages // what the agent sends
			rep, err := s.SummarizeNow(context.Background(), l.id, "")
			require.NoError(t, err)
			require.NotNil(t, rep.Summary)
			reqs := llm.requests()
			require.NotEmpty(t, reqs)
			r := reqs[0]
			if !tt.wantPrefix {
				require.Empty(t, r.Conversation)
				require.Contains(t, r.Prompt, "<history>")
				require.Contains(t, r.System, "You write the summary")
				return
			}
			require.Len(t, reqs, 1)
			require.Empty(t, r.System)
			require.NotEmpty(t, r.Conversation)
			require.Equal(t, sent[:len(r.Conversation)], r.Conversation, "a prefix of what the agent sent")
			end := r.Conversation[len(r.Conversation)-1]
			require.Equal(t, session.RoleAssistant, end.Role)
			require.Empty(t, end.ToolCalls)
			require.Contains(t, r.Prompt, fmt.Sprintf("Summarize messages 1-%d of this session", rep.Summary.ToSeq))
			require.Contains(t, r.Prompt, "## Key decisions")
			require.Equal(t, tt.wantPasted, strings.Contains(r.Prompt, "<history>"), r.Prompt)
			if tt.wantPasted {
				require.Contains(t, r.Prompt, "go test ./p0", "the range's messages after the last answer are pasted")
			}
			wire := wire(append(append([]session.Message{}, r.Conversation...), session.Message{Role: session.RoleUser, Content: r.Prompt}))
			require.NoError(t, openaitest.CheckRoleAlternation(wire))
			require.NoError(t, openaitest.CheckMessageRules(wire))
			require.Contains(t, rep.Summary.Content, "FACT-S0", "the narrative came from the conversation")
		})
	}
}
