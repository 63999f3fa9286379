package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/view"
	"github.com/gencode/gencode/internal/window"
)

// mixedTexts are ordinary request contents: the shared tokenizer texts
// (prose, code, JSON, CJK, emoji, long runs) and the messages of real
// agent sessions (tool calls and their outputs included).
func mixedTexts(t *testing.T) (texts []string, msgs []session.Message) {
	t.Helper()
	dir := openaitest.SharedTestdata(t)
	f, err := os.Open(filepath.Join(dir, "tokens", "texts.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l struct{ Text string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		if l.Text != "" {
			texts = append(texts, l.Text)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "sessions", "*.openai.jsonl"))
	require.NoError(t, err)
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var m openai.ChatCompletionMessage
			require.NoError(t, json.Unmarshal([]byte(line), &m))
			if m.Role == openai.ChatMessageRoleSystem || m.Content == "" && len(m.ToolCalls) == 0 {
				continue
			}
			sm := session.Message{Role: session.RoleUser, Content: m.Content}
			if m.Role == openai.ChatMessageRoleAssistant {
				sm.Role = session.RoleAssistant
				for _, tc := range m.ToolCalls {
					sm.ToolCalls = append(sm.ToolCalls, session.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
				}
			}
			if len(sm.Content) > 6000 { // the view caps outputs anyway
				sm.Content = sm.Content[:6000]
			}
			msgs = append(msgs, sm)
		}
	}
	require.NotEmpty(t, texts)
	require.NotEmpty(t, msgs)
	return texts, msgs
}

// TestCutToleranceNoFalseAlarm is the tolerance's derivation: 1,000
// ordinary requests of mixed content, each counted by gencode as it sends
// it (the view policy's total, o200k_base) and by a server with the real
// tokenizer: the same one (the fake server's own counting) and another
// model's (cl100k_base, both ways round: a server whose vocabulary
// counts fewer tokens than gencode's). None may be taken for a cut. The
// test logs the worst shortfall, which is what the tolerance stands on
// (see docs/design/window.md).
func TestCutToleranceNoFalseAlarm(t *testing.T) {
	t.Parallel()
	texts, logged := mixedTexts(t)
	o200k, cl100k := newMemo(vocabs.Counter("gpt-4o-mini")), newMemo(vocabs.Counter("gpt-4"))
	tools := &echoTools{}
	agents := map[string]*Agent{
		"o200k":  New(nil, nil, tools, o200k, Options{Model: "gpt-4o-mini", WorkDir: "/w", Window: 1 << 20}),
		"cl100k": New(nil, nil, tools, cl100k, Options{Model: "gpt-4", WorkDir: "/w", Window: 1 << 20}),
	}
	servers := []struct{ gencode, server string }{{"o200k", "o200k"}, {"o200k", "cl100k"}, {"cl100k", "o200k"}}
	count := map[string]func(string) int{"o200k": o200k.Count, "cl100k": cl100k.Count}
	rng := rand.New(rand.NewPCG(22, 1))
	worst := map[string]float64{}
	for i := range 1000 {
		// Roles alternate as the log holds them (the policy would join
		// two user messages in a row): user, assistant ..., user.
		var msgs []session.Message
		n := 1 + 2*rng.IntN(20)
		for k := range n {
			role := session.RoleUser
			if k%2 == 1 {
				role = session.RoleAssistant
			}
			m := session.Message{Role: role, Content: texts[rng.IntN(len(texts))]}
			if rng.IntN(2) == 0 {
				for m = logged[rng.IntN(len(logged))]; m.Role != role; m = logged[rng.IntN(len(logged))] {
				}
			}
			msgs = append(msgs, m)
		}
		msgs = closeCalls(msgs)
		for _, pair := range servers {
			a := agents[pair.gencode]
			v := session.View{Session: session.Session{ID: "s"}, Messages: countAll(a, msgs)}
			wire, size := a.build(v)
			req := openaitest.Request{Model: a.opts.Model, Messages: wire, Tools: a.toolDefs}
			got := openaitest.PromptTokens(req, count[pair.server])
			key := pair.gencode + " vs server " + pair.server
			worst[key] = max(worst[key], float64(size.Tokens-got)/float64(size.Tokens))
			if view.CutToleranceFor("Ollama").IsCut(size.Tokens, got) || view.CutToleranceFor("").IsCut(size.Tokens, got) {
				t.Fatalf("request %d (%d messages), gencode %s, server %s: sent %d, server counted %d: taken for a cut",
					i, len(msgs), pair.gencode, pair.server, size.Tokens, got)
			}
		}
	}
	for k, w := range worst {
		t.Logf("worst shortfall, gencode %s: %.1f%%", k, 100*w)
	}
}

// memo counts each text once: the requests draw from one pool.
type memo struct {
	c     counter
	texts map[string]int
}

func newMemo(c counter) *memo { return &memo{c: c, texts: map[string]int{}} }

func (m *memo) Count(s string) int {
	n, ok := m.texts[s]
	if !ok {
		n = m.c.Count(s)
		m.texts[s] = n
	}
	return n
}

