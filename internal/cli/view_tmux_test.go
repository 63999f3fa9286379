package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/tokens"
)

// TestServerWindowSmallerThanConfiguredInTmux is issue 12.3 in the real
// binary: the server holds 6,000 tokens, the model table says 128,000. A
// pasted message too large for the server used to stay in every later
// request, each refused, until /clear. Now the first refusal teaches the
// window, which the status bar and /context show; the message is cut in
// the view (the log keeps it) and every later turn goes through.
func TestServerWindowSmallerThanConfiguredInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	var mu sync.Mutex
	var refused int
	c := openaitest.MemoTokenizer(tokens.New("gpt-4o-mini").Count)
	count := func(r openaitest.Request) int { return openaitest.PromptTokens(r, c) }
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithContextWindow(6000, count),
		openaitest.WithRequestHook(func(r openaitest.Request) {
			if count(r) > 6000 {
				mu.Lock()
				refused++
				mu.Unlock()
			}
		}),
		openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
			if len(r.Tools) == 0 { // the summarizer
				return openaitest.Text("## Goal\n- read the log\n## Key decisions\n- none\n## Topics\n- the log\n## Current state\n- read\n## Next steps\n- wait")
			}
			last := r.Messages[len(r.Messages)-1].Content
			return openaitest.Text(fmt.Sprintf("Answer to a message of %d characters.", len(last)))
		}))
	sb := newSandbox(t)
	sb.useServer(srv)
	p := startTUI(t, sb)
	p.waitText("Message gencode")

	var big strings.Builder
	for i := 0; big.Len() < 16000; i++ { // about 5,000 tokens
		fmt.Fprintf(&big, "line %d of the pasted log: status ok, value %d\n", i, i*31)
	}
	p.paste(big.String())
	p.waitText("[pasted text #1")
	p.keys("Enter")
	s := p.waitText("Answer to a message of")
	require.Contains(t, s, "the server's context window is 6000 tokens, not 128000")
	require.Regexp(t, `ctx [\d.]+k/6\.0k \d+% \(server\)`, s)

	p.typeLine("/context")
	s = p.waitText("The server's window: 6,000 tokens (not 128,000)")
	require.Contains(t, s, "of 6,000 tokens")

	for _, q := range []string{"and the next question?", "one more"} {
		p.typeLine(q)
		p.waitText(fmt.Sprintf("Answer to a message of %d characters.", len(q)))
	}
	s = p.screen()
	require.NotContains(t, s, "✗")
	require.NotContains(t, s, "does not fit")
	mu.Lock()
	require.Equal(t, 1, refused, "only the request that taught the window was refused")
	mu.Unlock()
	for i, r := range srv.Requests() {
		require.NoError(t, openaitest.CheckMessageRules(r.Messages), "request %d", i)
	}
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}

// TestContextIsTheNextRequestInTmux is issue 12.5 in the real binary: the
// status bar said 64% and /context 166% while the request sent was a third
// of that. Here the view has what the policy applies (a summary block,
// masked outputs, an output cut to the cap); the status figure and
// /context's total, plus the message typed next, must be what the server
// counts in the request that follows, with the real tokenizer.
func TestContextIsTheNextRequestInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	c := tokens.New("gpt-4o-mini")
	countText := openaitest.MemoTokenizer(c.Count)
	count := func(r openaitest.Request) int { return openaitest.PromptTokens(r, countText) }
	sb := newSandbox(t)
	var calls []openaitest.ToolCall
	for i := 0; i < 6; i++ {
		name := fmt.Sprintf("f%d.txt", i)
		require.NoError(t, os.WriteFile(filepath.Join(sb.work, name), []byte(strings.Repeat(fmt.Sprintf("line of file %d\n", i), 40)), 0o600))
		calls = append(calls, openaitest.ToolCall{Name: "Read", Arguments: fmt.Sprintf(`{"file_path":%q}`, name)})
	}
	var big strings.Builder
	for i := 0; big.Len() < 7000; i++ {
		fmt.Fprintf(&big, "row %d: %x\n", i, i*7919)
	}
	require.NoError(t, os.WriteFile(filepath.Join(sb.work, "big.txt"), []byte(big.String()), 0o600))
	calls = append(calls, openaitest.ToolCall{Name: "Read", Arguments: `{"file_path":"big.txt"}`})

	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithTokenCounter(count),
		openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
			if len(r.Tools) == 0 { // the summarizer
				return openaitest.Text("## Goal\n- plan the work\n## Key decisions\n- none\n## Topics\n- the plan\n## Current state\n- talked\n## Next steps\n- read files")
			}
			return openaitest.Text("Noted.")
		}))
	srv.Enqueue(openaitest.Text("Noted the plan."), openaitest.Text("Talked it through."), openaitest.Calls(calls...), openaitest.Text("I read them all."))
	sb.useServer(srv)
	sb.writeConfig("context_window = 16384\n[summarize]\nmask_tool_outputs_after = 2\npreserve_recent = 4\n")
	p := startTUI(t, sb)
	p.waitText("Message gencode")

	p.typeLine("here is my plan: " + strings.Repeat("first this, then that. ", 30))
	p.waitText("Noted the plan.")
	p.typeLine("talk it through " + strings.Repeat("once more, slowly. ", 30))
	p.waitText("Talked it through.")
	p.typeLine("read every file here")
	p.waitText("I read them all.")
	p.typeLine("/summarize")
	p.waitText("Session Summary")

	p.typeLine("/context")
	s := p.waitFor("the /context card", func(s string) bool { return contextCard.MatchString(s) })
	m := contextCard.FindStringSubmatch(s)
	total, err := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	require.NoError(t, err)
	require.Regexp(t, `Summaries\s+[1-9]`, s)
	require.Regexp(t, `Masked tool outputs\s+[\d,]+\s+\S+\s+[1-9]\d* placeholders`, s)
	require.Contains(t, s, "1 cut to 2,048 tokens")
	require.Contains(t, statusLine(s), fmt.Sprintf("ctx %s/", short(total)), "the status bar shows what /context does")

	next := "and now?"
	n := len(srv.Requests())
	p.typeLine(next)
	p.waitFor("the next answer", func(string) bool { return len(srv.Requests()) > n })
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	require.Equal(t, next, last.Messages[len(last.Messages)-1].Content)
	typed := agent.MessageTokens(c, session.Message{Role: session.RoleUser, Content: next})
	require.Equal(t, count(last), total+typed, "/context's total is the request that follows, as the server counts it\n%s", s)
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())
}

// contextCard is /context's headline: its total and the window.
var contextCard = regexp.MustCompile(`Context · \S+ · ([\d,]+) of ([\d,]+) tokens`)

// statusLine is the status bar: the last line of the screen.
func statusLine(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	return lines[len(lines)-1]
}

// short is a token count as the status bar writes it.
func short(n int) string {
	switch {
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
