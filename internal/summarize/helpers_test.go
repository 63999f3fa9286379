package summarize

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/facts"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
	"github.com/gencode/gencode/internal/view"
)

// charCounter counts a token per 4 bytes: cheap and close enough for the
// policy tests (the CLI's tokenizer is exercised in its own tests).
type charCounter struct{}

func (charCounter) Count(s string) int { return (len(s) + 3) / 4 }

// fakeLLM is a hand-written summarizer: it records requests and answers
// with answer (default: echoSummary). With gate set each call waits for it.
type fakeLLM struct {
	mu     sync.Mutex
	reqs   []Request
	answer func(Request) (Completion, error)
	gate   chan struct{}
}

func (f *fakeLLM) Complete(ctx context.Context, req Request) (Completion, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	answer, gate := f.answer, f.gate
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return Completion{}, ctx.Err()
		}
	}
	if answer == nil {
		return Completion{Text: echoSummary(req)}, nil
	}
	return answer(req)
}

func (f *fakeLLM) requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.reqs...)
}

var factRe = regexp.MustCompile(`FACT-[A-Z0-9-]+`)

// echoSummary is what a good summarizer would write: the five headings,
// and every FACT-... token of its input kept as a decision, so tests can
// follow a fact through chunks and merges.
func echoSummary(req Request) string {
	facts := factRe.FindAllString(req.text(), -1)
	seen := map[string]bool{}
	var b strings.Builder
	b.WriteString("## Goal\n- build the project step by step\n## Key decisions\n")
	for _, f := range facts {
		if !seen[f] {
			seen[f] = true
			fmt.Fprintf(&b, "- remember %s\n", f)
		}
	}
	b.WriteString("## Topics\n- files and commands\n## Current state\n- work in progress\n## Next steps\n- continue\n")
	return b.String()
}

// text is everything a request sends.
func (r Request) text() string {
	var b strings.Builder
	b.WriteString(r.System + "\n")
	for _, m := range r.Conversation {
		b.WriteString(m.Content + "\n")
		for _, c := range m.ToolCalls {
			b.WriteString(c.Arguments + "\n")
		}
	}
	b.WriteString(r.Prompt)
	return b.String()
}

func openStore(t testing.TB) *session.Store {
	t.Helper()
	st := sessiontest.Open(t)
	return st
}

// logBuilder appends realistic turns to a session.
type logBuilder struct {
	t     testing.TB
	store *session.Store
	id    string
	calls int
}

func newLog(t testing.TB, store *session.Store) *logBuilder {
	t.Helper()
	sess, err := store.CreateSession(context.Background(), "/w", "gpt-4o-mini")
	require.NoError(t, err)
	return &logBuilder{t: t, store: store, id: sess.ID}
}

func (l *logBuilder) add(msgs ...session.Message) []session.Message {
	l.t.Helper()
	for i := range msgs {
		if msgs[i].Tokens == 0 {
			msgs[i].Tokens = charCounter{}.Count(msgs[i].Content) + 4
			for _, c := range msgs[i].ToolCalls {
				msgs[i].Tokens += charCounter{}.Count(c.Arguments) + 4
			}
		}
	}
	out, err := l.store.Append(context.Background(), l.id, msgs...)
	require.NoError(l.t, err)
	return out
}

// call is one tool call of a turn and its result.
type call struct {
	name, args, output string
	meta               session.Meta
}

func writeCall(path, content string) call {
	a, _ := json.Marshal(map[string]string{"file_path": path, "content": content})
	return call{name: "Write", args: string(a), output: "wrote " + path, meta: session.Meta{Tool: "Write", FilePath: path}}
}

func bashCall(cmd, output string, exit int) call {
	a, _ := json.Marshal(map[string]string{"command": cmd})
	return call{name: "Bash", args: string(a), output: output, meta: session.Meta{Tool: "Bash", Command: cmd, ExitCode: &exit, Failed: exit != 0}}
}

// turn appends a user request, one assistant message making the calls,
// their results, and a final answer.
func (l *logBuilder) turn(user string, calls ...call) {
	l.t.Helper()
	msgs := []session.Message{{Role: session.RoleUser, Content: user}}
	if len(calls) > 0 {
		a := session.Message{Role: session.RoleAssistant, Content: "Working on it."}
		var results []session.Message
		for _, c := range calls {
			l.calls++
			id := fmt.Sprintf("call_%d", l.calls)
			a.ToolCalls = append(a.ToolCalls, session.ToolCall{ID: id, Name: c.name, Arguments: c.args})
			results = append(results, session.Message{Role: session.RoleTool, ToolCallID: id, Name: c.name, Content: c.output, Meta: c.meta})
		}
		msgs = append(msgs, a)
		msgs = append(msgs, results...)
	}
	msgs = append(msgs, session.Message{Role: session.RoleAssistant, Content: "Done: " + firstLine(user, 60)})
	l.add(msgs...)
}

func (l *logBuilder) view() session.View {
	l.t.Helper()
	v, err := l.store.LoadView(context.Background(), l.id)
	require.NoError(l.t, err)
	return v
}

// allMessages is every message of the log, summarized or not.
func (l *logBuilder) allMessages() []session.Message {
	l.t.Helper()
	msgs, err := l.store.Messages(context.Background(), l.id, 1, 0)
	require.NoError(l.t, err)
	return msgs
}

// testFixedCost is what the tests' policies count for the system prompt
// and the tool schemas.
const testFixedCost = 300

// testPolicy is a test summarizer's view policy: cfg's window and masking,
// counter's counts through the one formula, fixed for the head.
func testPolicy(counter Counter, cfg Config, fixed int) *view.Policy {
	return view.NewPolicy(view.Config{Window: cfg.Window, Overhead: fixed, MaskAfter: cfg.MaskToolOutputsAfter,
		Count: func(m session.Message) int { return view.MessageTokens(counter.Count, m) }})
}

// newSummarizer is New with testPolicy.
func newSummarizer(store LogStore, llm Completer, counter Counter, cfg Config) *Summarizer {
	return New(store, llm, counter, testPolicy(counter, cfg, testFixedCost), cfg)
}

// testConfig is a small-window policy for tests.
func testConfig(window int) Config {
	c := DefaultConfig()
	c.Window = window
	c.Model = "summarizer"
	c.RetryBackoff = 1
	return c
}

// viewTokens is what Prepare is told: fixed cost plus the view.
func viewTokens(s *Summarizer, v session.View) int {
	return s.View().Tokens(v)
}

// windowAt returns the window in which the session's view takes ratio of
// it, so that tests hit a threshold whatever the seeded sizes.
func windowAt(l *logBuilder, ratio float64) int {
	s := newSummarizer(l.store, &fakeLLM{}, charCounter{}, testConfig(100000))
	defer s.Close()
	return int(float64(viewTokens(s, l.view())) / ratio)
}

// firstLine is facts' one-line form of a request, as the tests' turns end.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	return facts.Clip(s, n)
}
