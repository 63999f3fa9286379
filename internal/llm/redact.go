package llm

import (
	"errors"
	"strings"
)

// Secrets in errors. A provider's error body may echo what it was sent:
// a 401 quotes the key it refused, a 400 quotes the messages (and the
// secrets in them). Every error the client returns, or shows a retry
// observer, has the configured key and what Config.Redact finds taken out
// of the text it carries, where the error is built, so that no front end,
// log or stored summary can show it by mistake.

// redactedKey replaces the configured API key, as everywhere in gencode.
const redactedKey = "[REDACTED:api-key]"

// minKeyLen: shorter keys are placeholders ("none", "local") that would
// redact ordinary words.
const minKeyLen = 8

// newRedactor returns what redacts an error's text: the key, literally
// (a provider may echo it cut or in any context), then more (nil: none).
func newRedactor(key string, more func(string) string) func(string) string {
	if len(key) < minKeyLen {
		key = ""
	}
	return func(s string) string {
		if key != "" {
			s = strings.ReplaceAll(s, key, redactedKey)
		}
		if more != nil {
			s = more(s)
		}
		return s
	}
}

// scrub takes the secrets out of err: in place in an *APIError (the
// provider's words and raw body) and a *ResponseError (the start of the
// body, the redirect target), which were built for this one request; and,
// when the rest of its text still holds one (a URL, a wrapped error),
// behind a *redactedError that shows the redacted text and unwraps to err.
func scrub(err error, redact func(string) string) error {
	if err == nil || redact == nil {
		return err
	}
	var ae *APIError
	if errors.As(err, &ae) && !ae.scrubbed {
		ae.Message, ae.Code, ae.Type, ae.Param = redact(ae.Message), redact(ae.Code), redact(ae.Type), redact(ae.Param)
		if len(ae.Body) > 0 {
			if b := redact(string(ae.Body)); b != string(ae.Body) {
				ae.Body = []byte(b)
			}
		}
		ae.scrubbed = true
	}
	var rse *ResponseError
	if errors.As(err, &rse) {
		rse.Location = redact(rse.Location)
		if h := redact(string(rse.Head)); h != string(rse.Head) {
			rse.Head = []byte(h)
		}
	}
	if s := err.Error(); redact(s) != s {
		return &redactedError{err: err, text: redact(s)}
	}
	return err
}

// redactedError shows an error's text with its secrets redacted; errors.Is
// and errors.As see the error itself.
type redactedError struct {
	err  error
	text string
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }
