package llm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// retryTransport retries a request when the provider is busy (429, 5xx), the
// connection fails or the endpoint stays silent before any byte of the
// response body, replaying the body with GetBody. It also turns error
// statuses into *APIError, so the headers (Retry-After) and the raw body are
// at hand (go-openai's errors drop them), and answers that are no OpenAI
// answer (a redirect, an HTML page) into *ResponseError.
type retryTransport struct {
	base       http.RoundTripper
	maxRetries int
	maxBackoff time.Duration
	budget     time.Duration // retrying stops when sleeps plus failed attempts exceed it
	sleep      func(context.Context, time.Duration) error
	onRetry    func(attempt int, wait time.Duration, err error)
	redact     func(string) string // applied to every error it gives (see scrub)

	headerTimeout time.Duration // 0: none
	idleTimeout   time.Duration // 0: none
	maxLine       int           // 0: no limit
}

// firstBackoff is the base of the exponential backoff: 0.5 s, 1 s, 2 s, 4 s ...
const firstBackoff = 500 * time.Millisecond

// maxErrorBody bounds how much of an error body is read.
const maxErrorBody = 1 << 20

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	var spent time.Duration
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 {
			r = req.Clone(ctx)
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, fmt.Errorf("replay request body: %w", err)
				}
				r.Body = body
			}
		}
		start := time.Now()
		o := t.attempt(r, attempt)
		o.err = scrub(o.err, t.redact)
		if !o.retry || !replayable || attempt > t.maxRetries {
			return o.resp, o.err
		}
		wait := o.wait
		if wait < 0 {
			wait = backoff(attempt, t.maxBackoff)
		}
		wait = min(wait, t.maxBackoff)
		spent += time.Since(start)
		if spent+wait > t.budget {
			return o.resp, o.err
		}
		if t.onRetry != nil {
			t.onRetry(attempt, wait, o.err)
		}
		if f := retryObserver(ctx); f != nil {
			f(Retry{Attempt: attempt + 1, Attempts: t.maxRetries + 1, Wait: wait, Err: o.err})
		}
		if serr := t.sleep(ctx, wait); serr != nil {
			return nil, serr
		}
		spent += wait
	}
}

// outcome is what one attempt gives: what RoundTrip returns if it stops there,
// whether the failure is worth a retry, and the wait the provider asked for
// (-1: none).
type outcome struct {
	resp  *http.Response
	err   error
	retry bool
	wait  time.Duration
}

// attempt sends r, the n-th attempt, once. It runs under a context of its
// own, canceled (with a *timeoutError as the cause) when the headers take
// longer than headerTimeout or the body is silent for idleTimeout, and
// released when the body is closed.
func (t *retryTransport) attempt(r *http.Request, n int) outcome {
	parent := r.Context()
	ctx, cancel := context.WithCancelCause(parent)
	r = r.WithContext(ctx)
	host := r.URL.Host
	// fail ends the attempt with err, or with the cancel or timeout that
	// caused it.
	fail := func(err error, retry bool) outcome {
		defer cancel(context.Canceled)
		if perr := parent.Err(); perr != nil {
			return outcome{err: perr, wait: -1}
		}
		var te *timeoutError
		if errors.As(context.Cause(ctx), &te) {
			te.attempts = n
			return outcome{err: te, retry: true, wait: -1}
		}
		return outcome{err: err, retry: retry, wait: -1}
	}

	var headers *time.Timer
	if t.headerTimeout > 0 {
		headers = time.AfterFunc(t.headerTimeout, func() {
			cancel(&timeoutError{host: host, what: "response headers", d: t.headerTimeout})
		})
	}
	resp, err := t.base.RoundTrip(r)
	if headers != nil && !headers.Stop() && err == nil {
		// The timer fired as the headers came: the request is canceled.
		resp.Body.Close()
		err = context.Cause(ctx)
	}
	if err != nil {
		return fail(&netError{host: host, attempts: n, err: err}, transient(err))
	}
	body := newGuardedBody(ctx, cancel, resp.Body, host, t.idleTimeout, t.maxLine)
	resp.Body = body

	if resp.StatusCode >= http.StatusMultipleChoices && resp.StatusCode < http.StatusBadRequest {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, headSize))
		resp.Body.Close()
		return fail(redirectError(r, resp, head), false)
	}
	if resp.StatusCode < http.StatusBadRequest {
		if resp.ContentLength == 0 {
			return outcome{resp: resp, wait: -1}
		}
		// Wait for the first byte, so that a connection that dies before the
		// body can still be retried: nobody has seen any of it yet.
		br := bufio.NewReader(resp.Body)
		if _, perr := br.Peek(1); perr != nil {
			resp.Body.Close()
			return fail(&netError{host: host, attempts: n, err: &bodyError{perr}}, transient(perr))
		}
		if err := checkStart(r, resp, br); err != nil {
			resp.Body.Close()
			return fail(err, false)
		}
		resp.Body = readCloser{br, resp.Body}
		return outcome{resp: resp, wait: -1}
	}

	raw, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if rerr != nil && parent.Err() != nil {
		return outcome{err: parent.Err(), wait: -1}
	}
	e := newAPIError(resp.StatusCode, raw)
	e.ContentType = resp.Header.Get("Content-Type")
	e.attempts = n
	retry := retryableStatus(resp.StatusCode) &&
		!errors.Is(e, ErrQuota) && !errors.Is(e, ErrContextOverflow)
	switch resp.Header.Get("x-should-retry") { // OpenAI's explicit hint
	case "true":
		retry = !errors.Is(e, ErrQuota)
	case "false":
		retry = false
	}
	o := outcome{err: e, retry: retry, wait: -1}
	if d, ok := retryAfter(resp.Header, time.Now()); ok {
		o.wait = d
	}
	return o
}

