package session

import (
	"context"
	"iter"
)

// pageSize is how many messages one query of Each reads.
const pageSize = 256

// Each returns the log's messages with from <= seq <= to (to <= 0: to the
// end), in order, read a page at a time: memory stays bounded however long
// the log is, and no read stays open between two pages. It stops at the
// first error, which it yields.
func (s *Store) Each(ctx context.Context, sessionID string, from, to int64) iter.Seq2[Message, error] {
	if to <= 0 {
		to = 1<<62 - 1
	}
	return func(yield func(Message, error) bool) {
		next := from
		for next <= to {
			page, err := s.queryMessages(ctx, `SELECT `+messageCols+` FROM messages
				WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq LIMIT ?`, sessionID, next, to, pageSize)
			if isCorrupt(err) {
				// A damaged page: the rest is read around it, at once
				// (see damage.go).
				page, err = s.salvageMessages(ctx, sessionID, next, to)
				if err == nil {
					for _, m := range page {
						if !yield(m, nil) {
							return
						}
					}
					return
				}
			}
			if err != nil {
				yield(Message{}, s.errorf("load messages %d-%d of session %s: %w", next, to, sessionID, err))
				return
			}
			for _, m := range page {
				if !yield(m, nil) {
					return
				}
			}
			if len(page) < pageSize {
				return
			}
			next = page[len(page)-1].Seq + 1
		}
	}
}

// TailAfter returns the last n messages with seq > after, in order. Its
// cost does not depend on how many messages there are.
func (s *Store) TailAfter(ctx context.Context, sessionID string, after int64, n int) ([]Message, error) {
	msgs, err := s.queryMessages(ctx, `SELECT * FROM (SELECT `+messageCols+` FROM messages
		WHERE session_id = ? AND seq > ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`, sessionID, after, n)
	if isCorrupt(err) {
		// A damaged page: read the range around it, keep the last n.
		msgs, err = s.salvageMessages(ctx, sessionID, after+1, 1<<62-1)
		if len(msgs) > n {
			msgs = msgs[len(msgs)-n:]
		}
	}
	if err != nil {
		return nil, s.errorf("load last %d messages after %d of session %s: %w", n, after, sessionID, err)
	}
	return msgs, nil
}

// Head is what planning reads of a message: where it is, its role and
// its stored count, not its text.
type Head struct {
	Seq    int64
	Role   Role
	Tokens int
}

// Heads returns the heads of the log's messages with from <= seq <= to
// (to <= 0: to the end), in order: a few bytes a message, so that a plan
// over a long log does not load its texts.
func (s *Store) Heads(ctx context.Context, sessionID string, from, to int64) ([]Head, error) {
	if to <= 0 {
		to = 1<<62 - 1
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, role, tokens FROM messages
		WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq`, sessionID, from, to)
	var out []Head
	if err == nil {
		defer rows.Close()
		for rows.Next() {
			var h Head
			var role string
			if err = rows.Scan(&h.Seq, &role, &h.Tokens); err != nil {
				break
			}
			h.Role = Role(role)
			out = append(out, h)
		}
		if err == nil {
			err = rows.Err()
		}
	}
	if isCorrupt(err) {
		// A damaged page: the messages are read around it (Each).
		out = out[:0]
		for m, err := range s.Each(ctx, sessionID, from, to) {
			if err != nil {
				return nil, err
			}
			out = append(out, Head{Seq: m.Seq, Role: m.Role, Tokens: m.Tokens})
		}
		return out, nil
	}
	if err != nil {
		return nil, s.errorf("load message heads %d-%d of session %s: %w", from, to, sessionID, err)
	}
	return out, nil
}

// SummarizedThrough is the last seq an active summary of the session
// covers (0: none), read without decoding the summaries.
func (s *Store) SummarizedThrough(ctx context.Context, sessionID string) (int64, error) {
	var through int64
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(to_seq), 0) FROM summaries
		WHERE session_id = ? AND superseded_by IS NULL`, sessionID).Scan(&through); err != nil {
		return 0, s.errorf("load summaries of session %s: %w", sessionID, err)
	}
	return through, nil
}
