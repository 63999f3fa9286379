package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/llm"
	"github.com/gencode/gencode/internal/openaitest"
)

// guardCtx bounds a test that would hang without the guards: it then
// fails with context.DeadlineExceeded instead of the expected error.
func guardCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestHeaderTimeoutIsRetriedThenReported(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t, openaitest.WithResponder(func(openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Content: "never", Delay: time.Hour} // accepts, never answers
	}))
	client, sl := newClient(t, srv.URL(), func(c *llm.Config) { c.HeaderTimeout = 100 * time.Millisecond })
	_, err := client.Stream(guardCtx(t), llm.Request{Model: "m", Messages: userMsg("hi")}, nil)
	require.ErrorIs(t, err, llm.ErrTimeout)
	require.NotErrorIs(t, err, llm.ErrInterrupted, "nothing had started")
	require.Regexp(t, `^chat completion m: no response headers from 127\.0\.0\.1:\d+ for 100ms \(gave up after 5 attempts\)$`, err.Error())
	require.Len(t, sl.all(), llm.DefaultMaxRetries, "retried like a failed connection")
}

func TestIdleBeforeTheFirstByteIsRetried(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	srv.Enqueue(
		openaitest.Reply{Content: "stalled", Stall: true}, // headers, then nothing
		openaitest.Reply{Content: "stalled", Stall: true},
		openaitest.Text("made it"),
	)
	client, _ := newClient(t, srv.URL(), func(c *llm.Config) { c.IdleTimeout = 100 * time.Millisecond })
	resp, err := client.Stream(guardCtx(t), llm.Request{Model: "m", Messages: userMsg("hi")}, nil)
	require.NoError(t, err)
	require.Equal(t, "made it", resp.Content)
	require.Len(t, srv.Requests(), 3)
}

func TestIdleMidAnswerKeepsThePartial(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	// Role chunk, "one ", "two ", then silence.
	srv.Enqueue(openaitest.Reply{Content: "one two six ten ", Chunks: 4, Stall: true, CutAfter: 3})
	client, _ := newClient(t, srv.URL(), func(c *llm.Config) { c.IdleTimeout = 100 * time.Millisecond })
	var seen strings.Builder
	resp, err := client.Stream(guardCtx(t), llm.Request{Model: "m", Messages: userMsg("hi")}, func(d llm.Delta) {
		seen.WriteString(d.Content)
	})
	require.ErrorIs(t, err, llm.ErrTimeout)
	require.ErrorIs(t, err, llm.ErrInterrupted)
	require.Regexp(t, `^chat completion m: answer interrupted after 8 characters: no data from 127\.0\.0\.1:\d+ for 100ms$`, err.Error())
	require.Equal(t, "one two ", resp.Content)
	require.Equal(t, "one two ", seen.String())
	require.Len(t, srv.Requests(), 1, "an answer already shown is not sent again")
}

func TestIdleInANonStreamedAnswer(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	srv.Enqueue(openaitest.Reply{Content: "a summary", Stall: true, CutAfter: 20})
	client, _ := newClient(t, srv.URL(), func(c *llm.Config) { c.IdleTimeout = 100 * time.Millisecond })
	_, err := client.Complete(guardCtx(t), llm.Request{Model: "m", Messages: userMsg("hi")})
	require.ErrorIs(t, err, llm.ErrTimeout)
	require.Contains(t, err.Error(), "no data from 127.0.0.1:")
}

func TestAnswerSizeCaps(t *testing.T) {
	t.Parallel()
	t.Run("many deltas", func(t *testing.T) {
		t.Parallel()
		srv := openaitest.NewServer(t)
		srv.Enqueue(openaitest.Reply{Content: strings.Repeat("word ", 200), Chunks: 100})
		client, _ := newClient(t, srv.URL(), func(c *llm.Config) { c.MaxAnswerBytes = 100 })
		resp, err := client.Stream(guardCtx(t), llm.Request{Model: "m", Messages: userMsg("hi")}, nil)
		require.ErrorIs(t, err, llm.ErrAnswerTooLarge)
		require.EqualError(t, err, "chat completion m: the answer passed 100 bytes")
		require.Len(t, resp.Content, 110, "what came before the cap is kept: 11 deltas of 10 bytes")
	})
	t.Run("one huge delta", func(t *testing.T) {
		t.Parallel()
		srv := openaitest.NewServer(t)
		huge := strings.Repeat("x", 4<<20)
		srv.Enqueue(openaitest.Reply{SSE: `data: {"choices":[{"index":0,"delta":{"content":"` + huge + `"}}]}` + "\n\ndata: [DONE]\n\n"})
		client, _ := newClient(t, srv.URL(), func(c *llm.Config) { c.MaxAnswerBytes = 1000 })
		_, err := client.Stream(guardCtx(t), llm.Request{Model: "m", Messages: userMsg("hi")}, nil)
		require.ErrorIs(t, err, llm.ErrAnswerTooLarge)
		require.ErrorIs(t, err, llm.ErrInterrupted)
		require.Contains(t, err.Error(), "one line of the answer passed 67536 bytes")
	})
}

