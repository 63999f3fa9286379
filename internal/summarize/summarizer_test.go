package summarize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/facts"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/view"
)

// reports collects reports from any goroutine.
type reports struct {
	mu   sync.Mutex
	list []Report
}

func (r *reports) add(rep Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, rep)
}

func (r *reports) all() []Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Report(nil), r.list...)
}

func (r *reports) finished() []Report {
	var out []Report
	for _, rep := range r.all() {
		if rep.Phase == Finished {
			out = append(out, rep)
		}
	}
	return out
}

// seedTurns appends n turns, each writing a file and running a command;
// turn 3 states a fact.
func seedTurns(l *logBuilder, from, n int) {
	for i := from; i < from+n; i++ {
		user := fmt.Sprintf("Turn %d: add feature %d to the service.", i, i)
		if i == 3 {
			user += " Remember: the codename is FACT-BLUEFALCON."
		}
		l.turn(user, writeCall(fmt.Sprintf("/w/pkg/f%d.go", i), strings.Repeat("x", 200)),
			bashCall(fmt.Sprintf("go test ./pkg/f%d", i), strings.Repeat("ok line\n", 20), 0))
	}
}

func TestSummarizeNowKeepsEveryOriginal(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 20)
	before := l.allMessages()
	llm := &fakeLLM{}
	s := newSummarizer(store, llm, charCounter{}, testConfig(16000))
	defer s.Close()

	rep, err := s.SummarizeNow(context.Background(), l.id[:6], "the codename")
	require.NoError(t, err)
	require.Equal(t, Finished, rep.Phase)
	require.False(t, rep.Fallback)
	sum := rep.Summary
	require.EqualValues(t, 1, sum.FromSeq)
	require.Contains(t, sum.Content, "FACT-BLUEFALCON")
	require.Equal(t, "the codename", sum.Focus)
	require.Contains(t, llm.requests()[0].Prompt, `focus on: "the codename"`)
	require.Less(t, sum.TokensAfter, sum.TokensBefore)
	require.Less(t, sum.MessagesAfter, sum.MessagesBefore)
	require.Equal(t, "summarizer", sum.Model)
	require.NotEmpty(t, sum.KeyDecisions)

	// The log still holds every message, unchanged.
	require.Equal(t, before, l.allMessages())
	v := l.view()
	require.Len(t, v.Summaries, 1)
	require.EqualValues(t, sum.ToSeq+1, v.Messages[0].Seq)
	require.Contains(t, s.View().Build(v).Messages[0].Content, "FACT-BLUEFALCON", "the summary block is sent")

	// The latest user request and preserve_recent messages stay verbatim.
	require.GreaterOrEqual(t, len(v.Messages), s.Config().PreserveRecent)
	require.NotEqual(t, session.RoleTool, v.Messages[0].Role)
}

func TestSummarizeNowNothingToSummarize(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 1)
	llm := &fakeLLM{}
	s := newSummarizer(store, llm, charCounter{}, testConfig(16000))
	defer s.Close()
	rep, err := s.SummarizeNow(context.Background(), l.id, "")
	require.ErrorIs(t, err, ErrNothingToSummarize)
	require.Equal(t, Finished, rep.Phase)
	require.Nil(t, rep.Summary)
	require.Empty(t, llm.requests())
	require.Empty(t, l.view().Summaries)
}

// TestPrepareNeverWaitsBelowHard holds the summarizer open and checks that
// Prepare returns at once, starts one job, and picks up its summary later.
func TestPrepareNeverWaitsBelowHard(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 14)
	gate := make(chan struct{})
	llm := &fakeLLM{gate: gate}
	cfg := testConfig(windowAt(l, 0.7))
	var got reports
	cfg.Notify = got.add
	s := newSummarizer(store, llm, charCounter{}, cfg)
	defer s.Close()

	v := l.view()
	tok := viewTokens(s, v)
	soft, hard := s.thresholds()
	require.True(t, tok >= soft && tok < hard, "seeded view of %d tokens must be between %d and %d", tok, soft, hard)
	start := time.Now()
	v2, err := s.Prepare(context.Background(), v, tok)
	require.NoError(t, err)
	require.Equal(t, v, v2, "nothing applied yet")
	require.Len(t, got.all(), 1)
	require.Equal(t, Started, got.all()[0].Phase)
	require.True(t, got.all()[0].Background)
	// While it runs, more turns and Prepares neither wait nor start another.
	seedTurns(l, 15, 2)
	for i := 0; i < 3; i++ {
		_, err := s.Prepare(context.Background(), l.view(), viewTokens(s, l.view()))
		require.NoError(t, err)
	}
	require.Less(t, time.Since(start), 10*time.Second, "Prepare waited for the summarizer (which never answers)")
	require.Len(t, got.all(), 1, "a second job started")
	require.Eventually(t, func() bool { return len(llm.requests()) == 1 }, 5*time.Second, time.Millisecond)

	close(gate)
	s.Wait()
	v = l.view()
	require.Len(t, v.Summaries, 1, "applied once the summarizer answered")
	// Messages that arrived meanwhile stay after the summary.
	require.Greater(t, v.Messages[len(v.Messages)-1].Seq, v.Summaries[0].ToSeq)

	// The next Prepare hands the turn the new view; the report went to
	// Notify when the job ended.
	stale := v
	stale.Summaries = nil
	stale.Messages = l.allMessages()
	v3, err := s.Prepare(context.Background(), stale, viewTokens(s, stale))
	require.NoError(t, err)
	require.Equal(t, v.SummarizedThrough(), v3.SummarizedThrough())
	fin := got.finished()
	require.Len(t, fin, 1)
	require.True(t, fin[0].Background)
}

