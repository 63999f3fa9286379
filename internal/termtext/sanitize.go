// Package termtext is text as a terminal shows it. Sanitize makes
// untrusted text (model answers, tool output, file names, server errors)
// inert: no escape sequence or control character in it reaches the
// terminal, so a reply cannot retitle the window, write the clipboard,
// clear the screen, plant a hyperlink, hide a line behind a carriage
// return or reorder what is shown. The other helpers shape text for one
// line (OneLine, FirstLine, Label; each sanitizes too) and say sizes and
// counts as a person reads them (Size, Thousands).
//
// It draws nothing and imports no UI library: the tools sanitize their
// output with it before the model or the log sees it, the CLI before it
// prints on a terminal, and the TUI before it draws.
package termtext

import (
	"strings"
	"unicode/utf8"
)

// Sanitize returns s made inert for a terminal:
//
//   - escape sequences are removed whole: CSI (ESC [ … final byte),
//     OSC, DCS, SOS, PM and APC strings (up to BEL, ST, CAN or SUB, or to
//     the end of the line when unterminated) and the two- and
//     three-byte ESC sequences (ESC c, ESC 7, ESC ( B ...);
//   - the 8-bit C1 introducers (U+009B CSI, U+009D OSC, U+0090 DCS,
//     U+0098 SOS, U+009E PM, U+009F APC) start the same sequences as
//     their 7-bit forms and are removed with them; other C1 controls are
//     dropped;
//   - CR LF and a lone CR become LF (a CR cannot hide what came before
//     it on the line);
//   - other C0 controls (NUL, BEL, BS ...) and DEL are dropped; tab and
//     newline are kept;
//   - the bidirectional embedding, override and isolate controls
//     (U+202A-U+202E, U+2066-U+2069) are dropped, so text shows in the
//     order it is stored;
//   - invalid UTF-8 becomes U+FFFD.
//
// Clean text (the common case) is returned as is, without allocating.
// Sanitize(Sanitize(s)) == Sanitize(s).
func Sanitize(s string) string {
	out, _ := SanitizeCount(s)
	return out
}

// SanitizeCount is Sanitize, also reporting how many escape sequences,
// control characters and invalid bytes it removed or replaced (line
// endings are not counted).
func SanitizeCount(s string) (string, int) {
	if isClean(s) {
		return s, 0
	}
	var b strings.Builder
	b.Grow(len(s))
	n, _ := sanitize(&b, s, true)
	return b.String(), n
}

// Display is Sanitize with each tab expanded to four spaces: a terminal
// advances a tab to the next stop, which width calculations cannot know.
func Display(s string) string {
	s = Sanitize(s)
	if strings.IndexByte(s, '\t') >= 0 {
		s = strings.ReplaceAll(s, "\t", "    ")
	}
	return s
}

// Label is Display for a one-line label (a tool name, a path, a title, a
// report line): each line break, with the white space around it, becomes
// one space. Spaces within a line are kept, so columns stay aligned.
func Label(s string) string {
	s = Display(s)
	if strings.IndexByte(s, '\n') < 0 {
		return s
	}
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

// isClean reports whether s is valid UTF-8 without anything Sanitize
// changes, checked without allocating.
func isClean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || isC1(r) || isBidi(r) {
			return false
		}
		i += size
	}
	return true
}

