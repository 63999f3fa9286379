package termtext

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// maxPending bounds what a Writer holds back waiting for the end of an
// escape sequence; past it the open sequence is sanitized as if the text
// ended there.
const maxPending = 64 << 10

// Writer sanitizes what is written through it for a terminal. It works on
// a stream: an escape sequence, a CR LF or a UTF-8 character split
// between two writes is treated as if it came in one, so its tail is held
// back until the next Write or Flush. Flush once the last Write is done.
// A Writer is safe for concurrent use.
type Writer struct {
	w    io.Writer
	json bool

	mu      sync.Mutex
	pending []byte
}

// NewWriter returns a Writer that writes Sanitize'd text to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// NewJSONWriter returns a Writer for JSON text: instead of removing, it
// escapes (\u0085, \u202e) what JSON allows raw but a terminal would act
// on (DEL, the C1 controls, the bidirectional overrides), so the JSON
// still decodes to the exact data. JSON's own encoding has already
// escaped ESC and the other C0 controls; it must be valid UTF-8.
func NewJSONWriter(w io.Writer) *Writer { return &Writer{w: w, json: true} }

// Write sanitizes p, with what an earlier Write held back, and writes it.
// It reports len(p) written unless the underlying writer fails.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := string(append(w.pending, p...))
	w.pending = w.pending[:0]
	out, done := w.convert(s, len(s) > maxPending)
	w.pending = append(w.pending, s[done:]...)
	if out == "" {
		return len(p), nil
	}
	if _, err := io.WriteString(w.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what was held back, sanitized as the end of the text.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	out, _ := w.convert(string(w.pending), true)
	w.pending = w.pending[:0]
	_, err := io.WriteString(w.w, out)
	return err
}

func (w *Writer) convert(s string, final bool) (string, int) {
	if w.json {
		return escapeJSON(s, final)
	}
	var b strings.Builder
	b.Grow(len(s))
	_, done := sanitize(&b, s, final)
	return b.String(), done
}

// escapeJSON escapes, as JSON \u escapes, the characters of s that a
// terminal acts on and JSON allows raw. With final unset it stops before
// a UTF-8 character the end of s cuts.
func escapeJSON(s string, final bool) (string, int) {
	var b strings.Builder
	b.Grow(len(s))
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				b.WriteString(`\u007f`)
			} else {
				b.WriteByte(c)
			}
			i++
			continue
		}
		if !final && !utf8.FullRuneInString(s[i:]) {
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if isC1(r) || isBidi(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String(), i
}
