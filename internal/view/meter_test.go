package view

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
)

// meterPolicy masks early and cuts at small sizes, so that a short log
// meets every rule Measure must follow.
func meterPolicy() *Policy {
	return NewPolicy(Config{Window: 8000, SystemPrompt: "You are gencode.", Instructions: "Use tabs.",
		Overhead: 300, MaskAfter: 4, MaskBatch: 2, Count: idCount})
}

// idCount is roughCount with the ids, which a tokenizer counts too: a
// call whose id the policy replaces changes size.
func idCount(m session.Message) int {
	n := roughCount(m) + len(m.ToolCallID+m.Name)/4
	for _, c := range m.ToolCalls {
		n += len(c.ID) / 4
	}
	return n
}

// tallySeen is the store as Measure sees it, keeping the tally Measure
// took: whether the store summed the view (Plain) is known without
// tallying the same log a second time.
type tallySeen struct {
	*session.Store
	last session.Tally
}

func (s *tallySeen) Tally(ctx context.Context, id string, r session.TallyRule) (session.Tally, error) {
	t, err := s.Store.Tally(ctx, id, r)
	s.last = t
	return t, err
}

// meterPoint is what meterCheck saw at one point of a log: whether the
// store summed it (Tally.Plain), and the view built there.
type meterPoint struct {
	plain bool
	built Prompt
}

// meterCheck compares the meter with the view built, at one point of a
// log, and reports whether the store summed it (Tally.Plain).
func meterCheck(t *testing.T, p *Policy, st *session.Store, id, at string) meterPoint {
	t.Helper()
	ctx := context.Background()
	v, err := st.LoadView(ctx, id)
	require.NoError(t, err)
	want := p.Build(v)
	seen := &tallySeen{Store: st}
	got, err := p.Measure(ctx, seen, id)
	require.NoError(t, err)
	tally := seen.last
	require.Equal(t, want.Tokens, got.Tokens, "%s: the meter says what the next request holds (plain %v)", at, tally.Plain)
	require.Equal(t, []any{want.Window, want.Reserve, want.Learned, want.ConfiguredWindow, want.Fixed, want.Summaries},
		[]any{got.Window, got.Reserve, got.Learned, got.ConfiguredWindow, got.Fixed, got.Summaries}, at)
	require.Equal(t, []int{want.LogMessages, want.SummaryCount, want.MaskedCount, want.CutCount},
		[]int{got.LogMessages, got.SummaryCount, got.MaskedCount, got.CutCount}, at)
	require.Equal(t, []int{want.User, want.Assistant, want.ToolOutputs, want.Masked},
		[]int{got.User, got.Assistant, got.ToolOutputs, got.Masked}, "%s: /context's split by role (plain %v)", at, tally.Plain)
	return meterPoint{plain: tally.Plain, built: want}
}

// TestMeterKeepsTheAnswerReserve: with part of the window kept for the
// answer, the meter's window is what the prompt may take, and its reserve
// the rest, as Build says (/context shows both).
func TestMeterKeepsTheAnswerReserve(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	l := newLog(t, st)
	l.add(session.Message{Role: session.RoleUser, Content: "hello"}, session.Message{Role: session.RoleAssistant, Content: "hi"})
	p := NewPolicy(Config{Window: 8000, AnswerReserve: 1000, SystemPrompt: "You are gencode.", Count: idCount})
	require.True(t, meterCheck(t, p, st, l.id, "a short log").plain)
	got, err := p.Measure(context.Background(), st, l.id)
	require.NoError(t, err)
	require.Equal(t, []int{7000, 1000}, []int{got.Window, got.Reserve})
}

