// Package logfile keeps gencode's log: a private file in the state
// directory that rotates past a size and keeps a few old files, so it stays
// bounded, and the slog.Logger that writes to it with secrets redacted.
package logfile

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Name is the log file's name in its directory; rotated files add .1, .2 ...
const Name = "gencode.log"

// Defaults of Options.
const (
	DefaultMaxBytes = 4 << 20
	DefaultKeep     = 3
)

// Options configure the file and its logger.
type Options struct {
	// MaxBytes is the size past which the file is rotated (0: DefaultMaxBytes).
	MaxBytes int64
	// Keep is how many rotated files are kept (0: DefaultKeep).
	Keep int
	// Debug logs debug records too; without it, info and above.
	Debug bool
	// Redact rewrites every text of a record (message, attribute values,
	// errors) before it is written: it takes the secrets out. Nil: none.
	Redact func(string) string
}

// File is the log file. It is safe for concurrent use; writes from other
// gencode processes to the same file are appended, and a rotation one of
// them made is followed.
type File struct {
	path     string
	maxBytes int64
	keep     int

	mu sync.Mutex // guards f and size
	f  *os.File
}

// Open opens (creating it if needed) the log file in dir, which is made
// private (0700); the file is 0600.
func Open(dir string, o Options) (*File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create log dir %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make log dir %s private: %w", dir, err)
	}
	l := &File{path: filepath.Join(dir, Name), maxBytes: o.MaxBytes, keep: o.Keep}
	if l.maxBytes <= 0 {
		l.maxBytes = DefaultMaxBytes
	}
	if l.keep <= 0 {
		l.keep = DefaultKeep
	}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

// Path is the log file's path.
func (l *File) Path() string { return l.path }

// ErrNotRegular: the log's path (or a rotated file's) holds something
// other than a regular file, such as a symbolic link planted to make
// gencode append to, and chmod, a file elsewhere. It is refused, never
// followed.
var ErrNotRegular = errors.New("not a regular file")

// open opens the file at the path, never through a symbolic link (the
// open itself refuses one where the OS can, and a check of what was opened
// refuses any other non-regular file: a FIFO, a device), so that its
// appends and its chmod land on the log and nowhere else.
func (l *File) open() error {
	if fi, err := os.Lstat(l.path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("open log %s: %w (%s); refused", l.path, ErrNotRegular, kind(fi.Mode()))
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|noFollow, 0o600)
	if err != nil {
		if isLinkRefused(err) {
			return fmt.Errorf("open log %s: %w (a symbolic link); refused", l.path, ErrNotRegular)
		}
		return fmt.Errorf("open log %s: %w", l.path, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		if err != nil {
			return fmt.Errorf("stat log %s: %w", l.path, err)
		}
		return fmt.Errorf("open log %s: %w (%s); refused", l.path, ErrNotRegular, kind(fi.Mode()))
	}
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return fmt.Errorf("make log %s private: %w", l.path, err)
	}
	l.f = f
	return nil
}

// kind names a file that is not regular, for an error.
func kind(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.Type().String()
}

// Write appends p, one record, to the file; past MaxBytes the file is
// rotated first.
func (l *File) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, os.ErrClosed
	}
	size, err := l.size()
	if err != nil {
		return 0, err
	}
	if size > 0 && size+int64(len(p)) > l.maxBytes {
		if err := l.rotate(); err != nil {
			return 0, err
		}
	}
	return l.f.Write(p)
}

// size is the current file's size. If another process rotated it away,
// the file at the path is opened instead.
func (l *File) size() (int64, error) {
	open, err := l.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat log %s: %w", l.path, err)
	}
	cur, err := os.Lstat(l.path)
	if err == nil && os.SameFile(open, cur) {
		return open.Size(), nil
	}
	_ = l.f.Close()
	l.f = nil
	if err := l.open(); err != nil {
		return 0, err
	}
	if cur != nil {
		return cur.Size(), nil
	}
	return 0, nil
}

// rotate moves gencode.log to gencode.log.1, .1 to .2 and so on, drops the
// oldest, and starts a new file. A rotated name that holds something other
// than a regular file (a planted link) is removed, the link itself and
// never what it points to, instead of being carried along.
func (l *File) rotate() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("close log %s: %w", l.path, err)
	}
	l.f = nil
	name := func(i int) string { return l.path + "." + strconv.Itoa(i) }
	if err := os.Remove(name(l.keep)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("rotate log: %w", err)
	}
	for i := 1; i < l.keep; i++ {
		if fi, err := os.Lstat(name(i)); err == nil && !fi.Mode().IsRegular() {
			if err := os.Remove(name(i)); err != nil {
				return fmt.Errorf("rotate log: remove %s, %w (%s): %w", name(i), ErrNotRegular, kind(fi.Mode()), err)
			}
		}
	}
	for i := l.keep - 1; i >= 1; i-- {
		if err := os.Rename(name(i), name(i+1)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("rotate log: %w", err)
		}
	}
	if err := os.Rename(l.path, name(1)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("rotate log: %w", err)
	}
	return l.open()
}

// Close closes the file; later writes fail.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// New returns a logger writing text records to w, at info level (debug
// with o.Debug), with every text passed through o.Redact.
func New(w io.Writer, o Options) *slog.Logger {
	level := slog.LevelInfo
	if o.Debug {
		level = slog.LevelDebug
	}
	ho := &slog.HandlerOptions{Level: level}
	if o.Redact != nil {
		ho.ReplaceAttr = func(_ []string, a slog.Attr) slog.Attr {
			return redactAttr(a, o.Redact)
		}
	}
	return slog.New(slog.NewTextHandler(w, ho))
}

// redactAttr rewrites a's text: strings, errors and other values shown
// as text. Times, numbers, booleans and durations hold no secret.
func redactAttr(a slog.Attr, redact func(string) string) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(redact(a.Value.String()))
	case slog.KindAny:
		v := a.Value.Any()
		if err, ok := v.(error); ok {
			a.Value = slog.StringValue(redact(err.Error()))
		} else {
			a.Value = slog.StringValue(redact(fmt.Sprint(v)))
		}
	}
	return a
}
