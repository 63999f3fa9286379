package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/permstore"
	"github.com/gencode/gencode/internal/pricing"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/view"
)

func TestParse(t *testing.T) {
	t.Parallel()
	vf := map[string]bool{"search": true, "expand": true}
	tests := []struct {
		line      string
		wantName  string
		wantArgs  []string
		wantFlags map[string]string
		wantErr   string
	}{
		{line: "/history --full", wantName: "history", wantFlags: map[string]string{"full": "true"}},
		{line: "/History  --search 'auth token' --expand=2", wantName: "history", wantFlags: map[string]string{"search": "auth token", "expand": "2"}},
		{line: `/summarize focus on "the --full flag"`, wantName: "summarize", wantArgs: []string{"focus", "on", "the --full flag"}},
		{line: `/resume ab\ cd`, wantName: "resume", wantArgs: []string{"ab cd"}},
		// A command line is not a shell line: shell.Fields (mvdan.cc/sh)
		// would refuse ";" "|" "&" "(", drop "#..." as a comment, expand
		// $VAR and {a,b}, and lose that a quoted "--word" is not a flag.
		{line: `/summarize the parser; then (the lexer) & tests | docs`, wantName: "summarize",
			wantArgs: []string{"the", "parser;", "then", "(the", "lexer)", "&", "tests", "|", "docs"}},
		{line: `/history search issue #24 in $HOME/{a,b}`, wantName: "history",
			wantArgs: []string{"search", "issue", "#24", "in", "$HOME/{a,b}"}},
		{line: `/history "--full"`, wantName: "history", wantArgs: []string{"--full"}},
		{line: "/history --search", wantErr: "flag --search needs a value"},
		{line: `/summarize "open`, wantErr: `unclosed " quote`},
		{line: "hello", wantErr: "not a command"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tt.line, vf)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if got.Name != tt.wantName {
				t.Errorf("Parse(%q).Name = %q, want %q", tt.line, got.Name, tt.wantName)
			}
			require.Equal(t, tt.wantArgs, got.Args)
			if tt.wantFlags == nil {
				tt.wantFlags = map[string]string{}
			}
			require.Equal(t, tt.wantFlags, got.Flags)
		})
	}
}

type fixture struct {
	store *session.Store
	reg   *Registry
	sess  session.Session
	st    State // what the commands act on
}

// run runs line for the fixture's session.
func (f *fixture) run(ctx context.Context, line string) (Result, error) {
	return f.reg.Run(ctx, f.st, line)
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	store := sessiontest.Open(t)
	sess, err := store.CreateSession(ctx, "/w", "gpt-4o-mini")
	require.NoError(t, err)
	// The endpoint lists its models, as /model checks names against them.
	srv := openaitest.NewServer(t, openaitest.WithModels("gpt-4", "gpt-4o", "gpt-4o-mini"))
	reg := New(Deps{Store: store, Config: config.Default(), Window: func(string) int { return 8192 },
		Models: llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "k", MaxRetries: -1}).Models})
	return &fixture{store: store, reg: reg, sess: sess, st: State{SessionID: sess.ID, Model: "gpt-4o-mini",
		View: view.NewPolicy(view.Config{Window: 8192, Overhead: 1500, MaskAfter: 10})}}
}

func TestCompleteAndUnknown(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	require.Equal(t, []string{"/sessions", "/summarize"}, f.reg.Complete("/s"))
	require.Equal(t, []string{"/history"}, f.reg.Complete("/HI"))
	require.Nil(t, f.reg.Complete("/history --f"))
	require.Len(t, f.reg.Complete("/"), len(f.reg.Commands()))

	tests := []struct{ line, wantErr string }{
		{"/histroy", "unknown command /histroy: did you mean /history?"},
		{"/sumarize", "did you mean /summarize?"},
		{"/modle", "did you mean /model?"},
		{"/xyzzy", "unknown command /xyzzy (/help lists them)"},
	}
	for _, tt := range tests {
		_, err := f.run(context.Background(), tt.line)
		require.ErrorIs(t, err, ErrUnknown)
		require.ErrorContains(t, err, tt.wantErr)
	}
}

