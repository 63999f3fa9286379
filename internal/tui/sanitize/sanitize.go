// Package sanitize makes untrusted text (model answers, tool output, file
// names) inert before it reaches the terminal: escape sequences and control
// characters are removed, so a reply cannot retitle the window, clear the
// screen or move the cursor.
package sanitize

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Text returns s with every escape sequence (CSI, OSC, DCS, APC ...)
// removed, invalid UTF-8 replaced, CRLF turned into LF, and every other C0
// and C1 control character, DEL included, dropped. Newlines and tabs are
// kept; tabs are expanded by Display.
func Text(s string) string {
	if isPlain(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = ansi.Strip(s)
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return -1
		}
		return r
	}, s)
}

// Display is Text with tabs expanded to spaces: a terminal advances a tab
// to the next stop, which width calculations cannot know.
func Display(s string) string {
	s = Text(s)
	if strings.IndexByte(s, '\t') >= 0 {
		s = strings.ReplaceAll(s, "\t", "    ")
	}
	return s
}

// Line is Display for a one-line label: line breaks become spaces.
func Line(s string) string {
	s = Display(s)
	if strings.IndexByte(s, '\n') >= 0 {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}

// isPlain reports whether s is valid UTF-8 without control characters
// other than newline and tab, the common case, checked without allocating.
func isPlain(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || (r >= 0x80 && r < 0xa0) {
			return false
		}
		i += n
	}
	return true
}