// TestHardThresholdCutsASlowSummaryShort: a background summary whose
// summarizer hangs does not hold the turn that reaches the hard threshold
// longer than WaitLimit: its calls are cut short and the deterministic
// summary is applied.
func TestHardThresholdCutsASlowSummaryShort(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 14)
	llm := &fakeLLM{gate: make(chan struct{})} // never answers
	cfg := testConfig(windowAt(l, 0.7))
	cfg.WaitLimit = 100 * time.Millisecond
	var got reports
	cfg.Notify = got.add
	s := newSummarizer(store, llm, charCounter{}, cfg)
	defer s.Close()
	v := l.view()
	_, err := s.Prepare(context.Background(), v, viewTokens(s, v))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(llm.requests()) == 1 }, 5*time.Second, time.Millisecond)

	seedTurns(l, 15, 6)
	v = l.view()
	_, hard := s.thresholds()
	require.GreaterOrEqual(t, viewTokens(s, v), hard)
	start := time.Now()
	v2, err := s.Prepare(context.Background(), v, viewTokens(s, v))
	require.NoError(t, err)
	require.Less(t, time.Since(start), 10*time.Second, "the turn waited for a summarizer that never answers")
	require.NotEmpty(t, v2.Summaries)
	require.True(t, v2.Summaries[0].Fallback)
	require.Contains(t, v2.Summaries[0].FallbackReason, "before the summarizer answered")
	require.Less(t, viewTokens(s, v2), hard)
}

// TestSlowSummarizerDoesNotHoldTheTurn: at the hard threshold the turn
// waits for the summarizer at most WaitLimit, goes on with the
// deterministic summary, and the narrative replaces it in the background
// once the summarizer answers.
func TestSlowSummarizerDoesNotHoldTheTurn(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 16)
	gate := make(chan struct{})
	llm := &fakeLLM{gate: gate}
	cfg := testConfig(windowAt(l, 0.95))
	cfg.WaitLimit = 100 * time.Millisecond
	var got reports
	cfg.Notify = got.add
	s := newSummarizer(store, llm, charCounter{}, cfg)
	defer s.Close()
	v := l.view()
	start := time.Now()
	v2, err := s.Prepare(context.Background(), v, viewTokens(s, v))
	require.NoError(t, err)
	require.Less(t, time.Since(start), 10*time.Second, "the turn waited for the summarizer's answer")
	require.Len(t, v2.Summaries, 1)
	fallback := v2.Summaries[0]
	require.True(t, fallback.Fallback)
	require.Contains(t, fallback.FallbackReason, "did not answer within 100ms while the turn waited")

	close(gate)
	s.Wait()
	v3 := l.view()
	require.Len(t, v3.Summaries, 1)
	up := v3.Summaries[0]
	require.False(t, up.Fallback)
	require.Equal(t, []string{fallback.ID}, up.Merged)
	require.Equal(t, fallback.FromSeq, up.FromSeq)
	require.Equal(t, fallback.ToSeq, up.ToSeq)
	require.Contains(t, up.Content, "FACT-BLUEFALCON")
	require.Equal(t, fallback.Commands, up.Commands, "the facts stay as they were")

	// The next Prepare hands the turn the upgraded view; Notify had the
	// upgrade's report.
	v4, err := s.Prepare(context.Background(), v2, viewTokens(s, v2))
	require.NoError(t, err)
	require.Equal(t, up.ID, v4.Summaries[0].ID)
	fin := got.finished()
	require.Len(t, fin, 2)
	require.True(t, fin[1].Background)
	require.Equal(t, up.ID, fin[1].Summary.ID)
}