// cleanRune is isClean for one character: whether Sanitize keeps r, the
// first character of s, as it is.
func cleanRune(r rune, s string) bool {
	if r < utf8.RuneSelf {
		return !(r < 0x20 && r != '\n' && r != '\t' || r == 0x7f)
	}
	if r == utf8.RuneError {
		if _, size := utf8.DecodeRuneInString(s); size == 1 {
			return false
		}
	}
	return !isC1(r) && !isBidi(r)
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// isBidi reports the bidirectional embedding, override and isolate
// controls (Trojan Source, CVE-2021-42574).
func isBidi(r rune) bool { return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 }

// sanitize writes s made inert to b and returns how much it removed. With
// final unset it stops before a construct that the end of s leaves open
// (an escape sequence, a CR that a LF may follow, part of a UTF-8
// sequence) and returns where, so a stream can be sanitized piece by
// piece; with final set it returns len(s).
func sanitize(b *strings.Builder, s string, final bool) (removed, done int) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n' || c == '\t' || c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
			i++
			continue
		case c == '\r':
			if i+1 == len(s) && !final {
				return removed, i
			}
			b.WriteByte('\n')
			i++
			if i < len(s) && s[i] == '\n' {
				i++
			}
			continue
		case c == 0x1b:
			n, complete := escapeLen(s[i:], 1)
			if !complete && !final {
				return removed, i
			}
			removed++
			i += n
			continue
		case c < 0x80: // other C0 controls and DEL
			removed++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if !final && !utf8.FullRuneInString(s[i:]) {
				return removed, i
			}
			b.WriteString("\uFFFD")
			removed++
			i++
		case isC1(r):
			n, complete := c1Len(s[i:], r, size)
			if !complete && !final {
				return removed, i
			}
			removed++
			i += n
		case isBidi(r):
			removed++
			i += size
		default:
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return removed, len(s)
}

// escapeLen is the length of the escape sequence at the start of s, whose
// introducer (ESC, or an 8-bit C1 in UTF-8) takes intro bytes, and whether
// it ended before s did.
func escapeLen(s string, intro int) (int, bool) {
	if len(s) <= intro {
		return len(s), false
	}
	switch c := s[intro]; {
	case c == '[':
		return csiLen(s, intro+1)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		return stringLen(s, intro+1)
	case c >= 0x20 && c <= 0x2f: // intermediates, then a final byte
		i := intro
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i == len(s) {
			return i, false
		}
		if s[i] >= 0x30 && s[i] <= 0x7e {
			return i + 1, true
		}
		return i, true
	case c >= 0x30 && c <= 0x7e: // ESC 7, ESC c, ESC = ...
		return intro + 1, true
	}
	// ESC before a control or a non-ASCII byte: only the ESC goes.
	return intro, true
}

// c1Len is the length of what the 8-bit C1 control r (size bytes) at the
// start of s introduces, and whether it ended before s did.
func c1Len(s string, r rune, size int) (int, bool) {
	switch r {
	case 0x9b: // CSI
		return csiLen(s, size)
	case 0x9d, 0x90, 0x98, 0x9e, 0x9f: // OSC, DCS, SOS, PM, APC
		return stringLen(s, size)
	}
	return size, true
}

// csiLen is the end of a control sequence whose parameters start at i:
// parameter bytes (0x30-0x3F), intermediates (0x20-0x2F), a final byte
// (0x40-0x7E). Any other byte ends it early and is left for the caller.
func csiLen(s string, i int) (int, bool) {
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x20 && c <= 0x3f:
		case c >= 0x40 && c <= 0x7e:
			return i + 1, true
		default:
			return i, true
		}
	}
	return i, false
}

// stringLen is the end of a control string (OSC, DCS, SOS, PM, APC) whose
// body starts at i: after BEL, ST (ESC \ or U+009C), CAN or SUB; before
// another ESC or a line feed, which end an unterminated one (what follows
// is shown, inert, rather than lost).
func stringLen(s string, i int) (int, bool) {
	for ; i < len(s); i++ {
		switch s[i] {
		case 0x07, 0x18, 0x1a:
			return i + 1, true
		case '\n':
			return i, true
		case 0x1b:
			if i+1 == len(s) {
				return i, false
			}
			if s[i+1] == '\\' {
				return i + 2, true
			}
			return i, true
		case 0xc2:
			if i+1 == len(s) {
				return i, false
			}
			if s[i+1] == 0x9c {
				return i + 2, true
			}
		}
	}
	return i, false
}
