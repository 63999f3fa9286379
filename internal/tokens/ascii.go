package tokens

// The pre-tokenizer patterns, read for ASCII text by hand: on ASCII, \p{L}
// is [A-Za-z] (Lu upper, Ll lower; no Lt, Lm, Lo or M), \p{N} is [0-9] and
// \s is [\t\n\v\f\r ]. Each function returns where the pre-token starting
// at i ends, taking the patterns' alternatives in order with their
// backtracking, so the pieces are the regular expression's matches
// (TestASCIIPreTokenizerMatchesRegexp checks them against regexp2). The
// regular expression engine costs about 1 µs a character; this is the
// common case (source code, English, logs) made cheap.

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool  { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isSpace(c byte) bool  { return c == ' ' || c >= '\t' && c <= '\r' }

// isPunct is [^\s\p{L}\p{N}].
func isPunct(c byte) bool { return !isSpace(c) && !isLetter(c) && !isDigit(c) }

// lead is [^\r\n\p{L}\p{N}]: the optional character before a word.
func lead(c byte) bool { return c != '\r' && c != '\n' && !isLetter(c) && !isDigit(c) }

// contraction is the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at i, or 0.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return 0
	}
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return 3
		}
	}
	return 0
}

// digits is \p{N}{1,3} at i (s[i] is a digit).
func digits(s string, i int) int {
	j := i + 1
	for j < len(s) && j < i+3 && isDigit(s[j]) {
		j++
	}
	return j
}

// punct is ` ?[^\s\p{L}\p{N}]+` followed by any of the bytes in tail, at
// i; -1 when it does not match.
func punct(s string, i int, tail string) int {
	j := i
	if s[j] == ' ' {
		j++
	}
	if j >= len(s) || !isPunct(s[j]) {
		return -1
	}
	for j < len(s) && isPunct(s[j]) {
		j++
	}
	for j < len(s) && containsByte(tail, s[j]) {
		j++
	}
	return j
}

func containsByte(s string, c byte) bool {
	for i := range len(s) {
		if s[i] == c {
			return true
		}
	}
	return false
}

// spaces is `\s*[\r\n]+|\s+(?!\S)|\s+` at i (s[i] is a space).
func spaces(s string, i int) int {
	k := i
	last := -1 // the last line break of the run
	for k < len(s) && isSpace(s[k]) {
		if s[k] == '\r' || s[k] == '\n' {
			last = k
		}
		k++
	}
	switch {
	case last >= 0:
		return last + 1
	case k == len(s) || k-i == 1:
		return k
	default:
		return k - 1 // the last space goes with what follows
	}
}

// cl100kNext is cl100k_base's pattern on ASCII:
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func cl100kNext(s string, i int) int {
	if n := contraction(s, i); n > 0 {
		return i + n
	}
	c := s[i]
	j := i
	if lead(c) {
		j++
	}
	if j < len(s) && isLetter(s[j]) {
		for j < len(s) && isLetter(s[j]) {
			j++
		}
		return j
	}
	if isDigit(c) {
		return digits(s, i)
	}
	if j := punct(s, i, "\r\n"); j >= 0 {
		return j
	}
	return spaces(s, i)
}

// o200kNext is o200k_base's pattern on ASCII:
// [^\r\n\p{L}\p{N}]?\p{Lu}*\p{Ll}+(?i:'s|...)?|[^\r\n\p{L}\p{N}]?\p{Lu}+\p{Ll}*(?i:'s|...)?|
// \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
func o200kNext(s string, i int) int {
	c := s[i]
	j := i
	if lead(c) {
		j++
	}
	u := j
	for u < len(s) && isUpper(s[u]) {
		u++
	}
	l := u
	for l < len(s) && isLower(s[l]) {
		l++
	}
	if l > u || u > j { // upper* lower+, or else upper+ (no lower follows)
		return l + contraction(s, l)
	}
	if isDigit(c) {
		return digits(s, i)
	}
	if j := punct(s, i, "\r\n/"); j >= 0 {
		return j
	}
	return spaces(s, i)
}