func TestActions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	tests := []struct {
		line       string
		wantAction Action
		check      func(t *testing.T, r Result)
	}{
		{"/exit", ActionExit, nil},
		{"/quit", ActionExit, nil},
		{"/clear", ActionNewSession, nil},
		{"/summarize the auth module", ActionSummarize, func(t *testing.T, r Result) { require.Equal(t, "the auth module", r.Focus) }},
		{"/compact the auth module", ActionSummarize, func(t *testing.T, r Result) { require.Equal(t, "the auth module", r.Focus) }},
		{"/model gpt-4", ActionSetModel, func(t *testing.T, r Result) {
			require.Equal(t, "gpt-4", r.Model)
			require.Empty(t, r.Text, "nothing is said before the front end switched")
		}},
		{"/resume " + f.sess.ID[:5], ActionResumeSession, func(t *testing.T, r Result) { require.Equal(t, f.sess.ID, r.SessionID) }},
		{"/model", ActionNone, func(t *testing.T, r Result) {
			require.NotNil(t, r.Pick)
			require.Equal(t, "gpt-4o-mini  (current)", r.Pick.Items[r.Pick.Selected].Title)
		}},
		{"/help", ActionNone, func(t *testing.T, r Result) { require.Contains(t, r.Report.Plain(), "/history [--full]") }},
		{"/config", ActionNone, func(t *testing.T, r Result) { require.Contains(t, r.Report.Plain(), "summarize.soft_ratio") }},
		{"/init", ActionPrompt, func(t *testing.T, r Result) {
			require.Equal(t, InitPrompt, r.Prompt)
			require.Contains(t, r.Text, "permission")
		}},
	}
	for _, tt := range tests {
		r, err := f.run(ctx, tt.line)
		require.NoError(t, err, tt.line)
		if r.Action != tt.wantAction {
			t.Errorf("Run(%q).Action = %v, want %v", tt.line, r.Action, tt.wantAction)
		}
		if tt.check != nil {
			tt.check(t, r)
		}
	}
}

func seedHistory(t *testing.T, f *fixture) {
	t.Helper()
	ctx := context.Background()
	code := 0
	var msgs []session.Message
	for i := 0; i < 15; i++ {
		msgs = append(msgs,
			session.Message{Role: session.RoleUser, Content: fmt.Sprintf("request %d", i), Tokens: 10},
			session.Message{Role: session.RoleAssistant, Tokens: 20, ToolCalls: []session.ToolCall{{ID: fmt.Sprintf("c%d", i), Name: "Bash", Arguments: `{"command":"go test ./..."}`}}},
			session.Message{Role: session.RoleTool, ToolCallID: fmt.Sprintf("c%d", i), Name: "Bash", Content: "ok", Tokens: 300, Meta: session.Meta{Tool: "Bash", Command: "go test ./...", ExitCode: &code}},
		)
	}
	_, err := f.store.Append(ctx, f.sess.ID, msgs...)
	require.NoError(t, err)
	_, err = f.store.ApplySummary(ctx, session.Summary{SessionID: f.sess.ID, FromSeq: 1, ToSeq: 30,
		Content: "## Goal\nMake the tests pass\n## Current state\nb.go's test still fails\n## Key decisions\n- use table tests", Goal: "Make the tests pass",
		UserConstraints: []string{"never touch vendor/"}, Focus: "the failing test",
		KeyDecisions: []string{"use table tests"}, FilesModified: []string{"a.go", "b.go"}, Commands: []string{"go test ./..."},
		Model: "gpt-4o-mini", TokenCount: 80, TokensBefore: 3300, TokensAfter: 80, GeneratedAt: time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)}, nil, false)
	require.NoError(t, err)
}