func TestAnswersThatAreNotOpenAI(t *testing.T) {
	t.Parallel()
	page := "<!DOCTYPE html>\n<html><head><title>Sign in \x1b]0;owned\x07 to the Wi-Fi</title></head><body>" +
		strings.Repeat("<p>terms</p>", 100) + "</body></html>"
	// What the message shows of it: one line, the escape sequence removed,
	// 200 characters.
	shown := []rune("<!DOCTYPE html> <html><head><title>Sign in to the Wi-Fi</title></head><body>" +
		strings.Repeat("<p>terms</p>", 100))
	pageMsg := string(shown[:199]) + "…"
	tests := []struct {
		name     string
		reply    openaitest.Reply
		complete bool // a non-streamed request
		want     llm.ResponseError
		wantMsg  string
	}{
		{
			name:    "redirect",
			reply:   openaitest.Reply{Status: 302, Header: map[string]string{"Location": "/v1/login", "Content-Type": "text/html"}, Body: "<a href=\"/v1/login\">Found</a>"},
			want:    llm.ResponseError{Status: 302, ContentType: "text/html", Location: "/v1/login", Head: []byte("<a href=\"/v1/login\">Found</a>"), Stream: true},
			wantMsg: `chat completion m: unexpected response: HTTP 302 Found, redirect to /v1/login, text/html: "<a href=\"/v1/login\">Found</a>"`,
		},
		{
			name:    "html page with 200",
			reply:   openaitest.Reply{Status: 200, Header: map[string]string{"Content-Type": "text/html; charset=utf-8"}, Body: page},
			want:    llm.ResponseError{Status: 200, ContentType: "text/html; charset=utf-8", Head: []byte(page[:512]), Stream: true},
			wantMsg: `chat completion m: unexpected response: HTTP 200 OK, text/html; charset=utf-8: "` + pageMsg + `"`,
		},
		{
			name:     "html page to a plain request",
			reply:    openaitest.Reply{Status: 200, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html>hi</html>"},
			complete: true,
			want:     llm.ResponseError{Status: 200, ContentType: "text/html", Head: []byte("<html>hi</html>")},
			wantMsg:  `chat completion m: unexpected response: HTTP 200 OK, text/html: "<html>hi</html>"`,
		},
		{
			name:    "plain text to a stream",
			reply:   openaitest.Reply{Status: 200, Header: map[string]string{"Content-Type": "text/plain"}, Body: "OK"},
			want:    llm.ResponseError{Status: 200, ContentType: "text/plain", Head: []byte("OK"), Stream: true},
			wantMsg: `chat completion m: unexpected response: HTTP 200 OK, text/plain: "OK"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.NewServer(t)
			srv.Enqueue(tt.reply)
			client, _ := newClient(t, srv.URL())
			req := llm.Request{Model: "m", Messages: userMsg("hi")}
			var err error
			if tt.complete {
				_, err = client.Complete(guardCtx(t), req)
			} else {
				_, err = client.Stream(guardCtx(t), req, nil)
			}
			require.ErrorIs(t, err, llm.ErrUnexpectedResponse)
			var re *llm.ResponseError
			require.True(t, errors.As(err, &re), "err = %v", err)
			require.Equal(t, tt.want, *re)
			require.Equal(t, tt.wantMsg, err.Error())
			require.Len(t, srv.Requests(), 1, "neither followed nor retried")
		})
	}
}

func TestPlainErrorBodyNamesItsType(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	srv.Enqueue(openaitest.Reply{Status: 400, Header: map[string]string{"Content-Type": "text/plain"}, Body: "bad json"})
	client, _ := newClient(t, srv.URL())
	_, err := client.Stream(guardCtx(t), llm.Request{Model: "m", Messages: userMsg("hi")}, nil)
	require.EqualError(t, err, "chat completion m: provider error 400, text/plain: bad json")
	var ae *llm.APIError
	require.True(t, errors.As(err, &ae))
	require.Equal(t, "text/plain", ae.ContentType)
}