func (m *memo) CountContext(_ context.Context, s string) (int, error) { return m.Count(s), nil }

// closeCalls gives every tool call a result right after its message, and
// the assistant's answer after the results, as the log holds them.
func closeCalls(msgs []session.Message) []session.Message {
	var out []session.Message
	for i, m := range msgs {
		m.ToolCalls = append([]session.ToolCall(nil), m.ToolCalls...)
		var results []session.Message
		for j, c := range m.ToolCalls {
			id := fmt.Sprintf("call_%d_%d", i, j)
			m.ToolCalls[j].ID = id
			results = append(results, session.Message{Role: session.RoleTool, ToolCallID: id, Name: c.Name, Content: "ok: " + c.Arguments})
		}
		out = append(append(out, m), results...)
		if len(results) > 0 {
			out = append(out, session.Message{Role: session.RoleAssistant, Content: "Done."})
		}
	}
	for i := range out {
		out[i].Seq = int64(i + 1)
	}
	return out
}

func countAll(a *Agent, msgs []session.Message) []session.Message {
	out := make([]session.Message, len(msgs))
	for i, m := range msgs {
		m.ToolCalls = append([]session.ToolCall(nil), m.ToolCalls...)
		m.Tokens = a.countMessage(m)
		out[i] = m
	}
	return out
}

func TestIsCut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		tol           view.CutTolerance
		sent, counted int
		want          bool
	}{
		{"any: 400 of 1,400 short: a count nobody measured", view.CutToleranceFor(""), 1400, 1000, false},
		{"any: 1,100 of 2,000 short", view.CutToleranceFor(""), 2000, 900, true},
		{"any: Ollama's cut in issue 22", view.CutToleranceFor(""), 13870, 3912, true},
		{"any: 40% short, not enough", view.CutToleranceFor(""), 13870, 8322, false},
		{"any: 55% short", view.CutToleranceFor(""), 13870, 6241, true},
		{"Ollama: one message of a dozen dropped", view.CutToleranceFor("Ollama"), 2230, 1960, true},
		{"Ollama: 6% short", view.CutToleranceFor("Ollama"), 2230, 2100, false},
		{"Ollama: 100 short of a small prompt", view.CutToleranceFor("Ollama"), 600, 500, false},
		{"no usage", view.CutToleranceFor(""), 5000, 0, false},
		{"nothing sent", view.CutToleranceFor("Ollama"), 0, 100, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.tol.IsCut(tt.sent, tt.counted); got != tt.want {
				t.Errorf("isCut(%d, %d) = %v, want %v", tt.sent, tt.counted, got, tt.want)
			}
		})
	}
}

// TestSilentCutIsDetected: an Ollama-like server that cut the prompt is
// caught after its answer: the answer is set aside, the window learned,
// the user told once, and the request sent again fitted to the window.
func TestSilentCutIsDetected(t *testing.T) {
	t.Parallel()
	f := newFixture(t, openaitest.WithModels("gpt-4o-mini"),
		openaitest.WithEmulation(openaitest.Emulation{Flavor: openaitest.Ollama, Window: 2500}),
		openaitest.WithTokenizer(vocabs.Counter("gpt-4o-mini").Count))
	// Recognised as Ollama (the tolerance for a server that cuts
	// silently), the model not loaded yet: its default window is assumed.
	f.agent.SetWindowProbe(func(context.Context) window.Result {
		return window.Result{Tokens: 4096, Source: "Ollama, default", Server: "Ollama", Pending: true}
	}, nil)
	ctx := context.Background()
	var hist []session.Message
	for i := range 12 {
		hist = append(hist,
			session.Message{Role: session.RoleUser, Content: fmt.Sprintf("fact %d: ", i) + strings.Repeat("the quick brown fox jumps. ", 40)},
			session.Message{Role: session.RoleAssistant, Content: "noted"})
	}
	for i := range hist {
		hist[i].Tokens = f.agent.countMessage(hist[i])
	}
	_, err := f.store.Append(ctx, f.sess.ID, hist...)
	require.NoError(t, err)
	f.srv.Enqueue(openaitest.Text("answer from a cut prompt"), openaitest.Text("answer again"))
	evs := collect(f.agent.Start(ctx, f.sess.ID, "what was fact 0?"))
	require.Equal(t, EventDone, lastEvent(evs).Kind, "%+v", lastEvent(evs))
	require.Equal(t, "answer again", lastEvent(evs).Text)
	var notices []string
	for _, e := range evs {
		if e.Kind == EventNotice {
			notices = append(notices, e.Text)
		}
	}
	require.Len(t, notices, 3, "%q", notices)
	require.Contains(t, notices[0], "4,096 tokens (Ollama, default)")
	require.Contains(t, notices[1], "the server cut the prompt without an error")
	require.Contains(t, notices[1], "asking again")
	require.Contains(t, notices[2], "The answer below came from the cut prompt", "no compactor here: cut again")
	require.Equal(t, "server, cut", f.agent.Policy().WindowSource())
	require.LessOrEqual(t, f.agent.Window(), 2500)
	msgs, err := f.store.Messages(ctx, f.sess.ID, 1, 0)
	require.NoError(t, err)
	for _, m := range msgs {
		require.NotEqual(t, "answer from a cut prompt", m.Content, "the cut prompt's answer is not kept")
	}
}

