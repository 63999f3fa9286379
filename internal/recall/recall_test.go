package recall

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
	"github.com/gencode/gencode/internal/tools"
)

// baseTools is a hand-written fake of the agent's tool set.
type baseTools struct{ calls atomic.Int32 }

func (b *baseTools) Definitions() []tools.Definition {
	return []tools.Definition{{Name: "Read", Description: "read", Parameters: json.RawMessage(`{"type":"object"}`)}}
}

func (b *baseTools) Run(_ context.Context, c tools.Call) tools.Result {
	b.calls.Add(1)
	return tools.Result{Content: "base ran " + c.Name}
}

type fixture struct {
	store *session.Store
	sess  session.Session
	tools *Tools
	base  *baseTools
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	ctx := context.Background()
	store := sessiontest.Open(t)
	sess, err := store.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	code := 2
	_, err = store.Append(ctx, sess.ID,
		session.Message{Role: session.RoleUser, Content: "Remember: the staging database password rotates every 90 days (ticket OPS-4471)."}, // 1
		session.Message{Role: session.RoleAssistant, Content: "Running the tests.", ToolCalls: []session.ToolCall{ // 2
			{ID: "c1", Name: "Bash", Arguments: `{"command":"go test ./internal/session/"}`}}},
		session.Message{Role: session.RoleTool, ToolCallID: "c1", Name: "Bash", Content: "FAIL\n[... 40 lines cut ...]\nexit status 2", // 3
			Full: "FAIL\n" + strings.Repeat("--- FAIL: TestSomething\n", 40) + "panic: quokka overflow\nexit status 2",
			Meta: session.Meta{Tool: "Bash", Command: "go test ./internal/session/", ExitCode: &code, Failed: true, Capped: true}},
		session.Message{Role: session.RoleAssistant, Content: "The quokka panic comes from the pool size."}, // 4
	)
	require.NoError(t, err)
	for i := 5; i <= 30; i++ {
		_, err = store.Append(ctx, sess.ID, session.Message{Role: session.RoleUser, Content: fmt.Sprintf("filler message %d about widgets", i)})
		require.NoError(t, err)
	}
	base := &baseTools{}
	return &fixture{store: store, sess: sess, tools: With(base, store, opts), base: base}
}

func (f *fixture) call(t *testing.T, name, args string) tools.Result {
	t.Helper()
	return f.tools.RunInSession(context.Background(), f.sess.ID, tools.Call{ID: "x", Name: name, Arguments: args})
}

func TestDefinitionsAddTwoConciseTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	defs := f.tools.Definitions()
	require.Len(t, defs, 3)
	require.Equal(t, "Read", defs[0].Name)
	require.Equal(t, ToolSearchHistory, defs[1].Name)
	require.Equal(t, ToolReadHistory, defs[2].Name)
	size := 0
	for _, d := range defs[1:] {
		var schema map[string]any
		require.NoError(t, json.Unmarshal(d.Parameters, &schema), d.Name)
		require.Equal(t, "object", schema["type"])
		size += len(d.Name) + len(d.Description) + len(d.Parameters)
	}
	// ~4 bytes a token: the two tools take ~250 of the 3,000-token fixed budget.
	require.Less(t, size, 1100, "the history tools' schemas stay small")
}

func TestSearchHistory(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	tests := []struct {
		name    string
		args    string
		want    []string
		notWant []string
		wantErr bool
	}{
		{
			name: "a fact",
			args: `{"query":"staging password"}`,
			want: []string{`1 message matches "staging password":`, "seq 1 · user · ", "«staging»", "«password»", "ReadHistory"},
		},
		{
			name: "only in a capped output's full text",
			args: `{"query":"quokka"}`,
			want: []string{`2 messages match "quokka"`, "seq 3 · tool Bash · ", "seq 4 · assistant · ", "«quokka»"},
		},
		{
			name: "tool call arguments",
			args: `{"query":"internal/session"}`,
			want: []string{"seq 2 · assistant (calls Bash) · ", "seq 3 · tool Bash"},
		},
		{
			name: "limit and how many more",
			args: `{"query":"widgets","limit":"3"}`,
			want: []string{`26 messages match "widgets"; the best 3 follow (23 more: add words, or raise limit):`},
		},
		{
			name: "some words",
			args: `{"query":"quokka zebra"}`,
			want: []string{`No message has all the words of "quokka zebra"; 2 have some of them:`},
		},
		{
			name: "nothing",
			args: `{"query":"nonexistentword"}`,
			want: []string{`No message of this session matches "nonexistentword".`},
		},
		{
			name:    "FTS syntax is text",
			args:    `{"query":"\"OPS-4471\" AND (NEAR x:y) * -z ^"}`,
			notWant: []string{"error"},
		},
		{name: "missing query", args: `{}`, want: []string{"missing query", `expected {"query": string`}, wantErr: true},
		{name: "blank query", args: `{"query":"  "}`, want: []string{"missing query"}, wantErr: true},
		{name: "not JSON", args: `query=x`, want: []string{"invalid arguments for SearchHistory"}, wantErr: true},
		{name: "bad limit", args: `{"query":"x","limit":"many"}`, want: []string{"must be an integer"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.call(t, ToolSearchHistory, tt.args)
			require.Equal(t, tt.wantErr, r.IsError, "SearchHistory(%s) = %q", tt.args, r.Content)
			for _, w := range tt.want {
				require.Contains(t, r.Content, w, "SearchHistory(%s)", tt.args)
			}
			for _, w := range tt.notWant {
				require.NotContains(t, r.Content, w, "SearchHistory(%s)", tt.args)
			}
			require.Equal(t, ToolSearchHistory, r.Meta.Tool)
		})
	}
	require.Zero(t, f.base.calls.Load())

	// The searches so far, now in the log, are not found.
	ctx := context.Background()
	_, err := f.store.Append(ctx, f.sess.ID,
		session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: "s1", Name: ToolSearchHistory, Arguments: `{"query":"quokka"}`}}},
		session.Message{Role: session.RoleTool, ToolCallID: "s1", Name: ToolSearchHistory, Content: f.call(t, ToolSearchHistory, `{"query":"quokka"}`).Content})
	require.NoError(t, err)
	r := f.call(t, ToolSearchHistory, `{"query":"quokka"}`)
	require.Contains(t, r.Content, `2 messages match "quokka"`, r.Content)
}

