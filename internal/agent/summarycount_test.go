package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/tokens"
	"github.com/gencode/gencode/internal/view"
)

// textCounter is the real tokenizer, and remembers the texts it was asked
// to count. With encoding set it names its encoding, so the view policy may
// use a summary's stored count.
type textCounter struct {
	countingCounter
	encoding string

	mu    sync.Mutex
	texts []string
}

func (c *textCounter) Encoding() string { return c.encoding }

func (c *textCounter) saw(s string) {
	c.mu.Lock()
	c.texts = append(c.texts, s)
	c.mu.Unlock()
}

// counted reports whether a text that contains s was counted.
func (c *textCounter) counted(s string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.ContainsFunc(c.texts, func(t string) bool { return strings.Contains(t, s) })
}

func (c *textCounter) Count(s string) int { c.saw(s); return c.countingCounter.Count(s) }

func (c *textCounter) CountMessage(m tokens.Message) int {
	c.saw(m.Content)
	return c.countingCounter.CountMessage(m)
}

func (c *textCounter) CountMessageContext(ctx context.Context, m tokens.Message) (int, error) {
	c.saw(m.Content)
	return c.countingCounter.CountMessageContext(ctx, m)
}

func (c *textCounter) CountContext(ctx context.Context, s string) (int, error) {
	c.saw(s)
	return c.countingCounter.CountContext(ctx, s)
}

// narrator answers every summarizer call with one narrative.
type narrator string

func (n narrator) Complete(context.Context, summarize.Request) (summarize.Completion, error) {
	if n == "" {
		return summarize.Completion{}, fmt.Errorf("summarizer down")
	}
	return summarize.Completion{Text: string(n)}, nil
}

// TestSummaryIsNotTokenizedAgain: a print-mode run used to tokenize every
// active summary again to size its request (4 ms a turn late in a 600-turn
// session). A summary made with the agent's tokenizer keeps its count; the
// request's figure is the same as counting it, whatever the narrative
// starts with, and a summary that renders differently now (a stale count)
// is counted again.
func TestSummaryIsNotTokenizedAgain(t *testing.T) {
	t.Parallel()
	const sections = "\n## Goal\n- build the parser\n## Current state\n- tests pass"
	tests := []struct {
		narrative string
		reused    bool // false: the summary is counted (a "/" first joins o200k's piece before it)
	}{
		{"", true}, // no narrative: the summarizer is down, the facts alone
		{"## Goal\n- build the parser\n## Current state\n- tests pass", true},
		{"- first item, then `code`" + sections, true},
		{"'quoted' start, then prose." + sections, true},
		{"1. numbered" + sections, true},
		{"Über ünïcode 漢字 start" + sections, true},
		{"   leading spaces are trimmed" + sections, true},
		{"/compact was run." + sections, false},
		{"//go:build tag added" + sections, false},
	}
	for i, tt := range tests {
		narrative := tt.narrative
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ctx := context.Background()
			for n := range 40 {
				_, err := f.store.Append(ctx, f.sess.ID,
					session.Message{Role: session.RoleUser, Content: fmt.Sprintf("Turn %d: fix the parser in parse_%d.go. Keep the API stable.", n, n), Tokens: 20},
					session.Message{Role: session.RoleAssistant, Content: strings.Repeat("Done, the parser handles it now. ", 5), Tokens: 40})
				require.NoError(t, err)
			}
			real := vocabs.Counter("gpt-4o-mini")
			policy := view.NewPolicy(view.Config{Window: 8192, Overhead: 500,
				Count: func(m session.Message) int { return view.MessageTokens(real.Count, m) }})
			s := summarize.New(f.store, narrator(narrative), real, policy, summarize.Config{Window: 8192, PreserveRecent: 4})
			defer s.Close()
			v, err := f.store.LoadView(ctx, f.sess.ID)
			require.NoError(t, err)
			v, err = s.Compact(ctx, v, "test")
			require.NoError(t, err)
			require.Len(t, v.Summaries, 1)
			require.NotEmpty(t, v.Summaries[0].TokenKey)
			require.Equal(t, narrative == "", v.Summaries[0].Fallback, "the narrative was taken: %s", v.Summaries[0].FallbackReason)

			plain := &textCounter{countingCounter: countingCounter{inner: real}}
			keyed := &textCounter{countingCounter: countingCounter{inner: real}, encoding: real.Encoding()}
			opts := Options{Model: "gpt-4o-mini", WorkDir: "/w", Window: 8192}
			counted := New(f.store, nil, nil, plain, opts).ContextSize(v)
			known := New(f.store, nil, nil, keyed, opts).ContextSize(v)
			require.Equal(t, counted, known, "the stored count is what counting gives")
			body := view.RenderSummary(v.Summaries[0])
			require.True(t, plain.counted(body), "without the encoding the summary is counted")
			require.Equal(t, !tt.reused, keyed.counted(body), "with it, the summary is not tokenized again unless it starts with a slash")

			// The same summary rendering otherwise (another narrative) has a
			// stale count: it is counted, and the figure is still exact.
			stale := v
			stale.Summaries = []session.Summary{v.Summaries[0]}
			stale.Summaries[0].Content += "\n- one more line"
			counted = New(f.store, nil, nil, plain, opts).ContextSize(stale)
			known = New(f.store, nil, nil, keyed, opts).ContextSize(stale)
			require.Equal(t, counted, known)
			require.True(t, keyed.counted(view.RenderSummary(stale.Summaries[0])))
		})
	}
}
