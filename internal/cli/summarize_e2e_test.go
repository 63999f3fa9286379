package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
	"github.com/gencode/gencode/internal/tokens"
)

// summaryModel is the summarizer's model name in these tests: the fake
// server tells its requests from the main model's by it.
const summaryModel = "summarizer-model"

// counter counts requests the way a provider would (tiktoken, o200k_base).
// Its vocabulary loads once, on first use.
var counter = tokens.New("gpt-4o-mini")

// promptTokens is what the fake provider counts for a request: the
// messages as the cookbook frames them and the tool schemas, plus 5%
// (providers count a little more than any client-side estimate).
func promptTokens(r openaitest.Request) int {
	key := string(r.Body)
	if n, ok := countCache.Load(key); ok {
		return n.(int)
	}
	n := countPrompt(r)
	countCache.Store(key, n)
	return n
}

// countCache remembers counts by request body: the server counts each
// request, and the tests check them again (tiktoken is slow under -race).
var countCache sync.Map

func countPrompt(r openaitest.Request) int {
	return openaitest.PromptTokens(r, countText) * 105 / 100
}

// countText is counter.Count remembering each text: a request repeats the
// messages of the one before.
var countText = openaitest.MemoTokenizer(counter.Count)

var factRe = regexp.MustCompile(`FACT-[A-Z0-9-]+`)

// summarize answers a summarizer request as a faithful model would: the
// five headings, every FACT-... of its input kept.
func summarize(r openaitest.Request) openaitest.Reply {
	var in strings.Builder
	for _, m := range r.Messages {
		in.WriteString(m.Content)
	}
	var b strings.Builder
	b.WriteString("## Goal\n- grow the notes project turn by turn\n## Key decisions\n")
	seen := map[string]bool{}
	for _, f := range factRe.FindAllString(in.String(), -1) {
		if !seen[f] {
			seen[f] = true
			fmt.Fprintf(&b, "- the user said: remember %s\n", f)
		}
	}
	b.WriteString("## Topics\n- notes files\n- shell commands\n## Current state\n- every turn wrote a note and ran a command\n## Next steps\n- continue with the next turn\n")
	return openaitest.Reply{Content: b.String()}
}

// writeConfig writes the sandbox's config file.
func (s *sandbox) writeConfig(text string) {
	s.t.Helper()
	dir := filepath.Join(s.home, ".config", "gencode")
	require.NoError(s.t, os.MkdirAll(dir, 0o700))
	require.NoError(s.t, os.WriteFile(filepath.Join(dir, "config.toml"), []byte(text), 0o600))
}

// openStore opens the sandbox's session database (the binary must not be
// running); a new one is a copy of an empty store migrated once per test
// binary (sessiontest.OpenIn), not migrated again under -race.
func (s *sandbox) openStore() *session.Store {
	s.t.Helper()
	return sessiontest.OpenIn(s.t, filepath.Join(s.home, ".local", "share", "gencode"))
}

func isSummarizer(r openaitest.Request) bool { return r.Model == summaryModel }