func TestHistoryReports(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	seedHistory(t, f)
	ctx := context.Background()

	r, err := f.run(ctx, "/history")
	require.NoError(t, err)
	brief := r.Report.Plain()
	require.Contains(t, brief, "45 messages total")
	require.Contains(t, brief, "[Summary 1] Messages 1-30")
	require.Contains(t, brief, "Make the tests pass")
	require.Contains(t, brief, "5 earlier unsummarized messages")
	require.NotContains(t, brief, "Decision:")

	r, err = f.run(ctx, "/history --full")
	require.NoError(t, err)
	full := r.Report.Plain()
	// The summary's whole text as the model reads it, not only its goal,
	// files and decisions.
	for _, want := range []string{"### Current state", "b.go's test still fails", "- use table tests",
		"User constraints and facts (verbatim): never touch vendor/", "Files modified: a.go; b.go", "Commands run: go test ./...",
		"Focus: the failing test", "3300 → 80 tokens, by gpt-4o-mini"} {
		require.Contains(t, full, want)
	}
	require.Equal(t, 1, strings.Count(full, "Make the tests pass"), "the goal once:\n%s", full)
	require.Contains(t, full, "[Recent] Messages 31-45")
	require.Contains(t, full, "#31 user: request 10")
	require.Contains(t, full, "#32 assistant: → Bash go test ./...")
	require.Contains(t, full, "#33 tool: ← Bash exit 0: ok")

	r, err = f.run(ctx, "/history --expand 1")
	require.NoError(t, err)
	exp := r.Report.Plain()
	require.Contains(t, exp, "the original messages 1-30")
	// Each message once: a heading (number, role, calls), then its text.
	require.Contains(t, exp, "#1 user\n  request 0\n")
	require.Contains(t, exp, "#2 assistant → Bash go test ./...\n\n#3 tool ← Bash exit 0\n  ok\n")
	require.Equal(t, 1, strings.Count(exp, "request 3"), exp)
	require.Equal(t, 10, strings.Count(exp, "go test ./..."), "one per call")
	_, err = f.run(ctx, "/history --expand 2")
	require.ErrorContains(t, err, "no summary 2")
}

// TestHistoryFullStreamedIsTheSameText: `history --full` written to a
// pipe reads the messages as it writes them (HistoryOptions.Stream); its
// text is the report's that keeps them.
func TestHistoryFullStreamedIsTheSameText(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	seedHistory(t, f)
	ctx := context.Background()
	sess, err := f.store.LatestSession(ctx, "/w")
	require.NoError(t, err)
	kept, err := History(ctx, f.store, nil, sess.ID, HistoryOptions{Full: true})
	require.NoError(t, err)
	streamed, err := History(ctx, f.store, nil, sess.ID, HistoryOptions{Full: true, Stream: true})
	require.NoError(t, err)
	require.NotNil(t, streamed.Sections[len(streamed.Sections)-1].Stream, "the messages are not kept")
	var out strings.Builder
	require.NoError(t, streamed.WritePlain(&out))
	require.Contains(t, out.String(), "#45 ")
	require.Equal(t, kept.Plain(), out.String())
}