func TestPrepareHardCompactsFirst(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 16)
	cfg := testConfig(windowAt(l, 0.95))
	var got reports
	cfg.Notify = got.add
	s := newSummarizer(store, &fakeLLM{}, charCounter{}, cfg)
	defer s.Close()
	v := l.view()
	tok := viewTokens(s, v)
	_, hard := s.thresholds()
	require.GreaterOrEqual(t, tok, hard)
	v2, err := s.Prepare(context.Background(), v, tok)
	require.NoError(t, err)
	require.Len(t, v2.Summaries, 1)
	require.Less(t, viewTokens(s, v2), hard)
	reps := got.all()
	require.Len(t, reps, 2)
	require.Equal(t, Started, reps[0].Phase)
	require.False(t, reps[0].Background)
	require.Equal(t, Finished, reps[1].Phase)
}

// TestSummarizerFaults: whatever the summarizer does wrong, at most
// MaxAttempts calls are made, the originals are intact and the
// deterministic summary is applied, flagged.
func TestSummarizerFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		answer  func(Request) (Completion, error)
		gate    bool
		wantWhy string
	}{
		{name: "server error", answer: func(Request) (Completion, error) {
			return Completion{}, errors.New("chat completion summarizer: 500 internal error")
		}, wantWhy: "500"},
		{name: "timeout", gate: true, wantWhy: "no answer within"},
		{name: "empty answer", answer: func(Request) (Completion, error) { return Completion{Text: "  \n"}, nil }, wantWhy: "empty"},
		{name: "answer longer than its input", answer: func(r Request) (Completion, error) {
			return Completion{Text: strings.Repeat(r.Prompt, 2)}, nil
		}, wantWhy: "not shorter than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := openStore(t)
			l := newLog(t, store)
			seedTurns(l, 1, 16)
			before := l.allMessages()
			llm := &fakeLLM{answer: tt.answer}
			if tt.gate {
				llm.gate = make(chan struct{})
			}
			cfg := testConfig(windowAt(l, 0.95))
			cfg.AttemptTimeout = 50 * time.Millisecond
			var got reports
			cfg.Notify = got.add
			s := newSummarizer(store, llm, charCounter{}, cfg)
			defer s.Close()
			v := l.view()
			v2, err := s.Prepare(context.Background(), v, viewTokens(s, v))
			require.NoError(t, err)
			require.LessOrEqual(t, len(llm.requests()), 3)
			require.Equal(t, before, l.allMessages(), "originals intact")
			require.Len(t, v2.Summaries, 1)
			sum := v2.Summaries[0]
			require.True(t, sum.Fallback)
			require.Contains(t, sum.FallbackReason, tt.wantWhy)
			require.Empty(t, sum.Content, "no error text stored as a narrative")
			require.Contains(t, sum.FilesModified, "/w/pkg/f1.go")
			require.Contains(t, sum.Commands, "go test ./pkg/f1")
			fin := got.finished()
			require.Len(t, fin, 1)
			require.True(t, fin[0].Fallback)
			require.Error(t, fin[0].Err)
			require.Contains(t, view.RenderSummary(sum), "FACT-BLUEFALCON", "the user's requests survive without an LLM")
		})
	}
}

// TestFailingSummarizerIsLeftAlone: after three compactions in a row whose
// summarizer failed, it is not asked again until the view grows by a tenth
// of the window.
func TestFailingSummarizerIsLeftAlone(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	llm := &fakeLLM{answer: func(Request) (Completion, error) { return Completion{}, errors.New("503") }}
	seedTurns(l, 1, 16)
	cfg := testConfig(windowAt(l, 0.95))
	cfg.MaxAttempts = 1
	s := newSummarizer(store, llm, charCounter{}, cfg)
	defer s.Close()
	calls := []int{}
	for round := 0; round < 5; round++ {
		if round > 0 {
			seedTurns(l, round*16+1, 16)
		}
		v := l.view()
		_, err := s.Prepare(context.Background(), v, viewTokens(s, v))
		require.NoError(t, err)
		s.Wait()
		calls = append(calls, len(llm.requests()))
	}
	require.Equal(t, []int{1, 2, 3}, calls[:3])
	require.Equal(t, calls[2], calls[3], "a fourth failing compaction asked the summarizer again")
	for _, sm := range l.view().Summaries {
		require.True(t, sm.Fallback)
	}
}

// TestWeakCompactionHolds: a compaction that cannot save 20% is not
// retried at every request (no loop).
func TestWeakCompactionHolds(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 2)
	// One huge recent turn: nothing older is worth summarizing.
	l.turn("Paste: "+strings.Repeat("lorem ipsum ", 1200), bashCall("cat big.log", strings.Repeat("y", 8000), 0))
	llm := &fakeLLM{}
	cfg := testConfig(8000)
	s := newSummarizer(store, llm, charCounter{}, cfg)
	defer s.Close()
	for i := 0; i < 5; i++ {
		v := l.view()
		_, err := s.Prepare(context.Background(), v, viewTokens(s, v))
		require.NoError(t, err)
		s.Wait()
	}
	require.LessOrEqual(t, len(llm.requests()), 1, "compaction retried without growth")
}

