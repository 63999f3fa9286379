package session

// What went wrong underneath: the storage failures a user can act on.
//
// SQLite reports them as result codes; StorageError sorts them into the
// sentinels below, so that the front end words them (the CLI's one error
// mapper) without knowing SQLite. A full disk is reported by SQLite as
// SQLITE_FULL when a write finds no space, but as an I/O error when the
// shared-memory file of the WAL cannot grow (measured on a full tmpfs:
// "disk I/O error (4874)", SQLITE_IOERR_SHMSIZE, at startup); an I/O error
// on a filesystem with (almost) no space left is taken for a full disk.

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// Sentinels of storage failures; check them with errors.Is.
var (
	// ErrDiskFull means the disk holding the database has no space left.
	ErrDiskFull = errors.New("no space left on device")
	// ErrCorrupt means the database file is damaged.
	ErrCorrupt = errors.New("the database file is damaged")
)

// StorageError is a database failure the user can act on: a full disk, a
// read-only or damaged database. Its message is the underlying error's.
type StorageError struct {
	// Path is the database file.
	Path string
	// Kind is ErrDiskFull, ErrReadOnly or ErrCorrupt.
	Kind error
	// Code is SQLite's extended result code (0: not from SQLite).
	Code int
	// Free is how many bytes the user may still write on Path's
	// filesystem (-1: unknown).
	Free int64
	Err  error
}

func (e *StorageError) Error() string { return e.Err.Error() }

// Unwrap gives both the underlying error and the Kind.
func (e *StorageError) Unwrap() []error { return []error{e.Err, e.Kind} }

// SQLite result codes (sqlite3.h) the store sorts.
const (
	sqlitePerm     = 3
	sqliteReadOnly = 8
	sqliteIOErr    = 10
	sqliteCorrupt  = 11
	sqliteFull     = 13
	sqliteCantOpen = 14
	sqliteNotADB   = 26
)

// fullBelow is the free space under which an I/O error is taken for a
// full disk: less than SQLite needs to grow the WAL's shared memory once.
const fullBelow = 1 << 20

// sqliteCode is the SQLite result code in err's chain, or 0.
func sqliteCode(err error) int {
	var ce interface{ Code() int }
	if errors.As(err, &ce) {
		return ce.Code()
	}
	return 0
}

// classify wraps err in a *StorageError when it is a storage failure of
// the database at path; otherwise (or when it is one already) it returns
// err as it is.
func classify(path string, err error) error {
	var se *StorageError
	if err == nil || errors.As(err, &se) {
		return err
	}
	code := sqliteCode(err)
	e := &StorageError{Path: path, Code: code, Free: -1, Err: err}
	switch {
	case code&0xff == sqliteFull || errors.Is(err, syscall.ENOSPC):
		e.Kind = ErrDiskFull
	case code&0xff == sqliteIOErr:
		if free, ok := freeSpace(path); ok {
			e.Free = free
			if free < fullBelow {
				e.Kind = ErrDiskFull
			}
		}
	case code&0xff == sqliteCorrupt, code&0xff == sqliteNotADB:
		e.Kind = ErrCorrupt
	case code&0xff == sqliteReadOnly, code&0xff == sqlitePerm,
		errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		e.Kind = ErrReadOnly
	}
	if e.Kind == nil {
		return err
	}
	if e.Kind == ErrDiskFull && e.Free < 0 {
		if free, ok := freeSpace(path); ok {
			e.Free = free
		}
	}
	return e
}

// errorf is fmt.Errorf for the store's errors: a storage failure under
// them is classified (see StorageError).
func (s *Store) errorf(format string, args ...any) error {
	return classify(s.path, fmt.Errorf(format, args...))
}
