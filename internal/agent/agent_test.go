package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
	"github.com/gencode/gencode/internal/tokens"
	"github.com/gencode/gencode/internal/tools"
)

// echoTools is a hand-written tool runner: Echo returns its "text"
// argument; it counts calls.
type echoTools struct {
	calls atomic.Int32
	onRun func() // called inside Run, e.g. to cancel the turn mid-tool
}

func (e *echoTools) Definitions() []tools.Definition {
	return []tools.Definition{{Name: "Echo", Description: "Echo text back.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}}
}

func (e *echoTools) Run(_ context.Context, c tools.Call) tools.Result {
	e.calls.Add(1)
	if e.onRun != nil {
		e.onRun()
	}
	var args struct{ Text string }
	if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
		return tools.Result{Content: "error: " + err.Error(), IsError: true}
	}
	return tools.Result{Content: "echo: " + args.Text}
}

// countingCounter counts how often the tokenizer runs.
type countingCounter struct {
	inner *tokens.Counter
	n     atomic.Int64
}

func (c *countingCounter) CountMessage(m tokens.Message) int {
	c.n.Add(1)
	return c.inner.CountMessage(m)
}

func (c *countingCounter) CountMessageContext(ctx context.Context, m tokens.Message) (int, error) {
	c.n.Add(1)
	return c.inner.CountMessageContext(ctx, m)
}

func (c *countingCounter) CountContext(ctx context.Context, s string) (int, error) {
	c.n.Add(1)
	return c.inner.CountContext(ctx, s)
}

func (c *countingCounter) Count(s string) int {
	c.n.Add(1)
	return c.inner.Count(s)
}

type fixture struct {
	srv   *openaitest.Server
	store *session.Store
	sess  session.Session
	agent *Agent
	tools *echoTools
}

// vocabs shares one encoder between the package's tests: every agent counts
// its fixed cost when it is made, and each encoder compiles its
// pre-tokenizer once.
var vocabs tokens.Cache

func newFixture(t *testing.T, opts ...openaitest.Option) *fixture {
	t.Helper()
	srv := openaitest.NewServer(t, append([]openaitest.Option{openaitest.WithMessageRules()}, opts...)...)
	store := sessiontest.Open(t)
	sess, err := store.CreateSession(context.Background(), t.TempDir(), "gpt-4o-mini")
	require.NoError(t, err)
	et := &echoTools{}
	client := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "test"})
	a := New(store, client, et, vocabs.Counter("gpt-4o-mini"), Options{Model: "gpt-4o-mini", WorkDir: "/w", MaxIterations: 5, Window: 8192})
	return &fixture{srv: srv, store: store, sess: sess, agent: a, tools: et}
}

func collect(ch <-chan Event) []Event {
	var out []Event
	for ev := range ch {
		out = append(out, ev)
	}
	return out
}

func lastEvent(evs []Event) Event { return evs[len(evs)-1] }

func TestTurnWithToolCalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.srv.Enqueue(
		openaitest.Calls(
			openaitest.ToolCall{Name: "Echo", Arguments: `{"text":"one"}`},
			openaitest.ToolCall{Name: "Echo", Arguments: `{"text":"two"}`},
		),
		openaitest.Text("Both echoed."),
	)
	evs := collect(f.agent.Start(context.Background(), f.sess.ID, "echo one and two"))
	last := lastEvent(evs)
	require.Equal(t, EventDone, last.Kind, "last event: %+v", last)
	require.Equal(t, "Both echoed.", last.Text)
	require.EqualValues(t, 2, f.tools.calls.Load())

	msgs, err := f.store.Messages(context.Background(), f.sess.ID, 1, 0)
	require.NoError(t, err)
	roles := []session.Role{}
	for _, m := range msgs {
		roles = append(roles, m.Role)
		require.Positive(t, m.Tokens, "message %d has no stored token count", m.Seq)
	}
	require.Equal(t, []session.Role{"user", "assistant", "tool", "tool", "assistant"}, roles)
	require.Equal(t, "echo: one", msgs[2].Content)
	require.Equal(t, msgs[1].ToolCalls[1].ID, msgs[3].ToolCallID)

	reqs := f.srv.Requests()
	require.Len(t, reqs, 2)
	for i, r := range reqs {
		require.NoError(t, openaitest.CheckMessageRules(r.Messages), "request %d", i)
		require.Equal(t, "system", r.Messages[0].Role)
		require.Len(t, r.Tools, 1)
	}
	require.Len(t, reqs[1].Messages, 5, "system, user, assistant with calls, two results")

	sess, err := f.store.Session(context.Background(), f.sess.ID)
	require.NoError(t, err)
	require.Equal(t, "echo one and two", sess.Title)
}

func TestSecondTurnCarriesTheFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.srv.Enqueue(openaitest.Text("The answer is 42."), openaitest.Text("You asked about 42."))
	require.Equal(t, EventDone, lastEvent(collect(f.agent.Start(context.Background(), f.sess.ID, "what is the answer?"))).Kind)
	require.Equal(t, EventDone, lastEvent(collect(f.agent.Start(context.Background(), f.sess.ID, "what did I ask?"))).Kind)
	reqs := f.srv.Requests()
	second := reqs[1].Messages
	require.Len(t, second, 4)
	require.Equal(t, "what is the answer?", second[1].Content)
	require.Equal(t, "The answer is 42.", second[2].Content)
}

func TestCancelKeepsPartialAnswer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.srv.Enqueue(openaitest.Reply{Content: "one two three four five six seven eight", Chunks: 8, ChunkDelay: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	ch := f.agent.Start(ctx, f.sess.ID, "count")
	var got []Event
	for ev := range ch {
		got = append(got, ev)
		if ev.Kind == EventTextDelta && len(got) > 0 {
			cancel()
		}
	}
	cancel()
	last := lastEvent(got)
	require.Equal(t, EventError, last.Kind)
	require.ErrorIs(t, last.Err, ErrCanceled)
	msgs, err := f.store.Messages(context.Background(), f.sess.ID, 1, 0)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	require.True(t, msgs[1].Meta.Interrupted)
	require.NotEmpty(t, msgs[1].Content)
	require.NotContains(t, msgs[1].Content, "eight", "the answer was cut before its end")

	// The next turn goes on from the partial answer.
	f.srv.Enqueue(openaitest.Text("ok"))
	require.Equal(t, EventDone, lastEvent(collect(f.agent.Start(context.Background(), f.sess.ID, "go on"))).Kind)
}

// TestCancelDuringToolsAnswersEveryCall: a cancel while tools run leaves
// a result for every call, and the next message is accepted by a server
// that, like a strict local chat template, wants an answer between the
// results and the next user message (the request says the turn had none).
func TestCancelDuringToolsAnswersEveryCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t, openaitest.WithRoleAlternation())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.srv.Enqueue(openaitest.Calls(
		openaitest.ToolCall{Name: "Echo", Arguments: `{"text":"a"}`},
		openaitest.ToolCall{Name: "Echo", Arguments: `{"text":"b"}`},
		openaitest.ToolCall{Name: "Echo", Arguments: `{"text":"c"}`},
	))
	f.tools.onRun = cancel // the user presses Esc while the first tool runs
	got := collect(f.agent.Start(ctx, f.sess.ID, "three echoes"))
	require.ErrorIs(t, lastEvent(got).Err, ErrCanceled)
	require.EqualValues(t, 1, f.tools.calls.Load(), "no tool runs after the cancel")
	f.tools.onRun = nil
	msgs, err := f.store.Messages(context.Background(), f.sess.ID, 1, 0)
	require.NoError(t, err)
	var results int
	for _, m := range msgs {
		if m.Role == session.RoleTool {
			results++
		}
	}
	require.Equal(t, 3, results, "every call has a result in the log")
	f.srv.Enqueue(openaitest.Text("fine"))
	done := lastEvent(collect(f.agent.Start(context.Background(), f.sess.ID, "next")))
	require.Equal(t, EventDone, done.Kind, "%v", done.Err)
	reqs := f.srv.Requests()
	sent := reqs[len(reqs)-1].Messages
	require.Equal(t, openai.ChatMessageRoleAssistant, sent[len(sent)-2].Role)
	require.Contains(t, sent[len(sent)-2].Content, "No answer")
	require.Equal(t, "next", sent[len(sent)-1].Content)
}

func TestDanglingCallsFromACrashAreAnswered(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.store.Append(ctx, f.sess.ID,
		session.Message{Role: session.RoleUser, Content: "run it"},
		session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "call_x", Name: "Echo", Arguments: `{"text":"x"}`}}},
	)
	require.NoError(t, err)
	f.srv.Enqueue(openaitest.Text("recovered"))
	last := lastEvent(collect(f.agent.Start(ctx, f.sess.ID, "are you there?")))
	require.Equal(t, EventDone, last.Kind, "%v", last.Err)
	msgs, err := f.store.Messages(ctx, f.sess.ID, 3, 3)
	require.NoError(t, err)
	require.Equal(t, "call_x", msgs[0].ToolCallID)
	require.True(t, msgs[0].Meta.Interrupted)
}

