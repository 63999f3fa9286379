package cli_test

import (
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// windowFacts are planted early, in the middle and late in a 40-turn
// session; the recall at the end must find all of them.
var windowFacts = map[int]string{3: "FACT-EARLY-AZURE-7341", 20: "FACT-MIDDLE-COPPER-2719", 37: "FACT-LATE-SAFFRON-5083"}

// windowTurn is turn i's prompt: about 250 tokens of ordinary request, and
// a fact to remember on the turns that plant one.
func windowTurn(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Turn %d of the storage refactor. ", i)
	if f, ok := windowFacts[i]; ok {
		fmt.Fprintf(&b, "Remember this for later, it matters: %s. ", f)
	}
	for k := 0; b.Len() < 1100; k++ {
		fmt.Fprintf(&b, "Step %d.%d: move the writer behind the lease, keep the reader lock-free, and log the timings. ", i, k)
	}
	return b.String()
}

// recallResponder plays a model that answers only from what it saw: a
// recall lists the facts in its prompt (Seen: after a server's cut),
// a summary request keeps the facts it saw, any other turn is short.
func recallResponder(turns *atomic.Int64) func(openaitest.Request) openaitest.Reply {
	return func(r openaitest.Request) openaitest.Reply {
		seen := r.SeenText()
		if openaitest.DefaultPurpose(r) == openaitest.PurposeSummary {
			var b strings.Builder
			b.WriteString("## Goal\n- refactor the storage layer\n## Key decisions\n")
			for _, f := range dedupe(factRe.FindAllString(seen, -1)) {
				fmt.Fprintf(&b, "- the user said: remember %s\n", f)
			}
			b.WriteString("## Topics\n- storage\n## Current state\n- turns done\n## Next steps\n- next turn\n")
			return openaitest.Text(b.String())
		}
		last := r.Seen[len(r.Seen)-1]
		if strings.HasPrefix(last.Content, "recall") {
			facts := dedupe(factRe.FindAllString(seen, -1))
			return openaitest.Text("I recall: " + strings.Join(facts, ", ") + ".")
		}
		return openaitest.Text(fmt.Sprintf("Done with turn %d.", turns.Add(1)))
	}
}

func dedupe(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// TestWindowOfRealServers is issue 22's acceptance: a server whose window
// (4096) is far below what gencode's table says for the model (32k),
// emulated from its source: Ollama cuts silently, llama.cpp and vLLM
// refuse. 40 print-mode turns with facts planted early, in the middle and
// late, then a recall: every fact comes back, and the request the recall
// was answered from holds them all. Ollama cuts no request (gencode asked
// it first: its default window before the model loads, /api/ps after),
// and llama.cpp and vLLM refuse no agent request.
func TestWindowOfRealServers(t *testing.T) {
	t.Parallel()
	const model = "qwen2.5-coder:7b"
	tests := []struct {
		name   string
		flavor openaitest.Flavor
		// source is what gencode says of the window on the first turn.
		source string
	}{
		{"Ollama", openaitest.Ollama, "Ollama, default"},
		{"llama.cpp", openaitest.LlamaCpp, "llama.cpp"},
		{"vLLM", openaitest.VLLM, "vLLM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var turns atomic.Int64
			srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithModels(model),
				openaitest.WithTokenizer(counter.Count),
				openaitest.WithEmulation(openaitest.Emulation{Flavor: tt.flavor, Window: 4096, Trained: 32768}),
				openaitest.WithResponder(recallResponder(&turns)))
			sb := newSandbox(t)
			sb.useServer(srv)
			sb.env["GENCODE_MODEL"] = model
			for i := 1; i <= 40; i++ {
				args := []string{"-p", windowTurn(i)}
				if i > 1 {
					args = append([]string{"-c"}, args...)
				}
				res := sb.run(args...)
				require.Equal(t, 0, res.code, "turn %d: %s", i, res.stderr)
				if i == 1 {
					require.Contains(t, res.stderr, "is 4,096 tokens ("+tt.source+"), not 32,768", "the window, said on the first turn")
				} else {
					require.NotContains(t, res.stderr, "the server's context window", "said once, on the session's first turn")
				}
				require.NotContains(t, res.stderr, "the server cut the prompt", "turn %d", i)
			}
			res := sb.run("-c", "-p", "recall every fact I asked you to remember")
			require.Equal(t, 0, res.code, res.stderr)
			for _, f := range windowFacts {
				require.Contains(t, res.stdout, f, "recalled")
			}
			reqs := srv.Requests()
			final := reqs[len(reqs)-1]
			for _, f := range windowFacts {
				require.Contains(t, final.SeenText(), f, "the recall was answered from a request that held the fact")
			}

			bill := openaitest.Total(srv.Accounts())
			t.Logf("%s: %d requests (%d summaries), %d cut, %d refused (%d of them summaries)",
				tt.name, bill.Requests, bill.SummaryRequests, bill.Cut, bill.OverWindow, bill.SummaryOverWindow)
			require.Zero(t, bill.Cut, "no request cut: the window was asked first")
			require.Zero(t, bill.OverWindow-bill.SummaryOverWindow, "no agent request refused: the window was asked first")
			require.Zero(t, bill.SummaryOverWindow, "no summary request refused")
		})
	}
}