// TestLongSessionStaysInsideTheWindow is acceptance 1: 80 print-mode turns,
// each writing a file and running a command, against a strict provider with
// a 6,000-token window. No request may exceed the window or break the
// message rules, summaries must be applied, every original must stay in the
// log, and a fact stated in turn 3 must still reach the model at the end,
// through the summary.
func TestLongSessionStaysInsideTheWindow(t *testing.T) {
	t.Parallel()
	const window, turns = 6000, 80
	var turn atomic.Int64
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithContextWindow(window, promptTokens),
		openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
			if isSummarizer(r) {
				return summarize(r)
			}
			n := turn.Load()
			if last := r.Messages[len(r.Messages)-1]; last.Role == openai.ChatMessageRoleTool {
				return openaitest.Text(fmt.Sprintf("Turn %d done: note written, command run.", n))
			}
			write, _ := json.Marshal(map[string]string{"file_path": fmt.Sprintf("notes/turn%03d.md", n),
				"content": fmt.Sprintf("# Turn %d\nA short note for turn %d.\n", n, n)})
			bash, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("wc -l notes/turn%03d.md", n)})
			return openaitest.Calls(openaitest.ToolCall{Name: "Write", Arguments: string(write)},
				openaitest.ToolCall{Name: "Bash", Arguments: string(bash)})
		}))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
	// Its subject is the window: no sandbox helper (a gencode started again per
	// Bash call) and no checkpoints, which have their own tests (sandbox_e2e,
	// rewind_e2e).
	sb.writeConfig(fmt.Sprintf("context_window = %d\n[sandbox]\nenabled = false\n[rewind]\nenabled = false\n", window))

	var compactions int
	for i := 1; i <= turns; i++ {
		turn.Store(int64(i))
		prompt := fmt.Sprintf("Turn %d: write the note for turn %d and count its lines.", i, i)
		if i == 3 {
			prompt += " For later: the project codename is FACT-BLUEFALCON."
		}
		args := []string{"-p", prompt, "--allow", "Write,Bash"}
		if i > 1 {
			args = append([]string{"-c"}, args...)
		}
		res := sb.run(args...)
		require.Equal(t, 0, res.code, "turn %d: stderr: %s", i, res.stderr)
		require.Equal(t, fmt.Sprintf("Turn %d done: note written, command run.\n", i), res.stdout)
		compactions += strings.Count(res.stderr, "gencode: compacted messages")
	}

	var main []openaitest.Request
	for _, r := range srv.Requests() {
		n := promptTokens(r)
		require.LessOrEqual(t, n, window, "a %s request of %d tokens exceeds the window", r.Model, n)
		if !isSummarizer(r) {
			require.NoError(t, openaitest.CheckMessageRules(r.Messages))
			main = append(main, r)
		}
	}
	require.Len(t, main, 2*turns, "every turn made exactly two requests: none was refused and retried")
	require.Positive(t, compactions, "no compaction was reported")

	st := sb.openStore()
	defer st.Close()
	sess, err := st.LatestSession(context.Background(), sb.work)
	require.NoError(t, err)
	msgs, err := st.Messages(context.Background(), sess.ID, 1, 0)
	require.NoError(t, err)
	require.Len(t, msgs, 5*turns, "every original message is in the log")
	users := 0
	for _, m := range msgs {
		if m.Role == session.RoleUser {
			users++
			require.True(t, strings.HasPrefix(m.Content, fmt.Sprintf("Turn %d:", users)), "message %d: %q", m.Seq, m.Content)
		}
	}
	sums, err := st.Summaries(context.Background(), sess.ID, true)
	require.NoError(t, err)
	require.NotEmpty(t, sums)
	for _, s := range sums {
		require.False(t, s.Fallback, "summary %d-%d fell back: %s", s.FromSeq, s.ToSeq, s.FallbackReason)
	}
	last := main[len(main)-1]
	require.Contains(t, summariesSent(last), "FACT-BLUEFALCON", "the turn-3 fact is gone from the final request")
	require.NotContains(t, last.Messages[0].Content, "Earlier in this session", "the system prompt stays as it was")
	for _, m := range last.Messages[1:] {
		require.False(t, strings.HasPrefix(m.Content, "Turn 3:"), "turn 3 itself was not summarized")
	}
	t.Logf("%d main requests, %d summarizer requests, %d summaries (%d active), %d compactions reported; final request %d tokens",
		len(main), len(srv.Requests())-len(main), len(sums), countActive(sums), compactions, promptTokens(last))
}

func countActive(sums []session.Summary) int {
	n := 0
	for _, s := range sums {
		if s.SupersededBy == "" {
			n++
		}
	}
	return n
}