// TestCommandsInFlightKeepTheirState: front ends run commands in the
// background, so commands for different sessions and models run at once
// on one registry. Each acts on the state it was given, never on another's.
func TestCommandsInFlightKeepTheirState(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	states := make([]State, 2)
	for i := range states {
		s, err := f.store.CreateSession(ctx, "/w", "m")
		require.NoError(t, err)
		_, err = f.store.Append(ctx, s.ID, session.Message{Role: session.RoleUser, Content: fmt.Sprintf("the request of session %d", i)})
		require.NoError(t, err)
		states[i] = State{SessionID: s.ID, Model: fmt.Sprintf("model-%d", i)}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for n := range 100 {
		i := n % 2
		st, other := states[i], states[1-i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			check := func(line string, got string, want, not string) {
				if !strings.Contains(got, want) || strings.Contains(got, not) {
					errs <- fmt.Errorf("%s for %s: %q, want %q, not %q", line, st.SessionID, got, want, not)
				}
			}
			r, err := f.reg.Run(ctx, st, "/summarize")
			if err != nil {
				errs <- err
				return
			}
			check("/summarize", r.SessionID, st.SessionID, other.SessionID)
			r, err = f.reg.Run(ctx, st, "/model")
			if err != nil {
				errs <- err
				return
			}
			check("/model", r.Pick.Items[r.Pick.Selected].Title, st.Model, other.Model)
			r, err = f.reg.Run(ctx, st, "/history --full")
			if err != nil {
				errs <- err
				return
			}
			check("/history", r.Report.Plain(), fmt.Sprintf("session %d", i), fmt.Sprintf("session %d", 1-i))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestContextReport(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	seedHistory(t, f)
	r, err := f.run(context.Background(), "/context")
	require.NoError(t, err)
	out := r.Report.Plain()
	require.Regexp(t, `System prompt \+ tool schemas\s+1,500\s+18%`, out)
	require.Regexp(t, `Tool outputs\s+1,500`, out)
	require.Contains(t, out, "Summaries")
	require.Contains(t, out, "background summary at 4,915 tokens (60%)")
	// 5 tool results after the summary, 10 kept verbatim by default: none masked.
	require.Contains(t, out, "0 placeholders")
}

// TestContextSaysWhereTheWindowCameFrom: the server's window, with its
// source and the configured figure beside it.
func TestContextSaysWhereTheWindowCameFrom(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		set  func(p *view.Policy)
		want []string
	}{
		{"told by the server", func(p *view.Policy) { p.Tell(4096, "Ollama, loaded") },
			[]string{"of 4,096 tokens", "Window: 4,096 tokens (Ollama, loaded), not 32,768."}},
		{"refused", func(p *view.Policy) { p.Learn(4000) },
			[]string{"The server's window: 4,000 tokens (not 32,768)", "It named it when it refused a larger request."}},
		{"cut", func(p *view.Policy) { p.LearnFrom(1964, "server, cut") },
			[]string{"The server's window: about 1,964 tokens (not 32,768)", "It showed it by cutting a larger prompt without an error."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.st.View = view.NewPolicy(view.Config{Window: 32768, Overhead: 1500})
			tt.set(f.st.View)
			r, err := f.run(context.Background(), "/context")
			require.NoError(t, err)
			for _, w := range tt.want {
				require.Contains(t, r.Report.Plain(), w)
			}
		})
	}
}

// TestContextShowsTheAnswersReserve: with a configured max_tokens the
// window's share for the answer is said, and the figures (the title's
// total, the percentages) are of what is left to the prompt.
func TestContextShowsTheAnswersReserve(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.st.View = view.NewPolicy(view.Config{Window: 32768, Overhead: 1500, AnswerReserve: 1024})
	f.st.View.Tell(4096, "vLLM")
	r, err := f.run(context.Background(), "/context")
	require.NoError(t, err)
	out := r.Report.Plain()
	require.Contains(t, out, "of 3,072 tokens")
	require.Contains(t, out, "Window: 4,096 tokens (vLLM), not 32,768.")
	require.Contains(t, out, "Window: 4,096 tokens (vLLM); 1,024 kept for the answer (max_tokens): the prompt plans with 3,072.")
}

// TestContextShowsInstructions: /context counts the instructions in the
// fixed part, names their files, and warns when they take more than a
// quarter of the window.
func TestContextShowsInstructions(t *testing.T) {
	t.Parallel()
	count := func(m session.Message) int { return len(m.Content) / 4 }
	tests := []struct {
		name     string
		instr    string
		wantWarn bool
	}{
		{"small", strings.Repeat("x", 400), false},                             // 100 tokens of 8,192
		{"more than a quarter of the window", strings.Repeat("x", 9000), true}, // 2,250 tokens
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.reg.deps.Instructions = []string{"AGENTS.md", "pkg/CLAUDE.md"}
			f.st.View = view.NewPolicy(view.Config{Window: 8192, Overhead: 1000, SystemPrompt: "p", Instructions: tt.instr, Count: count})
			r, err := f.run(context.Background(), "/context")
			require.NoError(t, err)
			out := r.Report.Plain()
			n := len(tt.instr) / 4
			require.Regexp(t, fmt.Sprintf(`System prompt \+ tool schemas\s+%s`, termtext.Thousands(1000+count(session.Message{Content: "p\n\n" + tt.instr}))), out)
			require.Regexp(t, fmt.Sprintf(`of which instructions\s+%s\s+\d+%%\s+AGENTS.md, pkg/CLAUDE.md`, termtext.Thousands(n)), out)
			if tt.wantWarn {
				require.Contains(t, out, "the instructions (AGENTS.md, pkg/CLAUDE.md) take 2,250 tokens of every request, 27% of the 8,192-token window")
			} else {
				require.NotContains(t, out, "Warning")
			}
		})
	}
}

func TestSummaryReport(t *testing.T) {
	t.Parallel()
	files := []string{}
	for i := 0; i < 12; i++ {
		files = append(files, fmt.Sprintf("pkg/file%02d.go", i))
	}
	rep := SummaryReport(summarize.Report{Summary: &session.Summary{
		FromSeq: 1, ToSeq: 55, MessagesBefore: 78, MessagesAfter: 23, TokensBefore: 31000, TokensAfter: 16000,
		Topics: []string{"Authentication system design", "Database schema updates"}, FilesModified: files,
		Commands: []string{"go test ./...", "make build"}, KeyDecisions: []string{"JWT with refresh tokens"},
		CommandsNotRun: []string{"rm -f notes.txt"},
		Model:          "gpt-4o-mini", Duration: 4200 * time.Millisecond,
	}})
	out := rep.Plain()
	for _, want := range []string{
		"Messages: 78 → 23 (70% reduction)", "Tokens: 31,000 → 16,000 (15,000 saved)",
		"Key topics", "• Authentication system design", "Files modified (12)", "+4 more",
		"Commands run (2)", "• make build", "Key decisions (1)", "took 4.2s · written by gpt-4o-mini",
		"Commands not run: denied, canceled or without a result (1)", "• rm -f notes.txt",
	} {
		require.Contains(t, out, want)
	}
	fb := SummaryReport(summarize.Report{Fallback: true, Summary: &session.Summary{FromSeq: 1, ToSeq: 2, Fallback: true, FallbackReason: "summarizer answered 500"}})
	require.Contains(t, fb.Plain(), "deterministic summary (no LLM narrative): summarizer answered 500")
	require.Contains(t, AutoNotice(summarize.Report{Summary: &session.Summary{FromSeq: 1, ToSeq: 40, TokensBefore: 5000, TokensAfter: 400, Topics: []string{"x"}}}),
		"Summarized messages 1-40")
	require.True(t, strings.HasPrefix(SummaryReport(summarize.Report{}).Plain(), "Session Summary"))
}

// TestConfigShowsFileAndLine: /config says which line of the config file
// set a value, a dotted key's too, and "default" for the rest.
func TestConfigShowsFileAndLine(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(file, []byte("model = \"m\"\nsummarize.soft_ratio = 0.5\n"), 0o600))
	cfg, err := config.Load(file, func(k string) string { return map[string]string{"HOME": t.TempDir()}[k] }, config.Flags{})
	require.NoError(t, err)
	f := newFixture(t)
	reg := New(Deps{Store: f.store, Config: cfg, Window: func(string) int { return 8192 }})
	r, err := reg.Run(context.Background(), State{SessionID: f.sess.ID, Model: "m"}, "/config")
	require.NoError(t, err)
	lines := map[string][]string{}
	for _, l := range strings.Split(r.Report.Plain(), "\n") {
		if fs := strings.Fields(strings.Trim(l, "│ ")); len(fs) == 3 {
			lines[fs[0]] = fs[1:]
		}
	}
	require.Equal(t, []string{"0.5", "file:2"}, lines["summarize.soft_ratio"], "/config:\n%s", r.Report.Plain())
	require.Equal(t, []string{"m", "file:1"}, lines["model"])
	require.Contains(t, r.Report.Plain(), "file: "+file, "the footer names the file")
	require.Equal(t, []string{"0.9", "default"}, lines["summarize.hard_ratio"])
}