// TestOllamaSilentCutIsCaught: an Ollama before v0.10 (its /api/ps has no
// context_length) started with OLLAMA_CONTEXT_LENGTH=2048, below the
// default gencode assumes while it cannot ask. When the history outgrows
// 2048 the server cuts the prompt without an error; gencode sees the
// shortfall in prompt_tokens, says so, learns the window, compacts, and
// asks again: at most one agent request is cut in the whole run, and
// every fact is recalled.
func TestOllamaSilentCutIsCaught(t *testing.T) {
	t.Parallel()
	const model = "qwen2.5-coder:7b"
	var turns atomic.Int64
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithModels(model),
		openaitest.WithTokenizer(counter.Count),
		openaitest.WithEmulation(openaitest.Emulation{Flavor: openaitest.Ollama, Window: 2048, Trained: 32768, Version: "0.9.6"}),
		openaitest.WithResponder(recallResponder(&turns)))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_MODEL"] = model
	said := 0
	for i := 1; i <= 40; i++ {
		args := []string{"-p", windowTurn(i)}
		if i > 1 {
			args = append([]string{"-c"}, args...)
		}
		res := sb.run(args...)
		require.Equal(t, 0, res.code, "turn %d: %s", i, res.stderr)
		if strings.Contains(res.stderr, "the server cut the prompt without an error") {
			said++
			require.Contains(t, res.stderr, "asking again", "turn %d", i)
		}
	}
	res := sb.run("-c", "-p", "recall every fact I asked you to remember")
	require.Equal(t, 0, res.code, res.stderr)
	for _, f := range windowFacts {
		require.Contains(t, res.stdout, f, "recalled")
	}
	var agentCut, summaryCut int
	for _, a := range srv.Accounts() {
		switch {
		case a.Dropped == 0:
		case a.Purpose == openaitest.PurposeAgent:
			agentCut++
		default:
			summaryCut++
		}
	}
	t.Logf("cut: %d agent requests, %d summary requests; said %d times", agentCut, summaryCut, said)
	require.Positive(t, said, "the cut was seen and said")
	require.LessOrEqual(t, agentCut, said, "every cut agent request was caught")
	require.LessOrEqual(t, agentCut, 1, "at most one agent request cut in the whole run")
	require.Zero(t, summaryCut, "no summary request cut: the summarizer plans with the window the agent learned")
}

// TestOllamaWindowInTmux: the TUI on the session Ollama served shows the
// window and its source in /context and the status bar, and says how to
// raise it once.
func TestOllamaWindowInTmux(t *testing.T) {
	t.Parallel()
	needTmux(t)
	const model = "qwen2.5-coder:7b"
	var turns atomic.Int64
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithModels(model),
		openaitest.WithTokenizer(counter.Count),
		openaitest.WithEmulation(openaitest.Emulation{Flavor: openaitest.Ollama, Window: 4096, Trained: 32768, Preloaded: true}),
		openaitest.WithResponder(recallResponder(&turns)))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_MODEL"] = model
	p := startTUI(t, sb)
	p.waitText("Message gencode")
	// The server is asked for its window when the agent is made; until it
	// answers (a first turn waits for it, /context does not), /context
	// shows the configured window: ask again until it shows the server's.
	var s string
	for range 50 {
		p.typeLine("/context")
		s = p.waitFor("/context", func(s string) bool { return strings.Contains(s, "Window: ") || strings.Contains(s, " tokens (") })
		if strings.Contains(s, "Window: 4,096 tokens (Ollama, loaded)") {
			break
		}
		p.keys("Escape")
		time.Sleep(100 * time.Millisecond)
	}
	s = p.waitText("Window: 4,096 tokens (Ollama, loaded)")
	require.Contains(t, s, "of 4,096 tokens")
	p.keys("Escape")
	p.typeLine(windowTurn(1))
	s = p.waitText("Done with turn 1.")
	require.Regexp(t, regexp.MustCompile(`ctx [\d.]+k?/4\.1k \d+% \(Ollama\)`), s)
	require.Contains(t, s, "OLLAMA_CONTEXT_LENGTH=32768 ollama serve")
}