// seedSession creates a session in the sandbox's working directory with n
// finished turns (a request, a Bash call with lines*2 lines of output, an
// answer), written straight to the log with real token counts.
func (s *sandbox) seedSession(n, lines int) (string, []session.Message) {
	s.t.Helper()
	st := s.openStore()
	defer st.Close()
	sess, err := st.CreateSession(context.Background(), s.work, "gpt-4o-mini")
	require.NoError(s.t, err)
	var msgs []session.Message
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("call_seed_%d", i)
		cmd := fmt.Sprintf("go test ./pkg/p%d", i)
		args, _ := json.Marshal(map[string]string{"command": cmd})
		var out strings.Builder
		for j := 0; j < lines; j++ {
			fmt.Fprintf(&out, "=== RUN TestP%d_%d\n--- PASS: TestP%d_%d (0.00s)\n", i, j, i, j)
		}
		exit := 0
		user := fmt.Sprintf("Turn %d: run the tests of package p%d.", i, i)
		if i == 3 {
			user += " For later: the project codename is FACT-BLUEFALCON."
		}
		msgs = append(msgs,
			session.Message{Role: session.RoleUser, Content: user},
			session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: id, Name: "Bash", Arguments: string(args)}}},
			session.Message{Role: session.RoleTool, ToolCallID: id, Name: "Bash", Content: out.String(),
				Meta: session.Meta{Tool: "Bash", Command: cmd, ExitCode: &exit}},
			session.Message{Role: session.RoleAssistant, Content: fmt.Sprintf("The tests of p%d pass.", i)},
		)
	}
	for i := range msgs {
		msgs[i].Tokens = agent.MessageTokens(counter, msgs[i])
	}
	out, err := st.Append(context.Background(), sess.ID, msgs...)
	require.NoError(s.t, err)
	return sess.ID, out
}

// TestOverTheWindowAlready is acceptance 3: a session already larger than
// the window (it grew under a large one; now context_window is 6,000), and
// a tool output larger than the window within the turn. The next turn
// compacts, in chunks where the summarizer's own window needs it, and
// succeeds without a refused request.
func TestOverTheWindowAlready(t *testing.T) {
	t.Parallel()
	t.Run("switched to a smaller window", func(t *testing.T) {
		t.Parallel()
		const window, summaryWindow = 6000, 8192 // the table's default for an unknown model
		srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithContextWindow(summaryWindow, promptTokens),
			openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
				if isSummarizer(r) {
					return summarize(r)
				}
				return openaitest.Text("Next: package p41.")
			}))
		sb := newSandbox(t).withRace()
		sb.useServer(srv)
		sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
		_, seeded := sb.seedSession(40, 25)
		total := 0
		for _, m := range seeded {
			total += m.Tokens
		}
		require.Greater(t, total, 4*window, "the seeded session must be far past the new window")
		sb.writeConfig(fmt.Sprintf("context_window = %d\n", window))

		res := sb.run("-c", "-p", "Turn 41: what is next?")
		require.Equal(t, 0, res.code, res.stderr)
		require.Equal(t, "Next: package p41.\n", res.stdout)
		var main, sum []openaitest.Request
		for _, r := range srv.Requests() {
			if isSummarizer(r) {
				sum = append(sum, r)
			} else {
				main = append(main, r)
			}
		}
		require.Len(t, main, 1, "the request was sent once, compacted before")
		require.LessOrEqual(t, promptTokens(main[0]), window)
		require.Contains(t, summariesSent(main[0]), "FACT-BLUEFALCON")
		require.GreaterOrEqual(t, len(sum), 3, "chunks and a merge")
		for _, r := range sum {
			require.LessOrEqual(t, promptTokens(r)+r.MaxTokens, summaryWindow)
		}
		st := sb.openStore()
		defer st.Close()
		sess, err := st.LatestSession(context.Background(), sb.work)
		require.NoError(t, err)
		sums, err := st.Summaries(context.Background(), sess.ID, false)
		require.NoError(t, err)
		require.Len(t, sums, 1)
		require.False(t, sums[0].Fallback, sums[0].FallbackReason)
		require.GreaterOrEqual(t, sums[0].Chunks, 2)
		t.Logf("%d seeded tokens; %d summarizer requests; summary of messages %d-%d in %d chunks; request %d tokens",
			total, len(sum), sums[0].FromSeq, sums[0].ToSeq, sums[0].Chunks, promptTokens(main[0]))
	})
	t.Run("one tool output larger than the window", func(t *testing.T) {
		t.Parallel()
		const window = 6000
		srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithContextWindow(window, promptTokens),
			openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
				if isSummarizer(r) {
					return summarize(r)
				}
				if r.Messages[len(r.Messages)-1].Role == openai.ChatMessageRoleUser {
					return openaitest.Calls(openaitest.ToolCall{Name: "Bash", Arguments: `{"command":"seq 1 60000"}`})
				}
				return openaitest.Text("It printed 60000 numbers.")
			}))
		sb := newSandbox(t).withRace()
		sb.useServer(srv)
		sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
		sb.writeConfig(fmt.Sprintf("context_window = %d\n", window))
		sb.seedSession(8, 10)
		res := sb.run("-c", "-p", "Count to 60000.", "--allow", "Bash")
		require.Equal(t, 0, res.code, res.stderr)
		require.Equal(t, "It printed 60000 numbers.\n", res.stdout)
		for _, r := range srv.Requests() {
			require.LessOrEqual(t, promptTokens(r), window)
		}
		var last openaitest.Request
		for _, r := range srv.Requests() {
			if !isSummarizer(r) {
				last = r
			}
		}
		out := last.Messages[len(last.Messages)-1].Content
		require.Contains(t, out, "the whole output is message")
		require.True(t, strings.HasPrefix(out, "1\n2\n3\n"))
	})
}

