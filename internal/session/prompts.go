package session

import (
	"context"
	"database/sql"
	"strings"
)

// promptSessions bounds how many of a project's sessions Prompts reads:
// the most recently updated ones.
const promptSessions = 50

// promptSchema is the migration that indexes the messages the user sent
// (a partial index: the other roles, most of a log, are not in it), so
// that Prompts reads the last few of each session whatever its length.
const promptSchema = `CREATE INDEX IF NOT EXISTS messages_sent ON messages(session_id, created_at) WHERE role = 'user';`

// Prompts returns the last n messages the user sent in the sessions of
// the working directory cwd (the project), oldest first: the history Up
// walks in a new session. Only the most recent sessions are read, so a
// project with a long past costs what one with a short one does; in each,
// only its last n messages sent are read (messages_sent), so a long
// session costs what a short one does. With limit > 0 they are cut as
// TailShown cuts: a message sent without pastes that is longer than limit
// bytes comes Clipped, its content cut to limit.
func (s *Store) Prompts(ctx context.Context, cwd string, n, limit int) ([]Message, error) {
	ids, err := s.recentSessions(ctx, cwd, promptSessions)
	if err != nil || len(ids) == 0 || n <= 0 {
		if err != nil {
			return nil, s.errorf("load the prompts sent in %s: %w", cwd, err)
		}
		return nil, nil
	}
	// The newest n of each session (from the index alone), then the newest
	// n of those: a session's part cannot contribute more than n.
	part := `SELECT * FROM (SELECT id, created_at FROM messages WHERE session_id = ? AND role = 'user'
		ORDER BY created_at DESC, id DESC LIMIT ?)`
	args := make([]any, 0, 2*len(ids)+1)
	for _, id := range ids {
		args = append(args, id, n)
	}
	args = append(args, n)
	order, err := s.ids(ctx, `SELECT id FROM (`+strings.Repeat(part+" UNION ALL ", len(ids)-1)+part+`)
		ORDER BY created_at DESC, id DESC LIMIT ?`, args...)
	if err != nil || len(order) == 0 {
		if err != nil {
			return nil, s.errorf("load the prompts sent in %s: %w", cwd, err)
		}
		return nil, nil
	}
	// Then those rows, put in order here: sorted in SQL, each would be
	// copied whole into the sorter (a 10 MB message too).
	cols := messageCols
	args = make([]any, 0, len(order)+1)
	if limit > 0 {
		cols = shownCols
		args = append(args, limit+1)
	}
	for _, id := range order {
		args = append(args, id)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, `+cols+` FROM messages WHERE id IN (?`+
		strings.Repeat(",?", len(order)-1)+`)`, args...)
	if err != nil {
		return nil, s.errorf("load the prompts sent in %s: %w", cwd, err)
	}
	defer rows.Close()
	byID := make(map[int64]Message, len(order))
	for rows.Next() {
		var id int64
		m, err := s.scanMessage(withID{rows, &id})
		if err != nil {
			return nil, s.errorf("load the prompts sent in %s: %w", cwd, err)
		}
		byID[id] = m
	}
	if err := rows.Err(); err != nil {
		return nil, s.errorf("load the prompts sent in %s: %w", cwd, err)
	}
	msgs := make([]Message, 0, len(order))
	for i := len(order) - 1; i >= 0; i-- { // oldest first
		if m, ok := byID[order[i]]; ok {
			msgs = append(msgs, m)
		}
	}
	if limit > 0 {
		msgs = clipShown(msgs, limit)
	}
	return msgs, nil
}

// withID scans a row whose first column is the message's id into id, and
// the rest as scanMessage reads them.
type withID struct {
	rows *sql.Rows
	id   *int64
}

func (w withID) Scan(dest ...any) error { return w.rows.Scan(append([]any{w.id}, dest...)...) }

// ids runs a query of ids.
func (s *Store) ids(ctx context.Context, query string, args ...any) ([]int64, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// recentSessions returns the ids of the last n sessions updated in cwd.
func (s *Store) recentSessions(ctx context.Context, cwd string, n int) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM sessions WHERE cwd = ? ORDER BY updated_at DESC LIMIT ?`, cwd, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
