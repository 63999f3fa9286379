package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
)

const rateLimitBody = `{"error":{"message":"Rate limit reached for gpt-4.1 on tokens per min (TPM): Limit 30000, Used 18928, Requested 11159. Please try again in 174ms.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`

func TestRetries(t *testing.T) {
	t.Parallel()
	rateLimited := func(h map[string]string) openaitest.Reply {
		return openaitest.Reply{Status: 429, Header: h, Body: rateLimitBody}
	}
	// between checks that a wait lies in [lo, hi].
	type between struct{ lo, hi time.Duration }
	tests := []struct {
		name      string
		replies   []openaitest.Reply
		config    func(*llm.Config)
		wantWaits []between
		wantErr   error // nil: success with content "ok"
	}{
		{
			name:      "429 with Retry-After in seconds",
			replies:   []openaitest.Reply{rateLimited(map[string]string{"Retry-After": "1"}), openaitest.Text("ok")},
			wantWaits: []between{{time.Second, time.Second}},
		},
		{
			name:      "429 with retry-after-ms",
			replies:   []openaitest.Reply{rateLimited(map[string]string{"retry-after-ms": "174"}), openaitest.Text("ok")},
			wantWaits: []between{{174 * time.Millisecond, 174 * time.Millisecond}},
		},
		{
			name: "429 with Retry-After as an HTTP date",
			// The date is absolute: the wait is what is left of it when the
			// request is answered, which a loaded machine makes later.
			// Honoured means: parsed (not the backoff default) and not past it.
			replies:   []openaitest.Reply{rateLimited(map[string]string{"Retry-After": time.Now().Add(10 * time.Second).UTC().Format(http.TimeFormat)}), openaitest.Text("ok")},
			wantWaits: []between{{2 * time.Second, 10 * time.Second}},
		},
		{
			name:      "Retry-After capped by MaxBackoff",
			replies:   []openaitest.Reply{rateLimited(map[string]string{"Retry-After": "3600"}), openaitest.Text("ok")},
			config:    func(c *llm.Config) { c.MaxBackoff = 7 * time.Second },
			wantWaits: []between{{7 * time.Second, 7 * time.Second}},
		},
		{
			name:      "429 without a hint backs off",
			replies:   []openaitest.Reply{rateLimited(nil), rateLimited(nil), openaitest.Text("ok")},
			wantWaits: []between{{250 * time.Millisecond, 500 * time.Millisecond}, {500 * time.Millisecond, time.Second}},
		},
		{
			name:      "500 then success",
			replies:   []openaitest.Reply{openaitest.Error(500, ""), openaitest.Text("ok")},
			wantWaits: []between{{250 * time.Millisecond, 500 * time.Millisecond}},
		},
		{
			name:    "502, 503, 504, 529 then success",
			replies: []openaitest.Reply{openaitest.Error(502, "<html>Bad Gateway</html>"), openaitest.Error(503, ""), openaitest.Error(504, ""), openaitest.Error(529, `{"error":{"message":"Overloaded","type":"overloaded_error"}}`), openaitest.Text("ok")},
			wantWaits: []between{
				{250 * time.Millisecond, 500 * time.Millisecond}, {500 * time.Millisecond, time.Second},
				{time.Second, 2 * time.Second}, {2 * time.Second, 4 * time.Second},
			},
		},
		{
			name:      "connection closed before any response",
			replies:   []openaitest.Reply{{Hangup: true}, openaitest.Text("ok")},
			wantWaits: []between{{250 * time.Millisecond, 500 * time.Millisecond}},
		},
		{
			name:      "connection closed after the headers, before the body",
			replies:   []openaitest.Reply{{Content: "lost", Cut: true}, openaitest.Text("ok")},
			wantWaits: []between{{250 * time.Millisecond, 500 * time.Millisecond}},
		},
		{
			name:      "x-should-retry false",
			replies:   []openaitest.Reply{{Status: 500, Header: map[string]string{"x-should-retry": "false"}}},
			wantErr:   errProvider,
			wantWaits: nil,
		},
		{
			name:    "retries exhausted",
			replies: []openaitest.Reply{openaitest.Error(500, ""), openaitest.Error(500, ""), openaitest.Error(500, "")},
			config:  func(c *llm.Config) { c.MaxRetries = 2 },
			wantErr: errProvider,
			wantWaits: []between{
				{250 * time.Millisecond, 500 * time.Millisecond}, {500 * time.Millisecond, time.Second},
			},
		},
		{
			name:    "retries off",
			replies: []openaitest.Reply{rateLimited(nil)},
			config:  func(c *llm.Config) { c.MaxRetries = -1 },
			wantErr: llm.ErrRateLimited,
		},
		{
			name: "budget exhausted",
			replies: []openaitest.Reply{
				rateLimited(map[string]string{"Retry-After": "10"}), rateLimited(map[string]string{"Retry-After": "10"}),
				rateLimited(map[string]string{"Retry-After": "10"}),
			},
			config:    func(c *llm.Config) { c.RetryBudget = 25 * time.Second },
			wantErr:   llm.ErrRateLimited,
			wantWaits: []between{{10 * time.Second, 10 * time.Second}, {10 * time.Second, 10 * time.Second}},
		},
		{
			name:    "401 is not retried",
			replies: []openaitest.Reply{openaitest.Error(401, `{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}`)},
			wantErr: llm.ErrAuth,
		},
	}
	for _, tt := range tests {
		for _, method := range []string{"Stream", "Complete"} {
			t.Run(method+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := openaitest.NewServer(t)
				srv.Enqueue(tt.replies...)
				var hooked atomic.Int32
				edits := []func(*llm.Config){func(c *llm.Config) {
					c.OnRetry = func(int, time.Duration, error) { hooked.Add(1) }
				}}
				if tt.config != nil {
					edits = append(edits, tt.config)
				}
				client, sl := newClient(t, srv.URL(), edits...)
				var observed atomic.Int32
				req := llm.Request{Model: "m", Messages: userMsg("hi"), OnRetry: func(llm.Retry) { observed.Add(1) }}
				var got llm.Response
				var err error
				if method == "Stream" {
					got, err = client.Stream(context.Background(), req, nil)
				} else {
					got, err = client.Complete(context.Background(), req)
				}
				switch {
				case tt.wantErr == nil:
					require.NoError(t, err)
					require.Equal(t, "ok", got.Content)
				case tt.wantErr == errProvider:
					var ae *llm.APIError
					require.True(t, errors.As(err, &ae), "error %v", err)
				default:
					require.ErrorIs(t, err, tt.wantErr)
				}
				waits := sl.all()
				require.Len(t, waits, len(tt.wantWaits), "waits %v", waits)
				for i, w := range tt.wantWaits {
					if waits[i] < w.lo || waits[i] > w.hi {
						t.Errorf("wait %d = %v, want within [%v, %v]", i, waits[i], w.lo, w.hi)
					}
				}
				require.Equal(t, len(tt.wantWaits), int(hooked.Load()), "OnRetry calls")
				require.Equal(t, len(tt.wantWaits), int(observed.Load()), "Request.OnRetry calls")
				require.Len(t, srv.Requests(), len(tt.wantWaits)+1)
				for _, r := range srv.Requests() {
					require.Equal(t, "hi", r.Messages[0].Content, "the body is replayed on each attempt")
				}
				require.Equal(t, 0, srv.Pending())
			})
		}
	}
}