// TestCallInFlightElsewhereIsNotAnswered: another process (here a second
// Store on the same database) is in the middle of a turn, its tool call
// without a result yet. A turn started meanwhile must neither answer that
// call with a made-up result nor append between the call and its result:
// it waits, then says the session is in use. Once the other turn is done
// it runs normally; once the other process is gone (crashed), its call is
// repaired.
func TestCallInFlightElsewhereIsNotAnswered(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	other, err := session.Open(ctx, filepath.Dir(f.store.Path()))
	require.NoError(t, err)
	defer other.Close()
	a := New(f.store, llm.New(llm.Config{BaseURL: f.srv.URL(), APIKey: "test"}), f.tools, vocabs.Counter("gpt-4o-mini"),
		Options{Model: "gpt-4o-mini", WorkDir: "/w", MaxIterations: 5, Window: 8192, LeaseWait: 200 * time.Millisecond})

	// The other process's turn: its lease, its user message and its call.
	lease, err := other.Lease(ctx, f.sess.ID, 0)
	require.NoError(t, err)
	_, err = other.Append(ctx, f.sess.ID,
		session.Message{Role: session.RoleUser, Content: "run it"},
		session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "call_busy", Name: "Echo", Arguments: `{"text":"x"}`}}},
	)
	require.NoError(t, err)

	last := lastEvent(collect(a.Start(ctx, f.sess.ID, "me too")))
	require.Equal(t, EventError, last.Kind)
	require.ErrorIs(t, last.Err, session.ErrInUse)
	require.Contains(t, last.Err.Error(), "session "+f.sess.ID+" is in use by gencode pid")
	msgs, err := f.store.Messages(ctx, f.sess.ID, 1, 0)
	require.NoError(t, err)
	require.Len(t, msgs, 2, "nothing appended while the other turn runs")
	require.Empty(t, f.srv.Requests())

	// The other turn finishes with the real result and lets go.
	_, err = other.Append(ctx, f.sess.ID,
		session.Message{Role: session.RoleTool, ToolCallID: "call_busy", Name: "Echo", Content: "echo: x"},
		session.Message{Role: session.RoleAssistant, Content: "done"})
	require.NoError(t, err)
	lease.Release()
	f.srv.Enqueue(openaitest.Text("my turn"))
	last = lastEvent(collect(a.Start(ctx, f.sess.ID, "me too")))
	require.Equal(t, EventDone, last.Kind, "%v", last.Err)
	msgs, err = f.store.Messages(ctx, f.sess.ID, 1, 0)
	require.NoError(t, err)
	for _, m := range msgs {
		require.False(t, m.Meta.Interrupted, "message %d: no made-up result: %+v", m.Seq, m)
	}

	// A process that dies mid-call leaves its lease free: the next turn
	// repairs the call.
	_, err = other.Lease(ctx, f.sess.ID, 0)
	require.NoError(t, err)
	_, err = other.Append(ctx, f.sess.ID, session.Message{Role: session.RoleUser, Content: "again"},
		session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "call_dead", Name: "Echo", Arguments: `{"text":"y"}`}}})
	require.NoError(t, err)
	require.NoError(t, other.Close())
	f.srv.Enqueue(openaitest.Text("recovered"))
	last = lastEvent(collect(a.Start(ctx, f.sess.ID, "still there?")))
	require.Equal(t, EventDone, last.Kind, "%v", last.Err)
	msgs, err = f.store.Messages(ctx, f.sess.ID, 1, 0)
	require.NoError(t, err)
	var repaired int
	for _, m := range msgs {
		if m.Role == session.RoleTool && m.ToolCallID == "call_dead" {
			repaired++
			require.True(t, m.Meta.Interrupted)
		}
	}
	require.Equal(t, 1, repaired)
	for _, r := range f.srv.Requests() {
		require.NoError(t, openaitest.CheckMessageRules(r.Messages))
	}
}