// summarizeSome applies a summary from the end of the last one to a
// random message, merging the active ones sometimes, as compactions do.
func summarizeSome(t *testing.T, r *rand.Rand, st *session.Store, id string) {
	t.Helper()
	ctx := context.Background()
	v, err := st.LoadView(ctx, id)
	require.NoError(t, err)
	if len(v.Messages) < 2 {
		return
	}
	from := v.SummarizedThrough() + 1
	to := v.Messages[r.IntN(len(v.Messages)-1)].Seq
	sum := session.Summary{SessionID: id, FromSeq: from, ToSeq: to, Fallback: true,
		Content:      fmt.Sprintf("Messages %d-%d: the user asked for fixes; %s", from, to, strings.Repeat("done ", r.IntN(50))),
		UserRequests: []string{fmt.Sprintf("request %d", from)}}
	var replaces []string
	if len(v.Summaries) > 0 && r.IntN(3) == 0 {
		sum.FromSeq = v.Summaries[0].FromSeq
		for _, s := range v.Summaries {
			replaces = append(replaces, s.ID)
		}
	}
	_, err = st.ApplySummary(ctx, sum, replaces, r.IntN(4) == 0)
	require.NoError(t, err)
}

// mends is how many kinds of things the policy mends meterTurn makes.
const mends = 12

// meterTurn is one turn of a generated log: a request, calls and their
// results (some large), an answer. With odd in [0, mends) it holds one
// of the things the policy mends.
func meterTurn(r *rand.Rand, k int, odd int) []session.Message {
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("word ", n)) }
	out := []session.Message{{Role: session.RoleUser, Content: fmt.Sprintf("step %d: %s", k, words(r.IntN(40)))}}
	if r.IntN(20) == 0 {
		out[0].Content += words(9000) // larger than a message may be once the window shrinks
	}
	a := session.Message{Role: session.RoleAssistant, Content: words(r.IntN(3) * 10)}
	var results []session.Message
	calls := r.IntN(4)
	if odd >= 0 && odd < mends-1 {
		calls = 2 + r.IntN(2)
	}
	for c := range calls {
		id := fmt.Sprintf("call_%d_%d", k, c)
		args, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("go test ./pkg%d", c)})
		a.ToolCalls = append(a.ToolCalls, session.ToolCall{ID: id, Name: "Bash", Arguments: string(args)})
		out := "ok " + words(r.IntN(200))
		if r.IntN(6) == 0 {
			out = words(1500 + r.IntN(3000)) // over the cap
		}
		exit := r.IntN(2)
		results = append(results, session.Message{Role: session.RoleTool, ToolCallID: id, Name: "Bash", Content: out,
			Meta: session.Meta{Tool: "Bash", Command: fmt.Sprintf("go test ./pkg%d", c), ExitCode: &exit}})
	}
	if odd >= 0 {
		switch odd {
		case 0: // a call without its result
			results = results[:len(results)-1]
		case 1: // a result that answers no call
			results = append(results, session.Message{Role: session.RoleTool, ToolCallID: "ghost", Name: "Bash", Content: "stray"})
		case 2: // an id used before (some local models number calls per turn)
			a.ToolCalls[0].ID, results[0].ToolCallID = "call_0", "call_0"
		case 3: // no arguments
			a.ToolCalls[0].Arguments = ""
		case 4: // arguments that are not an object
			a.ToolCalls[0].Arguments = "[1]"
		case 5: // no output (its stored count, with the id and name, differs from "(no output)"'s)
			results[0].Content, results[0].Tokens = "", 123456
		case 6: // results in another order
			results[0], results[len(results)-1] = results[len(results)-1], results[0]
		case 7: // results written after the answer (two processes)
			out = append(out, a, session.Message{Role: session.RoleAssistant, Content: "meanwhile"})
			return append(out, results...)
		case 8: // a turn that failed, sent again (Ctrl+R): the request twice in a row
			out = append([]session.Message{out[0]}, out...)
		case 9: // a turn that failed, then another message
			out = append([]session.Message{{Role: session.RoleUser, Content: "are you there? " + words(r.IntN(20))}}, out...)
		case 10: // a turn canceled after its results: no answer
			return append(append(out, a), results...)
		}
	}
	if len(a.ToolCalls) > 0 || a.Content != "" {
		out = append(out, a)
	}
	out = append(out, results...)
	answer := session.Message{Role: session.RoleAssistant, Content: "Done. " + words(r.IntN(30))}
	if odd == mends-1 {
		answer.Content = " \n\t" // blank: left out of requests
	}
	return append(out, answer)
}