func TestChunksWhenTheRangeExceedsTheSummarizerWindow(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 40)
	llm := &fakeLLM{}
	cfg := testConfig(64000)
	cfg.SummaryWindow = 3000
	s := newSummarizer(store, llm, charCounter{}, cfg)
	defer s.Close()
	rep, err := s.SummarizeNow(context.Background(), l.id, "")
	require.NoError(t, err)
	require.False(t, rep.Fallback, "%v", rep.Err)
	require.Greater(t, rep.Summary.Chunks, 1)
	reqs := llm.requests()
	require.Greater(t, len(reqs), rep.Summary.Chunks, "chunks then a merge")
	for _, r := range reqs {
		require.Less(t, charCounter{}.Count(r.System+r.Prompt)+r.MaxTokens, cfg.SummaryWindow, "a summarizer request overflows its window")
	}
	require.Contains(t, reqs[len(reqs)-1].System, "merge")
	require.Contains(t, rep.Summary.Content, "FACT-BLUEFALCON")
}

func TestMergeWhenTheBlockPassesItsBudget(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	llm := &fakeLLM{}
	cfg := testConfig(4000)
	s := newSummarizer(store, llm, charCounter{}, cfg)
	defer s.Close()
	var merged *session.Summary
	for round := 0; round < 8 && merged == nil; round++ {
		seedTurns(l, round*6+1, 6)
		rep, err := s.SummarizeNow(context.Background(), l.id, "")
		require.NoError(t, err)
		merged = rep.Merged
		t.Logf("round %d: block %d tokens, %d summaries", round, view.BlockTokens(l.view().Summaries), len(l.view().Summaries))
	}
	require.NotNil(t, merged, "the block never merged")
	require.GreaterOrEqual(t, len(merged.Merged), 2)
	require.Contains(t, merged.Content, "FACT-BLUEFALCON")
	all, err := store.Summaries(context.Background(), l.id, true)
	require.NoError(t, err)
	superseded := 0
	for _, sm := range all {
		if sm.SupersededBy == merged.ID {
			superseded++
		}
	}
	require.Equal(t, len(merged.Merged), superseded, "merged summaries are kept, superseded")
	b := s.budgets(s.fixedCost())
	require.LessOrEqual(t, view.BlockTokens(l.view().Summaries), b.block+b.perSummary)
}

// TestNestedCompactionsKeepFilesAndCommands is acceptance 6: after five
// nested compactions (with merges) every file modified and every command
// run is still in the active summaries, whatever the LLM wrote, for random
// sessions and with a summarizer that drops everything or fails.
func TestNestedCompactionsKeepFilesAndCommands(t *testing.T) {
	t.Parallel()
	llms := map[string]func(Request) (Completion, error){
		"faithful": nil,
		"forgetful": func(Request) (Completion, error) {
			return Completion{Text: "## Goal\n- stuff\n## Current state\n- fine"}, nil
		},
		"failing": func(Request) (Completion, error) { return Completion{}, errors.New("boom") },
	}
	tools := []string{"Write", "Edit", "MultiEdit", "str_replace_editor", "create_file"}
	shells := []string{"Bash", "run_terminal_cmd", "shell"}
	for name, answer := range llms {
		for seed := int64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", name, seed), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewSource(seed))
				store := openStore(t)
				l := newLog(t, store)
				cfg := testConfig(6000)
				cfg.MaxAttempts = 1
				cfg.SummaryBudgetRatio = 0.1 // a small block: summaries of summaries early
				s := newSummarizer(store, &fakeLLM{answer: answer}, charCounter{}, cfg)
				defer s.Close()
				wantFiles, wantCmds := map[string]bool{}, map[string]bool{}
				compactions, merges := 0, 0
				for round := 0; compactions < 5 || merges < 2; round++ {
					require.Less(t, round, 40, "five compactions and two merges never happened")
					for i := 0; i < 4+rng.Intn(6); i++ {
						var calls []call
						for j := 0; j < 1+rng.Intn(3); j++ {
							path := fmt.Sprintf("/w/r%d/file_%d_%d.go", round, i, j)
							tool := tools[rng.Intn(len(tools))]
							args, _ := json.Marshal(map[string]string{"file_path": path, "path": path, "command": "create", "content": "x"})
							if tool == "str_replace_editor" {
								args, _ = json.Marshal(map[string]string{"path": path, "command": "str_replace", "old_str": "a", "new_str": "b"})
							}
							calls = append(calls, call{name: tool, args: string(args), output: "ok"})
							wantFiles[path] = true
							cmd := fmt.Sprintf("make step-%d-%d-%d", round, i, j)
							cargs, _ := json.Marshal(map[string]string{"command": cmd})
							calls = append(calls, call{name: shells[rng.Intn(len(shells))], args: string(cargs), output: "done"})
							wantCmds[cmd] = true
						}
						l.turn(fmt.Sprintf("round %d step %d", round, i), calls...)
					}
					rep, err := s.SummarizeNow(context.Background(), l.id, "")
					if errors.Is(err, ErrNothingToSummarize) {
						continue
					}
					require.NoError(t, err)
					compactions++
					if rep.Merged != nil {
						merges++
					}
				}
				t.Logf("%d compactions, %d merges, %d files, %d commands", compactions, merges, len(wantFiles), len(wantCmds))
				v := l.view()
				gotFiles, gotCmds := map[string]bool{}, map[string]bool{}
				for _, sm := range v.Summaries {
					for _, f := range sm.FilesModified {
						gotFiles[f] = true
					}
					for _, c := range sm.Commands {
						gotCmds[c] = true
					}
				}
				// What is still unsummarized is in the view itself.
				tail := facts.Extract(v.Messages, true)
				for _, f := range tail.FilesModified {
					gotFiles[f] = true
				}
				for _, c := range tail.Commands {
					gotCmds[c] = true
				}
				for f := range wantFiles {
					require.True(t, gotFiles[f], "file %s lost after %d compactions", f, compactions)
				}
				for c := range wantCmds {
					require.True(t, gotCmds[c], "command %q lost after %d compactions", c, compactions)
				}
			})
		}
	}
}