func TestIterationBound(t *testing.T) {
	t.Parallel()
	f := newFixture(t, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		return openaitest.Calls(openaitest.ToolCall{Name: "Echo", Arguments: `{"text":"again"}`})
	}))
	last := lastEvent(collect(f.agent.Start(context.Background(), f.sess.ID, "loop forever")))
	require.ErrorIs(t, last.Err, ErrTooManyIterations)
	require.Len(t, f.srv.Requests(), 5)
	// The log still obeys the message rules: the last calls were answered,
	// so the next turn's request is accepted (the server enforces them).
	msgs, err := f.store.Messages(context.Background(), f.sess.ID, 1, 0)
	require.NoError(t, err)
	require.Equal(t, session.RoleTool, msgs[len(msgs)-1].Role)
	require.NoError(t, openaitest.CheckMessageRules(f.srv.Requests()[4].Messages))
}

func TestUnknownToolIsToldToTheModel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// The real tool set: a name it does not define is answered with an
	// error result, and the turn goes on.
	a := New(f.store, llm.New(llm.Config{BaseURL: f.srv.URL(), APIKey: "test"}), tools.New(tools.Options{WorkDir: t.TempDir()}),
		vocabs.Counter("gpt-4o-mini"), Options{Model: "gpt-4o-mini", MaxIterations: 5, Window: 8192})
	f.srv.Enqueue(openaitest.Calls(openaitest.ToolCall{Name: "Nope", Arguments: `{}`}), openaitest.Text("sorry"))
	require.Equal(t, EventDone, lastEvent(collect(a.Start(context.Background(), f.sess.ID, "x"))).Kind)
	reqs := f.srv.Requests()
	tool := reqs[1].Messages[3]
	require.Equal(t, "tool", tool.Role)
	require.Contains(t, tool.Content, "Nope")
	msgs, err := f.store.Messages(context.Background(), f.sess.ID, 3, 3)
	require.NoError(t, err)
	require.True(t, msgs[0].Meta.Failed, "the result is recorded as a failure")
}

