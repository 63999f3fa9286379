// Package paste is how a large paste shows in the TUI: a one-line
// placeholder ("[pasted text #2: 500 lines, 9.8 KB]") standing for the
// text, which is sent whole. The log keeps the text and, beside it, where
// each paste lies (session.Paste), so that a resumed session shows the
// placeholders again instead of every pasted line.
package paste

import (
	"fmt"
	"strings"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
)

// Placeholder is what paste number n of text shows as.
func Placeholder(n int, text string) string {
	return fmt.Sprintf("[pasted text #%d: %d lines, %s]", n, Lines(text), termtext.Size(int64(len(text))))
}

// Number is the number of a placeholder made by Placeholder (0: not one).
func Number(ph string) int {
	var n int
	if _, err := fmt.Sscanf(ph, "[pasted text #%d:", &n); err != nil {
		return 0
	}
	return n
}

// Lines counts the lines of text; a final line break ends the last line.
func Lines(text string) int {
	n := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") {
		n++
	}
	return n
}

// Collapse returns text with each paste in spans shown as its placeholder.
// Spans that do not fit the text (out of range, overlapping, not on a
// character boundary) are left as text: nothing is ever hidden wrongly.
func Collapse(text string, spans []session.Paste) string {
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	at := 0
	each(text, spans, func(p session.Paste) {
		b.WriteString(text[at:p.Start])
		b.WriteString(Placeholder(p.N, text[p.Start:p.End]))
		at = p.End
	})
	b.WriteString(text[at:])
	return b.String()
}

// Texts maps each placeholder Collapse shows in text to the text it
// stands for.
func Texts(text string, spans []session.Paste) map[string]string {
	out := map[string]string{}
	each(text, spans, func(p session.Paste) {
		full := text[p.Start:p.End]
		out[Placeholder(p.N, full)] = full
	})
	return out
}

// each calls f on the spans that fit text, in order.
func each(text string, spans []session.Paste, f func(session.Paste)) {
	at := 0
	for _, p := range spans {
		if p.Start < at || p.End <= p.Start || p.End > len(text) || !boundary(text, p.Start) || !boundary(text, p.End) {
			continue
		}
		f(p)
		at = p.End
	}
}

// boundary reports whether i is where a UTF-8 character starts in s.
func boundary(s string, i int) bool {
	return i == len(s) || s[i]&0xC0 != 0x80
}