// TestSecretsNeverLeave is acceptance 7 at the package level: every secret
// of the corpus, said by the user, written to a file, passed on a command
// line and printed by a tool, is absent from every summarizer request and
// from the stored summary: a pasted transcript, and a request that
// continues the conversation (its messages are redacted too).
func TestSecretsNeverLeave(t *testing.T) {
	t.Parallel()
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cached prefix %v", cached), func(t *testing.T) {
			t.Parallel()
			secretsNeverLeave(t, cached)
		})
	}
}

func secretsNeverLeave(t *testing.T, cached bool) {
	store := openStore(t)
	l := newLog(t, store)
	secretCorpus, _ := corpus(t)
	for i, sc := range secretCorpus {
		l.turn(fmt.Sprintf("Step %d: use this: %s", i, sc.Text),
			writeCall(fmt.Sprintf("/w/conf%d.env", i), sc.Text),
			bashCall("deploy --config "+sc.Text, "deployed with "+sc.Text, 0))
	}
	seedTurns(l, 100, 4)
	// The summarizer repeats whatever it is sent, each line as a bullet
	// (a bare echo of the prompt is rejected as one).
	llm := &fakeLLM{answer: func(r Request) (Completion, error) {
		var b strings.Builder
		b.WriteString("## Goal\n- deploy\n## Current state\n")
		in := r.Prompt // the history: pasted here, or the conversation before it
		for _, m := range r.Conversation {
			in += "\n" + m.Content
		}
		for _, line := range strings.Split(in, "\n") {
			if t := strings.TrimSpace(transcriptLineRe().ReplaceAllString(line, "")); t != "" && !strings.HasPrefix(t, "<") {
				b.WriteString("- " + t + "\n")
			}
		}
		return Completion{Text: b.String()[:min(b.Len(), 12000)]}, nil
	}}
	cfg := testConfig(200000)
	cfg.CachedPrefix = cached
	s := newSummarizer(store, llm, charCounter{}, cfg)
	defer s.Close()
	rep, err := s.SummarizeNow(context.Background(), l.id, "")
	require.NoError(t, err)
	require.False(t, rep.Fallback, "the narrative is stored: %v", rep.Err)
	stored, err := json.Marshal(rep.Summary)
	require.NoError(t, err)
	all, err := store.Summaries(context.Background(), l.id, true)
	require.NoError(t, err)
	fromDB, err := json.Marshal(all)
	require.NoError(t, err)
	for _, sc := range secretCorpus {
		for _, r := range llm.requests() {
			require.NotContains(t, r.text(), sc.Secret, "%s reached the summarizer", sc.Name)
		}
		require.NotContains(t, string(stored), sc.Secret, "%s stored in the summary", sc.Name)
		require.NotContains(t, string(fromDB), sc.Secret, "%s stored in the summary", sc.Name)
	}
	require.Contains(t, string(fromDB), "[REDACTED:")
	// Redaction is off when the user turns it off.
	cfg.RedactSecrets = false
	l2 := newLog(t, store)
	l2.turn("the key is "+secretCorpus[0].Text, writeCall("/w/a", "x"))
	seedTurns(l2, 1, 3)
	s2 := newSummarizer(store, &fakeLLM{}, charCounter{}, cfg)
	defer s2.Close()
	rep, err = s2.SummarizeNow(context.Background(), l2.id, "")
	require.NoError(t, err)
	require.Contains(t, rep.Summary.UserRequests[0], secretCorpus[0].Secret)
}