func TestProviderErrorsEndTheTurnCleanly(t *testing.T) {
	t.Parallel()
	body := `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	f := newFixture(t)
	f.srv.Enqueue(openaitest.Error(400, body))
	last := lastEvent(collect(f.agent.Start(context.Background(), f.sess.ID, "hi")))
	require.Equal(t, EventError, last.Kind)
	require.True(t, errors.Is(last.Err, llm.ErrContextOverflow), "err = %v", last.Err)
	msgs, err := f.store.Messages(context.Background(), f.sess.ID, 1, 0)
	require.NoError(t, err)
	require.Len(t, msgs, 1, "the user's message is kept for a retry")
}

func TestBuildContextRunsNoTokenizerOnOldMessages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	seedLog(t, f.store, f.sess.ID, 10_000)
	cc := &countingCounter{inner: vocabs.Counter("gpt-4o-mini")}
	a := New(f.store, nil, &echoTools{}, cc, Options{Model: "gpt-4o-mini", Window: 128_000})
	a.FixedCost() // the system prompt is counted once, when first needed
	before := cc.n.Load()
	v, err := f.store.LoadView(context.Background(), f.sess.ID)
	require.NoError(t, err)
	msgs, size := a.build(v)
	est := size.Tokens
	require.Len(t, msgs, 10_001)
	require.Equal(t, before, cc.n.Load(), "building the view ran the tokenizer")
	require.Greater(t, est, 10_000*10)
}

func seedLog(t testing.TB, store *session.Store, id string, n int) {
	t.Helper()
	batch := make([]session.Message, 0, 1000)
	for i := 0; i < n; i++ {
		role := session.RoleUser
		if i%2 == 1 {
			role = session.RoleAssistant
		}
		batch = append(batch, session.Message{Role: role, Content: fmt.Sprintf("message %d with some words in it", i), Tokens: 12})
		if len(batch) == cap(batch) || i == n-1 {
			_, err := store.Append(context.Background(), id, batch...)
			require.NoError(t, err)
			batch = batch[:0]
		}
	}
}

// BenchmarkBuildContext measures building the request of a long session
// from the stored view (no tokenizer: counts are stored).
func BenchmarkBuildContext(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("msgs=%d", n), func(b *testing.B) {
			store, err := session.Open(context.Background(), b.TempDir())
			require.NoError(b, err)
			defer store.Close()
			sess, err := store.CreateSession(context.Background(), "/w", "m")
			require.NoError(b, err)
			seedLog(b, store, sess.ID, n)
			cc := &countingCounter{inner: vocabs.Counter("gpt-4o-mini")}
			a := New(store, nil, &echoTools{}, cc, Options{Model: "gpt-4o-mini"})
			a.FixedCost()
			v, err := store.LoadView(context.Background(), sess.ID)
			require.NoError(b, err)
			start := cc.n.Load()
			for b.Loop() {
				a.build(v)
			}
			b.ReportMetric(float64(cc.n.Load()-start)/float64(b.N), "tokenizer-calls/op")
		})
	}
}

func TestHugeMessageIsRefusedBeforeStoring(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	huge := strings.Repeat("lorem ipsum dolor sit amet ", 400_000) // ~10 MB
	last := lastEvent(collect(f.agent.Start(context.Background(), f.sess.ID, huge)))
	require.ErrorIs(t, last.Err, ErrMessageTooLarge)
	require.Contains(t, last.Err.Error(), "context window is 8192")
	msgs, err := f.store.Messages(context.Background(), f.sess.ID, 1, 0)
	require.NoError(t, err)
	require.Empty(t, msgs, "nothing stored: the next turn is not poisoned")
	require.Empty(t, f.srv.Requests())

	f.srv.Enqueue(openaitest.Text("fine"))
	require.Equal(t, EventDone, lastEvent(collect(f.agent.Start(context.Background(), f.sess.ID, "small one\xff"))).Kind)
	msgs, err = f.store.Messages(context.Background(), f.sess.ID, 1, 1)
	require.NoError(t, err)
	require.Equal(t, "small one\uFFFD", msgs[0].Content, "invalid UTF-8 is stored replaced, not raw")
}

// TestFixedCostFitsSmallWindows checks the design's budget: the system
// prompt and every tool schema together stay within 3,000 tokens, so that
// gencode works in the 8k windows of local models.
func TestFixedCostFitsSmallWindows(t *testing.T) {
	t.Parallel()
	ts := tools.New(tools.Options{WorkDir: t.TempDir()})
	a := New(nil, nil, ts, vocabs.Counter("gpt-4o-mini"), Options{Model: "gpt-4o-mini", WorkDir: "/home/user/projects/some-repository"})
	require.Len(t, a.toolDefs, 7)
	if got := a.FixedCost(); got > 3000 || got < 500 {
		t.Errorf("FixedCost() = %d tokens, want between 500 and 3000", got)
	}
	t.Logf("system prompt + 7 tool schemas = %d tokens", a.FixedCost())
}

// TestContextTokensMatchesTheRequest: the cheap estimate the compactor
// sees before each request is the size of the request that is then built.
func TestContextTokensMatchesTheRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	seedLog(t, f.store, f.sess.ID, 300)
	_, err := f.store.ApplySummary(context.Background(), session.Summary{SessionID: f.sess.ID, FromSeq: 1, ToSeq: 100, Content: "x", TokenCount: 40}, nil, false)
	require.NoError(t, err)
	v, err := f.store.LoadView(context.Background(), f.sess.ID)
	require.NoError(t, err)
	_, size := f.agent.build(v)
	built := size.Tokens
	require.Equal(t, built, f.agent.ContextTokens(v))
}

// TestCancelWhileCountingKeepsTheMessage: a cancel stops the counting of a
// huge paste at once (it used to take minutes without spaces, and could
// not be stopped), and the message is stored, not lost.
func TestCancelWhileCountingKeepsTheMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	client := llm.New(llm.Config{BaseURL: f.srv.URL(), APIKey: "test"})
	a := New(f.store, client, nil, vocabs.Counter("gpt-4o-mini"), Options{Model: "gpt-4o-mini", WorkDir: "/w", Window: 10_000_000})
	text := strings.Repeat("x", 4<<20)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the user pressed Esc as the turn started
	last := lastEvent(collect(a.Start(ctx, f.sess.ID, text)))
	require.ErrorIs(t, last.Err, ErrCanceled)

	msgs, err := f.store.Messages(context.Background(), f.sess.ID, 1, 0)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Equal(t, text, msgs[0].Content)
	// Not counted: the stored count is the documented estimate (3 bytes a
	// token, plus the framing), an overcount.
	require.Equal(t, 3+(len("user")+2)/3+(len(text)+2)/3, msgs[0].Tokens)
	require.Empty(t, f.srv.Requests())
}

// One answer cannot run an unbounded number of tool calls: past the cap,
// each call gets a result saying it did not run, so the next request still
// pairs every call with a result.
func TestToolCallsPerMessageAreCapped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		max     int // Options.MaxToolCalls; 0: the default
		calls   int
		wantRun int
	}{
		{"default cap", 0, 60, DefaultMaxToolCalls},
		{"configured cap", 3, 5, 3},
		{"under the cap", 3, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			client := llm.New(llm.Config{BaseURL: f.srv.URL(), APIKey: "test"})
			a := New(f.store, client, f.tools, vocabs.Counter("gpt-4o-mini"), Options{Model: "gpt-4o-mini", WorkDir: "/w", Window: 128000, MaxToolCalls: tt.max})
			calls := make([]openaitest.ToolCall, tt.calls)
			for i := range calls {
				calls[i] = openaitest.ToolCall{Name: "Echo", Arguments: fmt.Sprintf(`{"text":"%d"}`, i)}
			}
			f.srv.Enqueue(openaitest.Calls(calls...), openaitest.Text("done"))
			last := lastEvent(collect(a.Start(context.Background(), f.sess.ID, "echo a lot")))
			require.Equal(t, EventDone, last.Kind, "%+v", last)
			require.EqualValues(t, tt.wantRun, f.tools.calls.Load(), "calls run")

			reqs := f.srv.Requests()
			require.Len(t, reqs, 2)
			require.NoError(t, openaitest.CheckMessageRules(reqs[1].Messages))
			var ran, refused int
			for _, m := range reqs[1].Messages {
				switch {
				case m.Role != "tool":
				case strings.HasPrefix(m.Content, "echo: "):
					ran++
				case strings.Contains(m.Content, fmt.Sprintf("[not run: this answer asked for %d tool calls and at most %d run per answer (tools.max_calls_per_message)", tt.calls, tt.wantRun)):
					refused++
				}
			}
			require.Equal(t, tt.wantRun, ran)
			require.Equal(t, tt.calls-tt.wantRun, refused)
		})
	}
}

// TestUserMessageMetaIsLogged: where the TUI's pastes lie is logged with
// the user message (a resumed session shows them as placeholders again);
// the model is sent the whole text and nothing of the metadata.
func TestUserMessageMetaIsLogged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.srv.Enqueue(openaitest.Text("Read it."))
	pasted := "line 1\nline 2\n"
	text := "see: " + pasted + " thanks"
	meta := session.Meta{Pastes: []session.Paste{{Start: 5, End: 5 + len(pasted), N: 1}}}
	evs := collect(f.agent.StartMessage(context.Background(), f.sess.ID, UserMessage{Text: text, Meta: meta}))
	require.Equal(t, EventDone, lastEvent(evs).Kind)
	msgs, err := f.store.Messages(context.Background(), f.sess.ID, 1, 1)
	require.NoError(t, err)
	require.Equal(t, text, msgs[0].Content)
	require.Equal(t, meta, msgs[0].Meta)
	req := f.srv.Requests()[0]
	require.Equal(t, text, req.Messages[1].Content)
	require.NotContains(t, string(req.Body), "pastes")

	// Text that had to be made valid UTF-8 no longer matches the offsets:
	// they are dropped, never applied to the wrong bytes.
	f.srv.Enqueue(openaitest.Text("ok"))
	collect(f.agent.StartMessage(context.Background(), f.sess.ID, UserMessage{Text: "\xff" + text, Meta: meta}))
	msgs, err = f.store.Messages(context.Background(), f.sess.ID, 3, 3)
	require.NoError(t, err)
	require.Empty(t, msgs[0].Meta.Pastes)
}

// TestRequestFromAMessyLog is issues 14.2 and 14.8 as the agent meets
// them: a log written by two processes at once (a result after another
// process's user message, results out of order, a call whose result the
// other process never wrote, a result answering nothing) and by a model
// that produced invalid arguments, duplicate call ids and an empty
// message. The log keeps all of it; every request is valid (the fake
// server refuses any that breaks the message rules) and says what it
// mended.
func TestRequestFromAMessyLog(t *testing.T) {
	t.Parallel()
	f := newFixture(t, openaitest.WithRoleAlternation())
	ctx := context.Background()
	seeded := []session.Message{
		{Role: session.RoleUser, Content: "echo a and b"}, // 1
		{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{ // 2
			{ID: "c1", Name: "Echo", Arguments: `{"text":"a"}`},
			{ID: "c2", Name: "Echo", Arguments: `{"text": "b`},
		}},
		{Role: session.RoleUser, Content: "the other process asks"},                                                                                                          // 3
		{Role: session.RoleTool, ToolCallID: "c2", Name: "Echo", Content: "error: unexpected end of JSON input"},                                                             // 4
		{Role: session.RoleTool, ToolCallID: "c1", Name: "Echo", Content: "echo: a"},                                                                                         // 5
		{Role: session.RoleAssistant, Content: "  "},                                                                                                                         // 6
		{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "c1", Name: "Echo", Arguments: `{"text":"again"}`}}},                                                // 7
		{Role: session.RoleTool, ToolCallID: "zz", Name: "Echo", Content: "answers nothing"},                                                                                 // 8
		{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "d", Name: "Echo", Arguments: `{"text":"x"}`}, {ID: "d", Name: "Echo", Arguments: `{"text":"y"}`}}}, // 9
		{Role: session.RoleTool, ToolCallID: "d", Name: "Echo", Content: "echo: x"},                                                                                          // 10
		{Role: session.RoleTool, ToolCallID: "d", Name: "Echo", Content: "echo: y"},                                                                                          // 11
	}
	for i := range seeded {
		seeded[i].Tokens = MessageTokens(f.agent.counter, seeded[i])
	}
	_, err := f.store.Append(ctx, f.sess.ID, seeded...)
	require.NoError(t, err)
	before, err := f.store.Messages(ctx, f.sess.ID, 1, 0)
	require.NoError(t, err)

	f.srv.Enqueue(openaitest.Text("all clear"))
	last := lastEvent(collect(f.agent.Start(ctx, f.sess.ID, "what happened?")))
	require.Equal(t, EventDone, last.Kind, "the request was refused: %v", last.Err)

	req := f.srv.Requests()[0].Messages
	var got []string
	for _, m := range req[1:] {
		line := m.Role + ":" + m.ToolCallID
		for _, c := range m.ToolCalls {
			line += " " + c.ID + c.Function.Arguments
		}
		got = append(got, line)
	}
	require.Equal(t, []string{
		`user:`,
		`assistant: c1{"text":"a"} c2{}`,
		`tool:c1`, `tool:c2`, // moved up to their calls, in the calls' order
		`assistant:`, // the turn had no answer: said so, for strict templates
		`user:`,
		// message 6 (empty) is left out
		`assistant: call_gencode_7_0{"text":"again"}`, // c1 was taken by message 2
		`tool:call_gencode_7_0`,                       // its result was never written
		// message 8 answers no call: left out
		`assistant: d{"text":"x"} call_gencode_9_1{"text":"y"}`,
		`tool:d`, `tool:call_gencode_9_1`,
		`assistant:`,
		`user:`,
	}, got)
	require.Equal(t, "echo: a", req[3].Content)
	require.Contains(t, req[4].Content, "not valid JSON")
	require.Contains(t, req[4].Content, "unexpected end of JSON input", "the tool's own answer is kept")
	require.Contains(t, req[5].Content, "No answer")
	require.Contains(t, req[8].Content, "no result")
	require.Equal(t, "echo: y", req[11].Content)

	after, err := f.store.Messages(ctx, f.sess.ID, 1, int64(len(seeded)))
	require.NoError(t, err)
	require.Equal(t, before, after, "the log keeps what it received")
}

