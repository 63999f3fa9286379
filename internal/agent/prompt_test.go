package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
	"github.com/gencode/gencode/internal/tools"
)

// TestSystemPromptIsTheSessions: every request of a session starts with
// the same system message, byte for byte: the built-in prompt with the
// day the session started (not today, which moves), then the
// instructions. Two agents (a /model switch, or another run) send the same
// bytes for the same session; another session says its own start.
func TestSystemPromptIsTheSessions(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		return openaitest.Text("ok")
	}))
	started := time.Date(2020, 1, 2, 12, 0, 0, 0, time.Local)
	store := sessiontest.Open(t, session.WithClock(func() time.Time { return started }))
	sess, err := store.CreateSession(context.Background(), "/w", "gpt-4o-mini")
	require.NoError(t, err)
	const instr = "# Instructions from the user and the project\n\n## AGENTS.md (project)\nAlways run `make test`.\n"
	newAgent := func() *Agent {
		client := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "test"})
		return New(store, client, &echoTools{}, vocabs.Counter("gpt-4o-mini"), Options{Model: "gpt-4o-mini", WorkDir: "/w", Window: 8192, Instructions: instr})
	}
	for _, a := range []*Agent{newAgent(), newAgent()} {
		for range 2 {
			require.Equal(t, EventDone, lastEvent(collect(a.Start(context.Background(), sess.ID, "hi"))).Kind)
		}
	}
	reqs := srv.Requests()
	require.Len(t, reqs, 4)
	sys := reqs[0].Messages[0]
	require.Equal(t, "system", sys.Role)
	require.Contains(t, sys.Content, "Session started: 2020-01-02.")
	require.True(t, strings.HasSuffix(sys.Content, "\n\n"+instr), "the instructions end the system prompt")
	for i, r := range reqs {
		require.Equal(t, sys, r.Messages[0], "request %d's system message differs", i+1)
	}
	require.Equal(t, sys.Content, newAgent().SystemPrompt(sess))

	today := sessiontest.Open(t)
	other, err := today.CreateSession(context.Background(), "/w", "gpt-4o-mini")
	require.NoError(t, err)
	require.Contains(t, newAgent().SystemPrompt(other), "Session started: "+other.Created.Format("2006-01-02")+".")
}

// TestInstructionsCountInTheFixedCost: the instructions are part of what
// every request costs, counted exactly, and without them the fixed part
// stays under the design's 3,000 tokens.
func TestInstructionsCountInTheFixedCost(t *testing.T) {
	t.Parallel()
	ts := tools.New(tools.Options{WorkDir: t.TempDir()})
	c := vocabs.Counter("gpt-4o-mini")
	plain := New(nil, nil, ts, c, Options{Model: "gpt-4o-mini", WorkDir: "/w", Window: 8192})
	instr := "# Instructions from the user and the project\n" + strings.Repeat("Prefer table-driven tests. ", 100)
	with := New(nil, nil, ts, c, Options{Model: "gpt-4o-mini", WorkDir: "/w", Window: 8192, Instructions: instr})
	require.Zero(t, plain.InstructionTokens())
	n := with.InstructionTokens()
	require.Equal(t, with.FixedCost()-plain.FixedCost(), n)
	require.InDelta(t, c.Count("\n\n"+instr), n, 2)
	require.Less(t, plain.FixedCost(), 3000)
	b := with.Policy().Build(session.View{})
	require.Equal(t, n, b.Instructions)
	require.Equal(t, with.FixedCost(), b.Fixed)
}
