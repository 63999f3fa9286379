package tokens

import (
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizer patterns read by hand for any text, as ascii.go reads
// them for ASCII: the stretches around non-ASCII characters, as runes
// (invalid UTF-8 read as U+FFFD, as tiktoken-go gives regexp2 its text).
// The classes are the regular expression engine's own: \p{...} is the
// unicode package's category table, \s is unicode.IsSpace, and (?i:...)
// compares unicode.ToLower of the text (regexp2's runner does the same).
// Each function takes the patterns' alternatives in order with their
// backtracking, so the pieces are the regular expression's matches
// (TestPreTokenizerMatchesRegexp checks them against regexp2). regexp2
// takes 0.3-1 µs a character here; this a few percent of that on text
// that is mostly ASCII, a fifth on CJK (each non-ASCII rune's classes are
// a few table searches).

// A rune's classes, as bits.
const (
	cLetter = 1 << iota // \p{L}
	cNumber             // \p{N}
	cSpace              // \s
	cUpper              // o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLower              // o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
)

// asciiClasses are runeClass's answers below utf8.RuneSelf.
var asciiClasses = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = unicodeClass(r)
	}
	return t
}()

func runeClass(r rune) uint8 {
	if r >= 0 && r < utf8.RuneSelf {
		return asciiClasses[r]
	}
	return unicodeClass(r)
}

func unicodeClass(r rune) uint8 {
	var c uint8
	switch {
	case unicode.Is(unicode.Ll, r):
		c = cLetter | cLower
	case unicode.Is(unicode.Lu, r), unicode.Is(unicode.Lt, r):
		c = cLetter | cUpper
	case unicode.Is(unicode.Lm, r), unicode.Is(unicode.Lo, r):
		c = cLetter | cUpper | cLower
	case unicode.Is(unicode.M, r):
		c = cUpper | cLower
	case unicode.Is(unicode.N, r):
		c = cNumber
	}
	if unicode.IsSpace(r) {
		c |= cSpace
	}
	return c
}

// runeText is a stretch of text as runes, with each rune's classes.
type runeText struct {
	r []rune
	c []uint8
}

// reset makes t the runes of s.
func (t *runeText) reset(s string) {
	t.r, t.c = t.r[:0], t.c[:0]
	for _, r := range s {
		t.r = append(t.r, r)
		t.c = append(t.c, runeClass(r))
	}
}

// is reports whether the rune at i (if any) has a class of m.
func (t *runeText) is(i int, m uint8) bool { return i < len(t.r) && t.c[i]&m != 0 }

// run is where the runes of a class of m that start at i end.
func (t *runeText) run(i int, m uint8) int {
	for i < len(t.r) && t.c[i]&m != 0 {
		i++
	}
	return i
}

// lead reports whether the rune at i is [^\r\n\p{L}\p{N}].
func (t *runeText) lead(i int) bool {
	return i < len(t.r) && t.r[i] != '\r' && t.r[i] != '\n' && t.c[i]&(cLetter|cNumber) == 0
}

// contraction is the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at i, or 0.
func (t *runeText) contraction(i int) int {
	if i+1 >= len(t.r) || t.r[i] != '\'' {
		return 0
	}
	third := func(want rune) bool { return i+2 < len(t.r) && unicode.ToLower(t.r[i+2]) == want }
	switch unicode.ToLower(t.r[i+1]) {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if third('e') {
			return 3
		}
	case 'l':
		if third('l') {
			return 3
		}
	}
	return 0
}

// digits is \p{N}{1,3} at i (the rune at i is a number).
func (t *runeText) digits(i int) int {
	j := i + 1
	for j < len(t.r) && j < i+3 && t.c[j]&cNumber != 0 {
		j++
	}
	return j
}

// punct is ` ?[^\s\p{L}\p{N}]+` followed by any of the runes in tail, at
// i; -1 when it does not match.
func (t *runeText) punct(i int, tail string) int {
	j := i
	if t.r[j] == ' ' {
		j++
	}
	isPunct := func(k int) bool { return k < len(t.r) && t.c[k]&(cSpace|cLetter|cNumber) == 0 }
	if !isPunct(j) {
		return -1
	}
	for isPunct(j) {
		j++
	}
	for j < len(t.r) && t.r[j] < utf8.RuneSelf && containsByte(tail, byte(t.r[j])) {
		j++
	}
	return j
}

// spaces is `\s*[\r\n]+|\s+(?!\S)|\s+` at i (the rune at i is a space).
func (t *runeText) spaces(i int) int {
	k, last := i, -1 // last: the last line break of the run
	for k < len(t.r) && t.c[k]&cSpace != 0 {
		if t.r[k] == '\r' || t.r[k] == '\n' {
			last = k
		}
		k++
	}
	switch {
	case last >= 0:
		return last + 1
	case k == len(t.r) || k-i == 1:
		return k
	default:
		return k - 1 // the last space goes with what follows
	}
}

// cl100kNextRune is cl100k_base's pattern (see cl100kNext) at rune i.
func cl100kNextRune(t *runeText, i int) int {
	if n := t.contraction(i); n > 0 {
		return i + n
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+: a lead is never a letter, so without it
	// the letters start at i.
	j := i
	if t.lead(i) {
		j++
	}
	if t.is(j, cLetter) {
		return t.run(j, cLetter)
	}
	if t.is(i, cNumber) {
		return t.digits(i)
	}
	if j := t.punct(i, "\r\n"); j >= 0 {
		return j
	}
	return t.spaces(i)
}

// o200kNextRune is o200k_base's pattern (see o200kNext) at rune i. Its
// two letter classes overlap (\p{Lm}, \p{Lo} and \p{M} are in both), and
// \p{M} is no \p{L}, so a mark can be the optional lead too: each
// alternative is tried with the lead, then without, as the expression
// backtracks.
func o200kNextRune(t *runeText, i int) int {
	for _, upperFirst := range [2]bool{false, true} {
		if t.lead(i) {
			if j := t.word(i+1, upperFirst); j >= 0 {
				return j + t.contraction(j)
			}
		}
		if j := t.word(i, upperFirst); j >= 0 {
			return j + t.contraction(j)
		}
	}
	if t.is(i, cNumber) {
		return t.digits(i)
	}
	if j := t.punct(i, "\r\n/"); j >= 0 {
		return j
	}
	return t.spaces(i)
}

// word is o200k's first word alternative at j, [U]*[W]+, or with
// upperFirst its second, [U]+[W]*; -1 when it does not match.
func (t *runeText) word(j int, upperFirst bool) int {
	if upperFirst {
		return t.upperThenLower(j)
	}
	return t.upperLower(j)
}

// upperLower is [U]*[W]+ at j (U, W: o200k's two letter classes), or -1:
// the longest run of U, given back one rune at a time until a W follows,
// then the longest run of W from there.
func (t *runeText) upperLower(j int) int {
	for b := t.run(j, cUpper); b >= j; b-- {
		if t.is(b, cLower) {
			return t.run(b, cLower)
		}
	}
	return -1
}

// upperThenLower is [U]+[W]* at j, or -1.
func (t *runeText) upperThenLower(j int) int {
	if !t.is(j, cUpper) {
		return -1
	}
	return t.run(t.run(j, cUpper), cLower)
}
