package session

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// FileName is the database file inside the data directory.
const FileName = "gencode.db"

// Store is the SQLite-backed session log. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string
	now  func() time.Time
	// forReading: ForReading was given; readOnly: the store was opened
	// read-only (writes fail with ErrReadOnly); notice: see Notice.
	forReading bool
	readOnly   bool
	notice     string
	leases     leases
	damage     damageLog
	// quickCheckMax: see damage.go.
	quickCheckMax int64
	// classifier is the view policy's rule for the meter (WithClassifier).
	classifier Classifier
	// renderer renders summary blocks (WithRenderer).
	renderer Renderer
	// stmts are the statements it runs often, prepared once (stmts.go).
	stmts stmts
	// decoded: the messages' JSON columns decoded (decoded.go).
	decoded decoded
}

// Option configures a Store.
type Option func(*Store)

// WithClock injects the clock (tests).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// Open opens (creating if needed) the store in dir. The directory and the
// database file are made private (no group or other access): sessions hold
// code and output.
func Open(ctx context.Context, dir string, opts ...Option) (*Store, error) {
	s := &Store{path: filepath.Join(dir, FileName), now: time.Now, quickCheckMax: quickCheckMax}
	for _, o := range opts {
		o(s)
	}
	err := s.openWritable(ctx, dir)
	if err != nil {
		if !s.forReading || !readableAnyway(s.path, err) {
			return nil, err
		}
		if rerr := s.openReadOnly(ctx); rerr != nil {
			return nil, fmt.Errorf("%w (read-only: %v)", err, rerr)
		}
	}
	s.checkAtOpen(ctx)
	return s, nil
}

// ForReading is the Option of a command that only reads (sessions,
// history, export): when the data directory or the database cannot be
// written (a read-only directory, file or mount; a full disk), the store
// is opened read-only instead of failing. ReadOnly tells which it got.
func ForReading() Option { return func(s *Store) { s.forReading = true } }

// ReadOnly reports whether the store was opened read-only (ForReading).
func (s *Store) ReadOnly() bool { return s.readOnly }

// Notice says what a read-only store cannot show ("" when nothing): the
// latest changes, when they sit in a write-ahead log it cannot read.
func (s *Store) Notice() string { return s.notice }

func (s *Store) openWritable(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return classify(s.path, fmt.Errorf("create data dir %s: %w", dir, err))
	}
	if err := private(dir); err != nil {
		return classify(s.path, fmt.Errorf("make data dir %s private: %w", dir, err))
	}
	f, err := os.OpenFile(s.path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return classify(s.path, fmt.Errorf("open database %s: %w", s.path, err))
	}
	_ = f.Close()
	if err := private(s.path); err != nil {
		return classify(s.path, fmt.Errorf("make database %s private: %w", s.path, err))
	}
	dsn := "file:" + s.path + "?_txlock=immediate" +
		"&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return classify(s.path, fmt.Errorf("open database %s: %w", s.path, err))
	}
	s.db = db
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return classify(s.path, fmt.Errorf("migrate database %s: %w", s.path, err))
	}
	return nil
}

// private takes group and other access away from a file or directory; the
// owner's own bits stay as they are (a directory made read-only on
// purpose stays read-only).
func private(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return os.Chmod(path, perm&0o700)
	}
	return nil
}

// readableAnyway reports whether a database that could not be opened for
// writing (err) may still be read: it exists, and writing failed for want
// of permission or space.
func readableAnyway(path string, err error) bool {
	if fi, serr := os.Stat(path); serr != nil || fi.Size() == 0 {
		return false
	}
	return errors.Is(err, ErrReadOnly) || errors.Is(err, ErrDiskFull) || sqliteCode(err)&0xff == sqliteCantOpen
}