// TestKilledDuringCompaction is acceptance 5: `gencode summarize` is killed
// (SIGKILL) at several points: while starting, while the summarizer
// answers, and around the moment its answer is applied. After each kill
// the database opens, every message is there unchanged, each summary is
// whole, and the session goes on.
func TestKilledDuringCompaction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// killAt kills that long after the start; else killAfter after the
		// summarizer request arrived.
		killAt, killAfter time.Duration
		summarizerDelay   time.Duration
	}{
		{name: "starting", killAt: 30 * time.Millisecond},
		{name: "loading", killAt: 150 * time.Millisecond},
		{name: "waiting for the summarizer", killAfter: 100 * time.Millisecond, summarizerDelay: time.Second},
		{name: "answer arriving", killAfter: 0},
		{name: "answer +1ms", killAfter: time.Millisecond},
		{name: "answer +3ms", killAfter: 3 * time.Millisecond},
		{name: "answer +8ms", killAfter: 8 * time.Millisecond},
		{name: "answer +20ms", killAfter: 20 * time.Millisecond},
		{name: "answer +60ms", killAfter: 60 * time.Millisecond},
	}
	var applied atomic.Int64
	t.Cleanup(func() {
		t.Logf("%d kills, %d left a whole summary, %d none", len(tests), applied.Load(), int64(len(tests))-applied.Load())
	})
	// Each kill has its own data directory and server: they run at once.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			arrived := make(chan struct{}, 64)
			srv := openaitest.NewServer(t, openaitest.WithMessageRules(),
				openaitest.WithRequestHook(func(r openaitest.Request) {
					if isSummarizer(r) {
						select {
						case arrived <- struct{}{}:
						default:
						}
					}
				}),
				openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
					if isSummarizer(r) {
						rep := summarize(r)
						rep.Delay = tt.summarizerDelay
						return rep
					}
					return openaitest.Text("continued")
				}))
			sb := newSandbox(t).withRace()
			sb.useServer(srv)
			sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
			id, seeded := sb.seedSession(24, 4)
			cmd := sb.command(context.Background(), "summarize", "--session", id)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			if tt.killAt > 0 {
				time.Sleep(tt.killAt)
			} else {
				select {
				case <-arrived:
				case <-time.After(60 * time.Second):
					_ = cmd.Process.Kill()
					t.Fatalf("the summarizer request never came")
				}
				time.Sleep(tt.killAfter)
			}
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			_ = cmd.Wait()
			require.Empty(t, sb.raced(stderr.String()), "a data race before the kill")

			st := sb.openStore()
			msgs, err := st.Messages(context.Background(), id, 1, 0)
			require.NoError(t, err)
			require.Equal(t, withoutTimes(seeded), withoutTimes(msgs), "the log changed")
			sums, err := st.Summaries(context.Background(), id, true)
			require.NoError(t, err)
			require.LessOrEqual(t, len(sums), 1)
			for _, s := range sums {
				applied.Add(1)
				require.EqualValues(t, 1, s.FromSeq)
				require.Positive(t, s.TokenCount)
				require.NotEmpty(t, s.Commands, "a summary without its facts")
				require.Contains(t, s.Content, "## Goal", "a summary without its narrative")
			}
			_, err = st.LoadView(context.Background(), id)
			require.NoError(t, err)
			require.NoError(t, st.Close())

			res := sb.run("-r", id, "-p", "go on")
			require.Equal(t, 0, res.code, res.stderr)
			require.Equal(t, "continued\n", res.stdout)
		})
	}
}

