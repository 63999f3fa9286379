package logfile

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenIsPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state", "gencode")
	// A directory and a file left readable by others are made private.
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, Name), []byte("old\n"), 0o644))
	l, err := Open(dir, Options{})
	require.NoError(t, err)
	defer l.Close()
	_, err = l.Write([]byte("new\n"))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, Name), l.Path())
	mode(t, dir, 0o700)
	mode(t, l.Path(), 0o600)
	b, err := os.ReadFile(l.Path())
	require.NoError(t, err)
	require.Equal(t, "old\nnew\n", string(b), "appended")
}

func mode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, want, fi.Mode().Perm(), "mode of %s", path)
}

// TestRotationIsBounded: however much is logged, the files stay Keep+1,
// each about MaxBytes, the newest records last, all private.
func TestRotationIsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := Open(dir, Options{MaxBytes: 1000, Keep: 2})
	require.NoError(t, err)
	defer l.Close()
	for i := 0; i < 500; i++ {
		_, err := fmt.Fprintf(l, "record %04d %s\n", i, strings.Repeat("x", 40))
		require.NoError(t, err)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		mode(t, filepath.Join(dir, e.Name()), 0o600)
		fi, err := e.Info()
		require.NoError(t, err)
		require.LessOrEqual(t, fi.Size(), int64(1000), e.Name())
	}
	require.Equal(t, []string{Name, Name + ".1", Name + ".2"}, names)
	cur, err := os.ReadFile(filepath.Join(dir, Name))
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(cur), "record 0499 "+strings.Repeat("x", 40)+"\n"), "the newest record is in %s", Name)
	old, err := os.ReadFile(filepath.Join(dir, Name+".2"))
	require.NoError(t, err)
	require.NotContains(t, string(old), "record 0000", "the oldest records are dropped")
}

// TestFollowsAnotherProcessRotation: two gencode processes share the log;
// after one rotates it, the other writes to the new file, not the old one.
func TestFollowsAnotherProcessRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := Open(dir, Options{MaxBytes: 100, Keep: 1})
	require.NoError(t, err)
	defer a.Close()
	b, err := Open(dir, Options{MaxBytes: 100, Keep: 1})
	require.NoError(t, err)
	defer b.Close()
	_, err = a.Write([]byte(strings.Repeat("a", 90) + "\n"))
	require.NoError(t, err)
	_, err = b.Write([]byte("b rotates\n")) // 91 + 10 > 100
	require.NoError(t, err)
	_, err = a.Write([]byte("a after\n"))
	require.NoError(t, err)
	cur, err := os.ReadFile(filepath.Join(dir, Name))
	require.NoError(t, err)
	require.Equal(t, "b rotates\na after\n", string(cur))
}

func TestWriteAfterClose(t *testing.T) {
	t.Parallel()
	l, err := Open(t.TempDir(), Options{})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	_, err = l.Write([]byte("x\n"))
	require.ErrorIs(t, err, os.ErrClosed)
}

func TestLoggerLevelsAndRedaction(t *testing.T) {
	t.Parallel()
	const key = "sk-live-0123456789abcdef"
	redact := func(s string) string { return strings.ReplaceAll(s, key, "[REDACTED:api-key]") }
	tests := []struct {
		name    string
		debug   bool
		log     func(l *slog.Logger)
		want    []string
		wantNot []string
	}{
		{name: "info, no debug", log: func(l *slog.Logger) {
			l.Debug("detail", "n", 1)
			l.Info("start", "session", "s1")
		}, want: []string{"level=INFO msg=start session=s1"}, wantNot: []string{"detail"}},
		{name: "debug", debug: true, log: func(l *slog.Logger) {
			l.Debug("detail", "n", 1)
		}, want: []string{"level=DEBUG msg=detail n=1"}},
		{name: "the key in every text", log: func(l *slog.Logger) {
			l.Warn("bad key "+key, "err", errors.New("401: key "+key+" invalid"), "url", "http://x/?k="+key,
				"any", struct{ K string }{key})
			l.WithGroup("g").Error("e", "s", key)
		}, want: []string{"[REDACTED:api-key]"}, wantNot: []string{key}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			tt.log(New(&buf, Options{Debug: tt.debug, Redact: redact}))
			for _, w := range tt.want {
				require.Contains(t, buf.String(), w)
			}
			for _, w := range tt.wantNot {
				require.NotContains(t, buf.String(), w)
			}
		})
	}
}

// TestPlantedFileIsRefused: a link planted at the log's path (before the
// run, or swapped in while it runs) used to be followed: gencode appended
// to its target and made it 0600. Now the log is opened without following
// links, anything but a regular file is refused, the target is left as it
// was, and a link at a rotated name is dropped, never written through.
func TestPlantedFileIsRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// plant puts something at path before Open (or, with later, after
		// the first write); target is the outside file it points to.
		plant func(t *testing.T, path, target string)
		later bool
	}{
		{name: "symlink to a file", plant: func(t *testing.T, path, target string) {
			require.NoError(t, os.Symlink(target, path))
		}},
		{name: "dangling symlink", plant: func(t *testing.T, path, target string) {
			require.NoError(t, os.Remove(target))
			require.NoError(t, os.Symlink(target, path))
		}},
		{name: "directory", plant: func(t *testing.T, path, _ string) {
			require.NoError(t, os.Mkdir(path, 0o700))
		}},
		{name: "fifo", plant: func(t *testing.T, path, _ string) {
			mkfifo(t, path)
		}},
		{name: "symlink swapped in after open", later: true, plant: func(t *testing.T, path, target string) {
			require.NoError(t, os.Remove(path))
			require.NoError(t, os.Symlink(target, path))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			target := filepath.Join(t.TempDir(), "precious")
			require.NoError(t, os.WriteFile(target, []byte("precious\n"), 0o644))
			path := filepath.Join(dir, Name)
			if !tt.later {
				tt.plant(t, path, target)
				_, err := Open(dir, Options{})
				require.ErrorIs(t, err, ErrNotRegular)
				require.ErrorContains(t, err, "refused")
			} else {
				l, err := Open(dir, Options{})
				require.NoError(t, err)
				defer l.Close()
				_, err = l.Write([]byte("first\n"))
				require.NoError(t, err)
				tt.plant(t, path, target)
				_, err = l.Write([]byte("second\n"))
				require.ErrorIs(t, err, ErrNotRegular)
			}
			b, err := os.ReadFile(target)
			if errors.Is(err, os.ErrNotExist) {
				return // the dangling link's target was not created
			}
			require.NoError(t, err)
			require.Equal(t, "precious\n", string(b), "the target is not appended to")
			mode(t, target, 0o644)
		})
	}
}

// TestRotationDropsPlantedLinks: a link at a rotated name is removed (the
// link, not its target) instead of being carried along as a log file.
func TestRotationDropsPlantedLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "precious")
	require.NoError(t, os.WriteFile(target, []byte("precious\n"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, Name+".1")))
	l, err := Open(dir, Options{MaxBytes: 100, Keep: 3})
	require.NoError(t, err)
	defer l.Close()
	for i := 0; i < 2; i++ { // one rotation
		_, err := fmt.Fprintf(l, "record %02d %s\n", i, strings.Repeat("x", 60))
		require.NoError(t, err)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		fi, err := os.Lstat(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.True(t, fi.Mode().IsRegular(), "%s is %s", e.Name(), fi.Mode().Type())
	}
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "precious\n", string(b))
	mode(t, target, 0o644)
}
