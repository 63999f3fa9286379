package llm_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
)

// TestErrorsAreRedacted: a provider's error used to reach the user, the
// log and the chat with what it echoed: the key it refused, the secrets
// of the request it refused. Every error the client returns, and the one
// a retry observer is given, now has the configured key replaced
// literally and what Config.Redact finds taken out, in its text and in
// the fields a front end reads (APIError's Message and Body,
// ResponseError's Head and Location); its kind is kept.
func TestErrorsAreRedacted(t *testing.T) {
	t.Parallel()
	const key = "sk-live-9f8e7d6c5b4a39281706"
	const secret = "hunter2-db-password"
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED:password]") }
	tests := []struct {
		name     string
		reply    openaitest.Reply
		wantKind error
	}{
		{name: "401 echoing the key", wantKind: llm.ErrAuth, reply: openaitest.Error(401,
			`{"error":{"message":"Incorrect API key provided: `+key+`. You can find your API key at https://platform.openai.com","type":"invalid_request_error","code":"invalid_api_key"}}`)},
		{name: "400 quoting the request", reply: openaitest.Error(400,
			`{"error":{"message":"invalid message content: 'DB_PASSWORD=`+secret+` OPENAI_API_KEY=`+key+`'","type":"invalid_request_error","param":"`+secret+`","code":null}}`)},
		{name: "plain text body", reply: openaitest.Reply{Status: 403, Header: map[string]string{"Content-Type": "text/plain"},
			Body: "forbidden for key " + key + " (password " + secret + ")"}, wantKind: llm.ErrAuth},
		{name: "html page instead of an answer", wantKind: llm.ErrUnexpectedResponse, reply: openaitest.Reply{Status: 200,
			Header: map[string]string{"Content-Type": "text/html"}, Body: "<html>login, key=" + key + " pass=" + secret + "</html>"}},
		{name: "redirect", wantKind: llm.ErrUnexpectedResponse, reply: openaitest.Reply{Status: 302,
			Header: map[string]string{"Location": "/login?key=" + key + "&p=" + secret}, Body: "moved " + key}},
	}
	for _, tt := range tests {
		for _, method := range []string{"Stream", "Complete"} {
			t.Run(method+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := openaitest.NewServer(t, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply { return tt.reply }))
				c, _ := newClient(t, srv.URL(), func(cfg *llm.Config) {
					cfg.APIKey, cfg.Redact, cfg.MaxRetries = key, redact, -1
				})
				var err error
				switch method {
				case "Stream":
					_, err = c.Stream(context.Background(), llm.Request{Model: "m", Messages: userMsg("hi")}, nil)
				case "Complete":
					_, err = c.Complete(context.Background(), llm.Request{Model: "m", Messages: userMsg("hi")})
				}
				require.Error(t, err)
				if tt.wantKind != nil {
					require.ErrorIs(t, err, tt.wantKind)
				}
				requireClean(t, err.Error(), key, secret)
				var ae *llm.APIError
				if errors.As(err, &ae) {
					requireClean(t, ae.Message+ae.Code+ae.Type+ae.Param+string(ae.Body), key, secret)
				}
				var re *llm.ResponseError
				if errors.As(err, &re) {
					requireClean(t, string(re.Head)+re.Location, key, secret)
				}
				require.Contains(t, err.Error(), "[REDACTED:", "it says something was taken out")
			})
		}
	}
}

// TestStreamErrorEventIsRedacted: an error event inside a stream carries
// the provider's words too.
func TestStreamErrorEventIsRedacted(t *testing.T) {
	t.Parallel()
	const key = "sk-live-9f8e7d6c5b4a39281706"
	srv := openaitest.NewServer(t)
	srv.Enqueue(openaitest.Reply{SSE: `data: {"choices":[{"index":0,"delta":{"content":"hel"}}]}` + "\n\n" +
		`data: {"error":{"message":"key ` + key + ` was revoked mid-answer","type":"server_error"}}` + "\n\n"})
	c, _ := newClient(t, srv.URL(), func(cfg *llm.Config) { cfg.APIKey = key })
	_, err := c.Stream(context.Background(), llm.Request{Model: "m", Messages: userMsg("hi")}, nil)
	require.Error(t, err)
	requireClean(t, err.Error(), key, "")
	require.Contains(t, err.Error(), "[REDACTED:api-key]")
}

// TestRetryObserverSeesRedactedErrors: the chat's "retrying" line shows
// the failed attempt's error; it is redacted as the final one is.
func TestRetryObserverSeesRedactedErrors(t *testing.T) {
	t.Parallel()
	const key = "sk-live-9f8e7d6c5b4a39281706"
	srv := openaitest.NewServer(t)
	srv.Enqueue(openaitest.Error(500, `{"error":{"message":"upstream refused key `+key+`","type":"server_error"}}`), openaitest.Text("ok"))
	var mu sync.Mutex
	var seen []string
	c, _ := newClient(t, srv.URL(), func(cfg *llm.Config) {
		cfg.APIKey = key
		cfg.OnRetry = func(_ int, _ time.Duration, err error) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, err.Error())
		}
	})
	resp, err := c.Complete(context.Background(), llm.Request{Model: "m", Messages: userMsg("hi"), OnRetry: func(r llm.Retry) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Err.Error())
	}})
	require.NoError(t, err)
	require.Equal(t, "ok", resp.Content)
	require.Len(t, seen, 2)
	for _, s := range seen {
		requireClean(t, s, key, "")
	}
}

func requireClean(t *testing.T, text, key, secret string) {
	t.Helper()
	require.NotContains(t, text, key, "the key is redacted")
	if secret != "" {
		require.NotContains(t, text, secret, "the secret is redacted")
	}
}