// A call in /history says what the chat's header says: where a search ran,
// and the arguments themselves when they are not JSON (a cut stream).
func TestBriefSaysWhatACallIsAbout(t *testing.T) {
	t.Parallel()
	m := session.Message{Seq: 5, Role: session.RoleAssistant, ToolCalls: []session.ToolCall{
		{ID: "a", Name: "Glob", Arguments: `{"pattern":"*.go","path":"internal"}`},
		{ID: "b", Name: "Write", Arguments: `{"file_path":"cut.go","content":"pa`},
	}}
	assert.Equal(t, `#5 assistant: → Glob *.go in internal → Write {"file_path":"cut.go","content":"pa`, Brief(m, 200))
}

// A command's result in /history says its exit code once: first, as the
// chat does, not again from the trailer the model reads.
func TestBriefSaysTheExitCodeOnce(t *testing.T) {
	t.Parallel()
	two, zero := 2, 0
	tests := []struct {
		name string
		m    session.Message
		want string
	}{
		{"failed", session.Message{Seq: 3, Role: session.RoleTool, Name: "Bash", Content: "ls: cannot access 'x': No such file or directory\n[exit code 2]",
			Meta: session.Meta{ExitCode: &two}}, "#3 tool: ← Bash exit 2: ls: cannot access 'x': No such file or directory"},
		{"ok", session.Message{Seq: 4, Role: session.RoleTool, Name: "Bash", Content: "a.go\n[exit code 0]\n",
			Meta: session.Meta{ExitCode: &zero}}, "#4 tool: ← Bash exit 0: a.go"},
		{"killed keeps its note", session.Message{Seq: 5, Role: session.RoleTool, Name: "Bash", Content: "[killed by SIGKILL; exit code 137]",
			Meta: session.Meta{ExitCode: &two}}, "#5 tool: ← Bash exit 2: [killed by SIGKILL; exit code 137]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Brief(tt.m, 200))
		})
	}
}

