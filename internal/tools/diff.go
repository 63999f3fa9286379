package tools

import (
	"fmt"
	"strings"
)

const (
	diffContext  = 3
	maxDiffLines = 400
)

// unifiedDiff shows the change from old to new for an approval dialog: one
// hunk spanning from the first to the last changed line (the common prefix
// and suffix are trimmed), with three lines of context, capped at
// maxDiffLines. It is a preview, not a patch to apply.
func unifiedDiff(name, old, new string, existed bool) string {
	from := "a/" + name
	if !existed {
		from = "/dev/null"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ b/%s\n", from, name)
	if len(old) > maxDiffInput || len(new) > maxDiffInput {
		fmt.Fprintf(&b, "(diff omitted: %s -> %s)\n", humanSize(int64(len(old))), humanSize(int64(len(new))))
		return b.String()
	}
	a, c := splitLines(old), splitLines(new)
	p := 0
	for p < len(a) && p < len(c) && a[p] == c[p] {
		p++
	}
	sfx := 0
	for sfx < len(a)-p && sfx < len(c)-p && a[len(a)-1-sfx] == c[len(c)-1-sfx] {
		sfx++
	}
	if p == len(a) && p == len(c) {
		b.WriteString("(no changes)\n")
		return b.String()
	}
	start := max(p-diffContext, 0)
	aEnd, cEnd := len(a)-sfx, len(c)-sfx
	after := min(diffContext, sfx)
	aLen := aEnd + after - start
	cLen := cEnd + after - start
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", hunkStart(start, aLen), aLen, hunkStart(start, cLen), cLen)

	var lines []string
	for _, l := range a[start:p] {
		lines = append(lines, " "+l)
	}
	for _, l := range a[p:aEnd] {
		lines = append(lines, "-"+l)
	}
	for _, l := range c[p:cEnd] {
		lines = append(lines, "+"+l)
	}
	for _, l := range a[aEnd : aEnd+after] {
		lines = append(lines, " "+l)
	}
	for i, l := range lines {
		if i == maxDiffLines {
			fmt.Fprintf(&b, "... %d more diff lines\n", len(lines)-i)
			break
		}
		b.WriteString(strings.TrimSuffix(l, "\n"))
		b.WriteByte('\n')
	}
	return b.String()
}

// hunkStart is a hunk's 1-based first line; an empty range names the line before it.
func hunkStart(start, n int) int {
	if n == 0 {
		return start
	}
	return start + 1
}

// splitLines splits text after each newline; a final line without one is kept.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