// TestSecretsNeverReachTheSummarizer is acceptance 7 end to end: the
// secrets of the corpus, said by the user, passed to a command and printed
// by it, reach neither a summarizer request nor a stored summary.
func TestSecretsNeverReachTheSummarizer(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "redact", "testdata", "secrets.json"))
	require.NoError(t, err)
	var corpus struct {
		Secrets []struct{ Name, Text, Secret string } `json:"secrets"`
	}
	require.NoError(t, json.Unmarshal(b, &corpus))
	require.GreaterOrEqual(t, len(corpus.Secrets), 20)

	srv := openaitest.NewServer(t, openaitest.WithResponder(func(r openaitest.Request) openaitest.Reply {
		// A summarizer that repeats everything it was sent, line by line
		// under two headings (a bare echo of the prompt is rejected).
		var in strings.Builder
		in.WriteString("## Goal\n- deploy\n## Current state\n")
		total := 0
		for _, m := range r.Messages[1:] {
			total += len(m.Content)
			for _, line := range strings.Split(m.Content, "\n") {
				if line = transcriptMark.ReplaceAllString(line, ""); line != "" && !strings.HasPrefix(line, "<") {
					in.WriteString("- " + line + "\n")
				}
			}
		}
		return openaitest.Reply{Content: in.String()[:min(in.Len(), total/3, 12000)]}
	}))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
	st := sb.openStore()
	sess, err := st.CreateSession(context.Background(), sb.work, "gpt-4o-mini")
	require.NoError(t, err)
	for i, s := range corpus.Secrets {
		id := fmt.Sprintf("call_%d", i)
		args, _ := json.Marshal(map[string]string{"command": "deploy --token-file - <<< '" + s.Text + "'"})
		_, err := st.Append(context.Background(), sess.ID,
			session.Message{Role: session.RoleUser, Content: "Deploy with this: " + s.Text, Tokens: 40},
			session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: id, Name: "Bash", Arguments: string(args)}}, Tokens: 40},
			session.Message{Role: session.RoleTool, ToolCallID: id, Name: "Bash", Content: "config:\n" + s.Text + "\ndeployed", Tokens: 40},
			session.Message{Role: session.RoleAssistant, Content: "Deployed.", Tokens: 5})
		require.NoError(t, err)
	}
	require.NoError(t, st.Close())

	res := sb.run("summarize", "--session", sess.ID)
	require.Equal(t, 0, res.code, res.stderr)
	require.NotEmpty(t, srv.Requests())
	st = sb.openStore()
	defer st.Close()
	sums, err := st.Summaries(context.Background(), sess.ID, true)
	require.NoError(t, err)
	require.NotEmpty(t, sums)
	for _, sum := range sums {
		require.False(t, sum.Fallback, "the narrative is stored: %s", sum.FallbackReason)
	}
	for _, s := range corpus.Secrets {
		// The raw body: message text, tool calls' arguments, anything sent,
		// as sent (JSON-escaped) and unescaped.
		escaped, err := json.Marshal(s.Secret)
		require.NoError(t, err)
		for _, r := range srv.Requests() {
			require.NotEmpty(t, r.Body)
			require.NotContains(t, string(r.Body), s.Secret, "%s reached the summarizer", s.Name)
			require.NotContains(t, string(r.Body), string(escaped[1:len(escaped)-1]), "%s reached the summarizer (JSON-escaped)", s.Name)
			for _, m := range r.Messages {
				require.NotContains(t, m.Content, s.Secret, "%s reached the summarizer", s.Name)
				for _, c := range m.ToolCalls {
					require.NotContains(t, c.Function.Arguments, s.Secret, "%s reached the summarizer in a call's arguments", s.Name)
				}
			}
		}
		for _, sum := range sums {
			require.NotContains(t, summaryText(sum), s.Secret, "%s was stored in a summary", s.Name)
		}
		require.NotContains(t, res.stdout, s.Secret, "%s was printed in the report", s.Name)
	}
}

