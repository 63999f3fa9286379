package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

const (
	writeDescription = "Create or overwrite a file with content (the whole new file). Creates parent directories; the write is atomic. To change part of a file use Edit. Needs the user's approval; writes outside the working directory are normally refused."
	writeSchema      = `{"type":"object","properties":{"file_path":{"type":"string","description":"Absolute or relative to the working directory"},"content":{"type":"string"}},"required":["file_path","content"]}`

	maxDiffInput = 1 << 20 // larger files get no diff in the approval request
)

type writeArgs struct {
	FilePath string  `json:"file_path"`
	Content  *string `json:"content"`
}

func runWrite(ctx context.Context, s *Set, raw json.RawMessage) output {
	var a writeArgs
	if msg, ok := decodeArgs(ToolWrite, raw, &a, "file_path", "content"); !ok {
		return failf("%s", msg)
	}
	t, bad := s.resolveArg(ToolWrite, "file_path", a.FilePath)
	if bad != nil {
		return (*bad).withMeta(Meta{FilePath: a.FilePath})
	}
	meta := Meta{FilePath: t.display}
	content := *a.Content
	if t.privateTo != "" {
		return refusePrivate(ToolWrite, t).withMeta(meta)
	}

	rp, err := s.open(t)
	if err != nil {
		return failf("Write %s: %v", t.display, err).withMeta(meta)
	}
	defer rp.close()
	old, existed, out := readForChange(rp, t.display, false)
	if out != nil {
		return (*out).withMeta(meta)
	}
	req := Request{
		Tool:           ToolWrite,
		Summary:        fmt.Sprintf("%s (%s)", t.display, countLines(content)),
		Args:           string(raw),
		Path:           t.abs,
		OutsideWorkDir: t.outside || t.gitDir != "",
		Guard:          t.writeGuard(),
		Diff:           unifiedDiff(t.display, old, content, existed),
	}
	if d := s.authorize(ctx, req); d != nil {
		return d.output(meta)
	}
	cp := s.checkpointBefore(ctx)
	err = writeAtomic(rp.root, rp.name, []byte(content))
	meta.Checkpoint = s.checkpointAfter(ctx, cp)
	if err != nil {
		o := failf("Write %s: %v", t.display, err)
		return o.withMeta(meta)
	}
	verb, was := "Created", ""
	if existed {
		verb, was = "Overwrote", fmt.Sprintf("; was %s", countLines(old))
	}
	meta.Diff = req.Diff
	return output{text: fmt.Sprintf("%s %s (%d bytes, %s%s)", verb, t.display, len(content), countLines(content), was), meta: meta}
}

// readForChange reads the current content of a file about to be written.
// A missing file is fine unless mustExist; a directory or special file is
// not. out is non-nil when the change must stop.
func readForChange(rp rootedPath, display string, mustExist bool) (content string, existed bool, out *output) {
	b, fi, err := readRegular(rp.root, rp.name)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !mustExist:
		return "", false, nil
	case errors.Is(err, fs.ErrNotExist):
		o := failf("%s does not exist; use Write to create it", display)
		return "", false, &o
	case err != nil:
		o := fileError(display, err)
		return "", false, &o
	case fi.IsDir():
		o := failf("%s is a directory", display)
		return "", false, &o
	case !fi.Mode().IsRegular():
		o := failf("%s is not a regular file (%s)", display, fi.Mode().Type())
		return "", false, &o
	}
	return string(b), true, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// countLines describes the size of text in lines: "1 line", "12 lines".
func countLines(text string) string {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}
