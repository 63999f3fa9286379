package tools

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// capText returns text capped at the Set's token budget: head and tail kept,
// the middle replaced by a marker saying how much was cut. priorLines and
// priorBytes are what the tool already elided from text's middle; the marker
// includes them when the cut covers that part.
func (s *Set) capText(text string, priorLines, priorBytes int64) (string, bool) {
	tokens := 0
	if len(text) > s.capTokens { // a token is at least one byte
		tokens = s.count(text)
	}
	if tokens <= s.capTokens {
		return text, false
	}
	budget := int(float64(len(text)) * float64(s.capTokens) / float64(tokens))
	var out string
	for range 6 {
		out = elide(text, budget, priorLines, priorBytes)
		if s.count(out) <= s.capTokens {
			break
		}
		budget = budget * 8 / 10
	}
	return out, true
}

// elide keeps about budget bytes of s, half from the head and half from the
// tail, cut at line ends where one is near, and puts a marker in between.
func elide(s string, budget int, priorLines, priorBytes int64) string {
	const markerRoom = 80
	keep := max(budget-markerRoom, 2)
	if len(s) <= keep {
		return s
	}
	headEnd := runeStart(s, keep/2)
	if nl := strings.LastIndexByte(s[:headEnd], '\n'); nl >= headEnd/2 {
		headEnd = nl + 1
	}
	tailStart := runeStart(s, len(s)-keep/2)
	if tailStart < headEnd {
		tailStart = headEnd
	}
	if nl := strings.IndexByte(s[tailStart:], '\n'); nl >= 0 && nl < (len(s)-tailStart)/2 {
		tailStart += nl + 1
	}
	mid := s[headEnd:tailStart]
	lines := int64(strings.Count(mid, "\n"))
	cut := int64(len(mid))
	if i := strings.Index(mid, "... ["); i >= 0 && priorBytes > 0 && strings.Contains(mid, elisionTag) {
		// The tool's own marker is cut too: count what it stood for
		// instead of its line.
		if j := strings.Index(mid[i:], "] ...\n"); j >= 0 {
			lines += priorLines - 1
			cut += priorBytes - int64(j+len("] ...\n"))
		}
	}
	head, tail := s[:headEnd], s[tailStart:]
	sep := ""
	if head != "" && !strings.HasSuffix(head, "\n") {
		sep = "\n"
	}
	return fmt.Sprintf("%s%s... [%d lines (%d bytes) %s] ...\n%s", head, sep, lines, cut, elisionTag, tail)
}

// elisionTag is part of every elision marker.
const elisionTag = "elided"

// runeStart moves i back to the start of the UTF-8 sequence it falls in.
func runeStart(s string, i int) int {
	if i <= 0 {
		return 0
	}
	if i >= len(s) {
		return len(s)
	}
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// headTail collects a stream keeping the first and the last limit bytes and
// counting what it drops in between. It is used for Bash output, which has
// no size bound of its own.
type headTail struct {
	limit        int
	head, tail   []byte
	droppedBytes int64
	droppedLines int64
}

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	if room := h.limit - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	h.tail = append(h.tail, p...)
	if over := len(h.tail) - h.limit; over > h.limit { // amortize: shift rarely
		h.drop(over)
	}
	return n, nil
}

func (h *headTail) drop(k int) {
	h.droppedBytes += int64(k)
	h.droppedLines += int64(bytes.Count(h.tail[:k], []byte{'\n'}))
	h.tail = append(h.tail[:0], h.tail[k:]...)
}

// String returns what was kept, with a marker where bytes were dropped.
func (h *headTail) String() string {
	if over := len(h.tail) - h.limit; over > 0 {
		h.drop(over)
	}
	if h.droppedBytes == 0 {
		return string(h.head) + string(h.tail)
	}
	// Start the tail at a line boundary when one is near.
	if nl := bytes.IndexByte(h.tail, '\n'); nl >= 0 && nl < len(h.tail)/2 {
		h.drop(nl + 1)
	}
	sep := ""
	if len(h.head) > 0 && h.head[len(h.head)-1] != '\n' {
		sep = "\n"
	}
	return fmt.Sprintf("%s%s... [%d lines (%d bytes) %s] ...\n%s", h.head, sep, h.droppedLines, h.droppedBytes, elisionTag, h.tail)
}