// openReadOnly opens the database without writing anything: no migration,
// no journal mode change, no file created. A write-ahead log with changes
// is read through its shared-memory file (read-only is enough); without
// one, the database is opened immutable (no locks, no shared memory),
// since nothing can change it: nobody can write in that directory.
func (s *Store) openReadOnly(ctx context.Context) error {
	base := "file:" + s.path + "?mode=ro&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"
	walBusy := false
	if fi, err := os.Stat(s.path + "-wal"); err == nil && fi.Size() > 0 {
		walBusy = true
	}
	var errs []error
	for _, immutable := range []bool{false, true} {
		if !immutable && !walBusy {
			continue
		}
		dsn := base
		if immutable {
			dsn += "&immutable=1"
		}
		db, err := sql.Open("sqlite", dsn)
		if err == nil {
			s.db = db
			if err = s.checkVersion(ctx); err == nil {
				s.readOnly = true
				if immutable && walBusy {
					s.notice = fmt.Sprintf("the latest changes, in %s-wal, cannot be read without %s-shm in a read-only directory", FileName, FileName)
				}
				return nil
			}
			_ = db.Close()
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkVersion is migrate for a read-only store: the schema must be this
// gencode's already.
func (s *Store) checkVersion(ctx context.Context) error {
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	switch {
	case version > len(migrations):
		return fmt.Errorf("schema version %d is newer than this gencode (%d): upgrade gencode", version, len(migrations))
	case version < len(migrations):
		return fmt.Errorf("schema version %d needs an upgrade, which needs write access: %w", version, ErrReadOnly)
	}
	return nil
}

// Path is the database file's path.
func (s *Store) Path() string { return s.path }

// DB exposes the database handle to packages that extend the store's schema
// through migrations registered here (recall's index). Callers must not
// write to the log tables.
func (s *Store) DB() *sql.DB { return s.db }

// Close releases the leases the Store holds and closes the database.
func (s *Store) Close() error {
	s.releaseAll()
	s.closeStmts()
	return s.db.Close()
}

// migrations are applied in order; PRAGMA user_version records how many ran.
var migrations = []string{
	`CREATE TABLE sessions (
		id            TEXT PRIMARY KEY,
		created_at    INTEGER NOT NULL,
		updated_at    INTEGER NOT NULL,
		cwd           TEXT NOT NULL,
		model         TEXT NOT NULL DEFAULT '',
		title         TEXT NOT NULL DEFAULT '',
		message_count INTEGER NOT NULL DEFAULT 0,
		last_seq      INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX sessions_by_cwd ON sessions(cwd, updated_at);
	CREATE TABLE messages (
		id           INTEGER PRIMARY KEY,
		session_id   TEXT NOT NULL REFERENCES sessions(id),
		seq          INTEGER NOT NULL,
		role         TEXT NOT NULL,
		content      TEXT NOT NULL,
		full_content TEXT,
		tool_calls   TEXT,
		tool_call_id TEXT NOT NULL DEFAULT '',
		name         TEXT NOT NULL DEFAULT '',
		tokens       INTEGER NOT NULL,
		created_at   INTEGER NOT NULL,
		meta         TEXT,
		UNIQUE(session_id, seq)
	);
	CREATE TABLE summaries (
		id            TEXT PRIMARY KEY,
		session_id    TEXT NOT NULL REFERENCES sessions(id),
		from_seq      INTEGER NOT NULL,
		to_seq        INTEGER NOT NULL,
		created_at    INTEGER NOT NULL,
		superseded_by TEXT,
		data          TEXT NOT NULL
	);
	CREATE INDEX summaries_by_session ON summaries(session_id, from_seq);
	CREATE TABLE deletions (
		session_id TEXT NOT NULL,
		summary_id TEXT NOT NULL,
		from_seq   INTEGER NOT NULL,
		to_seq     INTEGER NOT NULL,
		messages   INTEGER NOT NULL,
		deleted_at INTEGER NOT NULL
	);`,
	searchSchema(), // search.go: the full-text index, filled later by CatchUpIndex
	usageSchema,    // usage.go: what each model request used
	tallySchema,    // tally.go: what the context meter sums
	noOutputSchema, // tally.go: results with no output
	rewindSchema,   // rewind.go: rewinds of the view
	countSchema,    // tokencache.go: counts of the texts every request repeats
	promptSchema,   // prompts.go: the messages the user sent, for Up
	roleSumSchema,  // tally.go: the user's and assistant's running sums, for /context
	blockSchema,    // the summaries' rendered blocks (WithRenderer)
}

// blockSchema is the migration that keeps each summary's block as the
// view renders it, with the renderer's form (WithRenderer), and its head
// (summaryHead, JSON): rendering a long summary and decoding its record
// were most of what loading a compacted session's view cost. NULL: not
// rendered yet (a summary stored before, or by a store without the
// renderer); LoadView renders it then.
const blockSchema = `ALTER TABLE summaries ADD COLUMN block TEXT;
	ALTER TABLE summaries ADD COLUMN block_form TEXT;
	ALTER TABLE summaries ADD COLUMN head TEXT;`

// Renderer renders a summary's block as the view shows it to the model
// (view.RenderSummary); Form names its output (view.BlockForm): a block
// stored by a renderer of another form is rendered again.
type Renderer struct {
	Form   string
	Render func(Summary) string
}

// WithRenderer gives the store the view's renderer of summary blocks:
// ApplySummary stores each summary's block with it and LoadView returns
// them (View.Blocks).
func WithRenderer(r Renderer) Option { return func(s *Store) { s.renderer = r } }

func (s *Store) migrate(ctx context.Context) error {
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if version > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this gencode (%d): upgrade gencode", version, len(migrations))
	}
	if version == len(migrations) {
		return nil
	}
	// The pending migrations go in one transaction (a new store's
	// schema too): a commit for each (a WAL sync, the schema read again)
	// was a quarter of the CPU creating a store cost (BenchmarkOpen/New).
	// A failure leaves the store as it was before them all.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin migration %d: %w", version+1, err)
	}
	// Read again under the write lock: another gencode opening the same
	// new store may have migrated it meanwhile.
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("read schema version: %w", err)
	}
	if version >= len(migrations) {
		_ = tx.Rollback()
		if version > len(migrations) {
			return fmt.Errorf("schema version %d is newer than this gencode (%d): upgrade gencode", version, len(migrations))
		}
		return nil
	}
	if version == 0 {
		// A new store is created from the final schema in one script:
		// migrating it step by step had SQLite parse the whole schema
		// again after each ALTER TABLE, most of what a first run's open
		// cost. A store at version 0 that has tables (not one gencode
		// made) goes through the migrations as before.
		var tables int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("read schema: %w", err)
		}
		if tables == 0 {
			if _, err := tx.ExecContext(ctx, freshSchema); err != nil {
				_ = tx.Rollback()
				return fmt.Errorf("create schema %d: %w", freshVersion, err)
			}
			version = freshVersion
		}
	}
	for i := version; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("record migration %d: %w", len(migrations), err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migrations %d-%d: %w", version+1, len(migrations), err)
	}
	return nil
}

func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func unixMilli(t time.Time) int64  { return t.UnixMilli() }
func fromMilli(ms int64) time.Time { return time.UnixMilli(ms) }

// CreateSession starts a new, empty session for a working directory.
func (s *Store) CreateSession(ctx context.Context, cwd, model string) (Session, error) {
	now := s.now()
	sess := Session{ID: newID(), Created: now, Updated: now, Cwd: cwd, Model: model}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO sessions(id, created_at, updated_at, cwd, model) VALUES(?,?,?,?,?)`,
		sess.ID, unixMilli(now), unixMilli(now), cwd, model)
	if err != nil {
		return Session{}, s.errorf("create session: %w", err)
	}
	return sess, nil
}

const sessionCols = `id, created_at, updated_at, cwd, model, title, message_count, last_seq`

func scanSession(row interface{ Scan(...any) error }) (Session, error) {
	var sess Session
	var created, updated int64
	err := row.Scan(&sess.ID, &created, &updated, &sess.Cwd, &sess.Model, &sess.Title, &sess.MessageCount, &sess.LastSeq)
	sess.Created, sess.Updated = fromMilli(created), fromMilli(updated)
	return sess, err
}

// Session finds a session by id or by a unique id prefix.
func (s *Store) Session(ctx context.Context, id string) (Session, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return Session{}, s.errorf("session %q: %w", id, ErrNotFound)
	}
	// A whole id (every turn's lookups) is found by the primary key; only
	// a prefix is looked for among all the sessions.
	sess, err := scanSession(s.queryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	switch {
	case err == nil:
		return sess, nil
	case !errors.Is(err, sql.ErrNoRows):
		return Session{}, s.errorf("find session %s: %w", id, err)
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT `+sessionCols+` FROM sessions WHERE substr(id, 1, ?) = ? LIMIT 2`, len(id), id)
	if err != nil {
		return Session{}, s.errorf("find session %s: %w", id, err)
	}
	defer rows.Close()
	var found []Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return Session{}, s.errorf("find session %s: %w", id, err)
		}
		found = append(found, sess)
	}
	if err := rows.Err(); err != nil {
		return Session{}, s.errorf("find session %s: %w", id, err)
	}
	switch {
	case len(found) == 0:
		return Session{}, s.errorf("session %s: %w", id, ErrNotFound)
	case len(found) > 1:
		return Session{}, s.ambiguous(ctx, id)
	}
	return found[0], nil
}

// ambiguous lists the sessions an id prefix matches, for the error.
func (s *Store) ambiguous(ctx context.Context, prefix string) error {
	e := &AmbiguousError{Prefix: prefix}
	rows, err := s.db.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE substr(id, 1, ?) = ?
		ORDER BY updated_at DESC, rowid DESC LIMIT ?`, len(prefix), prefix, MaxAmbiguous+1)
	if err != nil {
		return s.errorf("find sessions %s: %w", prefix, err)
	}
	defer rows.Close()
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return s.errorf("find sessions %s: %w", prefix, err)
		}
		e.Matches = append(e.Matches, sess)
	}
	if err := rows.Err(); err != nil {
		return s.errorf("find sessions %s: %w", prefix, err)
	}
	if len(e.Matches) > MaxAmbiguous {
		e.Matches, e.More = e.Matches[:MaxAmbiguous], true
	}
	return e
}

// LatestSession is the most recently updated session of a working directory.
func (s *Store) LatestSession(ctx context.Context, cwd string) (Session, error) {
	sess, err := scanSession(s.db.QueryRowContext(ctx,
		`SELECT `+sessionCols+` FROM sessions WHERE cwd = ? ORDER BY updated_at DESC, rowid DESC LIMIT 1`, cwd))
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, s.errorf("no session in %s: %w", cwd, ErrNotFound)
	}
	if err != nil {
		return Session{}, s.errorf("find latest session in %s: %w", cwd, err)
	}
	return sess, nil
}

// Sessions lists sessions, most recently updated first.
func (s *Store) Sessions(ctx context.Context, limit int) ([]Session, error) {
	if limit <= 0 {
		limit = 1 << 30
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT `+sessionCols+` FROM sessions ORDER BY updated_at DESC, rowid DESC LIMIT ?`, limit)
	if err != nil {
		return nil, s.errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, s.errorf("list sessions: %w", err)
		}
		out = append(out, sess)
	}
	if err := rows.Err(); err != nil {
		return nil, s.errorf("list sessions: %w", err)
	}
	return out, nil
}

// SetTitle names a session (the first user request, usually).
func (s *Store) SetTitle(ctx context.Context, id, title string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sessions SET title = ? WHERE id = ?`, title, id)
	if err != nil {
		return s.errorf("set title of session %s: %w", id, err)
	}
	return nil
}

// SetModel records the model a session now uses.
func (s *Store) SetModel(ctx context.Context, id, model string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sessions SET model = ? WHERE id = ?`, model, id)
	if err != nil {
		return s.errorf("set model of session %s: %w", id, err)
	}
	return nil
}

// Append adds messages to the end of a session's log in one transaction and
// returns them with their sequence numbers and times set. Its cost does not
// depend on the session's length.
func (s *Store) Append(ctx context.Context, sessionID string, msgs ...Message) ([]Message, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.errorf("append to session %s: %w", sessionID, err)
	}
	defer func() { _ = tx.Rollback() }()
	q := inTx{s, tx}
	var last int64
	if err := q.QueryRowContext(ctx, `SELECT last_seq FROM sessions WHERE id = ?`, sessionID).Scan(&last); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, s.errorf("append to session %s: %w", sessionID, ErrNotFound)
		}
		return nil, s.errorf("append to session %s: %w", sessionID, err)
	}
	// How each message pairs with those before it (tally.go): unknown
	// while the log holds messages not classified yet.
	l, known, err := linkAfter(ctx, q, sessionID, last)
	if err != nil {
		return nil, s.errorf("append to session %s: %w", sessionID, err)
	}
	stmt, err := s.txStmt(ctx, tx, `INSERT INTO messages
		(session_id, seq, role, content, full_content, tool_calls, tool_call_id, name, tokens, created_at, meta,
		`+tallyCols+`)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return nil, s.errorf("append to session %s: %w", sessionID, err)
	}
	now := s.now()
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		last++
		m.Seq = last
		if m.Time.IsZero() {
			m.Time = now
		}
		calls, meta, err := encodeExtras(m)
		if err != nil {
			return nil, s.errorf("append to session %s: %w", sessionID, err)
		}
		var full any
		if m.Full != "" {
			full = m.Full
		}
		var c classification
		if known && s.classifier != nil {
			if c, err = l.classify(ctx, q, s.classifier, sessionID, m.Seq, m); err != nil {
				return nil, s.errorf("append message %d to session %s: %w", m.Seq, sessionID, err)
			}
		}
		m.MaskTokens = 0 // counted by the view policy when it masks it
		if _, err := stmt.ExecContext(ctx, sessionID, m.Seq, string(m.Role), m.Content, full, calls,
			m.ToolCallID, m.Name, m.Tokens, unixMilli(m.Time), meta, c.plain, c.pending, c.callSeq, c.dupSeq,
			c.cumTokens, c.cumTools, c.cumToolTokens, c.cumUser, c.cumAssistant); err != nil {
			return nil, s.errorf("append message %d to session %s: %w", m.Seq, sessionID, err)
		}
		out[i] = m
	}
	if _, err := q.ExecContext(ctx,
		`UPDATE sessions SET last_seq = ?, message_count = message_count + ?, updated_at = ? WHERE id = ?`,
		last, len(msgs), unixMilli(now), sessionID); err != nil {
		return nil, s.errorf("append to session %s: %w", sessionID, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, s.errorf("append to session %s: %w", sessionID, err)
	}
	return out, nil
}

func encodeExtras(m Message) (calls, meta any, err error) {
	if len(m.ToolCalls) > 0 {
		b, err := json.Marshal(m.ToolCalls)
		if err != nil {
			return nil, nil, fmt.Errorf("encode tool calls: %w", err)
		}
		calls = string(b)
	}
	if !m.Meta.IsZero() {
		b, err := json.Marshal(m.Meta)
		if err != nil {
			return nil, nil, fmt.Errorf("encode meta: %w", err)
		}
		meta = string(b)
	}
	return calls, meta, nil
}

const messageCols = `seq, role, content, full_content, tool_calls, tool_call_id, name, tokens, created_at, meta, mask_tokens`

func (s *Store) scanMessage(row interface{ Scan(...any) error }) (Message, error) {
	var m Message
	var role string
	var full, calls, meta sql.NullString
	var created int64
	var masked sql.NullInt64
	if err := row.Scan(&m.Seq, &role, &m.Content, &full, &calls, &m.ToolCallID, &m.Name, &m.Tokens, &created, &meta, &masked); err != nil {
		return Message{}, err
	}
	m.MaskTokens = int(masked.Int64)
	m.Role = Role(role)
	m.Full = full.String
	m.Time = fromMilli(created)
	var err error
	if calls.Valid && calls.String != "" {
		if m.ToolCalls, err = s.decoded.toolCalls(calls.String); err != nil {
			return Message{}, fmt.Errorf("decode tool calls of message %d: %w", m.Seq, err)
		}
	}
	if meta.Valid && meta.String != "" {
		if m.Meta, err = s.decoded.meta(meta.String); err != nil {
			return Message{}, fmt.Errorf("decode meta of message %d: %w", m.Seq, err)
		}
	}
	return m, nil
}

func (s *Store) queryMessages(ctx context.Context, query string, args ...any) ([]Message, error) {
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		m, err := s.scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Messages returns the log's messages with from <= seq <= to, in order;
// to <= 0 means to the end.
func (s *Store) Messages(ctx context.Context, sessionID string, from, to int64) ([]Message, error) {
	if to <= 0 {
		to = 1<<62 - 1
	}
	msgs, err := s.readMessages(ctx, sessionID, from, to, `SELECT `+messageCols+` FROM messages
		WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq`, sessionID, from, to)
	if err != nil {
		return nil, s.errorf("load messages %d-%d of session %s: %w", from, to, sessionID, err)
	}
	return msgs, nil
}

// Tail returns the last n messages of the log, in order.
func (s *Store) Tail(ctx context.Context, sessionID string, n int) ([]Message, error) {
	return s.TailAfter(ctx, sessionID, 0, n)
}

// Summaries returns a session's summaries ordered by range. With all false
// only the active ones (not merged into a later summary) are returned.
func (s *Store) Summaries(ctx context.Context, sessionID string, all bool) ([]Summary, error) {
	q := `SELECT id, data, superseded_by, NULL, NULL FROM summaries WHERE session_id = ?`
	if !all {
		q += ` AND superseded_by IS NULL`
	}
	sums, _, err := s.summaries(ctx, q+` ORDER BY from_seq, created_at`, sessionID, whole)
	return sums, err
}

// loading says how summaries are loaded (Store.summaries).
type loading int

const (
	whole      loading = iota // the records, no blocks
	withBlocks                // the records and their blocks
	heads                     // the blocks, and of a summary with one only its head
)

// activeSummaries are a session's active summaries, ordered by range, with
// their blocks (View.Blocks) when the store has a renderer: how says
// whether with their facts (withBlocks, heads).
func (s *Store) activeSummaries(ctx context.Context, sessionID string, how loading) ([]Summary, map[string]string, error) {
	if s.renderer.Render == nil {
		how = whole
	}
	// With heads, a summary whose block is stored is read by its head.
	return s.summaries(ctx, `SELECT id, CASE WHEN ?2 AND block_form = ?3 AND head IS NOT NULL THEN head ELSE data END,
		superseded_by, block, block_form FROM summaries
		WHERE session_id = ?1 AND superseded_by IS NULL ORDER BY from_seq, created_at`, sessionID, how, how == heads, s.renderer.Form)
}

// summaryHead is what a request needs of a summary besides its block
// (RequestView): its range, the limits it was rendered with and the
// count of its block. It is stored with the block (the head column).
type summaryHead struct {
	ID          string    `json:"id"`
	SessionID   string    `json:"session_id"`
	FromSeq     int64     `json:"from_seq"`
	ToSeq       int64     `json:"to_seq"`
	GeneratedAt time.Time `json:"generated_at"`
	Model       string    `json:"model"`
	Fallback    bool      `json:"fallback"`
	TokenCount  int       `json:"token_count"`
	TokenKey    string    `json:"token_key,omitempty"`
	RenderChars int       `json:"render_chars,omitempty"`
	KeepChars   int       `json:"keep_chars,omitempty"`
}

// headOf is s's head.
func headOf(s Summary) summaryHead {
	return summaryHead{ID: s.ID, SessionID: s.SessionID, FromSeq: s.FromSeq, ToSeq: s.ToSeq, GeneratedAt: s.GeneratedAt,
		Model: s.Model, Fallback: s.Fallback, TokenCount: s.TokenCount, TokenKey: s.TokenKey,
		RenderChars: s.RenderChars, KeepChars: s.KeepChars}
}

// summary is the summary h is the head of, without its facts.
func (h summaryHead) summary() Summary {
	return Summary{ID: h.ID, SessionID: h.SessionID, FromSeq: h.FromSeq, ToSeq: h.ToSeq, GeneratedAt: h.GeneratedAt,
		Model: h.Model, Fallback: h.Fallback, TokenCount: h.TokenCount, TokenKey: h.TokenKey,
		RenderChars: h.RenderChars, KeepChars: h.KeepChars}
}

// summaries runs q, a query of summaries' id, data, superseded_by, block
// and block_form, and returns them, with (but for whole) their blocks in
// this store's renderer's form (nil when there are none). A summary whose
// block is missing (stored before the block was, or by a store without
// the renderer) or of another form is rendered, and the block is kept for
// the next process when the store can be written (best effort: it is
// rendered again otherwise). With heads, a summary whose block is stored
// is decoded without its facts (summaryHead).
func (s *Store) summaries(ctx context.Context, q string, sessionID string, how loading, args ...any) ([]Summary, map[string]string, error) {
	rows, err := s.query(ctx, q, append([]any{sessionID}, args...)...)
	if err != nil {
		return nil, nil, s.errorf("load summaries of session %s: %w", sessionID, err)
	}
	defer rows.Close()
	var out []Summary
	var blocks map[string]string
	var stale []string
	for rows.Next() {
		var id string
		var data []byte
		var sup, block, form sql.NullString
		if err := rows.Scan(&id, &data, &sup, &block, &form); err != nil {
			return nil, nil, s.errorf("load summaries of session %s: %w", sessionID, err)
		}
		stored := how != whole && block.Valid && form.String == s.renderer.Form
		var sum Summary
		if stored && how == heads {
			var h summaryHead
			if err := json.Unmarshal(data, &h); err != nil {
				return nil, nil, s.errorf("decode summary of session %s: %w", sessionID, err)
			}
			sum = h.summary()
		} else if sum, err = s.decoded.summary(data); err != nil {
			return nil, nil, s.errorf("decode summary of session %s: %w", sessionID, err)
		}
		sum.SupersededBy = sup.String
		out = append(out, sum)
		switch {
		case how == whole || sum.ID != id:
		case stored:
			if blocks == nil {
				blocks = map[string]string{}
			}
			blocks[id] = block.String
		default:
			stale = append(stale, id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, s.errorf("load summaries of session %s: %w", sessionID, err)
	}
	rows.Close()
	for _, sum := range out {
		if !slices.Contains(stale, sum.ID) {
			continue
		}
		if blocks == nil {
			blocks = map[string]string{}
		}
		block := s.renderer.Render(sum)
		blocks[sum.ID] = block
		if head, err := json.Marshal(headOf(sum)); err == nil && !s.readOnly {
			_, _ = s.db.ExecContext(ctx, `UPDATE summaries SET block = ?, block_form = ?, head = ? WHERE id = ?`,
				block, s.renderer.Form, string(head), sum.ID)
		}
	}
	return out, blocks, nil
}

// ApplySummary stores a summary in one transaction. The summaries named in
// replaces (a merge) are marked superseded by it; any other active summary
// overlapping its range makes it fail with ErrRangeTaken, so a background
// summary that lost a race is discarded rather than applied twice. With
// deleteOriginals the covered messages' text is dropped from the log and the
// deletion is recorded.
func (s *Store) ApplySummary(ctx context.Context, sum Summary, replaces []string, deleteOriginals bool) (Summary, error) {
	if sum.FromSeq < 1 || sum.ToSeq < sum.FromSeq {
		return Summary{}, s.errorf("apply summary: bad range %d-%d", sum.FromSeq, sum.ToSeq)
	}
	if sum.ID == "" {
		sum.ID = newID()
	}
	if sum.GeneratedAt.IsZero() {
		sum.GeneratedAt = s.now()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Summary{}, s.errorf("apply summary %s: %w", sum.ID, err)
	}
	defer func() { _ = tx.Rollback() }()
	var lastSeq int64
	if err := tx.QueryRowContext(ctx, `SELECT last_seq FROM sessions WHERE id = ?`, sum.SessionID).Scan(&lastSeq); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Summary{}, s.errorf("apply summary: session %s: %w", sum.SessionID, ErrNotFound)
		}
		return Summary{}, s.errorf("apply summary %s: %w", sum.ID, err)
	}
	if sum.ToSeq > lastSeq {
		return Summary{}, s.errorf("apply summary: range %d-%d is past the log's end %d", sum.FromSeq, sum.ToSeq, lastSeq)
	}
	replaced := map[string]bool{}
	for _, id := range replaces {
		replaced[id] = true
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM summaries WHERE session_id = ? AND superseded_by IS NULL
		AND from_seq <= ? AND to_seq >= ?`, sum.SessionID, sum.ToSeq, sum.FromSeq)
	if err != nil {
		return Summary{}, s.errorf("apply summary %s: %w", sum.ID, err)
	}
	var overlapping []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return Summary{}, s.errorf("apply summary %s: %w", sum.ID, err)
		}
		overlapping = append(overlapping, id)
	}
	rows.Close()
	for _, id := range overlapping {
		if !replaced[id] {
			return Summary{}, s.errorf("apply summary %d-%d: overlaps summary %s: %w", sum.FromSeq, sum.ToSeq, id, ErrRangeTaken)
		}
	}
	for id := range replaced {
		res, err := tx.ExecContext(ctx, `UPDATE summaries SET superseded_by = ? WHERE id = ? AND session_id = ? AND superseded_by IS NULL`,
			sum.ID, id, sum.SessionID)
		if err != nil {
			return Summary{}, s.errorf("apply summary %s: supersede %s: %w", sum.ID, id, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return Summary{}, s.errorf("apply summary %s: summary %s is not active: %w", sum.ID, id, ErrRangeTaken)
		}
	}
	sum.SupersededBy = ""
	data, err := json.Marshal(sum)
	if err != nil {
		return Summary{}, s.errorf("encode summary %s: %w", sum.ID, err)
	}
	// The block is rendered from the record as stored (and as LoadView
	// will decode it), so that no process renders it again.
	var block, form, head any
	if s.renderer.Render != nil {
		var stored Summary
		if err := json.Unmarshal(data, &stored); err != nil {
			return Summary{}, s.errorf("encode summary %s: %w", sum.ID, err)
		}
		h, err := json.Marshal(headOf(stored))
		if err != nil {
			return Summary{}, s.errorf("encode summary %s: %w", sum.ID, err)
		}
		block, form, head = s.renderer.Render(stored), s.renderer.Form, string(h)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO summaries(id, session_id, from_seq, to_seq, created_at, data, block, block_form, head)
		VALUES(?,?,?,?,?,?,?,?,?)`, sum.ID, sum.SessionID, sum.FromSeq, sum.ToSeq, unixMilli(sum.GeneratedAt), string(data), block, form, head); err != nil {
		return Summary{}, s.errorf("store summary %s: %w", sum.ID, err)
	}
	if deleteOriginals {
		meta := `json_set(coalesce(meta, '{}'), '$.deleted', json('true'))`
		res, err := tx.ExecContext(ctx, `UPDATE messages SET content = '[deleted: summarized by `+sum.ID+`]',
			full_content = NULL, meta = `+meta+`, plain = 0 WHERE session_id = ? AND seq BETWEEN ? AND ?`,
			sum.SessionID, sum.FromSeq, sum.ToSeq)
		if err != nil {
			return Summary{}, s.errorf("delete originals of summary %s: %w", sum.ID, err)
		}
		n, _ := res.RowsAffected()
		if _, err := tx.ExecContext(ctx, `INSERT INTO deletions(session_id, summary_id, from_seq, to_seq, messages, deleted_at)
			VALUES(?,?,?,?,?,?)`, sum.SessionID, sum.ID, sum.FromSeq, sum.ToSeq, n, unixMilli(s.now())); err != nil {
			return Summary{}, s.errorf("record deletion for summary %s: %w", sum.ID, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET updated_at = ? WHERE id = ?`, unixMilli(s.now()), sum.SessionID); err != nil {
		return Summary{}, s.errorf("apply summary %s: %w", sum.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return Summary{}, s.errorf("apply summary %s: %w", sum.ID, err)
	}
	return sum, nil
}

// Deletion is one recorded removal of original messages (audit trail).
type Deletion struct {
	SummaryID      string
	FromSeq, ToSeq int64
	Messages       int
	At             time.Time
}

// Deletions lists the audit trail of deleted originals.
func (s *Store) Deletions(ctx context.Context, sessionID string) ([]Deletion, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT summary_id, from_seq, to_seq, messages, deleted_at
		FROM deletions WHERE session_id = ? ORDER BY deleted_at`, sessionID)
	if err != nil {
		return nil, s.errorf("load deletions of session %s: %w", sessionID, err)
	}
	defer rows.Close()
	var out []Deletion
	for rows.Next() {
		var d Deletion
		var at int64
		if err := rows.Scan(&d.SummaryID, &d.FromSeq, &d.ToSeq, &d.Messages, &at); err != nil {
			return nil, s.errorf("load deletions of session %s: %w", sessionID, err)
		}
		d.At = fromMilli(at)
		out = append(out, d)
	}
	return out, rows.Err()
}

// View is the data the context sent to the model is built from: the active
// summaries and every message after the last summarized one.
type View struct {
	Session   Session
	Summaries []Summary
	Messages  []Message
	// Blocks are the active summaries' blocks by summary id, as the
	// store's renderer renders them (WithRenderer): stored with each
	// summary, so that a request reads its block instead of rendering it.
	// A summary not in it (none given, or a view built in memory) is
	// rendered by the view.
	Blocks map[string]string
}

// SummarizedThrough is the last seq covered by a summary (0 if none).
func (v View) SummarizedThrough() int64 {
	var last int64
	for _, s := range v.Summaries {
		last = max(last, s.ToSeq)
	}
	return last
}

// LoadView loads a session's view. Older messages stay on disk.
func (s *Store) LoadView(ctx context.Context, sessionID string) (View, error) {
	return s.loadView(ctx, sessionID, withBlocks)
}

// RequestView is LoadView for building requests (the agent's turn): a
// summary whose block is stored (View.Blocks) is given without its facts,
// only what the view needs besides the block (its range, the limits it
// was rendered with, its count), since decoding them was most of the
// cost of loading a compacted session's view. Whatever needs a summary's
// facts (compaction, merges, the chat) loads it with LoadView.
func (s *Store) RequestView(ctx context.Context, sessionID string) (View, error) {
	return s.loadView(ctx, sessionID, heads)
}

func (s *Store) loadView(ctx context.Context, sessionID string, how loading) (View, error) {
	sess, err := s.Session(ctx, sessionID)
	if err != nil {
		return View{}, err
	}
	sums, blocks, err := s.activeSummaries(ctx, sess.ID, how)
	if err != nil {
		return View{}, err
	}
	v := View{Session: sess, Summaries: sums, Blocks: blocks}
	msgs, err := s.Messages(ctx, sess.ID, v.SummarizedThrough()+1, 0)
	if err != nil {
		return View{}, err
	}
	if msgs, err = s.dropRewound(ctx, sess.ID, msgs); err != nil { // rewind.go
		return View{}, err
	}
	v.Messages = msgs
	return v, nil
}