// retryableStatus: the statuses OpenAI's own SDKs retry.
func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusConflict ||
		code == http.StatusTooManyRequests || code >= http.StatusInternalServerError
}

// transient reports connection failures that may go away: refused, reset,
// closed early, timed out, temporary DNS failures.
func transient(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsTemporary || dns.IsTimeout
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "connection reset") || strings.Contains(s, "connection refused") ||
		strings.Contains(s, "server closed") || strings.Contains(s, "forcibly closed")
}

// backoff is the wait before retry number attempt (1-based): exponential,
// capped, with jitter in [d/2, d].
func backoff(attempt int, maxWait time.Duration) time.Duration {
	d := firstBackoff << min(attempt-1, 20)
	d = min(d, maxWait)
	return d/2 + rand.N(d/2+1)
}

// retryAfter reads the wait a provider asks for: retry-after-ms (OpenAI,
// Azure), then Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return seconds(ms / 1000), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		return seconds(s), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// seconds converts without overflowing: anything beyond a day is a day.
func seconds(s float64) time.Duration {
	if s > 86400 {
		return 24 * time.Hour
	}
	return time.Duration(s * float64(time.Second))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// bodyError: the connection failed after the headers, before the first body byte.
type bodyError struct{ err error }

func (e *bodyError) Error() string {
	return "connection closed before the response body: " + e.err.Error()
}
func (e *bodyError) Unwrap() error { return e.err }

type readCloser struct {
	io.Reader
	io.Closer
}

// Retry is one retry about to happen, as Request.OnRetry hears of it
// before the wait.
type Retry struct {
	// Attempt is the attempt about to be made (2 for the first retry) of
	// at most Attempts.
	Attempt, Attempts int
	// Wait is how long the client waits before it (a provider's
	// Retry-After, within MaxBackoff).
	Wait time.Duration
	// Err is what the failed attempt returned.
	Err error
}

// Reason says in a few words why the attempt failed: "rate limited", "the
// provider answered 503", "no answer", "cannot connect".
func (r Retry) Reason() string {
	var ae *APIError
	switch {
	case errors.Is(r.Err, ErrRateLimited):
		return "rate limited"
	case errors.As(r.Err, &ae) && ae.Status != 0:
		return fmt.Sprintf("the provider answered %d %s", ae.Status, http.StatusText(ae.Status))
	case errors.Is(r.Err, ErrTimeout):
		return "no answer in time"
	}
	return "cannot connect"
}

// String is the line a front end shows while the client waits: "rate
// limited, retrying in 3 s (2/5)".
func (r Retry) String() string {
	secs := int(r.Wait.Round(time.Second) / time.Second)
	wait := fmt.Sprintf("%d s", secs)
	if r.Wait < time.Second {
		wait = fmt.Sprintf("%.1f s", r.Wait.Seconds())
	}
	return fmt.Sprintf("%s, retrying in %s (%d/%d)", r.Reason(), wait, r.Attempt, r.Attempts)
}

// retryObserverKey carries a request's OnRetry from Stream or Complete to
// the transport, the only way through go-openai, as net/http/httptrace
// carries its hooks. It never leaves this package.
type retryObserverKey struct{}

func withRetryObserver(ctx context.Context, f func(Retry)) context.Context {
	if f == nil {
		return ctx
	}
	return context.WithValue(ctx, retryObserverKey{}, f)
}

func retryObserver(ctx context.Context) func(Retry) {
	f, _ := ctx.Value(retryObserverKey{}).(func(Retry))
	return f
}