// TestCost: /cost adds up what the providers counted, for the last turn
// and the session, gives the summarizer's share, and prices each model
// (the config's price over the built-in one); a model without a price is
// said, not priced at zero.
func TestCost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	r, err := f.run(ctx, "/cost")
	require.NoError(t, err)
	require.Contains(t, r.Text, "No requests yet")

	for _, u := range []session.Usage{
		{Purpose: session.UsageTurn, Model: "gpt-4o-mini-2024-07-18", TurnSeq: 1, Input: 10_000, Output: 500},
		{Purpose: session.UsageSummary, Model: "gpt-4o-mini", Input: 20_000, Cached: 16_000, Output: 1_000},
		{Purpose: session.UsageTurn, Model: "gpt-4o-mini-2024-07-18", TurnSeq: 7, Input: 12_000, Cached: 8_000, Output: 300},
		{Purpose: session.UsageTurn, Model: "gpt-4o-mini-2024-07-18", TurnSeq: 7, Input: 13_000, Cached: 12_000, Output: 200},
	} {
		require.NoError(t, f.store.AddUsage(ctx, f.sess.ID, u))
	}
	r, err = f.run(ctx, "/cost")
	require.NoError(t, err)
	out := r.Report.Plain()
	// gpt-4o-mini: $0.15 input, $0.075 cached, $0.60 output per million.
	turn := (4_000*0.15 + 8_000*0.075 + 300*0.60 + 1_000*0.15 + 12_000*0.075 + 200*0.60) / 1e6
	all := turn + (10_000*0.15+500*0.60)/1e6 + (4_000*0.15+16_000*0.075+1_000*0.60)/1e6
	require.Contains(t, r.Report.Title, "57,000 tokens · "+pricing.Format(all))
	require.Regexp(t, `Last turn\s+2\s+25,000\s+20,000\s+500\s+`+regexp.QuoteMeta(pricing.Format(turn)), out)
	require.Regexp(t, `Session: agent\s+3\s+35,000\s+20,000\s+1,000`, out)
	require.Regexp(t, `summarizer\s+1\s+20,000\s+16,000\s+1,000\s+37% of the tokens`, out)
	require.Regexp(t, `Session total\s+4\s+55,000\s+36,000\s+2,000\s+`+regexp.QuoteMeta(pricing.Format(all)), out)
	require.Contains(t, out, "$0.15 / $0.075 / $0.6")

	// The config's price wins; an unknown model is said.
	f.reg.deps.Prices = pricing.New(map[string]pricing.Price{"gpt-4o-mini": {Input: 1, CachedInput: 1, Output: 1}})
	require.NoError(t, f.store.AddUsage(ctx, f.sess.ID, session.Usage{Purpose: session.UsageTurn, Model: "local-llama", TurnSeq: 9, Input: 100, Output: 10}))
	r, err = f.run(ctx, "/cost")
	require.NoError(t, err)
	out = r.Report.Plain()
	require.Contains(t, r.Report.Title, "57,110 tokens · $0.057+?")
	require.Regexp(t, `Last turn\s+1\s+100\s+0\s+10\s*\n`, out, "the last turn is unpriced: no cost shown")
	require.Contains(t, out, "+? after a cost: it leaves out the tokens of local-llama, which has no price; set one under [pricing.\"local-llama\"]")
}

