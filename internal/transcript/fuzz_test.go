package transcript_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/tokens"
	"github.com/gencode/gencode/internal/transcript"
)

// FuzzImport feeds the import path anything: what Read accepts is stored
// as a session (counted, appended, titled as `gencode import` does), and
// the next turn's request must pass the fake server's message-rule checker.
// Read either repairs a file or refuses it with its name and line.
//
//	go test -run '^$' -fuzz FuzzImport -fuzztime 10m ./internal/transcript/
func FuzzImport(f *testing.F) {
	for _, seed := range importSeeds(f) {
		f.Add(seed)
	}
	ctx := context.Background()
	store, err := session.Open(ctx, filepath.Join(f.TempDir(), "data"))
	require.NoError(f, err)
	f.Cleanup(func() { _ = store.Close() })
	counter := tokens.New("gpt-4o-mini")
	work := f.TempDir()
	count := func(m session.Message) int { return agent.MessageTokens(counter, m) }

	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, changes, err := transcript.Read(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "fuzz.jsonl"), "the error names the file: %v", err)
			return
		}
		for _, c := range changes {
			require.Positive(t, c.Line)
		}
		sess, err := transcript.Import(ctx, store, msgs, transcript.ImportOptions{Cwd: work, Model: "gpt-4o-mini", Count: count, Title: agent.Title})
		require.NoError(t, err)

		srv := openaitest.NewServer(t, openaitest.WithMessageRules(), openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
			return openaitest.Text("ok")
		}))
		ag := agent.New(store, llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "k", MaxRetries: -1}), nil, counter,
			agent.Options{Model: "gpt-4o-mini", SystemPrompt: "You are a test.", WorkDir: work, Window: 1 << 24, MaskToolOutputsAfter: 3})
		for ev := range ag.Start(ctx, sess.ID, "continue") {
			if ev.Kind == agent.EventError {
				t.Fatalf("the turn after importing %q failed: %v", data, ev.Err)
			}
		}
		reqs := srv.Requests()
		require.Len(t, reqs, 1)
		require.NoError(t, openaitest.CheckMessageRules(reqs[0].Messages))
	})
}

// importSeeds are broken and real sessions: the repair table's cases and
// the first lines of each recorded session.
func importSeeds(f *testing.F) [][]byte {
	seeds := []string{
		`{"role":"system","content":"obey"}` + "\n" + `{"role":"developer","content":"x"}` + "\n" + `{"role":"user","content":"hi"}`,
		`{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"Bash","arguments":"{\"command\":\"ls\"}"}}]}` + "\n" +
			`{"role":"user","content":"wait"}` + "\n" + `{"role":"tool","tool_call_id":"b","content":"x"}`,
		`{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"Read","arguments":"nope"}},{"id":"a","function":{"name":"","arguments":""}}]}` + "\n" +
			`{"role":"tool","tool_call_id":"a","content":"1"}` + "\n" + `{"role":"tool","content":"2"}` + "\n" + `{"role":"assistant","content":""}`,
		`{"role":"assistant","function_call":{"name":"f","arguments":"{}"}}` + "\n" + `{"role":"function","name":"f","content":"r"}`,
		`{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"u"}}]}`,
	}
	var out [][]byte
	for _, s := range seeds {
		out = append(out, []byte(s))
	}
	// The recorded sessions are seeds when the shared test data is there;
	// the inline seeds above are enough without them.
	shared, err := openaitest.FindSharedTestdata()
	require.NoError(f, err)
	var files []string
	if shared != "" {
		files, _ = filepath.Glob(filepath.Join(shared, "sessions", "*.openai.jsonl"))
	}
	for _, file := range files {
		fh, err := os.Open(file)
		require.NoError(f, err)
		var b bytes.Buffer
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for n := 0; n < 12 && sc.Scan(); n++ {
			line := sc.Text()
			if len(line) > 2000 {
				continue
			}
			b.WriteString(line + "\n")
		}
		fh.Close()
		out = append(out, b.Bytes())
	}
	return out
}
