package llm_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
)

// fields decodes a recorded request body's top-level fields.
func fields(t *testing.T, body []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &m), "body: %s", body)
	return m
}

func TestExtraFieldsAndReasoningEffort(t *testing.T) {
	t.Parallel()
	extra := map[string]any{
		"top_k":    int64(20),
		"options":  map[string]any{"num_ctx": int64(32768), "stop": []any{"<|im_end|>"}},
		"provider": map[string]any{"order": []any{"groq"}, "allow_fallbacks": false},
		"think":    false,
	}
	wantExtra := map[string]string{
		"top_k":    `20`,
		"options":  `{"num_ctx":32768,"stop":["<|im_end|>"]}`,
		"provider": `{"allow_fallbacks":false,"order":["groq"]}`,
		"think":    `false`,
	}
	tests := []struct {
		name       string
		stream     bool
		effort     string
		extra      map[string]any
		wantEffort string // the raw JSON; "" for absent
		wantExtra  map[string]string
	}{
		{name: "stream with both", stream: true, effort: "low", extra: extra, wantEffort: `"low"`, wantExtra: wantExtra},
		{name: "complete with both", effort: "high", extra: extra, wantEffort: `"high"`, wantExtra: wantExtra},
		{name: "neither", stream: true},
		{name: "an extra field replaces gencode's", stream: true, effort: "low",
			extra:      map[string]any{"reasoning_effort": "medium", "max_tokens": int64(77)},
			wantEffort: `"medium"`, wantExtra: map[string]string{"max_tokens": "77"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t)
			// A rate limit first: the retry sends the merged body again.
			srv.Enqueue(openaitest.Reply{Status: 429, Body: `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`},
				openaitest.Text("ok"))
			client, _ := newClient(t, srv.URL())
			req := llm.Request{Model: "m", Messages: userMsg("hi"), MaxTokens: 100, ReasoningEffort: tt.effort, Extra: tt.extra}
			var got llm.Response
			var err error
			if tt.stream {
				got, err = client.Stream(context.Background(), req, nil)
			} else {
				got, err = client.Complete(context.Background(), req)
			}
			require.NoError(t, err)
			require.Equal(t, "ok", got.Content)
			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			for i, r := range reqs {
				f := fields(t, r.Body)
				require.Equal(t, tt.wantEffort, string(f["reasoning_effort"]), "request %d: reasoning_effort in %s", i, r.Body)
				for k, want := range tt.wantExtra {
					require.JSONEq(t, want, string(f[k]), "request %d: %s in %s", i, k, r.Body)
				}
				require.Equal(t, "m", r.Model, "the request's own fields stay")
				require.Equal(t, "hi", r.Messages[0].Content)
				require.Equal(t, tt.stream, r.Stream)
			}
			if tt.extra == nil {
				require.NotContains(t, string(reqs[0].Body), "top_k")
			}
		})
	}
}

func TestExtraFieldThatIsNotJSON(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	client, _ := newClient(t, srv.URL())
	_, err := client.Complete(context.Background(), llm.Request{Model: "m", Messages: userMsg("hi"), Extra: map[string]any{"bad": make(chan int)}})
	require.ErrorContains(t, err, "chat completion m: extra request field bad: json: unsupported type")
	require.Empty(t, srv.Requests(), "nothing is sent")
}
