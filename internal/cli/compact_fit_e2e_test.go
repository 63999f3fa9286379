package cli_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// plantedRe finds a fact planted by fitTurn: "FACT07: the staging port is 7407".
var plantedRe = regexp.MustCompile(`FACT\d+: the [a-z ]+ is \d+`)

// fitFact is the fact of turn i.
func fitFact(i int) string {
	things := []string{"staging port", "retry limit", "build number", "cache size", "worker count"}
	return fmt.Sprintf("FACT%02d: the %s is %d", i, things[i%len(things)], 7400+i)
}

// fitTurn is a user message of about 250 tokens ending with its fact.
func fitTurn(i int, fact string) string {
	words := strings.Fields(`please review the parser module and explain how nested blocks are handled when a
closing brace is missing then check whether the lexer keeps line numbers right after a multiline
string literal and whether error messages name the file and column consistently across the
formatter the linter and the test runner so that we can decide which component should own the
position tracking in the long run without breaking the public interface that plugins already use`)
	var b strings.Builder
	fmt.Fprintf(&b, "Turn %d. ", i)
	for j := 0; j < 200; j++ {
		b.WriteString(words[(i*7+j)%len(words)] + " ")
	}
	b.WriteString("and that is all for this step.")
	if fact != "" {
		b.WriteString(" " + fact + ".")
	}
	return b.String()
}

// TestPlainServerWindowEndToEnd is issue 22's plain server, through the
// built binary: the server refuses past 6,000 tokens and has nothing to
// ask, while gencode believes gpt-4o-mini's 128k. Forty print-mode turns
// of about 250 tokens, each stating a short fact, then a question. No
// summary request is refused; all 40 facts reach the last request, through
// the narratives, or, with a summarizer that fails (500 to every summary
// request), through the deterministic summaries. (Before: 6 of 6 summary
// requests refused, three times each unchanged; 9 of 40 facts kept.)
func TestPlainServerWindowEndToEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		failing   bool
		factTurns []int
	}{
		{name: "summarizer works", factTurns: seq(1, 40)},
		{name: "summarizer fails", failing: true, factTurns: seq(1, 40)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithTokenizer(counter.Count),
				openaitest.WithContextWindow(6000, promptTokens),
				openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
					if openaitest.DefaultPurpose(r) != openaitest.PurposeSummary {
						return openaitest.Text("Noted; the review goes on.")
					}
					if tt.failing {
						return openaitest.Reply{Status: 500}
					}
					var in, b strings.Builder
					for _, m := range r.Messages {
						in.WriteString(m.Content + "\n")
					}
					b.WriteString("## Goal\n- review the parser\n## Key decisions\n")
					seen := map[string]bool{}
					for _, f := range plantedRe.FindAllString(in.String(), -1) {
						if !seen[f] {
							seen[f] = true
							fmt.Fprintf(&b, "- %s\n", f)
						}
					}
					b.WriteString("## Topics\n- position tracking\n## Current state\n- reviewing\n## Next steps\n- continue\n")
					return openaitest.Text(b.String())
				}))
			sb := newSandbox(t)
			sb.useServer(srv)
			planted := map[int]bool{}
			for _, i := range tt.factTurns {
				planted[i] = true
			}
			for i := 1; i <= 40; i++ {
				fact := ""
				if planted[i] {
					fact = fitFact(i)
				}
				args := []string{"-p", fitTurn(i, fact)}
				if i > 1 {
					args = append([]string{"-c"}, args...)
				}
				res := sb.run(args...)
				require.Equal(t, 0, res.code, "turn %d: %s", i, res.stderr)
			}
			res := sb.run("-c", "-p", "What were the facts I gave you?")
			require.Equal(t, 0, res.code, res.stderr)

			reqs, accts := srv.Requests(), srv.Accounts()
			var summaries, summaryRefused, agentRefused int
			last := -1
			for i, a := range accts {
				switch {
				case a.Purpose == openaitest.PurposeSummary:
					summaries++
					if a.Rejected != "" {
						summaryRefused++
					}
				case a.Rejected != "":
					agentRefused++
				default:
					last = i
				}
			}
			require.GreaterOrEqual(t, last, 0)
			var text strings.Builder
			for _, m := range reqs[last].Messages {
				text.WriteString(m.Content + "\n")
			}
			var lost []int
			for _, i := range tt.factTurns {
				if !strings.Contains(text.String(), fitFact(i)) {
					lost = append(lost, i)
				}
			}
			res = sb.run("history", "--json")
			require.Equal(t, 0, res.code, res.stderr)
			var h struct {
				Summaries []struct {
					Fallback bool `json:"fallback"`
				} `json:"summaries"`
			}
			require.NoError(t, json.Unmarshal([]byte(res.stdout), &h))
			fallbacks := 0
			for _, s := range h.Summaries {
				if s.Fallback {
					fallbacks++
				}
			}
			t.Logf("%s: %d requests; %d summary requests, %d refused; %d agent requests refused; %d active summaries, %d fallbacks; facts kept %d of %d, lost %v",
				tt.name, len(reqs), summaries, summaryRefused, agentRefused, len(h.Summaries), fallbacks,
				len(tt.factTurns)-len(lost), len(tt.factTurns), lost)
			require.NotEmpty(t, h.Summaries, "the session never compacted")
			require.Zero(t, summaryRefused, "summary requests refused")
			require.LessOrEqual(t, agentRefused, 1, "one refusal teaches the window for this run and the next ones (windows.json)")
			require.Empty(t, lost, "facts of these turns lost")
			if tt.failing {
				require.Equal(t, len(h.Summaries), fallbacks, "a summary with a narrative from a failing summarizer")
			} else {
				require.Zero(t, fallbacks, "a compaction fell back")
			}
		})
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}