func TestCloseStopsBackgroundWork(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 14)
	llm := &fakeLLM{gate: make(chan struct{})}                                   // never answers
	s := newSummarizer(store, llm, charCounter{}, testConfig(windowAt(l, 0.65))) // past the soft threshold
	v := l.view()
	_, err := s.Prepare(context.Background(), v, viewTokens(s, v))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(llm.requests()) == 1 }, 5*time.Second, time.Millisecond)
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not stop the background compaction")
	}
	require.Empty(t, l.view().Summaries, "a canceled compaction applied something")
	_, err = s.SummarizeNow(context.Background(), l.id, "")
	require.ErrorIs(t, err, ErrClosed)
}

func TestDeleteOriginalsIsRecorded(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 12)
	cfg := testConfig(16000)
	cfg.DeleteOriginals = true
	s := newSummarizer(store, &fakeLLM{}, charCounter{}, cfg)
	defer s.Close()
	rep, err := s.SummarizeNow(context.Background(), l.id, "")
	require.NoError(t, err)
	dels, err := store.Deletions(context.Background(), l.id)
	require.NoError(t, err)
	require.Len(t, dels, 1)
	require.Equal(t, rep.Summary.ID, dels[0].SummaryID)
	require.Len(t, l.allMessages(), 12*5, "messages stay in the log, their text replaced")
	require.True(t, l.allMessages()[0].Meta.Deleted)
}

// TestFallbackNeverDeletesOriginals: with delete_originals on, a failed
// summarizer must not cost the user the originals; only the deterministic
// summary exists then, and it cannot stand in for them.
func TestFallbackNeverDeletesOriginals(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 12)
	cfg := testConfig(16000)
	cfg.DeleteOriginals = true
	llm := &fakeLLM{answer: func(Request) (Completion, error) { return Completion{}, errors.New("500 from the provider") }}
	s := newSummarizer(store, llm, charCounter{}, cfg)
	defer s.Close()
	rep, err := s.SummarizeNow(context.Background(), l.id, "")
	require.NoError(t, err)
	require.True(t, rep.Summary.Fallback, "the summarizer failed: the deterministic summary is used")
	dels, err := store.Deletions(context.Background(), l.id)
	require.NoError(t, err)
	require.Empty(t, dels)
	for _, m := range l.allMessages() {
		require.False(t, m.Meta.Deleted, "message %d deleted under a fallback summary", m.Seq)
	}
}

// TestSummarizeFocusRightAfterASummary: "/summarize FOCUS" straight after
// a summary has nothing new to cover; it summarizes the latest range again
// with the focus, replacing that summary, instead of "nothing to summarize".
// Without a focus it is still nothing to do.
func TestSummarizeFocusRightAfterASummary(t *testing.T) {
	t.Parallel()
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cached prefix %v", cached), func(t *testing.T) {
			t.Parallel()
			summarizeFocusRightAfterASummary(t, cached)
		})
	}
}