func TestReadHistory(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	tests := []struct {
		name    string
		args    string
		want    []string
		notWant []string
		wantErr bool
	}{
		{
			name: "one message",
			args: `{"from_seq":1}`,
			want: []string{"Messages 1-1 of 30 (original text):", "--- seq 1 · user · ",
				"the staging database password rotates every 90 days (ticket OPS-4471)."},
			notWant: []string{"seq 2"},
		},
		{
			name: "a range, whole tool output and calls",
			args: `{"from_seq":2,"to_seq":"3"}`,
			want: []string{"--- seq 2 · assistant · ", `[calls Bash {"command":"go test ./internal/session/"}]`,
				"--- seq 3 · tool Bash · ", " · exit 2\n", "panic: quokka overflow", "--- FAIL: TestSomething"},
			notWant: []string{"[... 40 lines cut ...]", "cut at"},
		},
		{name: "past the end is clamped", args: `{"from_seq":29,"to_seq":500}`, want: []string{"Messages 29-30 of 30", "seq 30"}},
		{name: "from after the end", args: `{"from_seq":31}`, want: []string{"there is no message 31: this session has messages 1-30"}, wantErr: true},
		{name: "backwards", args: `{"from_seq":5,"to_seq":4}`, want: []string{"to_seq (4) is before from_seq (5)"}, wantErr: true},
		{name: "zero", args: `{"from_seq":0}`, want: []string{"from_seq must be 1 or more"}, wantErr: true},
		{name: "missing from", args: `{"to_seq":3}`, want: []string{"missing from_seq"}, wantErr: true},
		{name: "not an integer", args: `{"from_seq":1.5}`, want: []string{"must be an integer"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.call(t, ToolReadHistory, tt.args)
			require.Equal(t, tt.wantErr, r.IsError, "ReadHistory(%s) = %q", tt.args, r.Content)
			for _, w := range tt.want {
				require.Contains(t, r.Content, w, "ReadHistory(%s)", tt.args)
			}
			for _, w := range tt.notWant {
				require.NotContains(t, r.Content, w, "ReadHistory(%s)", tt.args)
			}
		})
	}
}

func TestReadHistoryIsCappedAndSaysWhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{MaxReadTokens: 100})
	r := f.call(t, ToolReadHistory, `{"from_seq":5,"to_seq":30}`)
	require.False(t, r.IsError, r.Content)
	require.LessOrEqual(t, len(r.Content)/4, 100+60, "about the cap, plus the cut note")
	require.Contains(t, r.Content, "--- seq 5 ")
	require.NotContains(t, r.Content, "--- seq 30 ")
	var next int
	_, err := fmt.Sscanf(r.Content[strings.Index(r.Content, "call ReadHistory with from_seq "):], "call ReadHistory with from_seq %d", &next)
	require.NoError(t, err, r.Content)
	require.Contains(t, r.Content, fmt.Sprintf("[cut at the 100-token limit: messages %d-30 not shown", next))
	require.Contains(t, r.Content, fmt.Sprintf("--- seq %d ", next-1), "the cut follows the last message shown")

	// A message alone over the cap: its head and tail are shown.
	r = f.call(t, ToolReadHistory, `{"from_seq":3,"to_seq":4}`)
	require.False(t, r.IsError, r.Content)
	require.Contains(t, r.Content, "--- seq 3 · tool Bash")
	require.Contains(t, r.Content, "panic: quokka overflow\nexit status 2", "the tail")
	require.Contains(t, r.Content, "[... the middle of message 3 is cut: about ")
	require.Contains(t, r.Content, "[cut at the 100-token limit: messages 4-4 not shown; call ReadHistory with from_seq 4 to go on]")
}

func TestRunDispatches(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := context.Background()

	r := f.tools.RunInSession(ctx, f.sess.ID, tools.Call{Name: "Read", Arguments: `{}`})
	require.Equal(t, "base ran Read", r.Content)
	require.EqualValues(t, 1, f.base.calls.Load())

	r = f.tools.Run(ctx, tools.Call{Name: ToolSearchHistory, Arguments: `{"query":"quokka"}`})
	require.True(t, r.IsError, "no session: %q", r.Content)
	require.Contains(t, r.Content, "no session")

	bound := With(nil, f.store, Options{SessionID: f.sess.ID})
	require.Len(t, bound.Definitions(), 2)
	r = bound.Run(ctx, tools.Call{Name: ToolSearchHistory, Arguments: `{"query":"quokka"}`})
	require.False(t, r.IsError, r.Content)
	require.Contains(t, r.Content, "seq 3")
	r = bound.Run(ctx, tools.Call{Name: "Bash", Arguments: `{}`})
	require.True(t, r.IsError)
	require.Contains(t, r.Content, `unknown tool "Bash"`)

	other, err := f.store.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	r = f.tools.RunInSession(ctx, other.ID, tools.Call{Name: ToolSearchHistory, Arguments: `{"query":"quokka"}`})
	require.Contains(t, r.Content, "No message of this session matches", "another session's log is not searched")
}
