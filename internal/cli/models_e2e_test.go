package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/openaitest"
)

// modelTables is a config with per-model tables: a reasoning model, a
// local model whose server takes options of its own (it does not take
// reasoning_effort: the table's is not sent), and a summarizer model.
const modelTables = `model = "gpt-4o-mini"

[models."o4-mini"]
max_tokens = 2000
reasoning_effort = "high"
extra = { service_tier = "flex" }

[models."qwen3:8b"]
context_window = 32768
max_tokens = 1024
reasoning_effort = "high"

[models."qwen3:8b".extra]
top_k = 20
options = { num_ctx = 32768, stop = ["<|im_end|>"] }
chat_template_kwargs = { enable_thinking = false }

[models."gpt-4o-mini"]
extra.top_k = 5

[models."gpt-5-nano"]
max_tokens = 300
reasoning_effort = "minimal"
extra = { verbosity = "low", metadata = { purpose = "summary" } }
`

// bodyFields are a recorded request's top-level fields, as sent.
func bodyFields(t *testing.T, r openaitest.Request) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.Body, &m), "body: %s", r.Body)
	return m
}

// requireFields checks the fields want names (JSON as sent; "" for absent).
func requireFields(t *testing.T, r openaitest.Request, want map[string]string) {
	t.Helper()
	got := bodyFields(t, r)
	for k, v := range want {
		if v == "" {
			require.NotContains(t, got, k, "%s must not be sent to %s: %s", k, r.Model, r.Body)
			continue
		}
		require.Contains(t, got, k, "%s must be sent to %s: %s", k, r.Model, r.Body)
		require.JSONEq(t, v, string(got[k]), "%s sent to %s", k, r.Model)
	}
}

// TestModelTablesShapeTheRequests: print mode sends each model's table
// with its requests, through the built binary to the fake server.
func TestModelTablesShapeTheRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		model string
		want  map[string]string
	}{
		{"a reasoning model", "o4-mini", map[string]string{
			"max_completion_tokens": "2000", "max_tokens": "", "reasoning_effort": `"high"`, "service_tier": `"flex"`, "top_k": "",
		}},
		{"a local model with its server's options", "qwen3:8b", map[string]string{
			"max_tokens": "1024", "reasoning_effort": "", "top_k": "20",
			"options":              `{"num_ctx":32768,"stop":["<|im_end|>"]}`,
			"chat_template_kwargs": `{"enable_thinking":false}`,
			"service_tier":         "",
		}},
		{"a table with extra fields only", "gpt-4o-mini", map[string]string{
			"max_tokens": "", "max_completion_tokens": "", "reasoning_effort": "", "top_k": "5", "options": "",
		}},
		{"a model without a table", "llama3.2", map[string]string{
			"max_tokens": "", "reasoning_effort": "", "top_k": "", "options": "",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithMessageRules())
			sb := newSandbox(t)
			sb.useServer(srv)
			sb.writeConfig(modelTables)
			srv.Enqueue(openaitest.Text("ok"))
			res := sb.run("--model", tt.model, "-p", "hi")
			require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
			require.Equal(t, "ok\n", res.stdout)
			reqs := srv.Requests()
			require.Len(t, reqs, 1)
			require.Equal(t, tt.model, reqs[0].Model)
			requireFields(t, reqs[0], tt.want)
			require.Equal(t, "hi", reqs[0].Messages[len(reqs[0].Messages)-1].Content, "the conversation is gencode's")
			require.NotEmpty(t, reqs[0].Tools, "and so are the tools")
		})
	}
}

// TestSummarizerModelGetsItsOwnTable: the summarizer's requests carry its
// model's table (its max_tokens capping what a summary asks for, its
// reasoning_effort, its extra fields), not the main model's.
func TestSummarizerModelGetsItsOwnTable(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithResponder(summarize))
	sb := newSandbox(t)
	sb.useServer(srv)
	sb.writeConfig(modelTables + "\n[summarize]\nmodel = \"gpt-5-nano\"\n")
	sb.seedSession(12, 3)

	res := sb.run("summarize")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "written by gpt-5-nano")
	reqs := srv.Requests()
	require.NotEmpty(t, reqs)
	for _, r := range reqs {
		require.Equal(t, "gpt-5-nano", r.Model)
		requireFields(t, r, map[string]string{
			"reasoning_effort": `"minimal"`, "verbosity": `"low"`, "metadata": `{"purpose":"summary"}`,
			"max_tokens": "", "top_k": "",
		})
		require.Positive(t, r.MaxCompletionTokens)
		require.LessOrEqual(t, r.MaxCompletionTokens, 300, "the table's max_tokens caps the summary's bound")
	}
}

// TestSummarizerWindowFromItsTable: the summarizer model's own
// context_window sizes its requests. Against a server whose window for it
// is 4,096 tokens, a summary planned for the known table's 400,000 is
// refused; with the table's 4,096 it is sent in chunks that fit, and the
// summary is the model's, not the deterministic fallback.
func TestSummarizerWindowFromItsTable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		table       string
		wantRefused bool
	}{
		{"the known table's window", "", true},
		{"its own table's window", "[models.\"gpt-5-nano\"]\ncontext_window = 4096\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t, openaitest.WithResponder(summarize), openaitest.WithContextWindow(4096, nil))
			sb := newSandbox(t)
			sb.useServer(srv)
			sb.writeConfig("model = \"gpt-4o-mini\"\n[summarize]\nmodel = \"gpt-5-nano\"\n" + tt.table)
			sb.seedSession(40, 6)

			res := sb.run("summarize")
			require.Equal(t, 0, res.code, res.stderr)
			refused := 0
			for _, a := range srv.Accounts() {
				require.Equal(t, "gpt-5-nano", a.Model)
				if a.Rejected == openaitest.RejectWindow {
					refused++
				}
			}
			if !tt.wantRefused {
				require.Zero(t, refused, "a summarizer request did not fit its table's window")
				require.Greater(t, len(srv.Requests()), 1, "the range is summarized in chunks")
				require.Contains(t, res.stdout, "written by gpt-5-nano")
				require.Contains(t, res.stdout, "FACT-BLUEFALCON")
				return
			}
			require.Positive(t, refused, "the test's session fits the server's window without a table: it shows nothing")
		})
	}
}