// TestServerWindowSmallerThanConfigured is issue 12.3: a local server
// holds far less than the model table says. One message larger than the
// server's window used to stay in the view, so every later turn resent it
// and failed. The agent learns the window from the refusal, keeps it,
// cuts the message in the view (the log keeps it whole) and goes on; a
// new message too large for the learned window is refused before it is
// stored.
func TestServerWindowSmallerThanConfigured(t *testing.T) {
	t.Parallel()
	counter := vocabs.Counter("gpt-4o-mini")
	count := func(r openaitest.Request) int {
		n := tokens.ReplyPriming
		for _, m := range r.Messages {
			n += counter.CountMessage(tokens.Message{Role: m.Role, Content: m.Content, Name: m.Name})
		}
		return n + len(r.Tools)*200
	}
	f := newFixture(t, openaitest.WithContextWindow(4000, count))
	ctx := context.Background()
	var big strings.Builder
	for i := 0; big.Len() < 16000; i++ { // about 5,000 tokens
		fmt.Fprintf(&big, "line %d of the pasted log: status ok, value %d\n", i, i*31)
	}
	f.srv.Enqueue(openaitest.Text("Read it."))
	evs := collect(f.agent.Start(ctx, f.sess.ID, big.String()))
	require.Equal(t, EventDone, lastEvent(evs).Kind, "err: %v", lastEvent(evs).Err)
	var retry string
	var size *Size
	for _, e := range evs {
		switch e.Kind {
		case EventRetry:
			retry = e.Text
		case EventContext:
			size = e.Context
		}
	}
	require.Contains(t, retry, "the server's context window is 4000 tokens, not 8192")
	require.Equal(t, Size{Tokens: size.Tokens, Window: 4000, Learned: true, ConfiguredWindow: 8192, Source: "server"}, *size)
	reqs := f.srv.Requests()
	require.Len(t, reqs, 2, "refused once, then fitted")
	sent := reqs[1].Messages[1].Content
	require.Contains(t, sent, "cut from the context to fit the window; the whole message is message 1 of the session log")
	require.LessOrEqual(t, count(reqs[1]), 4000)

	msgs, err := f.store.Messages(ctx, f.sess.ID, 1, 1)
	require.NoError(t, err)
	require.Equal(t, big.String(), msgs[0].Content, "the log keeps the message whole")

	f.srv.Enqueue(openaitest.Text("Still here."))
	last := lastEvent(collect(f.agent.Start(ctx, f.sess.ID, "and now?")))
	require.Equal(t, EventDone, last.Kind, "the next turn is not blocked: %v", last.Err)
	require.Len(t, f.srv.Requests(), 3, "sent at once with the learned window")

	last = lastEvent(collect(f.agent.Start(ctx, f.sess.ID, big.String())))
	require.ErrorIs(t, last.Err, ErrMessageTooLarge)
	require.Contains(t, last.Err.Error(), "context window is 4000")
	require.Len(t, f.srv.Requests(), 3, "refused before it was sent")
}