// summarizeFocusRightAfterASummary: the originals of a refocused range are
// no longer in the conversation, so they are pasted whatever CachedPrefix
// says.
func summarizeFocusRightAfterASummary(t *testing.T, cached bool) {
	store := openStore(t)
	l := newLog(t, store)
	seedTurns(l, 1, 20)
	llm := &fakeLLM{}
	cfg := testConfig(16000)
	cfg.CachedPrefix = cached
	policy := view.NewPolicy(view.Config{Window: 16000, SystemPrompt: "You are gencode.", Overhead: 300, MaskAfter: 10})
	s := New(store, llm, charCounter{}, policy, cfg)
	defer s.Close()
	first, err := s.SummarizeNow(context.Background(), l.id, "")
	require.NoError(t, err)
	require.NotNil(t, first.Summary)

	_, err = s.SummarizeNow(context.Background(), l.id, "")
	require.ErrorIs(t, err, ErrNothingToSummarize, "no focus, nothing new: nothing to do")

	// The refocused narrative is longer than the first.
	llm.mu.Lock()
	llm.answer = func(req Request) (Completion, error) {
		return Completion{Text: echoSummary(req) + "## Focus\n- how the test runs, step by step, in more words than before\n"}, nil
	}
	llm.mu.Unlock()
	beforeView := policy.Tokens(l.view())
	rep, err := s.SummarizeNow(context.Background(), l.id, "the test runs")
	require.NoError(t, err)
	require.Equal(t, Finished, rep.Phase)
	sum := rep.Summary
	require.NotNil(t, sum)
	// Its figures are the view's, measured before and after it replaced
	// the old summary (not the old summary's, not one number twice).
	afterView := policy.Tokens(l.view())
	require.Equal(t, beforeView, sum.TokensBefore, "tokens before")
	require.Equal(t, afterView, sum.TokensAfter, "tokens after")
	require.Greater(t, sum.TokensAfter, sum.TokensBefore, "a longer summary")
	require.Equal(t, "the test runs", sum.Focus)
	require.Equal(t, first.Summary.FromSeq, sum.FromSeq)
	require.Equal(t, first.Summary.ToSeq, sum.ToSeq)
	reqs := llm.requests()
	require.Contains(t, reqs[len(reqs)-1].Prompt, `focus on: "the test runs"`)
	require.Empty(t, reqs[len(reqs)-1].Conversation, "the originals are pasted")
	require.Contains(t, reqs[len(reqs)-1].Prompt, "[11] USER:", "the originals are pasted")
	require.Contains(t, sum.Content, "FACT-BLUEFALCON", "the originals were summarized again")

	// The new summary replaced the old one; the messages after it are as
	// they were.
	v := l.view()
	require.Len(t, v.Summaries, 1)
	require.Equal(t, sum.ID, v.Summaries[0].ID)
	require.EqualValues(t, sum.ToSeq+1, v.Messages[0].Seq)
	all, err := store.Summaries(context.Background(), l.id, true)
	require.NoError(t, err)
	require.Len(t, all, 2)
	for _, x := range all {
		if x.ID == first.Summary.ID {
			require.Equal(t, sum.ID, x.SupersededBy)
		}
		if x.ID == sum.ID {
			require.Equal(t, [2]int{beforeView, afterView}, [2]int{x.TokensBefore, x.TokensAfter}, "the stored figures")
		}
	}
}

// TestMessageTriggerIsSecondary: trigger_threshold messages start a
// background compaction only once the context also holds half the soft
// threshold's tokens; many short messages are left alone.
func TestMessageTriggerIsSecondary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		ratio     float64 // of the window the view takes
		wantStart bool
	}{
		{name: "short messages in a large window", ratio: 0.1},
		{name: "below half the soft threshold", ratio: 0.28},
		{name: "above it", ratio: 0.32, wantStart: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := openStore(t)
			l := newLog(t, store)
			seedTurns(l, 1, 14) // 56 messages: past trigger_threshold 50
			llm := &fakeLLM{gate: make(chan struct{})}
			cfg := testConfig(windowAt(l, tt.ratio))
			cfg.CachedPrice = -1 // the message trigger alone; the cache-aware one is TestCacheAwareTrigger's
			var got reports
			cfg.Notify = got.add
			s := newSummarizer(store, llm, charCounter{}, cfg)
			defer s.Close()
			v := l.view()
			require.Greater(t, len(v.Messages), cfg.TriggerThreshold)
			_, err := s.Prepare(context.Background(), v, viewTokens(s, v))
			require.NoError(t, err)
			if !tt.wantStart {
				require.Empty(t, got.all())
				return
			}
			require.Len(t, got.all(), 1)
			require.True(t, got.all()[0].Background)
			require.Contains(t, got.all()[0].Reason, "trigger_threshold 50")
		})
	}
}

// timeoutErr is a client's error for an endpoint that stayed silent (the
// LLM client's timeouts have this method, as net.Error does).
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "no response headers from summarizer.test for 1s" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return false }

