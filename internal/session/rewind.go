package session

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// rewindSchema records rewinds beside the log: the log keeps every
// message; a conversation rewind hides a range of it from the view, a
// summary rewind takes a summary out of it. A rewind undone (undone_at)
// no longer applies.
const rewindSchema = `CREATE TABLE IF NOT EXISTS rewinds (
	id         TEXT PRIMARY KEY,
	session_id TEXT NOT NULL REFERENCES sessions(id),
	from_seq   INTEGER NOT NULL DEFAULT 0,
	to_seq     INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	undone_at  INTEGER,
	data       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS rewinds_by_session ON rewinds(session_id, created_at);`

// Rewind kinds.
const (
	RewindTurn    = "turn"    // back to before a user turn: code, conversation or both
	RewindSummary = "summary" // a compaction undone: the summary leaves the view
	RewindUndo    = "undo"    // a rewind taken back
)

// ErrUndone means a rewind was already undone.
var ErrUndone = errors.New("rewind already undone")

// Rewind is one recorded rewind.
type Rewind struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	Kind      string `json:"kind"`
	// Turn is the user turn rewound to (RewindTurn): the state before it.
	Turn int `json:"turn,omitempty"`
	// FromSeq-ToSeq is the range of the log the conversation rewind took
	// out of the view (0-0: the conversation was kept).
	FromSeq int64 `json:"from_seq,omitempty"`
	ToSeq   int64 `json:"to_seq,omitempty"`
	// SummaryID is the summary a RewindSummary took out of the view.
	SummaryID string `json:"summary_id,omitempty"`
	// Summaries are the summaries this rewind made inactive (the view's
	// range went back before them); an undo makes them active again.
	Summaries []string `json:"summaries,omitempty"`
	// Code: the files were restored. CodeBefore is the kept state of the
	// working directory just before (an undo restores it), CodeTarget the
	// state restored; Changes what the restore did ("+ path", "~ path",
	// "- path").
	Code       bool     `json:"code,omitempty"`
	CodeBefore string   `json:"code_before,omitempty"`
	CodeTarget string   `json:"code_target,omitempty"`
	Changes    []string `json:"changes,omitempty"`
	// CodeAfter is the kept state of the working directory once the
	// restore was done: the files as gencode last left them.
	CodeAfter string `json:"code_after,omitempty"`
	// Undoes is the rewind an undo (Kind RewindUndo) took back.
	Undoes string `json:"undoes,omitempty"`
	// LogSeq is the log's last seq when the rewind was made.
	LogSeq int64 `json:"log_seq"`
	// Text is the rewound turn's request, to type again.
	Text     string    `json:"text,omitempty"`
	At       time.Time `json:"at"`
	UndoneAt time.Time `json:"undone_at,omitzero"`
}

// Active reports whether the rewind still applies.
func (r Rewind) Active() bool { return r.UndoneAt.IsZero() }

// Hides reports whether the rewind takes seq out of the view.
func (r Rewind) Hides(seq int64) bool {
	return r.Active() && r.FromSeq > 0 && seq >= r.FromSeq && seq <= r.ToSeq
}

func rewindMark(id string) string { return "rewind:" + id }

// RecordRewind stores r. A conversation range (FromSeq > 0) hides the
// log's messages from FromSeq to its current end, and makes the summaries
// that reach into it inactive; a RewindSummary makes SummaryID inactive.
// It returns r with its ID, time, range end and summaries set.
func (s *Store) RecordRewind(ctx context.Context, r Rewind) (Rewind, error) {
	if r.ID == "" {
		r.ID = newID()
	}
	r.At = s.now()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Rewind{}, s.errorf("rewind session %s: %w", r.SessionID, err)
	}
	defer func() { _ = tx.Rollback() }()
	var last int64
	if err := tx.QueryRowContext(ctx, `SELECT last_seq FROM sessions WHERE id = ?`, r.SessionID).Scan(&last); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Rewind{}, s.errorf("rewind session %s: %w", r.SessionID, ErrNotFound)
		}
		return Rewind{}, s.errorf("rewind session %s: %w", r.SessionID, err)
	}
	r.LogSeq = last
	var ids []string
	switch {
	case r.Kind == RewindSummary:
		ids = []string{r.SummaryID}
	case r.FromSeq > 0:
		r.ToSeq = last
		rows, err := tx.QueryContext(ctx, `SELECT id FROM summaries WHERE session_id = ? AND superseded_by IS NULL
			AND to_seq >= ?`, r.SessionID, r.FromSeq)
		if err != nil {
			return Rewind{}, s.errorf("rewind session %s: %w", r.SessionID, err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return Rewind{}, s.errorf("rewind session %s: %w", r.SessionID, err)
			}
			ids = append(ids, id)
		}
		rows.Close()
	}
	for _, id := range ids {
		res, err := tx.ExecContext(ctx, `UPDATE summaries SET superseded_by = ? WHERE id = ? AND session_id = ?
			AND superseded_by IS NULL`, rewindMark(r.ID), id, r.SessionID)
		if err != nil {
			return Rewind{}, s.errorf("rewind summary %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return Rewind{}, s.errorf("rewind summary %s: not an active summary of session %s: %w", id, r.SessionID, ErrNotFound)
		}
	}
	r.Summaries = ids
	data, err := json.Marshal(r)
	if err != nil {
		return Rewind{}, s.errorf("encode rewind: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO rewinds(id, session_id, from_seq, to_seq, created_at, data)
		VALUES(?,?,?,?,?,?)`, r.ID, r.SessionID, r.FromSeq, r.ToSeq, unixMilli(r.At), string(data)); err != nil {
		return Rewind{}, s.errorf("record rewind: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Rewind{}, s.errorf("record rewind: %w", err)
	}
	return r, nil
}

// UndoRewind marks a rewind undone: the messages it hid are back in the
// view and the summaries it made inactive are active again, unless a
// summary applied since covers their range (those stay out; their IDs
// are returned). The files are the caller's (Rewind.CodeBefore).
func (s *Store) UndoRewind(ctx context.Context, sessionID, id string) (Rewind, []string, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Rewind{}, nil, s.errorf("undo rewind %s: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()
	r, err := scanRewind(tx.QueryRowContext(ctx, `SELECT data, undone_at FROM rewinds WHERE session_id = ? AND id = ?`, sessionID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Rewind{}, nil, s.errorf("undo rewind %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Rewind{}, nil, s.errorf("undo rewind %s: %w", id, err)
	}
	if !r.Active() {
		return Rewind{}, nil, s.errorf("undo rewind %s: %w", id, ErrUndone)
	}
	var kept []string
	for _, sid := range r.Summaries {
		var from, to int64
		if err := tx.QueryRowContext(ctx, `SELECT from_seq, to_seq FROM summaries WHERE id = ?`, sid).Scan(&from, &to); err != nil {
			return Rewind{}, nil, s.errorf("undo rewind %s: summary %s: %w", id, sid, err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM summaries WHERE session_id = ? AND superseded_by IS NULL
			AND from_seq <= ? AND to_seq >= ?`, sessionID, to, from).Scan(&n); err != nil {
			return Rewind{}, nil, s.errorf("undo rewind %s: %w", id, err)
		}
		if n > 0 {
			kept = append(kept, sid)
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE summaries SET superseded_by = NULL WHERE id = ? AND superseded_by = ?`,
			sid, rewindMark(r.ID)); err != nil {
			return Rewind{}, nil, s.errorf("undo rewind %s: %w", id, err)
		}
	}
	r.UndoneAt = s.now()
	if _, err := tx.ExecContext(ctx, `UPDATE rewinds SET undone_at = ? WHERE id = ?`, unixMilli(r.UndoneAt), id); err != nil {
		return Rewind{}, nil, s.errorf("undo rewind %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return Rewind{}, nil, s.errorf("undo rewind %s: %w", id, err)
	}
	return r, kept, nil
}

func scanRewind(row interface{ Scan(...any) error }) (Rewind, error) {
	var data string
	var undone sql.NullInt64
	if err := row.Scan(&data, &undone); err != nil {
		return Rewind{}, err
	}
	var r Rewind
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		return Rewind{}, fmt.Errorf("decode rewind: %w", err)
	}
	if undone.Valid {
		r.UndoneAt = fromMilli(undone.Int64)
	}
	return r, nil
}

// Rewinds lists a session's rewinds, oldest first.
func (s *Store) Rewinds(ctx context.Context, sessionID string) ([]Rewind, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT data, undone_at FROM rewinds WHERE session_id = ? ORDER BY created_at, rowid`, sessionID)
	if err != nil {
		return nil, s.errorf("load rewinds of session %s: %w", sessionID, err)
	}
	defer rows.Close()
	var out []Rewind
	for rows.Next() {
		r, err := scanRewind(rows)
		if err != nil {
			return nil, s.errorf("load rewinds of session %s: %w", sessionID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Rewound says which seqs the session's active rewinds take out of the
// view (for /history --full's marks).
func (s *Store) Rewound(ctx context.Context, sessionID string) (func(seq int64) bool, error) {
	rs, err := s.Rewinds(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return func(seq int64) bool {
		for _, r := range rs {
			if r.Hides(seq) {
				return true
			}
		}
		return false
	}, nil
}

// Turn is one user request of a session's log and the tool calls that
// followed it up to the next one.
type Turn struct {
	N       int // 1-based, over the whole log
	Seq     int64
	LastSeq int64 // the last message before the next turn
	Text    string
	Time    time.Time
	Rewound bool // out of the view (a conversation rewind)
	// Unkept lists the turn's calls that may have changed files but kept
	// no checkpoint, each with why ("Bash (seq 12): ..."): a rewind
	// cannot restore what they did.
	Unkept []string
	// Checkpoints are the kept states around the turn's change-capable
	// calls, in order, each with the seq of the message holding it.
	Checkpoints []Checkpoint
}

// Turns lists a session's user turns, oldest first. A user message that
// only carries a "!command"'s output, or quoted context, is not a turn.
// The log is read a page at a time: only the turns are kept.
func (s *Store) Turns(ctx context.Context, sessionID string) ([]Turn, error) {
	hidden, err := s.Rewound(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	var out []Turn
	for m, err := range s.Each(ctx, sessionID, 1, 0) {
		if err != nil {
			return nil, err
		}
		if m.Role == RoleUser && !m.Meta.Shell && m.Meta.Quoted == "" {
			t := Turn{N: len(out) + 1, Seq: m.Seq, LastSeq: m.Seq, Text: m.Content, Time: m.Time, Rewound: hidden(m.Seq)}
			// The "!commands" run before it, whose output it carries.
			if cp := m.Meta.Checkpoint; cp != nil && cp.Err == "" {
				c := *cp
				c.Seq = m.Seq
				t.Checkpoints = []Checkpoint{c}
			} else if cp != nil {
				t.Unkept = append(t.Unkept, fmt.Sprintf("!command (message %d): %s", m.Seq, cp.Err))
			}
			out = append(out, t)
			continue
		}
		if len(out) == 0 {
			continue
		}
		t := &out[len(out)-1]
		t.LastSeq = m.Seq
		if cp := m.Meta.Checkpoint; cp != nil && cp.Err == "" {
			c := *cp
			c.Seq = m.Seq
			t.Checkpoints = append(t.Checkpoints, c)
		} else if why := unkept(m); why != "" {
			t.Unkept = append(t.Unkept, fmt.Sprintf("%s (message %d): %s", m.Name, m.Seq, why))
		}
	}
	return out, nil
}

// unkept says why a tool result that may have changed files kept no
// checkpoint ("" when it kept one, or could not have changed anything).
func unkept(m Message) string {
	if m.Role != RoleTool || m.Meta.Denied {
		return ""
	}
	ran := false
	switch m.Name {
	case "Write", "Edit":
		ran = !m.Meta.Failed
	case "Bash":
		ran = m.Meta.ExitCode != nil
	default:
		ran = m.Meta.Changes != nil
	}
	switch {
	case !ran:
		return ""
	case m.Meta.Checkpoint == nil:
		return "no checkpoint was kept (checkpoints off, or made before they existed)"
	default:
		return m.Meta.Checkpoint.Err
	}
}

// ViewMessages returns the log's messages with from <= seq <= to (to <= 0:
// to the end) that the view may show: those a conversation rewind took
// out are left out. A summary's originals are read with it, so that a
// rewound message never reaches a summary (its range may span the
// messages a rewind hid: it is chosen from the view).
func (s *Store) ViewMessages(ctx context.Context, sessionID string, from, to int64) ([]Message, error) {
	msgs, err := s.Messages(ctx, sessionID, from, to)
	if err != nil {
		return nil, err
	}
	return s.dropRewound(ctx, sessionID, msgs)
}

// dropRewound removes from msgs what the session's active rewinds hide.
func (s *Store) dropRewound(ctx context.Context, sessionID string, msgs []Message) ([]Message, error) {
	var n int
	if err := s.queryRow(ctx, `SELECT count(*) FROM rewinds WHERE session_id = ? AND undone_at IS NULL
		AND from_seq > 0`, sessionID).Scan(&n); err != nil {
		return nil, s.errorf("load rewinds of session %s: %w", sessionID, err)
	}
	if n == 0 {
		return msgs, nil
	}
	hidden, err := s.Rewound(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	out := msgs[:0:0]
	for _, m := range msgs {
		if !hidden(m.Seq) {
			out = append(out, m)
		}
	}
	return out, nil
}
