package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// damagePage overwrites the header of the nth leaf page of table (as
// SQLite's dbstat lists them) in the closed store at dir, as a bad sector
// or a stray write would, and returns the bytes the page held before.
func damagePage(t *testing.T, dir, table string, nth int) []byte {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, dir)
	require.NoError(t, err)
	var pageno, size int64
	require.NoError(t, s.DB().QueryRowContext(ctx, `SELECT pageno, pgsize FROM dbstat
		WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET ?`, table, nth).Scan(&pageno, &size))
	require.NoError(t, s.Close())
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	page := make([]byte, size)
	_, err = f.ReadAt(page, (pageno-1)*size)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(strings.Repeat("\xff", 64)), (pageno-1)*size)
	require.NoError(t, err)
	return page
}

// fillSession appends n messages "message NNNN ..." of ~450 bytes.
func fillSession(t *testing.T, s *Store, n int) Session {
	t.Helper()
	ctx := context.Background()
	sess, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	for i := 1; i <= n; i++ {
		_, err := s.Append(ctx, sess.ID, Message{Role: RoleUser, Tokens: 5,
			Content: fmt.Sprintf("message %04d lighthouse %s", i, strings.Repeat("x", 420))})
		require.NoError(t, err)
	}
	return sess
}

func seqsOf(msgs []Message) []int64 {
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		out[i] = m.Seq
	}
	return out
}

// TestDamagedPageLosesOnlyItsRows: one bad page of the messages table
// (issue 14, item 10) costs the messages on it, not the session: every
// read of the log returns the rest and the lost seqs are reported; the
// other session is whole, and the session takes new messages.
func TestDamagedPageLosesOnlyItsRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, checked := range []bool{true, false} {
		t.Run(fmt.Sprintf("checked at open=%v", checked), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s, err := Open(ctx, dir)
			require.NoError(t, err)
			a := fillSession(t, s, 200)
			b := fillSession(t, s, 10)
			_, err = s.CatchUpIndex(ctx)
			require.NoError(t, err)
			require.NoError(t, s.Close())

			page := damagePage(t, dir, "messages", 10)
			var lost []int64
			for _, m := range regexp.MustCompile(`message (\d{4}) lighthouse`).FindAllSubmatch(page, -1) {
				n, _ := strconv.ParseInt(string(m[1]), 10, 64)
				lost = append(lost, n)
			}
			require.NotEmpty(t, lost)
			slices.Sort(lost) // cells are laid out from the page's end
			require.Less(t, lost[len(lost)-1], int64(190), "the damaged page is in the middle")
			var kept []int64
			for i := int64(1); i <= 200; i++ {
				if !slices.Contains(lost, i) {
					kept = append(kept, i)
				}
			}

			opts := []Option{}
			if !checked {
				opts = append(opts, withQuickCheckMax(0))
			}
			s, err = Open(ctx, dir, opts...)
			require.NoError(t, err)
			defer s.Close()
			require.Equal(t, checked, s.Damage().Check != "", "the check at open found it: %q", s.Damage().Check)

			msgs, err := s.Messages(ctx, a.ID, 1, 0)
			require.NoError(t, err)
			require.Equal(t, kept, seqsOf(msgs))
			require.Equal(t, map[string][]int64{a.ID: lost}, s.Damage().Lost)

			var each []int64
			for m, err := range s.Each(ctx, a.ID, 1, 0) {
				require.NoError(t, err)
				each = append(each, m.Seq)
			}
			require.Equal(t, kept, each)
			v, err := s.LoadView(ctx, a.ID)
			require.NoError(t, err)
			require.Equal(t, kept, seqsOf(v.Messages))
			tail, err := s.TailAfter(ctx, a.ID, 0, 3)
			require.NoError(t, err)
			require.Equal(t, []int64{198, 199, 200}, seqsOf(tail))

			other, err := s.Messages(ctx, b.ID, 1, 0)
			require.NoError(t, err)
			require.Len(t, other, 10)

			added, err := s.Append(ctx, a.ID, Message{Role: RoleUser, Content: "after the damage", Tokens: 3})
			require.NoError(t, err)
			require.Equal(t, int64(201), added[0].Seq)
			_, err = s.CatchUpIndex(ctx)
			require.NoError(t, err, "the indexer gets past the damaged page")
			hits, _, err := s.Search(ctx, a.ID, "after the damage", 5)
			require.NoError(t, err)
			require.NotEmpty(t, hits)
		})
	}
}

// TestDamagedSearchIndexIsRebuilt: a bad page in the search index does
// not go unnoticed (issue 14, item 10): the check at open, or the first
// search that meets it, rebuilds the index, and searches find every
// message again.
func TestDamagedSearchIndexIsRebuilt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, checked := range []bool{true, false} {
		t.Run(fmt.Sprintf("checked at open=%v", checked), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s, err := Open(ctx, dir)
			require.NoError(t, err)
			a := fillSession(t, s, 200)
			_, err = s.CatchUpIndex(ctx)
			require.NoError(t, err)
			require.NoError(t, s.Close())
			damagePage(t, dir, "message_search_data", 1)

			opts := []Option{}
			if !checked {
				opts = append(opts, withQuickCheckMax(0))
			}
			s, err = Open(ctx, dir, opts...)
			require.NoError(t, err)
			defer func() { s.Close() }()
			require.Equal(t, checked, s.Damage().IndexRebuilt, "rebuilt at open")
			require.Empty(t, s.Damage().Check)

			_, total, err := s.Search(ctx, a.ID, "lighthouse", 5)
			require.NoError(t, err)
			require.Equal(t, 200, total)
			require.True(t, s.Damage().IndexRebuilt)
			require.Empty(t, s.Damage().Lost)

			require.NoError(t, s.Close())

			// The old index's pages are left unused: no damage for the
			// next open, and free again after a VACUUM.
			s, err = Open(ctx, dir)
			require.NoError(t, err)
			require.False(t, s.Damage().Any(), "%+v", s.Damage())
			_, err = s.DB().ExecContext(ctx, `VACUUM`)
			require.NoError(t, err)
			var res string
			require.NoError(t, s.DB().QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&res))
			require.Equal(t, "ok", res)
			_, total, err = s.Search(ctx, a.ID, "lighthouse", 5)
			require.NoError(t, err)
			require.Equal(t, 200, total)
		})
	}
}
