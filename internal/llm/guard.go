package llm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gencode/gencode/internal/termtext"
)

// Guards on an answer: how long the endpoint may stay silent, how much one
// answer may hold, and what a body must look like to be an OpenAI answer.

// Defaults of Config's guards. Reasoning models can think for minutes
// before their first token, and a non-streamed answer (the summarizer's)
// only starts once it is complete, so the timeouts are generous.
const (
	DefaultHeaderTimeout  = 300 * time.Second
	DefaultIdleTimeout    = 300 * time.Second
	DefaultMaxAnswerBytes = 8 << 20
)

// timeoutError: the endpoint was silent for too long, before its headers
// (what "response headers") or within its body ("data").
type timeoutError struct {
	host     string
	what     string
	d        time.Duration
	attempts int
}

func (e *timeoutError) Error() string {
	s := fmt.Sprintf("no %s from %s for %s", e.what, e.host, e.d)
	if e.attempts > 1 {
		s += fmt.Sprintf(" (gave up after %d attempts)", e.attempts)
	}
	return s
}

func (e *timeoutError) Unwrap() error { return ErrTimeout }

// Timeout reports true, as net.Error's does: callers that may not import
// llm (the summarizer) tell a silent endpoint by it.
func (e *timeoutError) Timeout() bool { return true }

// ResponseError is an answer that is not what an OpenAI-compatible API
// sends: a redirect, an HTML page (a login portal, a proxy's error page),
// or, for a streamed request, a body that is not server-sent events. It
// keeps what the server sent so that the user can be told.
type ResponseError struct {
	Status      int
	ContentType string
	Location    string // where a redirect points
	Head        []byte // the first bytes of the body, as received (at most headSize)
	Stream      bool   // the request asked for server-sent events
}

// headSize bounds ResponseError.Head.
const headSize = 512

func (e *ResponseError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: HTTP %d %s", ErrUnexpectedResponse, e.Status, http.StatusText(e.Status))
	if e.Location != "" {
		fmt.Fprintf(&b, ", redirect to %s", termtext.OneLine(e.Location, 200))
	}
	if e.ContentType != "" {
		fmt.Fprintf(&b, ", %s", termtext.OneLine(e.ContentType, 100))
	}
	if h := termtext.OneLine(string(e.Head), 200); h != "" {
		fmt.Fprintf(&b, ": %q", h)
	}
	return b.String()
}

func (e *ResponseError) Unwrap() error { return ErrUnexpectedResponse }

// checkStart looks at the first bytes of a successful answer (what the
// reader holds after its first read) and returns a *ResponseError for one
// that cannot be an OpenAI answer; nil when it may be, or cannot be told yet.
func checkStart(req *http.Request, resp *http.Response, br *bufio.Reader) error {
	buffered, _ := br.Peek(br.Buffered())
	head := bytes.TrimLeft(buffered, " \t\r\n\ufeff")
	if len(head) == 0 {
		return nil
	}
	ct := resp.Header.Get("Content-Type")
	stream := strings.Contains(req.Header.Get("Accept"), "text/event-stream")
	ok := true
	switch {
	case head[0] == '<' || strings.Contains(strings.ToLower(ct), "html"):
		ok = false
	case stream:
		ok = isEventStream(head)
	default:
		ok = head[0] == '{' || head[0] == '['
	}
	if ok {
		return nil
	}
	return &ResponseError{
		Status: resp.StatusCode, ContentType: ct, Stream: stream,
		Head: bytes.Clone(buffered[:min(len(buffered), headSize)]),
	}
}

// isEventStream reports whether b starts like server-sent events: a field
// (data, event, id, retry) or a comment.
func isEventStream(b []byte) bool {
	if b[0] == ':' {
		return true
	}
	for _, f := range []string{"data", "event", "id", "retry"} {
		if rest, ok := bytes.CutPrefix(b, []byte(f)); ok && (len(rest) == 0 || rest[0] == ':' || rest[0] == '\n' || rest[0] == '\r') {
			return true
		}
	}
	return false
}

// redirectError is what a 3xx answer becomes: the client does not follow
// redirects (a POST turned into a GET cannot succeed, and a redirect to
// another host would carry the conversation there).
func redirectError(req *http.Request, resp *http.Response, head []byte) *ResponseError {
	return &ResponseError{
		Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"),
		Location: resp.Header.Get("Location"), Head: head,
		Stream: strings.Contains(req.Header.Get("Accept"), "text/event-stream"),
	}
}

// guardedBody is a response body with two guards: each Read may wait at
// most idle for data (then the request's context is canceled with a
// *timeoutError as its cause, which Read returns), and no line may grow
// past maxLine bytes (one server-sent event, or a JSON answer on one
// line: a 50 MB line would be held in memory whole).
type guardedBody struct {
	body    io.ReadCloser
	ctx     context.Context
	cancel  context.CancelCauseFunc
	timer   *time.Timer // nil: no idle timeout
	idle    time.Duration
	maxLine int // 0: no limit
	line    int // length of the current line so far
	close   sync.Once
}

func newGuardedBody(ctx context.Context, cancel context.CancelCauseFunc, body io.ReadCloser, host string, idle time.Duration, maxLine int) *guardedBody {
	g := &guardedBody{body: body, ctx: ctx, cancel: cancel, idle: idle, maxLine: maxLine}
	if idle > 0 {
		g.timer = time.AfterFunc(idle, func() {
			cancel(&timeoutError{host: host, what: "data", d: idle})
		})
		g.timer.Stop()
	}
	return g
}

func (g *guardedBody) Read(p []byte) (int, error) {
	if g.timer != nil {
		g.timer.Reset(g.idle)
	}
	n, err := g.body.Read(p)
	if g.timer != nil {
		g.timer.Stop()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		if cause := context.Cause(g.ctx); errors.Is(cause, ErrTimeout) {
			err = cause
		}
	}
	if g.maxLine > 0 {
		chunk := p[:n]
		for {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				g.line += len(chunk)
				break
			}
			g.line += i
			if g.line > g.maxLine {
				break
			}
			g.line, chunk = 0, chunk[i+1:]
		}
		if g.line > g.maxLine {
			return n, &tooLargeError{limit: g.maxLine, line: true}
		}
	}
	return n, err
}

// Close closes the body and releases the request's context.
func (g *guardedBody) Close() error {
	var err error
	g.close.Do(func() {
		if g.timer != nil {
			g.timer.Stop()
		}
		err = g.body.Close()
		g.cancel(context.Canceled)
	})
	return err
}

// tooLargeError: an answer passed its size limit.
type tooLargeError struct {
	limit int
	line  bool // one line of the body, not the answer's text
}

func (e *tooLargeError) Error() string {
	if e.line {
		return fmt.Sprintf("one line of the answer passed %d bytes", e.limit)
	}
	return fmt.Sprintf("the answer passed %d bytes", e.limit)
}

func (e *tooLargeError) Unwrap() error { return ErrAnswerTooLarge }
