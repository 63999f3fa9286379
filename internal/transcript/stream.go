package transcript

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/gencode/gencode/internal/session"
)

// File is a session file read for import and not yet stored (OpenFile).
// An OpenAI-format JSONL file, what gencode exports, is never held whole:
// OpenFile reads it a line at a time to check and repair it and to find its
// root, and Import reads it again the same way, storing it a batch at a
// time. The other formats are read whole (ReadFormat).
type File struct {
	// Changes are the repairs Read makes (see Read).
	Changes []Change
	// Source is where the session came from; its NotRun is known once
	// the session is imported.
	Source Source

	path, name string
	msgs       []session.Message // a format read whole; nil when streamed
}

// OpenFile reads the session file at path (name is how errors call it)
// as ReadFormat does, format "" meaning: recognise it by its content.
func OpenFile(path, name, format string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	if (format == "" || format == FormatOpenAI) && jsonLines(br) {
		file := &File{path: path, name: name, Source: Source{Format: FormatOpenAI}}
		var roots rootFinder
		n := 0
		changes, err := readLines(br, name, func(batch []session.Message) error {
			for _, m := range batch {
				roots.add(m)
			}
			n += len(batch)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: no messages", name)
		}
		file.Changes, file.Source.Root = changes, roots.root()
		return file, nil
	}
	msgs, changes, src, err := ReadFormat(br, name, format)
	if err != nil {
		return nil, err
	}
	return &File{Changes: changes, Source: src, name: name, msgs: msgs}, nil
}

// jsonLines reports whether the file starts with a line that is one
// OpenAI chat message (Detect's FormatOpenAI for JSON lines), without
// reading past it.
func jsonLines(br *bufio.Reader) bool {
	for size := 4 << 10; ; size *= 2 {
		b, err := br.Peek(size)
		t := bytes.TrimLeft(b, " \t\r\n")
		if line, _, found := bytes.Cut(t, []byte("\n")); found || err != nil {
			var first map[string]json.RawMessage
			if json.Unmarshal(line, &first) != nil {
				return false
			}
			// The keys Detect tells other formats by, on one line.
			for _, k := range []string{"trajectory", "messages", "action", "observation", "type"} {
				if first[k] != nil {
					return false
				}
			}
			return first["role"] != nil
		}
		if size >= br.Size() {
			// A first line longer than the buffer: read whole instead.
			return false
		}
	}
}

// readLines is Read a line at a time: it hands the repaired messages to
// emit in batches, each holding whole calls with their results, and
// returns the changes.
func readLines(r io.Reader, name string, emit func([]session.Message) error) ([]Change, error) {
	p := &reader{ids: map[string]bool{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	line := 0
	flush := func(min int) error {
		if len(p.out) < min || len(p.out) == 0 {
			return nil
		}
		err := emit(p.out)
		p.out = nil
		return err
	}
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var m openai.ChatCompletionMessage
		if err := json.Unmarshal(text, &m); err != nil {
			return nil, fmt.Errorf("%s:%d: not a JSON message: %w", name, line, err)
		}
		if err := p.add(line, m); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		// p.out holds whole blocks only (a call goes in with its results).
		if err := flush(importBatch); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: a line is longer than %d MB", name, line+1, maxLine>>20)
		}
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	p.close()
	return p.changes, flush(1)
}

// Import stores the file as a new session (see the package's Import).
func (f *File) Import(ctx context.Context, st Store, o ImportOptions) (session.Session, error) {
	if f.msgs != nil {
		return Import(ctx, st, f.msgs, o)
	}
	in, err := os.Open(f.path)
	if err != nil {
		return session.Session{}, fmt.Errorf("import: %w", err)
	}
	defer in.Close()
	sess, err := st.CreateSession(ctx, o.Cwd, o.Model)
	if err != nil {
		return session.Session{}, err
	}
	title, titled := "", false
	first := true
	_, err = readLines(bufio.NewReaderSize(in, 64<<10), f.name, func(batch []session.Message) error {
		finishMessages(batch, nil, nil, markNotRun(batch, nil), &f.Source, first)
		first = false
		countAll(batch, o.Count)
		if _, err := st.Append(ctx, sess.ID, batch...); err != nil {
			return fmt.Errorf("import into session %s: %w", sess.ID, err)
		}
		if !titled {
			title, titled = titleOf(batch, o.Title)
		}
		sess.MessageCount += len(batch)
		return nil
	})
	if err != nil {
		return session.Session{}, err
	}
	if titled {
		if err := st.SetTitle(ctx, sess.ID, title); err != nil {
			return session.Session{}, err
		}
		sess.Title = title
	}
	sess.LastSeq = int64(sess.MessageCount)
	return sess, nil
}

// titleOf is the title of the first user request among msgs (ok false:
// none).
func titleOf(msgs []session.Message, title func(string) string) (string, bool) {
	if title == nil {
		title = func(s string) string { return strings.TrimSpace(strings.SplitN(s, "\n", 2)[0]) }
	}
	for _, m := range msgs {
		if m.Role == session.RoleUser && m.Meta.Quoted == "" && strings.TrimSpace(m.Content) != "" {
			return title(m.Content), true
		}
	}
	return "", false
}
