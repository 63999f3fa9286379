package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

const (
	editDescription = "Replace old_string with new_string in a file. old_string must match the file exactly (whitespace and indentation too, no line-number prefixes) and only once unless replace_all is true; add surrounding lines to make it unique. Errors: not found, found N times, identical strings. Use Write to create files. Needs the user's approval; edits outside the working directory are normally refused."
	editSchema      = `{"type":"object","properties":{"file_path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean","description":"Replace every match"}},"required":["file_path","old_string","new_string"]}`

	editSnippetContext = 2 // lines shown around each change in the result
	editMaxSnippets    = 3
)

type editArgs struct {
	FilePath   string  `json:"file_path"`
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll boolArg `json:"replace_all"`
}

func runEdit(ctx context.Context, s *Set, raw json.RawMessage) output {
	var a editArgs
	if msg, ok := decodeArgs(ToolEdit, raw, &a, "file_path", "old_string", "new_string"); !ok {
		return failf("%s", msg)
	}
	oldS, newS := *a.OldString, *a.NewString
	switch {
	case oldS == "":
		return failf("old_string is empty; to create a file use Write, to insert text include the neighbouring line in old_string and new_string")
	case oldS == newS:
		return failf("old_string and new_string are identical; nothing to change")
	}
	t, bad := s.resolveArg(ToolEdit, "file_path", a.FilePath)
	if bad != nil {
		return (*bad).withMeta(Meta{FilePath: a.FilePath})
	}
	meta := Meta{FilePath: t.display}
	fail := meta.failf
	if t.privateTo != "" {
		return refusePrivate(ToolEdit, t).withMeta(meta)
	}
	rp, err := s.open(t)
	if err != nil {
		return fail("Edit %s: %v", t.display, err)
	}
	defer rp.close()
	content, _, out := readForChange(rp, t.display, true)
	if out != nil {
		return (*out).withMeta(meta)
	}
	if strings.IndexByte(content, 0) >= 0 {
		return fail("%s is a binary file; Edit changes text files only", t.display)
	}
	n := strings.Count(content, oldS)
	if n == 0 && strings.Contains(content, "\r\n") && !strings.Contains(oldS, "\r\n") {
		// The model writes \n; the file uses CRLF.
		crlf := func(x string) string { return strings.ReplaceAll(x, "\n", "\r\n") }
		if c := strings.Count(content, crlf(oldS)); c > 0 {
			oldS, newS, n = crlf(oldS), crlf(newS), c
		}
	}
	switch {
	case n == 0:
		return fail("old_string not found in %s; it must match exactly, including whitespace and indentation (Read the file to check)", t.display)
	case n > 1 && !bool(a.ReplaceAll):
		return fail("old_string found %d times in %s; add context or set replace_all", n, t.display)
	}
	updated, spans := replaceSpans(content, oldS, newS)

	req := Request{
		Tool:           ToolEdit,
		Summary:        t.display,
		Args:           string(raw),
		Path:           t.abs,
		OutsideWorkDir: t.outside || t.gitDir != "",
		Guard:          t.writeGuard(),
		Diff:           unifiedDiff(t.display, content, updated, true),
	}
	if d := s.authorize(ctx, req); d != nil {
		return d.output(meta)
	}
	if now, fi, err := readRegular(rp.root, rp.name); err != nil || !fi.Mode().IsRegular() || string(now) != content {
		return fail("%s changed while waiting for approval; Read it again and redo the edit", t.display)
	}
	cp := s.checkpointBefore(ctx)
	err = writeAtomic(rp.root, rp.name, []byte(updated))
	meta.Checkpoint = s.checkpointAfter(ctx, cp)
	if err != nil {
		return fail("Edit %s: %v", t.display, err)
	}
	meta.Diff = req.Diff
	return output{text: editReport(t.display, oldS, newS, updated, spans), meta: meta}
}

// span is a replaced region in the new content, as 1-based lines.
type span struct{ first, last int }

// replaceSpans replaces every oldS in content and returns the new content
// with the line spans the replacements occupy in it.
func replaceSpans(content, oldS, newS string) (string, []span) {
	var b strings.Builder
	b.Grow(len(content) + (len(newS)-len(oldS))*strings.Count(content, oldS))
	var spans []span
	newLines := strings.Count(strings.TrimSuffix(newS, "\n"), "\n")
	line := 1
	rest := content
	for {
		i := strings.Index(rest, oldS)
		if i < 0 {
			break
		}
		line += strings.Count(rest[:i], "\n")
		b.WriteString(rest[:i])
		b.WriteString(newS)
		spans = append(spans, span{line, line + newLines})
		line += strings.Count(newS, "\n")
		rest = rest[i+len(oldS):]
	}
	b.WriteString(rest)
	return b.String(), spans
}

// editReport tells the model what changed, with a few numbered lines of the
// new content around the first changes.
func editReport(name, oldS, newS, updated string, spans []span) string {
	var b strings.Builder
	before, after := countLines(oldS), countLines(newS)
	if len(spans) == 1 {
		fmt.Fprintf(&b, "Edited %s: replaced 1 occurrence at line %d (%s -> %s).\n", name, spans[0].first, before, after)
	} else {
		at := make([]string, 0, len(spans))
		for i, sp := range spans {
			if i == 10 {
				at = append(at, "...")
				break
			}
			at = append(at, fmt.Sprint(sp.first))
		}
		fmt.Fprintf(&b, "Edited %s: replaced %d occurrences at lines %s (%s -> %s each).\n", name, len(spans), strings.Join(at, ", "), before, after)
	}
	lines := splitLines(updated)
	shownTo := 0
	for i, sp := range spans {
		if i == editMaxSnippets {
			break
		}
		from := max(sp.first-editSnippetContext, shownTo+1, 1)
		to := min(sp.last+editSnippetContext, len(lines))
		if from > to {
			continue
		}
		if shownTo > 0 && from > shownTo+1 {
			b.WriteString("   ...\n")
		}
		for n := from; n <= to; n++ {
			fmt.Fprintf(&b, "%6d\t%s\n", n, strings.TrimRight(lines[n-1], "\r\n"))
		}
		shownTo = to
	}
	return strings.TrimSuffix(b.String(), "\n")
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