// TestWindowProbeAppliesBeforeTheFirstRequest: the server's window is
// the one the first request is fitted to, with its source; a configured
// context_window that is smaller wins.
func TestWindowProbeAppliesBeforeTheFirstRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		configured bool
		window     int
		want       int
		wantSource string
		wantNotes  int
	}{
		{"the table's figure is replaced", false, 128000, 4096, "Ollama, loaded", 2},
		{"a smaller configured window wins", true, 3000, 3000, "", 0},
		{"a larger configured window does not", true, 16000, 4096, "Ollama, loaded", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			a := New(f.store, llm.New(llm.Config{BaseURL: f.srv.URL(), APIKey: "test"}), f.tools, vocabs.Counter("gpt-4o-mini"),
				Options{Model: "qwen2.5-coder:7b", WorkDir: "/w", Window: tt.window, WindowConfigured: tt.configured})
			a.SetWindowProbe(func(context.Context) window.Result {
				return window.Result{Tokens: 4096, Source: "Ollama, loaded", Server: "Ollama", Trained: 32768}
			}, nil)
			f.srv.Enqueue(openaitest.Text("hi"))
			evs := collect(a.Start(context.Background(), f.sess.ID, "hello"))
			require.Equal(t, EventDone, lastEvent(evs).Kind, "%+v", lastEvent(evs))
			var notes []string
			var size *Size
			for _, e := range evs {
				switch e.Kind {
				case EventNotice:
					notes = append(notes, e.Text)
				case EventContext:
					size = e.Context
				}
			}
			require.Len(t, notes, tt.wantNotes, "%q", notes)
			require.Equal(t, tt.want, size.Window)
			require.Equal(t, tt.wantSource, size.Source)
			if tt.wantNotes > 0 {
				require.Contains(t, notes[0], "4,096 tokens (Ollama, loaded)")
				require.Contains(t, notes[1], "OLLAMA_CONTEXT_LENGTH=32768 ollama serve")
				require.NotContains(t, notes[1], "/ollama-window", "no slash command without a front end that has it")
			}
		})
	}
}

// TestRaiseHintOffersTheCommand: with a front end that has the command
// (Options.RaiseCommand), the raise hint offers it as the third way, with
// the window and the model it would create.
func TestRaiseHintOffersTheCommand(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := New(f.store, llm.New(llm.Config{BaseURL: f.srv.URL(), APIKey: "test"}), f.tools, vocabs.Counter("gpt-4o-mini"),
		Options{Model: "qwen2.5-coder:7b", WorkDir: "/w", Window: 128000, RaiseCommand: "/ollama-window"})
	a.SetWindowProbe(func(context.Context) window.Result {
		return window.Result{Tokens: 4096, Source: "Ollama, loaded", Server: "Ollama", Trained: 32768}
	}, nil)
	f.srv.Enqueue(openaitest.Text("hi"))
	var notes []string
	for _, e := range collect(a.Start(context.Background(), f.sess.ID, "hello")) {
		if e.Kind == EventNotice {
			notes = append(notes, e.Text)
		}
	}
	require.Len(t, notes, 2, "%q", notes)
	require.Contains(t, notes[1], "OLLAMA_CONTEXT_LENGTH=32768 ollama serve")
	require.Contains(t, notes[1], "ollama create qwen2.5-coder:7b-32k -f Modelfile")
	require.Contains(t, notes[1], "or type /ollama-window 32768 and gencode creates qwen2.5-coder:7b-32k on the server and switches to it")
}

// TestFirstFigureWaitsForTheServersWindow: the status bar's first figure
// (MeasureContext, before any turn) is against the window the server
// reports, not the table's, even when the server answers the probe late;
// before, a TUI that measured at start showed the table's 32k until the
// first turn, and an early /context did too.
func TestFirstFigureWaitsForTheServersWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := New(f.store, llm.New(llm.Config{BaseURL: f.srv.URL(), APIKey: "test"}), f.tools, vocabs.Counter("gpt-4o-mini"),
		Options{Model: "qwen2.5-coder:7b", WorkDir: "/w", Window: 32768})
	release := make(chan struct{})
	a.SetWindowProbe(func(context.Context) window.Result {
		<-release
		return window.Result{Tokens: 4096, Source: "Ollama, loaded", Server: "Ollama", Trained: 32768}
	}, nil)
	got := make(chan Size, 1)
	go func() {
		size, err := a.MeasureContext(context.Background(), f.store, f.sess.ID)
		if err != nil {
			t.Errorf("MeasureContext: %v", err)
		}
		got <- size
	}()
	select {
	case s := <-got:
		t.Fatalf("measured against %d (%q) before the server answered", s.Window, s.Source)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	s := <-got
	require.Equal(t, 4096, s.Window)
	require.Equal(t, "Ollama, loaded", s.Source)
}
