package tools

import (
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/gencode/gencode/internal/termtext"
)

const (
	diffContext  = 3
	maxDiffLines = 400
)

// unifiedDiff shows the change from old to new for an approval dialog: the
// hunks of go-udiff's line diff with three lines of context, capped at
// maxDiffLines. It is a preview, not a patch to apply.
func unifiedDiff(name, old, new string, existed bool) string {
	from := "a/" + name
	if !existed {
		from = "/dev/null"
	}
	to := "b/" + name
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
	if len(old) > maxDiffInput || len(new) > maxDiffInput {
		fmt.Fprintf(&b, "(diff omitted: %s -> %s)\n", termtext.Size(int64(len(old))), termtext.Size(int64(len(new))))
		return b.String()
	}
	edits := udiff.Lines(old, new)
	if len(edits) == 0 {
		b.WriteString("(no changes)\n")
		return b.String()
	}
	d, err := udiff.ToUnifiedDiff(from, to, old, edits, diffContext)
	if err != nil { // the edits come from old itself, so this is a bug in the library
		fmt.Fprintf(&b, "(diff unavailable: %v)\n", err)
		return b.String()
	}
	// Skip the library's own header (the same two lines as ours); cap the rest.
	lines := strings.SplitAfter(strings.TrimSuffix(d.String(), "\n"), "\n")[2:]
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
