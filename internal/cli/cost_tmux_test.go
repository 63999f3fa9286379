package cli_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// TestCostInTmux is the acceptance run of the token accounting: the real
// binary in a terminal, two turns whose answers report usage (the second
// mostly served from the provider's cache), a price from the config. The
// status bar and /cost show the session's tokens and cost, /cost the last
// turn apart; after quitting, gencode sessions shows the session's total.
func TestCostInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	srv := openaitest.NewServer(t, openaitest.WithMessageRules())
	srv.Enqueue(
		openaitest.Reply{Content: "First answer.", Usage: &openai.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100}},
		openaitest.Reply{Content: "Second answer.", Usage: &openai.Usage{PromptTokens: 1500, CompletionTokens: 50, TotalTokens: 1550,
			PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 1000}}},
	)
	sb := newSandbox(t)
	sb.useServer(srv)
	// $1 a million input tokens, $0.50 cached, $2 output: turn 1 costs
	// $0.0012, turn 2 $0.0011.
	sb.writeConfig("model = \"gpt-4o-mini\"\n[pricing.\"gpt-4o-mini\"]\ninput = 1\ncached_input = 0.5\noutput = 2\n")

	p := startTUI(t, sb)
	p.waitText("Message gencode")
	p.typeLine("first question")
	p.waitText("First answer.")
	p.waitText("1.1k tok $0.0012")
	p.typeLine("second question")
	p.waitText("Second answer.")
	p.waitText("2.6k tok $0.0023")

	p.typeLine("/cost")
	s := p.waitText("Session total")
	require.Contains(t, s, "Cost · 2,650 tokens · $0.0023")
	require.Regexp(t, `Last turn\s+1\s+1,500\s+1,000\s+50\s+\$0\.0011`, s)
	require.Regexp(t, `Session total\s+2\s+2,500\s+1,000\s+150\s+\$0\.0023`, s)
	require.Regexp(t, `gpt-4o-mini\s+2\s+2,500\s+1,000\s+150\s+\$0\.0023\s+agent; \$1 / \$0\.5 / \$2`, s)
	p.keys("C-c")
	p.keys("C-c")
	require.Equal(t, 0, p.exitCode())

	res := sb.run("sessions")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, regexp.MustCompile(`(?m)^ID\s+UPDATED\s+MESSAGES\s+TOKENS\s+COST\s+DIRECTORY\s+TITLE$`), res.stdout)
	require.Regexp(t, regexp.MustCompile(`(?m)^[0-9a-f]{12}\s.*\s4\s+2650\s+\$0\.0023\s+`+regexp.QuoteMeta(sb.work)+`\s+first question$`), res.stdout)
	require.Equal(t, 1, strings.Count(res.stdout, "\n")-1, "one session")
}
