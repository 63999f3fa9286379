package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/tokens"
)

// promptTokens counts a request as it arrived, with the real tokenizer:
// every message as sent, the tool schemas as sent, and the reply priming.
// It is what a provider with gpt-4o-mini's tokenizer reports as
// prompt_tokens.
func promptTokens(c *tokens.Counter) func(openaitest.Request) int {
	count := openaitest.MemoTokenizer(c.Count)
	return func(r openaitest.Request) int { return openaitest.PromptTokens(r, count) }
}

var contextTotal = regexp.MustCompile(`Context · \S+ · ([\d,]+) of ([\d,]+) tokens`)

// runContextCommand runs /context as the TUI does and returns its total
// and window.
func runContextCommand(t *testing.T, h *harness, cfg config.Config) (total, window int, report string) {
	t.Helper()
	reg := commands.New(commands.Deps{Store: h.store, Config: cfg, Window: func(string) int { return h.agent.Window() }})
	res, err := reg.Run(context.Background(), commands.State{SessionID: h.sess.ID, Model: h.agent.Model(), View: h.agent.Policy()}, "/context")
	require.NoError(t, err)
	report = res.Report.Plain()
	m := contextTotal.FindStringSubmatch(report)
	require.NotNil(t, m, report)
	atoi := func(s string) int {
		n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
		require.NoError(t, err)
		return n
	}
	return atoi(m[1]), atoi(m[2]), report
}

// TestContextTotalIsTheNextRequest is issue 12.5: /context said 9,971
// tokens while the request sent was 3,796, because /context, the status
// bar and the agent each applied the view policy their own way. /context's
// total, plus the user message typed next, must be what the next request
// holds, counted by the provider: here the fake server with the real
// tokenizer. The view has everything the policy does: a summary block,
// masked outputs and an output cut to fit the window.
func TestContextTotalIsTheNextRequest(t *testing.T) {
	t.Parallel()
	counter := tokenCache.Counter("gpt-4o-mini")
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithTokenCounter(promptTokens(counter)),
		openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
			require.Equal(t, fakeSummaryModel, r.Model, "only the summarizer is answered by default")
			return openaitest.Text(fakeSummary(r))
		}))
	store, sess := newStoreSession(t)
	var calls []openaitest.ToolCall
	for i := 0; i < 16; i++ {
		name := fmt.Sprintf("f%02d.txt", i)
		require.NoError(t, os.WriteFile(filepath.Join(sess.Cwd, name), []byte(strings.Repeat(fmt.Sprintf("line of file %d\n", i), 20)), 0o600))
		calls = append(calls, openaitest.ToolCall{Name: "Read", Arguments: fmt.Sprintf(`{"file_path":%q}`, filepath.Join(sess.Cwd, name))})
	}
	var big strings.Builder
	for i := 0; big.Len() < 24000; i++ {
		fmt.Fprintf(&big, "row %d: %x\n", i, i*7919)
	}
	require.NoError(t, os.WriteFile(filepath.Join(sess.Cwd, "big.txt"), []byte(big.String()), 0o600))
	calls = append(calls, openaitest.ToolCall{Name: "Read", Arguments: fmt.Sprintf(`{"file_path":%q}`, filepath.Join(sess.Cwd, "big.txt"))})

	// Masking after 10 of the 17 outputs: the view holds placeholders too.
	h := newHarness(t, srv, store, sess, 32768, func(c *summarize.Config) { c.MaskToolOutputsAfter = 10 })
	chat := strings.Repeat("We talked about the plan at length, step by step. ", 60)
	srv.Enqueue(openaitest.Reply{ForModel: "gpt-4o-mini", Content: chat},
		openaitest.Reply{ForModel: "gpt-4o-mini", ToolCalls: calls}, openaitest.Reply{ForModel: "gpt-4o-mini", Content: "I read them all."})
	h.turn("hello, here is my plan: " + chat)
	h.turn("read every file here")
	_, err := h.sum.SummarizeNow(context.Background(), sess.ID, "")
	require.NoError(t, err)

	cfg := config.Default()
	cfg.Summarize.MaskToolOutputsAfter = 10
	total, window, report := runContextCommand(t, h, cfg)
	require.Equal(t, 32768, window)
	require.Regexp(t, `Summaries\s+[1-9]`, report)
	require.Regexp(t, `Masked tool outputs\s+[\d,]+\s+\S+\s+5 placeholders`, report)
	require.Contains(t, report, "1 cut to 4,096 tokens each")

	next := "and now?"
	srv.Enqueue(openaitest.Reply{ForModel: "gpt-4o-mini", Content: "Nothing more."})
	evs, _ := h.turn(next)
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	require.Equal(t, next, last.Messages[len(last.Messages)-1].Content)
	var usage *agent.Usage
	for _, e := range evs {
		if e.Kind == agent.EventUsage {
			usage = e.Usage
		}
	}
	require.NotNil(t, usage)
	typed := agent.MessageTokens(counter, session.Message{Role: session.RoleUser, Content: next})
	require.Equal(t, usage.PromptTokens, total+typed, "the provider counted the request /context described\n%s", report)
	require.Equal(t, usage.PromptTokens, usage.ContextTokens, "the agent's own figure for the request")
}