// TestPermissions: /permissions and /config list the rules saved for the
// project, and /permissions revoke N removes one for good.
func TestPermissions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conf, project := t.TempDir(), t.TempDir()
	perms := permstore.Open(conf, project)
	require.NoError(t, perms.Add(tools.Rule{Tool: tools.ToolBash, Command: []string{"go", "test"}}))
	require.NoError(t, perms.Add(tools.Rule{Tool: tools.ToolWrite}))
	reg := New(Deps{Config: config.Default(), Permissions: perms})

	r, err := reg.Run(ctx, State{}, "/permissions")
	require.NoError(t, err)
	out := r.Report.Plain()
	require.Contains(t, out, " 1  Bash   go test [+ paths inside the project; no options]")
	require.Contains(t, out, " 2  Write  every Write inside the project")
	require.Contains(t, out, perms.Path())
	r, err = reg.Run(ctx, State{}, "/config")
	require.NoError(t, err)
	require.Contains(t, r.Report.Plain(), "Permissions for this project")
	require.Contains(t, r.Report.Plain(), " 1  Bash   go test [+ paths inside the project; no options]")

	r, err = reg.Run(ctx, State{}, "/permissions revoke 1")
	require.NoError(t, err)
	require.Equal(t, "Revoked rule 1 (Bash go test [+ paths inside the project; no options]): such calls ask again.", r.Text)
	rules, err := permstore.Open(conf, project).Rules()
	require.NoError(t, err)
	require.Equal(t, []tools.Rule{{Tool: tools.ToolWrite}}, rules, "revoked in the file, for later runs too")
	// Another tool's rule is named as the list showed it, not "Write Write".
	r, err = reg.Run(ctx, State{}, "/permissions revoke 1")
	require.NoError(t, err)
	require.Equal(t, "Revoked rule 1 (Write every Write inside the project): such calls ask again.", r.Text)
	require.NoError(t, perms.Add(tools.Rule{Tool: tools.ToolWrite}))

	for line, want := range map[string]string{
		"/permissions revoke 5":   "no rule 5: the rules are numbered 1 to 1",
		"/permissions revoke one": `/permissions revoke "one": give the rule's number`,
		"/permissions drop 1":     "usage: /permissions [revoke N]",
	} {
		_, err := reg.Run(ctx, State{}, line)
		require.ErrorContains(t, err, want, line)
	}

	// A broken file is said, with where it is, and nothing is lost.
	require.NoError(t, os.WriteFile(perms.Path(), []byte("[[rule]]\ntool = 'Bash\n"), 0o600))
	r, err = reg.Run(ctx, State{}, "/permissions")
	require.NoError(t, err)
	require.Contains(t, r.Report.Plain(), "problem: project permission rules "+perms.Path()+":2: ")
	r, err = reg.Run(ctx, State{}, "/config")
	require.NoError(t, err)
	require.Contains(t, r.Report.Plain(), "problem: project permission rules")
}

// TestPermissionsIgnoredRule: a hand-edited rule the dialog would not
// save is not listed as a rule, and /permissions says which line of the
// file was ignored and why.
func TestPermissionsIgnoredRule(t *testing.T) {
	t.Parallel()
	perms := permstore.Open(t.TempDir(), t.TempDir())
	require.NoError(t, perms.Add(tools.Rule{Tool: tools.ToolWrite}))
	body := "[[rule]]\ntool = 'Write'\n\n[[rule]]\ntool = 'Bash'\ncommand = ['sh', '-c']\n"
	require.NoError(t, os.WriteFile(perms.Path(), []byte(body), 0o600))
	reg := New(Deps{Config: config.Default(), Permissions: perms})
	r, err := reg.Run(context.Background(), State{}, "/permissions")
	require.NoError(t, err)
	out := r.Report.Plain()
	require.Contains(t, out, " 1  Write  every Write inside the project")
	require.NotContains(t, out, " 2  ")
	require.Contains(t, out, "problem: project permission rules "+perms.Path()+`:4: ignored: rule for Bash "sh -c": sh runs the commands or code it is given`)
}

