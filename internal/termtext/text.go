package termtext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis marks where text was cut.
const Ellipsis = "…"

// OneLine puts s, sanitized, on one line: every run of white space, line
// breaks included, becomes one space, and the ends are trimmed. With
// max > 0 the result has at most max characters, the last an ellipsis
// when it was cut.
func OneLine(s string, max int) string {
	if max <= 0 {
		return strings.Join(strings.Fields(Sanitize(s)), " ")
	}
	// Sanitize leaves a clean start as it is, and only the first max+1
	// characters of the line decide what is shown: a text whose start is
	// clean is not sanitized whole (a check of every byte and a copy of a
	// long message, per line of `history --full`).
	if line, ok := oneLine(s, max, true); ok {
		return line
	}
	line, _ := oneLine(Sanitize(s), max, false)
	return line
}

// oneLine is OneLine with max > 0 of s read up to its cut, so the rest of
// a long message is not split into words (that was most of `history
// --full`'s CPU). With check set it stops, not ok, at the first character
// that Sanitize would change.
func oneLine(s string, max int, check bool) (line string, ok bool) {
	var b strings.Builder
	n, space := 0, false
	for i, r := range s {
		if n > max {
			break // the cut is decided: nothing more is written
		}
		if check && !cleanRune(r, s[i:]) {
			return "", false
		}
		if unicode.IsSpace(r) { // strings.Fields' white space
			space = n > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			n, space = n+1, false
			if n > max {
				break
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+size]) // its bytes, as Fields keeps them
		n++
	}
	return clip(b.String(), max, Ellipsis), true
}

// FirstLine is the first line of s, sanitized and trimmed, at most max
// characters (max > 0). When anything was left out, a later line or the
// end of a long one, it ends with " …".
func FirstLine(s string, max int) string {
	s = strings.TrimSpace(Sanitize(s))
	more := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, more = strings.TrimRight(s[:i], " \t\r"), true
	}
	if max > 0 && utf8.RuneCountInString(s) > max {
		s, more = clip(s, max, ""), true
	}
	if more {
		s += " " + Ellipsis
	}
	return s
}

// clip cuts s to max characters (max > 0), the last of them mark when it
// is not empty.
func clip(s string, max int, mark string) string {
	if max <= 0 || len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	keep := max - utf8.RuneCountInString(mark)
	i := 0
	for n := 0; n < keep; n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + mark
}

// Size says a number of bytes as a person reads it: "512 bytes", "1.5 KB",
// "3.2 MB", "1.1 GB" (binary units).
func Size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Percent is n as a whole percentage of of, rounded to the nearest: the
// one rounding the status bar and /context share, so they show the same
// number (0 when of is not positive).
func Percent(n, of int) int {
	if of <= 0 {
		return 0
	}
	return (n*200 + of) / (2 * of)
}

// Thousands writes n with a comma between groups of three digits:
// 31204 -> "31,204".
func Thousands(n int) string {
	s := strconv.Itoa(n)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	b.WriteString(sign)
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Count is n with its noun in the number it takes: "1 file", "2 files"
// (one and many are the two forms, e.g. "message matches", "messages
// match").
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// EditDistance is how many single-rune edits (insert, delete, replace, or
// swap two neighbours) turn a into b: the measure every "did you mean"
// hint uses (a command, a config key, a tool, a model).
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1) // transposition
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// Typo is the candidate s is most likely a typo of, case aside: the
// nearest by EditDistance, when it is at most max(2, len(s)/3) edits away.
func Typo(s string, candidates []string) (string, bool) {
	ls := strings.ToLower(s)
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := EditDistance(ls, strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best, best != "" && bestD <= max(2, len([]rune(s))/3)
}
