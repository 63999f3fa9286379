package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/gencode/gencode/internal/termtext"
)

const (
	readDescription = "Read a UTF-8 text file. Returns numbered lines (cat -n style) from offset (1-based, default 1), at most limit lines (default 2000) within the output budget; lines over 2000 bytes are cut. Says when more lines follow and the offset to continue. Errors: missing file, directory (use LS), binary or non-UTF-8 file. Paths outside the working directory need approval."
	readSchema      = `{"type":"object","properties":{"file_path":{"type":"string","description":"Absolute or relative to the working directory"},"offset":{"type":"integer","description":"First line, 1-based"},"limit":{"type":"integer","description":"Max lines"}},"required":["file_path"]}`

	readDefaultLimit = 2000
	maxLineBytes     = 2000 // longer lines are cut in Read
	sniffBytes       = 8192 // how much of a file decides whether it is text
)

type readArgs struct {
	FilePath string `json:"file_path"`
	Offset   intArg `json:"offset"`
	Limit    intArg `json:"limit"`
}

func runRead(ctx context.Context, s *Set, raw json.RawMessage) output {
	var a readArgs
	if msg, ok := decodeArgs(ToolRead, raw, &a, "file_path"); !ok {
		return failf("%s", msg)
	}
	offset, limit := 1, readDefaultLimit
	if a.Offset.set && a.Offset.v > 1 {
		offset = a.Offset.v
	}
	if a.Offset.set && a.Offset.v < 0 {
		return failf("invalid arguments for Read: offset must be 1 or more, not %d", a.Offset.v)
	}
	if a.Limit.set {
		if a.Limit.v < 0 {
			return failf("invalid arguments for Read: limit must be 1 or more, not %d", a.Limit.v)
		}
		if a.Limit.v > 0 {
			limit = a.Limit.v
		}
	}
	t, bad := s.resolveArg(ToolRead, "file_path", a.FilePath)
	if bad != nil {
		return (*bad).withMeta(Meta{FilePath: a.FilePath})
	}
	meta := Meta{FilePath: t.display}
	if d := s.authorize(ctx, Request{Tool: ToolRead, Summary: t.display, Args: string(raw), Path: t.abs, OutsideWorkDir: t.outside}); d != nil {
		return d.output(meta)
	}
	out := s.readFile(t, offset, limit)
	return out.withMeta(meta)
}

func (s *Set) readFile(t target, offset, limit int) output {
	rp, err := s.open(t)
	if err != nil {
		return failf("Read %s: %v", t.display, err)
	}
	defer rp.close()
	f, fi, err := openExisting(rp.root, rp.name)
	if err != nil {
		return fileError(t.display, err)
	}
	defer f.Close()
	switch {
	case fi.IsDir():
		return failf("%s is a directory; use LS to list it", t.display)
	case !fi.Mode().IsRegular():
		return failf("%s is not a regular file (%s)", t.display, fi.Mode().Type())
	case fi.Size() == 0:
		return output{text: fmt.Sprintf("%s is empty (0 bytes)", t.display)}
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		return fileError(t.display, err)
	}
	if isBinary(head, len(head) < sniffBytes) {
		return failf("%s is a binary or non-UTF-8 file (%s); Read shows UTF-8 text only", t.display, termtext.Size(fi.Size()))
	}

	budget := s.capTokens * 3 // bytes; a token is 3-4 bytes of code
	lr := lineReader{r: br, max: maxLineBytes}
	var b strings.Builder
	n, last, full := 0, 0, false
	for {
		line, cut, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fileError(t.display, err)
		}
		n++
		if n < offset {
			continue
		}
		if n >= offset+limit {
			full = true
			break
		}
		entry := fmt.Sprintf("%6d\t%s\n", n, line)
		if cut > 0 {
			entry = fmt.Sprintf("%6d\t%s [line cut: %d more bytes]\n", n, line, cut)
		}
		if b.Len()+len(entry) > budget && last > 0 {
			full = true
			break
		}
		b.WriteString(entry)
		last = n
	}
	switch {
	case last == 0:
		return failf("offset %d is past the end of %s (%d lines)", offset, t.display, n)
	case full:
		fmt.Fprintf(&b, "[lines %d-%d of %s (%s); more follow: Read with offset=%d]", offset, last, t.display, termtext.Size(fi.Size()), last+1)
	case offset > 1:
		fmt.Fprintf(&b, "[lines %d-%d of %d]", offset, last, last)
	}
	return output{text: strings.TrimSuffix(b.String(), "\n")}
}

// fileError turns an OS error on path into a result the model can act on.
func fileError(path string, err error) output {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failf("%s does not exist", path)
	case errors.Is(err, fs.ErrPermission):
		return failf("%s: permission denied by the file system", path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return failf("%s: %v", path, err)
}

// isBinary reports whether the start of a file is not UTF-8 text: it has a
// NUL byte or an invalid UTF-8 sequence. A sequence cut by the end of the
// sample only counts when atEOF.
func isBinary(sample []byte, atEOF bool) bool {
	if len(sample) == 0 {
		return false
	}
	for _, c := range sample {
		if c == 0 {
			return true
		}
	}
	if utf8.Valid(sample) {
		return false
	}
	if !atEOF {
		// Drop an incomplete rune at the end of the sample.
		for i := len(sample) - 1; i >= 0 && i >= len(sample)-utf8.UTFMax; i-- {
			if utf8.RuneStart(sample[i]) {
				if !utf8.FullRune(sample[i:]) {
					return !utf8.Valid(sample[:i])
				}
				break
			}
		}
	}
	return true
}

// lineReader reads lines of any length, keeping at most max bytes of each,
// so a huge file or a huge line never has to fit in memory.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// next returns the next line without its line ending, and how many bytes of
// it were cut. At the end it returns io.EOF.
func (lr *lineReader) next() ([]byte, int, error) {
	lr.buf = lr.buf[:0]
	total, read := 0, 0
	for {
		chunk, err := lr.r.ReadSlice('\n')
		read += len(chunk)
		more := errors.Is(err, bufio.ErrBufferFull)
		if err != nil && !more && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		if read == 0 {
			return nil, 0, io.EOF
		}
		if !more {
			chunk = trimEOL(chunk)
		}
		total += len(chunk)
		if room := lr.max - len(lr.buf); room > 0 {
			lr.buf = append(lr.buf, chunk[:min(room, len(chunk))]...)
		}
		if !more {
			break
		}
	}
	line := lr.buf
	if len(line) < total {
		// Back off a rune cut in half.
		for i := len(line) - 1; i >= 0 && i >= len(line)-utf8.UTFMax; i-- {
			if utf8.RuneStart(line[i]) {
				if !utf8.FullRune(line[i:]) {
					line = line[:i]
				}
				break
			}
		}
	}
	return line, total - len(line), nil
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}