// transcriptMark is the head of a transcript line of a summarizer prompt.
var transcriptMark = regexp.MustCompile(`^\s*\[\d+\] [A-Z][^:]*:`)

// summariesSent is the summaries a request carries: the user messages
// after the system prompt that hold one.
func summariesSent(r openaitest.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		if m.Role == "user" && strings.HasPrefix(m.Content, "# Earlier in this session: summary of messages") {
			b.WriteString(m.Content + "\n")
		}
	}
	return b.String()
}

// withoutTimes drops what the database rounds (times, to milliseconds).
func withoutTimes(msgs []session.Message) []session.Message {
	out := make([]session.Message, len(msgs))
	for i, m := range msgs {
		m.Time = time.Time{}
		out[i] = m
	}
	return out
}

// summaryText is every text a summary stores.
func summaryText(s session.Summary) string {
	parts := []string{s.Content, s.Goal, s.CurrentState, s.LastUserRequest, s.Focus, s.FallbackReason}
	for _, list := range [][]string{s.KeyDecisions, s.Topics, s.NextSteps, s.FilesModified, s.FilesRead,
		s.Commands, s.UserConstraints, s.UserRequests, s.SystemNotes} {
		parts = append(parts, list...)
	}
	for _, u := range s.ToolsUsed {
		parts = append(parts, u.NotableUses...)
	}
	return strings.Join(parts, "\n")
}

// TestSummarizeCommand runs `gencode summarize` as a user would: a report
// the first time, "nothing to summarize" the second, and a clear error
// where there is no session.
func TestSummarizeCommand(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithResponder(summarize))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.env["GENCODE_SUMMARY_MODEL"] = summaryModel
	id, _ := sb.seedSession(12, 3)

	res := sb.run("summarize", "--focus", "the test runs")
	require.Equal(t, 0, res.code, res.stderr)
	for _, want := range []string{
		"Session Summary · " + id + " · messages 1-", "Messages: 48 → ", "Tokens: ", "Commands run (",
		"  • go test ./pkg/p1\n", "took ", "written by " + summaryModel, "## Goal", "FACT-BLUEFALCON",
		"Whole session (48 messages)", "12 shell commands run (12 distinct)",
	} {
		require.Contains(t, res.stdout, want)
	}
	require.Contains(t, srv.Requests()[0].Messages[1].Content, `focus on: "the test runs"`)

	res = sb.run("summarize", "--session", id[:5])
	require.Equal(t, 0, res.code, res.stderr)
	require.True(t, strings.HasPrefix(res.stdout, "Nothing to summarize in session "+id+": "), res.stdout)
	// Too short to compact, the session still gets its facts.
	require.Contains(t, res.stdout, "Whole session (48 messages)")
	require.Contains(t, res.stdout, "12 shell commands run (12 distinct)")

	empty := filepath.Join(sb.home, "elsewhere")
	require.NoError(t, os.MkdirAll(empty, 0o755))
	res = sb.runIn(empty, "", "summarize")
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "no session in")
}
