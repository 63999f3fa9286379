package session

import (
	"context"
	"database/sql"
	"errors"
)

// countSchema is the migration that adds token_counts: the counts of
// texts every request of every process repeats (the system prompt, the
// tool schemas), by a key naming the tokenizer encoding and a hash of the
// text (view.TokenKey). Counting them again was ~6% of a print-mode turn.
const countSchema = `CREATE TABLE IF NOT EXISTS token_counts (
	key    TEXT PRIMARY KEY,
	tokens INTEGER NOT NULL
) WITHOUT ROWID;`

// CachedTokens returns the count stored for key and whether there is one.
func (s *Store) CachedTokens(ctx context.Context, key string) (int, bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT tokens FROM token_counts WHERE key = ?`, key).Scan(&n)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, s.errorf("read token count: %w", err)
	}
	return n, true, nil
}

// CacheTokens stores the count of the text key names.
func (s *Store) CacheTokens(ctx context.Context, key string, n int) error {
	if _, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO token_counts(key, tokens) VALUES(?, ?)`, key, n); err != nil {
		return s.errorf("store token count: %w", err)
	}
	return nil
}