// errProvider marks tests that expect a plain *llm.APIError.
var errProvider = errors.New("any provider error")

func TestDeadEndpoint(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	base := "http://" + addr + "/v1"

	tests := []struct {
		name      string
		call      func(*llm.Client) error
		realSleep bool
	}{
		{name: "Stream", call: func(c *llm.Client) error {
			_, err := c.Stream(context.Background(), llm.Request{Model: "m", Messages: userMsg("hi")}, nil)
			return err
		}},
		{name: "Complete", call: func(c *llm.Client) error {
			_, err := c.Complete(context.Background(), llm.Request{Model: "m", Messages: userMsg("hi")})
			return err
		}},
		{name: "Models", call: func(c *llm.Client) error {
			_, err := c.Models(context.Background())
			return err
		}},
		{name: "Stream with real, short waits", realSleep: true, call: func(c *llm.Client) error {
			_, err := c.Stream(context.Background(), llm.Request{Model: "m", Messages: userMsg("hi")}, nil)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client, sl := newClient(t, base, func(c *llm.Config) {
				if tt.realSleep {
					c.Sleep = nil
					c.MaxBackoff = 20 * time.Millisecond
				}
			})
			start := time.Now()
			err := tt.call(client)
			require.ErrorIs(t, err, llm.ErrUnreachable)
			require.Less(t, time.Since(start), 5*time.Second)
			msg := err.Error()
			require.Contains(t, msg, fmt.Sprintf("cannot reach %s after %d attempts: ", addr, llm.DefaultMaxRetries+1))
			require.Contains(t, msg, "connection refused")
			if !tt.realSleep {
				require.Len(t, sl.all(), llm.DefaultMaxRetries)
				var total time.Duration
				for _, w := range sl.all() {
					total += w
				}
				require.Less(t, total, llm.DefaultRetryBudget, "the default retries fit the budget")
			}
		})
	}
}

