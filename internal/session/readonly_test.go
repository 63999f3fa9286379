//go:build unix

package session_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/session/sessiontest"
)

// writeSession fills a store with a session of n messages and indexes them.
func writeSession(t *testing.T, s *session.Store, n int) session.Session {
	t.Helper()
	ctx := context.Background()
	sess, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	for i := 1; i <= n; i++ {
		_, err := s.Append(ctx, sess.ID, session.Message{Role: session.RoleUser, Content: "question about the lighthouse " + string(rune('a'+i%26)), Tokens: 5})
		require.NoError(t, err)
	}
	_, err = s.CatchUpIndex(ctx)
	require.NoError(t, err)
	return sess
}

// TestReadOnlyDataDir: a data directory that cannot be written is read
// (issue 14, item 12): sessions, messages and search work, writes say the
// store is read-only. With a write-ahead log holding changes (a writer
// still running, or killed), those are read too.
func TestReadOnlyDataDir(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		// setup writes the data directory and returns the session and
		// the files to make read-only; keep is closed at the end.
		setup      func(t *testing.T, dir string) (sess session.Session, files []string, keep io.Closer)
		wantNotice bool
		want       int // messages readable
	}{
		{
			name: "closed cleanly",
			setup: func(t *testing.T, dir string) (session.Session, []string, io.Closer) {
				s, err := session.Open(ctx, dir)
				require.NoError(t, err)
				sess := writeSession(t, s, 12)
				require.NoError(t, s.Close())
				_, err = os.Stat(filepath.Join(dir, session.FileName+"-wal"))
				require.True(t, os.IsNotExist(err), "a clean close leaves no WAL")
				return sess, []string{dir, filepath.Join(dir, session.FileName)}, nil
			},
			want: 12,
		},
		{
			name: "changes in the WAL",
			setup: func(t *testing.T, dir string) (session.Session, []string, io.Closer) {
				s, err := session.Open(ctx, dir)
				require.NoError(t, err)
				sess := writeSession(t, s, 12) // the writer stays open
				var files []string
				for _, f := range []string{"", session.FileName, session.FileName + "-wal", session.FileName + "-shm"} {
					files = append(files, filepath.Join(dir, f))
				}
				return sess, files, s
			},
			want: 12,
		},
		{
			name: "WAL without its shared memory",
			setup: func(t *testing.T, dir string) (session.Session, []string, io.Closer) {
				src := t.TempDir()
				s, err := session.Open(ctx, src)
				require.NoError(t, err)
				defer s.Close()
				first := writeSession(t, s, 5)
				_, err = s.DB().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
				require.NoError(t, err)
				_, err = s.Append(ctx, first.ID, session.Message{Role: session.RoleAssistant, Content: "only in the WAL", Tokens: 3})
				require.NoError(t, err)
				for _, f := range []string{session.FileName, session.FileName + "-wal"} {
					b, err := os.ReadFile(filepath.Join(src, f))
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o600))
				}
				return first, []string{dir, filepath.Join(dir, session.FileName), filepath.Join(dir, session.FileName+"-wal")}, nil
			},
			wantNotice: true,
			want:       5, // the message in the WAL cannot be read
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "data")
			require.NoError(t, os.MkdirAll(dir, 0o700))
			sess, files, keep := tt.setup(t, dir)
			if keep != nil {
				defer keep.Close()
			}
			sessiontest.MakeReadOnly(t, files...)

			_, err := session.Open(ctx, dir)
			require.ErrorIs(t, err, session.ErrReadOnly, "a writer is told the store is read-only")

			s, err := session.Open(ctx, dir, session.ForReading())
			require.NoError(t, err)
			defer s.Close()
			require.True(t, s.ReadOnly())
			require.Equal(t, tt.wantNotice, s.Notice() != "", "notice %q", s.Notice())
			list, err := s.Sessions(ctx, 0)
			require.NoError(t, err)
			require.Len(t, list, 1)
			msgs, err := s.Messages(ctx, sess.ID, 1, 0)
			require.NoError(t, err)
			require.Len(t, msgs, tt.want)
			v, err := s.LoadView(ctx, sess.ID)
			require.NoError(t, err)
			require.Len(t, v.Messages, tt.want)
			hits, _, err := s.Search(ctx, sess.ID, "lighthouse", 5)
			require.NoError(t, err)
			require.NotEmpty(t, hits, "what is indexed is searched")

			_, err = s.Append(ctx, sess.ID, session.Message{Role: session.RoleUser, Content: "more"})
			require.ErrorIs(t, err, session.ErrReadOnly)
			_, err = s.Lease(ctx, sess.ID, 0)
			require.ErrorIs(t, err, session.ErrReadOnly)
			_, err = s.CreateSession(ctx, "/w", "m")
			require.ErrorIs(t, err, session.ErrReadOnly)
		})
	}
}

// TestWritableStoreIgnoresForReading: ForReading changes nothing where the
// directory can be written.
func TestWritableStoreIgnoresForReading(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := session.Open(ctx, filepath.Join(t.TempDir(), "data"), session.ForReading())
	require.NoError(t, err)
	defer s.Close()
	require.False(t, s.ReadOnly())
	_, err = s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
}