// TestSilentSummarizerIsAskedOnce: a summarizer that stays silent past a
// timeout used to be asked again for each attempt left (3) and so on
// through the chunks: about 6 minutes of waiting before the fallback. Now
// a silence ends the compaction's calls at once: one request, then the
// deterministic summary. Other failures still get their attempts.
func TestSilentSummarizerIsAskedOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		answer   func(Request) (Completion, error)
		gate     bool
		wantReqs int
		wantWhy  string
	}{
		{name: "the client timed out", wantReqs: 1, wantWhy: "no response headers",
			answer: func(Request) (Completion, error) {
				return Completion{}, fmt.Errorf("chat completion s: %w", timeoutErr{})
			}},
		{name: "the attempt timed out", gate: true, wantReqs: 1, wantWhy: "no answer within"},
		{name: "a deadline", wantReqs: 1, wantWhy: "deadline",
			answer: func(Request) (Completion, error) { return Completion{}, context.DeadlineExceeded }},
		{name: "a server error is retried", wantReqs: 3, wantWhy: "500",
			answer: func(Request) (Completion, error) { return Completion{}, errors.New("chat completion s: 500") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := openStore(t)
			l := newLog(t, store)
			seedTurns(l, 1, 16)
			llm := &fakeLLM{answer: tt.answer}
			if tt.gate {
				llm.gate = make(chan struct{})
			}
			cfg := testConfig(windowAt(l, 0.95))
			cfg.AttemptTimeout = 50 * time.Millisecond
			cfg.SummaryWindow = 1200 // the range goes in chunks
			s := newSummarizer(store, llm, charCounter{}, cfg)
			defer s.Close()
			rep, err := s.SummarizeNow(context.Background(), l.id, "")
			require.NoError(t, err)
			require.NotNil(t, rep.Summary)
			require.True(t, rep.Summary.Fallback)
			require.Contains(t, rep.Summary.FallbackReason, tt.wantWhy)
			reqs := llm.requests()
			require.Len(t, reqs, tt.wantReqs)
			require.Contains(t, reqs[0].Prompt, "part 1 of", "the range goes in chunks")
		})
	}
}

// TestRewoundMessagesNeverReachASummary: a conversation rewind took a turn
// out of the view; the next compaction's range, chosen from the view,
// spans it. Neither the first summary, nor "/summarize FOCUS" (which
// reads the range's originals again), nor the narrative written later for
// a deterministic summary (upgrade) sends the rewound turn's text.
func TestRewoundMessagesNeverReachASummary(t *testing.T) {
	t.Parallel()
	const secret = "FACT-REWOUNDSECRET"
	seed := func(t *testing.T) (*session.Store, *logBuilder, int64) {
		store := openStore(t)
		l := newLog(t, store)
		seedTurns(l, 1, 3)
		hidden := l.add(session.Message{Role: session.RoleUser, Content: "Turn rewound: the codename is " + secret + "."},
			session.Message{Role: session.RoleAssistant, Content: "Noted " + secret + "."})
		_, err := store.RecordRewind(context.Background(), session.Rewind{SessionID: l.id, Kind: session.RewindTurn, Turn: 4, FromSeq: hidden[0].Seq})
		require.NoError(t, err)
		seedTurns(l, 5, 16)
		return store, l, hidden[0].Seq
	}
	spans := func(t *testing.T, sum session.Summary, seq int64) {
		require.LessOrEqual(t, sum.FromSeq, seq, "the summary's range spans the rewound turn")
		require.GreaterOrEqual(t, sum.ToSeq, seq, "the summary's range spans the rewound turn")
	}
	never := func(t *testing.T, llm *fakeLLM, l *logBuilder) {
		for i, r := range llm.requests() {
			require.NotContains(t, r.text(), secret, "request %d", i)
		}
		for _, s := range l.view().Summaries {
			require.NotContains(t, s.Content, secret)
		}
	}

	t.Run("refocus", func(t *testing.T) {
		t.Parallel()
		store, l, seq := seed(t)
		llm := &fakeLLM{}
		s := newSummarizer(store, llm, charCounter{}, testConfig(16000))
		defer s.Close()
		first, err := s.SummarizeNow(context.Background(), l.id, "")
		require.NoError(t, err)
		spans(t, *first.Summary, seq)
		rep, err := s.SummarizeNow(context.Background(), l.id, "the codename")
		require.NoError(t, err)
		require.Equal(t, first.Summary.FromSeq, rep.Summary.FromSeq, "the range summarized again")
		require.Contains(t, rep.Summary.Content, "FACT-BLUEFALCON", "its visible originals were read")
		never(t, llm, l)
	})

	t.Run("upgrade", func(t *testing.T) {
		t.Parallel()
		store, l, seq := seed(t)
		gate := make(chan struct{})
		llm := &fakeLLM{gate: gate}
		cfg := testConfig(windowAt(l, 0.95))
		cfg.WaitLimit = 100 * time.Millisecond
		s := newSummarizer(store, llm, charCounter{}, cfg)
		defer s.Close()
		v := l.view()
		v2, err := s.Prepare(context.Background(), v, viewTokens(s, v))
		require.NoError(t, err)
		require.Len(t, v2.Summaries, 1)
		require.True(t, v2.Summaries[0].Fallback)
		spans(t, v2.Summaries[0], seq)
		close(gate)
		s.Wait()
		up := l.view().Summaries[0]
		require.False(t, up.Fallback, "the narrative replaced the deterministic summary")
		require.Contains(t, up.Content, "FACT-BLUEFALCON")
		never(t, llm, l)
	})
}
