package tokens

import (
	"context"
	"fmt"
	"unicode/utf8"
)

// Pre-tokenizer patterns of the encodings, as in OpenAI's tiktoken
// (tiktoken_ext/openai_public.py, MIT) and tiktoken-go (MIT): BPE runs on
// each match separately. They are read by hand (ascii.go, runes.go); the
// tests check the reading against regexp2, the engine tiktoken-go runs
// them with.
const (
	o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// encoder counts tokens of one encoding: a vocabulary and its pre-tokenizer.
type encoder struct {
	vocab *vocab
	o200k bool // o200k_base's pattern, else cl100k_base's
}

// nextASCII is where the pre-token at byte i of ASCII text s ends
// (ascii.go); nextRune the same at rune i of any text (runes.go). They
// switch on the encoding rather than hold function values: a runeText
// passed to a function value escapes, and with it every count's scratch.
func (e *encoder) nextASCII(s string, i int) int {
	if e.o200k {
		return o200kNext(s, i)
	}
	return cl100kNext(s, i)
}

func (e *encoder) nextRune(t *runeText, i int) int {
	if e.o200k {
		return o200kNextRune(t, i)
	}
	return cl100kNextRune(t, i)
}

func newEncoder(name string) (*encoder, error) {
	e := &encoder{}
	var table []byte
	switch name {
	case O200KBase:
		e.o200k, table = true, o200kVocab
	case CL100KBase:
		table = cl100kVocab
	default:
		return nil, fmt.Errorf("unknown encoding %q", name)
	}
	v, err := decodeVocab(table)
	if err != nil {
		return nil, err
	}
	e.vocab = v
	return e, nil
}

// Long texts are counted segment by segment, so that memory stays bounded,
// the pre-tokenizer works on short rune slices, and a cancel is seen
// between two segments. A segment ends at a cut that no pre-token crosses
// (see safeCut), so the sum over segments is exactly the count of the whole
// text; only a stretch of maxSegment bytes without any such cut (one
// character class repeated: letters only, digits only, punctuation or
// whitespace only) is cut where it is, and then the count is approximate
// there: a cut splits one pre-token in two, which changes its count by a
// few tokens (see TestHardCutError).
const (
	segmentTarget = 8 << 10  // look for a cut from here on
	maxSegment    = 64 << 10 // cut here if no safe cut was found
)

// count returns the number of tokens in text. When ctx is done before the
// end, it returns the count so far plus an estimate of the rest, and the
// context's error.
func (e *encoder) count(ctx context.Context, text string) (int, error) {
	n := 0
	var st scratch
	for text != "" {
		if err := ctx.Err(); err != nil {
			return n + estimate(text), fmt.Errorf("count tokens: %w", err)
		}
		seg := text[:segmentEnd(text)]
		text = text[len(seg):]
		n += e.countSegment(seg, &st)
	}
	return n, nil
}

// scratch holds buffers reused from one segment to the next.
type scratch struct {
	text  runeText
	piece []byte
}

// countSegment counts one segment: pre-tokenize, then BPE each piece.
// Invalid UTF-8 counts as U+FFFD, as in tiktoken-go. ASCII is read byte by
// byte (ascii.go); only the stretches around other characters are read as
// runes (runes.go), which costs a decoding and a class lookup per
// character: a stretch runs from the last safe cut before such a character
// to the first one after it (safeCut: counting the two sides of a safe cut
// apart gives the count of the whole).
func (e *encoder) countSegment(seg string, st *scratch) int {
	n := 0
	for seg != "" {
		q := firstNonASCII(seg)
		if q == len(seg) {
			return n + e.countASCII(seg, st)
		}
		p := q
		for p > 0 && !safeCut(seg, p) {
			p--
		}
		n += e.countASCII(seg[:p], st)
		r := q + 1
		for r < len(seg) && !safeCut(seg, r) {
			r++
		}
		n += e.countRunes(seg[p:r], st)
		seg = seg[r:]
	}
	return n
}

// firstNonASCII is the index of the first byte of s above 0x7f, or len(s).
func firstNonASCII(s string) int {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return i
		}
	}
	return len(s)
}

// countASCII counts ASCII text with the hand-written pre-tokenizer.
func (e *encoder) countASCII(s string, st *scratch) int {
	n := 0
	for i := 0; i < len(s); {
		j := e.nextASCII(s, i)
		st.piece = append(st.piece[:0], s[i:j]...)
		n += e.vocab.pieceTokens(st.piece)
		i = j
	}
	return n
}

// countRunes counts any text, read as runes.
func (e *encoder) countRunes(s string, st *scratch) int {
	t := &st.text
	t.reset(s)
	n := 0
	for i := 0; i < len(t.r); {
		j := e.nextRune(t, i)
		st.piece = st.piece[:0]
		for _, r := range t.r[i:j] {
			st.piece = utf8.AppendRune(st.piece, r)
		}
		n += e.vocab.pieceTokens(st.piece)
		i = j
	}
	return n
}

// segmentEnd returns where the first segment of text ends: all of a short
// text; else the first safe cut at or after segmentTarget, else the last
// one before it, else maxSegment (backed up to a UTF-8 boundary).
func segmentEnd(text string) int {
	if len(text) <= segmentTarget {
		return len(text)
	}
	limit := min(len(text), maxSegment)
	for p := segmentTarget; p < limit; p++ {
		if safeCut(text, p) {
			return p
		}
	}
	if limit == len(text) {
		return limit
	}
	for p := segmentTarget - 1; p > 0; p-- {
		if safeCut(text, p) {
			return p
		}
	}
	p := maxSegment
	for p > maxSegment-utf8.UTFMax && !utf8.RuneStart(text[p]) {
		p--
	}
	return p
}

// safeCut reports whether no pre-token of either encoding crosses byte
// offset p (0 < p < len(text)), so that counting text[:p] and text[p:]
// apart gives the count of text. Two cases, both from the patterns:
//   - after an ASCII letter or digit, before an ASCII byte of another class
//     that is not an apostrophe: a run of letters ends only at a non-letter
//     (or goes on with a contraction such as 's), a run of digits
//     (\p{N}{1,3}) only at a non-digit, and no other alternative holds a
//     letter or digit;
//   - after '\n', before an ASCII letter or digit: only whitespace and
//     punctuation runs end in a newline, and neither goes on with a letter
//     or digit.
//
// No pattern looks behind, so matching from p on is the same in text and
// in text[p:]; the one lookahead, \s+(?!\S), cannot decide a match ending
// at p, because a whitespace run ending in '\n' is taken by \s*[\r\n]+
// first. TestSafeCutExact checks the claim against tiktoken-go.
func safeCut(text string, p int) bool {
	a, b := text[p-1], text[p]
	ca, cb := class(a), class(b)
	switch {
	case ca == classLetter || ca == classDigit:
		return b < utf8.RuneSelf && b != '\'' && cb != ca
	case a == '\n':
		return cb == classLetter || cb == classDigit
	}
	return false
}

const (
	classOther = iota
	classLetter
	classDigit
)

func class(c byte) int {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		return classLetter
	case '0' <= c && c <= '9':
		return classDigit
	}
	return classOther
}