// TestFailedTurnThenStrictTemplate: a turn that failed keeps its message
// in the log; its resend and a new message after another failure are still
// accepted by a server that, like a strict local chat template, refuses two
// user messages in a row.
func TestFailedTurnThenStrictTemplate(t *testing.T) {
	t.Parallel()
	const refused = `{"error":{"message":"the upstream model is not loaded","type":"invalid_request_error","param":null,"code":null}}`
	f := newFixture(t, openaitest.WithRoleAlternation())
	f.srv.Enqueue(openaitest.Error(400, refused), openaitest.Text("Fixed."), openaitest.Error(400, refused), openaitest.Text("Yes, added."))
	ctx := context.Background()
	require.Equal(t, EventError, lastEvent(collect(f.agent.Start(ctx, f.sess.ID, "fix the parser"))).Kind)
	done := lastEvent(collect(f.agent.Start(ctx, f.sess.ID, "fix the parser"))) // Ctrl+R
	require.Equal(t, EventDone, done.Kind, "%v", done.Err)
	require.Equal(t, EventError, lastEvent(collect(f.agent.Start(ctx, f.sess.ID, "add a test"))).Kind)
	done = lastEvent(collect(f.agent.Start(ctx, f.sess.ID, "are you there?")))
	require.Equal(t, EventDone, done.Kind, "%v", done.Err)

	reqs := f.srv.Requests()
	var users []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == openai.ChatMessageRoleUser {
			users = append(users, m.Content)
		}
	}
	require.Equal(t, []string{"fix the parser", "add a test\n\nare you there?"}, users, "the resend went once; the unanswered message and the next one went as one")
	msgs, err := f.store.Messages(ctx, f.sess.ID, 1, 0)
	require.NoError(t, err)
	require.Len(t, msgs, 6, "the log keeps every message: 4 requests, 2 answers")
}

// TestNoteGoesWithTheNextMessage: a note (the output of a "!command" the
// TUI kept at quit) is in the log at once, and the next turn's request
// carries it with the new message, in one user message.
func TestNoteGoesWithTheNextMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, openaitest.WithRoleAlternation())
	f.srv.Enqueue(openaitest.Text("It printed hi."))
	ctx := context.Background()
	note := "<shell-output>\n$ echo hi\nhi\n</shell-output>"
	require.NoError(t, f.agent.Note(ctx, f.sess.ID, UserMessage{Text: note, Meta: session.Meta{Shell: true}}))
	msgs, err := f.store.Messages(ctx, f.sess.ID, 1, 0)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.True(t, msgs[0].Meta.Shell)
	require.Positive(t, msgs[0].Tokens)

	done := lastEvent(collect(f.agent.Start(ctx, f.sess.ID, "what did it print?")))
	require.Equal(t, EventDone, done.Kind, "%v", done.Err)
	sent := f.srv.Requests()[0].Messages
	require.Len(t, sent, 2)
	require.Equal(t, note+"\n\nwhat did it print?", sent[1].Content)
}
