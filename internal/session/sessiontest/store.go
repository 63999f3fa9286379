package sessiontest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gencode/gencode/internal/session"
)

// empty is the file of a new, migrated store, made once per test binary.
// Creating the schema is most of what opening a new store costs (under
// -race ~13 ms of CPU from session's one script, 60 ms when it was
// migrated step by step, against ~4 ms to open an existing one), and a
// package's tests open hundreds.
var empty = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "gencode-empty-store-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	st, err := session.Open(context.Background(), dir)
	if err != nil {
		return nil, err
	}
	// Closing the last connection checkpoints the write-ahead log into
	// the file and removes it: the file is the whole store.
	if err := st.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, session.FileName))
})

// Open opens a new, empty store in a directory of its own under
// t.TempDir(), through session.Open, and closes it when the test ends. The
// store is a real SQLite file: a copy of an empty one migrated once for
// the test binary (the session package's own tests cover migrating).
func Open(t testing.TB, opts ...session.Option) *session.Store {
	t.Helper()
	raw, err := empty()
	if err != nil {
		t.Fatalf("make an empty store: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, session.FileName), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := session.Open(context.Background(), dir, opts...)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// OpenIn opens the store in dir through session.Open, for a test that
// shares it with a gencode process; the caller closes it. Where there is
// no store yet, dir (made private if missing, as gencode makes it) gets a
// copy of the empty one first, as Open does.
func OpenIn(t testing.TB, dir string, opts ...session.Option) *session.Store {
	t.Helper()
	path := filepath.Join(dir, session.FileName)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		raw, err := empty()
		if err != nil {
			t.Fatalf("make an empty store: %v", err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	st, err := session.Open(context.Background(), dir, opts...)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return st
}