// TestSandboxInConfigAndPermissions: /config lists the [sandbox] keys and,
// like /permissions, says which sandbox holds the shell commands.
func TestSandboxInConfigAndPermissions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lines := []string{"Landlock ABI 7: writes confined to the project and /tmp; gencode's config, data and state dirs read-only; reads open",
		"auto_allow = false: Bash asks as usual; the sandbox holds what you approve"}
	tests := []struct {
		name  string
		perms ProjectPermissions
		line  string
	}{
		{"/config", nil, "/config"},
		{"/permissions", permstore.Open(t.TempDir(), t.TempDir()), "/permissions"},
		{"/permissions without rules", nil, "/permissions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := New(Deps{Config: config.Default(), Permissions: tt.perms, Sandbox: lines})
			r, err := reg.Run(ctx, State{}, tt.line)
			require.NoError(t, err)
			out := r.Text
			if r.Report != nil {
				out = r.Report.Plain()
				require.Contains(t, out, "Sandbox (Bash and !commands)")
			}
			for _, l := range lines {
				require.Contains(t, out, l, "%s:\n%s", tt.line, out)
			}
			if tt.line == "/config" {
				for _, k := range []string{"sandbox.enabled", "sandbox.writable", "sandbox.network", "sandbox.auto_allow"} {
					require.Contains(t, out, k)
				}
			}
		})
	}
}

// TestConfigShowsVersion: /config's first line is the binary's version
// (gencode --version's line), when the front end gives it.
func TestConfigShowsVersion(t *testing.T) {
	t.Parallel()
	const v = "v1.2.3 (commit 0123456789ab, go1.26.8)"
	r, err := New(Deps{Version: v}).Run(context.Background(), State{}, "/config")
	require.NoError(t, err)
	lines := strings.Split(r.Report.Plain(), "\n")
	require.Regexp(t, `^version\s+v1\.2\.3 \(commit 0123456789ab, go1\.26\.8\)\s+build$`, strings.TrimSpace(lines[2]), "/config:\n%s", r.Report.Plain())
}

// TestConfigShowsTheWindowInForce: with a window the server gave,
// /config says it beside context_window's configured 0 (a newcomer read
// "context_window 0 default" on an Ollama loaded at 4,096).
func TestConfigShowsTheWindowInForce(t *testing.T) {
	t.Parallel()
	p := view.NewPolicy(view.Config{Window: 32768})
	r, err := New(Deps{Config: config.Default()}).Run(context.Background(), State{View: p}, "/config")
	require.NoError(t, err)
	require.NotContains(t, r.Report.Plain(), "(in force)", "nothing to say while the configured window is the one used")
	p.Tell(4096, "Ollama, loaded")
	r, err = New(Deps{Config: config.Default()}).Run(context.Background(), State{View: p}, "/config")
	require.NoError(t, err)
	require.Regexp(t, `\(in force\) context window\s+4,096\s+Ollama, loaded`, r.Report.Plain())
}

// TestHelpListsMessageSyntaxAndAliases: /help says what "!command" and
// "@path" do in a message, and names each command's aliases (/compact).
func TestHelpListsMessageSyntaxAndAliases(t *testing.T) {
	t.Parallel()
	r, err := New(Deps{}).Run(context.Background(), State{}, "/help")
	require.NoError(t, err)
	plain := r.Report.Plain()
	for _, want := range []string{"!COMMAND", "run a shell command", "@PATH", "attach a file", "(also /compact)", "(also /?)", "(also /new)", "(also /quit)"} {
		require.Contains(t, plain, want, "/help:\n%s", plain)
	}
}

// TestContextPercentRounds: /context's percent is the status bar's
// (termtext.Percent, rounded to the nearest): 3,199 of 6,400 is 50%, which
// /context used to cut down to 49%.
func TestContextPercentRounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n, of int
		want  string
	}{
		{3199, 6400, "50%"},
		{1496, 128000, "1%"},
		{0, 8192, "0%"},
		{5, 0, "-"},
	}
	for _, tt := range tests {
		if got := pct(tt.n, tt.of); got != tt.want {
			t.Errorf("pct(%d, %d) = %q, want %q", tt.n, tt.of, got, tt.want)
		}
	}
}

// The session facts' counts say one file and one command in the singular.
func TestSessionFactsCountInWords(t *testing.T) {
	one := SessionFacts(session.Summary{FilesModified: []string{"a.go"}, CommandRuns: 1, Commands: []string{"go test"},
		FilesRead: []string{"b.go", "c.go"}}, 4)
	require.Equal(t, "1 file modified, 1 shell command run (1 distinct), 2 files read", one[0].Lines[0])
	none := SessionFacts(session.Summary{}, 0)
	require.Equal(t, "0 files modified, 0 shell commands run (0 distinct), 0 files read", none[0].Lines[0])
}