// TestMeterEqualsTheBuiltView: the status bar's figure, added up in SQL,
// is what the next request holds, to the token, at every point of logs
// with masking (in batches), cuts (a window that shrinks too), summaries
// (merged, with originals deleted) and everything the policy mends; and
// a log the policy need not mend is summed, not loaded.
func TestMeterEqualsTheBuiltView(t *testing.T) {
	t.Parallel()
	for odd := -1; odd < mends; odd++ {
		name := "plain"
		if odd >= 0 {
			name = fmt.Sprintf("mend%d", odd)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(11, uint64(odd+2)))
			st := openStore(t)
			p := meterPolicy()
			l := newLog(t, st)
			plain, checks := 0, 0
			turns := 120
			if odd >= 0 || raceOn {
				turns = 40
			}
			for k := range turns {
				if k == turns*2/3 {
					require.True(t, p.Learn(5000), "the server names a smaller window")
				}
				kind := -1
				if k%5 == 3 {
					kind = odd
				}
				turn := meterTurn(r, k, kind)
				for len(turn) > 0 { // written as the agent does: a few at a time
					n := min(len(turn), 1+r.IntN(3))
					l.add(turn[:n]...)
					turn = turn[n:]
					at := fmt.Sprintf("turn %d", k)
					// A view Measure did not sum is not written to: the
					// view built before it is the view now.
					if pt := meterCheck(t, p, st, l.id, at); pt.plain {
						plain++
					} else if odd < 0 || odd == 5 { // 5: results with no output
						require.Positive(t, pt.built.Repaired,
							"%s: a view the policy need not mend is summed, not loaded (this one is mended only mid-turn, or when a summary ends between a call and its results)", at)
					}
					checks++
				}
				if r.IntN(12) == 0 {
					summarizeSome(t, r, st, l.id)
					meterCheck(t, p, st, l.id, fmt.Sprintf("turn %d summarized", k))
				}
			}
			t.Logf("%d of %d points summed in SQL", plain, checks)
			require.Positive(t, plain)
		})
	}
}

// TestMeterOnRealSessions: the same on recorded sessions of other agents
// (parallel calls, interrupted requests, tool names gencode lacks),
// written a few messages at a time and summarized as they grow.
func TestMeterOnRealSessions(t *testing.T) {
	t.Parallel()
	shared, err := filepath.Glob(filepath.Join(openaitest.SharedTestdata(t), "sessions", "*.openai.jsonl"))
	require.NoError(t, err)
	own, err := filepath.Glob(filepath.Join("..", "facts", "testdata", "sessions", "*.openai.jsonl"))
	require.NoError(t, err)
	files := append(shared, own...)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			msgs := sessiontest.ReadOpenAI(t, file, 1<<30)
			r := rand.New(rand.NewPCG(uint64(len(msgs)), 3))
			st := openStore(t)
			p := NewPolicy(Config{Window: 16000, SystemPrompt: "You are gencode.", Overhead: 500, MaskAfter: 6})
			l := newLog(t, st)
			plain, checks := 0, 0
			for i := 0; i < len(msgs); {
				if i > len(msgs)/2 && !p.Learned() {
					p.Learn(6000)
				}
				n := min(len(msgs)-i, 1+r.IntN(4))
				l.add(msgs[i : i+n]...)
				i += n
				if meterCheck(t, p, st, l.id, fmt.Sprintf("message %d", i)).plain {
					plain++
				}
				checks++
				if r.IntN(15) == 0 {
					summarizeSome(t, r, st, l.id)
					meterCheck(t, p, st, l.id, fmt.Sprintf("message %d summarized", i))
				}
			}
			t.Logf("%d messages: %d of %d points summed in SQL", len(msgs), plain, checks)
		})
	}
}