func TestDefaultRetryBudgetIsUnderAMinute(t *testing.T) {
	t.Parallel()
	// A provider that always asks for the longest wait: the client gives up in
	// well under a minute of waiting.
	srv := openaitest.NewServer(t, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Status: 503, Header: map[string]string{"Retry-After": "600"}}
	}))
	client, sl := newClient(t, srv.URL())
	_, err := client.Stream(context.Background(), llm.Request{Model: "m", Messages: userMsg("hi")}, nil)
	require.Error(t, err)
	var total time.Duration
	for _, w := range sl.all() {
		total += w
	}
	require.LessOrEqual(t, total, llm.DefaultRetryBudget)
	require.Less(t, llm.DefaultRetryBudget, time.Minute)
	require.True(t, strings.Contains(err.Error(), "gave up after"), err.Error())
}

// TestRetryObserved: a request's OnRetry hears of each retry before its
// wait, with the attempt to come, the most there will be, the wait, and
// why, worded for the user; another request's does not.
func TestRetryObserved(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	srv.Enqueue(
		openaitest.Reply{Status: 429, Header: map[string]string{"Retry-After": "3"}, Body: rateLimitBody},
		openaitest.Reply{Status: 503, Header: map[string]string{"Retry-After": "0.4"}},
		openaitest.Text("ok"),
	)
	client, _ := newClient(t, srv.URL())
	var lines []string
	got, err := client.Stream(context.Background(), llm.Request{Model: "m", Messages: userMsg("hi"), OnRetry: func(r llm.Retry) {
		lines = append(lines, r.String())
	}}, nil)
	require.NoError(t, err)
	require.Equal(t, "ok", got.Content)
	require.Equal(t, []string{
		"rate limited, retrying in 3 s (2/5)",
		"the provider answered 503 Service Unavailable, retrying in 0.4 s (3/5)",
	}, lines)

	srv.Enqueue(openaitest.Reply{Hangup: true}, openaitest.Text("ok"))
	_, err = client.Complete(context.Background(), llm.Request{Model: "m", Messages: userMsg("hi")})
	require.NoError(t, err, "a request without OnRetry retries all the same")
	require.Len(t, lines, 2, "the first request's observer heard nothing of the second")
	require.Equal(t, "cannot connect, retrying in 2 s (2/3)", llm.Retry{Attempt: 2, Attempts: 3, Wait: 1500 * time.Millisecond, Err: errors.New("dial: refused")}.String())
}
