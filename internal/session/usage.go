package session

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The purposes a model request is made for.
const (
	UsageTurn    = "turn"    // the agent answering the user
	UsageSummary = "summary" // the summarizer compacting the session
)

// Usage is what one model request of a session used, as the provider
// counted it.
type Usage struct {
	// Purpose is UsageTurn or UsageSummary.
	Purpose string
	// Model is the model that answered (as the provider named it).
	Model string
	// TurnSeq is the seq of the user message whose turn made the request
	// (0 for a summary).
	TurnSeq int64
	// Input is the prompt tokens, Cached of them served from the
	// provider's prompt cache; Output the tokens it generated.
	Input, Cached, Output int
	At                    time.Time
}

// UsageTotal adds up a session's requests of one purpose and model.
type UsageTotal struct {
	Purpose, Model        string
	Requests              int
	Input, Cached, Output int
}

// usageSchema is the migration that adds the usage table: one row a
// request, so that a session's cost can be told per turn, per model and
// for the summarizer.
const usageSchema = `CREATE TABLE usage (
	id         INTEGER PRIMARY KEY,
	session_id TEXT NOT NULL REFERENCES sessions(id),
	at         INTEGER NOT NULL,
	purpose    TEXT NOT NULL,
	model      TEXT NOT NULL,
	turn_seq   INTEGER NOT NULL DEFAULT 0,
	input      INTEGER NOT NULL,
	cached     INTEGER NOT NULL,
	output     INTEGER NOT NULL
);
CREATE INDEX usage_by_session ON usage(session_id, turn_seq);`

// AddUsage records one request's usage for a session.
func (s *Store) AddUsage(ctx context.Context, sessionID string, u Usage) error {
	if u.At.IsZero() {
		u.At = s.now()
	}
	if _, err := s.db.ExecContext(ctx,
		`INSERT INTO usage(session_id, at, purpose, model, turn_seq, input, cached, output) VALUES(?,?,?,?,?,?,?,?)`,
		sessionID, unixMilli(u.At), u.Purpose, u.Model, u.TurnSeq, max(u.Input, 0), max(u.Cached, 0), max(u.Output, 0)); err != nil {
		return fmt.Errorf("record usage of session %s: %w", sessionID, err)
	}
	return nil
}

// UsageBySession adds up the usage of each session in ids, by purpose and
// model (turns first). A session without any has no entry.
func (s *Store) UsageBySession(ctx context.Context, ids ...string) (map[string][]UsageTotal, error) {
	out := map[string][]UsageTotal{}
	if len(ids) == 0 {
		return out, nil
	}
	q := `SELECT session_id, purpose, model, count(*), sum(input), sum(cached), sum(output) FROM usage
		WHERE session_id IN (?` + strings.Repeat(",?", len(ids)-1) + `)
		GROUP BY session_id, purpose, model ORDER BY session_id, purpose = 'summary', model`
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var t UsageTotal
		if err := rows.Scan(&id, &t.Purpose, &t.Model, &t.Requests, &t.Input, &t.Cached, &t.Output); err != nil {
			return nil, fmt.Errorf("read usage: %w", err)
		}
		out[id] = append(out[id], t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	return out, nil
}

// LastTurnUsage adds up, by model, the requests of the session's latest
// turn that made any; nil when there is none.
func (s *Store) LastTurnUsage(ctx context.Context, sessionID string) ([]UsageTotal, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT purpose, model, count(*), sum(input), sum(cached), sum(output) FROM usage
		WHERE session_id = ? AND purpose = ? AND turn_seq = (SELECT max(turn_seq) FROM usage WHERE session_id = ? AND purpose = ?)
		GROUP BY model ORDER BY model`, sessionID, UsageTurn, sessionID, UsageTurn)
	if err != nil {
		return nil, fmt.Errorf("read usage of session %s: %w", sessionID, err)
	}
	defer rows.Close()
	var out []UsageTotal
	for rows.Next() {
		var t UsageTotal
		if err := rows.Scan(&t.Purpose, &t.Model, &t.Requests, &t.Input, &t.Cached, &t.Output); err != nil {
			return nil, fmt.Errorf("read usage of session %s: %w", sessionID, err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read usage of session %s: %w", sessionID, err)
	}
	return out, nil
}
