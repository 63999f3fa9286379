package session

// Full-text search over the log.
//
// The index is an FTS5 table whose content is the log itself (external
// content, through the view message_search_docs), so no text is stored
// twice. Append never touches it: appends stay O(1) and as fast as without
// search. Instead an index watermark (message_search_state.indexed_through,
// a messages rowid) says how far the index goes, and CatchUpIndex indexes
// the rows after it in short batches, each one transaction that inserts the
// rows and moves the watermark together. A crash anywhere leaves the index
// equal to "every message up to the watermark", and the next catch-up goes
// on from there. Search catches up first, so every message is searchable;
// RunIndexer keeps the index warm in the background.
//
// FTS5's own 'rebuild' and content integrity-check cannot read the view
// (FTS5 prepares that full scan with SQLITE_PREPARE_NO_VTAB, and the view
// uses json_each); use RebuildIndex.
//
// Messages already indexed that change (delete_originals rewrites their
// text) or disappear are kept in step by UPDATE and DELETE triggers. Those
// never fire on Append.
//
// Tokenizer: unicode61 with diacritics removed and the default separators,
// so "_", "/", ".", "-" and ":" split words. "snake_case",
// "internal/session/store.go" and "fmt.Errorf" are found by any of their
// parts and, as phrases, whole. CamelCase words are single tokens
// ("handlerequest"): found whole, and by a leading part when nothing
// matches exactly, since Search then retries words of four or more
// letters as prefixes ("handle" finds handleRequest), but not by an inner
// part ("Request"). Measured on 20,000 1 KB messages: unicode61 indexes at
// ~100 us/message and adds ~0.6 KB/message; trigram (which finds any
// substring) costs 2.7x the time, 4.6x the space and 16x the query time,
// so it is not used. tokenchars '_' (snake_case as one token) measured the
// same and loses the parts, so it is not used either.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MatchOpen and MatchClose surround each matched word in Hit.Snippet.
// Front ends may replace them with their own highlighting.
const (
	MatchOpen  = "«"
	MatchClose = "»"
)

// Hit is one message that matched a search.
type Hit struct {
	SessionID string
	Seq       int64
	Role      Role
	Time      time.Time
	// ToolName names the tool of a tool result, or the tools an assistant
	// message called (comma-separated); "" otherwise.
	ToolName string
	// Snippet is a one-line excerpt around the best match, matches marked
	// with MatchOpen and MatchClose, cuts marked with "…".
	Snippet string
	// Partial is set when no message had every word of the query and the
	// hits are the messages with some of them.
	Partial bool
}

// SearchLimit bounds Search's limit.
const SearchLimit = 100

// maxTerms bounds the words of a query; the rest are ignored.
const maxTerms = 32

// snippetTokens is the snippet's length in tokens (FTS5 allows 1-64).
const snippetTokens = 16

// indexBatchRows and indexBatchBytes bound one catch-up transaction. An
// append waits for it (one writer at a time), so it must stay short.
// Measured on the 2-core test machine (busy), with ~1 KB messages: 16 rows
// take ~1 ms at the median and ~4 ms at p90 (64 rows: 3 and 25 ms), and
// index at ~160 us per message (64 rows: ~150 us).
const (
	indexBatchRows  = 16
	indexBatchBytes = 32 << 10
)

// docColumns is the SQL for the indexed columns (sid, body, tools) of a
// messages row whose columns are named with prefix p ("" in the view,
// "old." in triggers). Both places must produce the same text: FTS5
// removes a row from an external-content index by re-tokenizing the text it
// indexed. Never edit it once released; add a migration instead.
//
//   - sid: the session id, so that the session filter is part of the match;
//   - body: the whole text (full_content when content was capped);
//   - tools: the tool name of a result, and of an assistant message the
//     called tools' names and argument values (JSON decoded), and the file,
//     command or pattern recorded in meta.
func docColumns(p string) string {
	args := `json_extract(c.value, '$.arguments')`
	return p + `session_id, coalesce(nullif(` + p + `full_content, ''), ` + p + `content), trim(` +
		p + `name || ' ' || CASE WHEN json_valid(` + p + `tool_calls) THEN coalesce((
			SELECT group_concat(coalesce(json_extract(c.value, '$.name'), '') || ' ' ||
				CASE WHEN json_valid(` + args + `) THEN coalesce((
					SELECT group_concat(a.atom, ' ') FROM json_tree(` + args + `) AS a
					WHERE a.atom IS NOT NULL AND a.type NOT IN ('null', 'true', 'false')), '')
				ELSE coalesce(` + args + `, '') END, ' ')
			FROM json_each(` + p + `tool_calls) AS c), '') ELSE '' END
		|| ' ' || CASE WHEN json_valid(` + p + `meta) THEN
			coalesce(json_extract(` + p + `meta, '$.file_path'), '') || ' ' ||
			coalesce(json_extract(` + p + `meta, '$.command'), '') || ' ' ||
			coalesce(json_extract(` + p + `meta, '$.pattern'), '') ELSE '' END)`
}

// searchTable creates the index itself, empty (the migration, and the
// rebuild of a damaged one).
const searchTable = `CREATE VIRTUAL TABLE message_search USING fts5(sid, body, tools,
		content = 'message_search_docs', content_rowid = 'id',
		tokenize = 'unicode61 remove_diacritics 2');
	INSERT INTO message_search(message_search, rank) VALUES('rank', 'bm25(0.0, 1.0, 0.5)');`

// searchSchema is the migration that adds the index, empty: opening an
// existing database stays fast, and catch-up fills the index later.
func searchSchema() string {
	return `CREATE VIEW message_search_docs(id, sid, body, tools) AS
		SELECT id, ` + docColumns("") + ` FROM messages;
	` + searchTable + `
	CREATE TABLE message_search_state (
		id              INTEGER PRIMARY KEY CHECK (id = 1),
		indexed_through INTEGER NOT NULL -- every message with rowid <= this is indexed
	);
	INSERT INTO message_search_state VALUES (1, 0);
	CREATE TRIGGER message_search_update
	AFTER UPDATE OF id, session_id, content, full_content, tool_calls, name, meta ON messages
	WHEN old.id <= (SELECT indexed_through FROM message_search_state)
	BEGIN
		INSERT INTO message_search(message_search, rowid, sid, body, tools)
			SELECT 'delete', old.id, ` + docColumns("old.") + `;
		INSERT INTO message_search(rowid, sid, body, tools)
			SELECT id, sid, body, tools FROM message_search_docs
			WHERE id = new.id AND new.id <= (SELECT indexed_through FROM message_search_state);
	END;
	CREATE TRIGGER message_search_delete AFTER DELETE ON messages
	WHEN old.id <= (SELECT indexed_through FROM message_search_state)
	BEGIN
		INSERT INTO message_search(message_search, rowid, sid, body, tools)
			SELECT 'delete', old.id, ` + docColumns("old.") + `;
		-- A new row reuses the largest rowid + 1: keep it above the watermark.
		UPDATE message_search_state SET indexed_through = (SELECT coalesce(max(id), 0) FROM messages)
			WHERE indexed_through > (SELECT coalesce(max(id), 0) FROM messages);
	END;`
}

// IndexBacklog is how many messages are not indexed yet.
func (s *Store) IndexBacklog(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM messages
		WHERE id > (SELECT indexed_through FROM message_search_state)`).Scan(&n)
	if err != nil {
		return 0, s.errorf("count unindexed messages: %w", err)
	}
	return n, nil
}

// CatchUpIndex indexes every message appended since the last catch-up, in
// short transactions so that appends are not held up, and returns how many
// it indexed. It is safe to run concurrently, from several processes too:
// each batch reads the watermark inside its write transaction.
func (s *Store) CatchUpIndex(ctx context.Context) (int, error) { return s.catchUp(ctx, false) }

// catchUp indexes batch after batch until the index is caught up. With
// yield it stops as soon as a message is appended meanwhile: the
// background indexer gives way to a session that is writing.
func (s *Store) catchUp(ctx context.Context, yield bool) (int, error) {
	if s.readOnly {
		return 0, nil // searches see what is indexed already
	}
	total := 0
	start := int64(-1)
	for {
		if err := ctx.Err(); err != nil {
			return total, s.errorf("index messages: %w", err)
		}
		top, through, err := s.indexState(ctx)
		if err != nil || top <= through {
			return total, err
		}
		if start < 0 {
			start = top
		} else if yield && top != start {
			return total, nil
		}
		n, err := s.indexBatch(ctx, indexBatchRows, indexBatchBytes)
		total += n
		if err != nil {
			return total, err
		}
	}
}

// indexState reads, without taking the write lock, the last message's
// rowid and the watermark.
func (s *Store) indexState(ctx context.Context) (top, through int64, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT (SELECT coalesce(max(id), 0) FROM messages),
		(SELECT indexed_through FROM message_search_state)`).Scan(&top, &through)
	if err != nil {
		return 0, 0, s.errorf("read index watermark: %w", err)
	}
	return top, through, nil
}

// indexBatch indexes the next rows after the watermark, up to maxRows
// rows or maxBytes of text (at least one row), and moves the watermark in
// the same transaction.
func (s *Store) indexBatch(ctx context.Context, maxRows int, maxBytes int64) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (see Open): one writer
	if err != nil {
		return 0, s.errorf("index messages: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var from int64
	if err := tx.QueryRowContext(ctx, `SELECT indexed_through FROM message_search_state`).Scan(&from); err != nil {
		return 0, s.errorf("index messages: read watermark: %w", err)
	}
	through, n, err := batchAfter(ctx, tx, from, maxRows, maxBytes)
	if isCorrupt(err) {
		return s.indexAroundDamage(ctx, tx, from, maxRows)
	}
	if err != nil {
		return 0, s.errorf("index messages after %d: %w", from, err)
	}
	if n == 0 {
		return 0, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO message_search(rowid, sid, body, tools)
		SELECT id, sid, body, tools FROM message_search_docs WHERE id > ? AND id <= ?`, from, through); err != nil {
		if isCorrupt(err) {
			return s.indexAroundDamage(ctx, tx, from, maxRows)
		}
		return 0, s.errorf("index messages %d-%d: %w", from+1, through, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE message_search_state SET indexed_through = ?`, through); err != nil {
		return 0, s.errorf("index messages %d-%d: move watermark: %w", from+1, through, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, s.errorf("index messages %d-%d: %w", from+1, through, err)
	}
	return n, nil
}

// batchAfter picks the rows of the next batch after the watermark from:
// up to maxRows rows or maxBytes of text (at least one row). It returns
// the last one's id and how many.
func batchAfter(ctx context.Context, tx *sql.Tx, from int64, maxRows int, maxBytes int64) (through int64, n int, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, octet_length(content) + coalesce(octet_length(full_content), 0)
		+ coalesce(octet_length(tool_calls), 0) FROM messages WHERE id > ? ORDER BY id LIMIT ?`, from, maxRows)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	through, size := from, int64(0)
	for rows.Next() {
		var id, bytes int64
		if err := rows.Scan(&id, &bytes); err != nil {
			return 0, 0, err
		}
		if n > 0 && size+bytes > maxBytes {
			break
		}
		through, size = id, size+bytes
		n++
	}
	return through, n, rows.Err()
}

// indexAroundDamage is indexBatch's next batch when it met a damaged page
// of the log: the readable rows after from are indexed, the damaged ones
// skipped (see damage.go), so that the index still covers the rest.
func (s *Store) indexAroundDamage(ctx context.Context, tx *sql.Tx, from int64, maxRows int) (int, error) {
	var top int64
	if err := tx.QueryRowContext(ctx, `SELECT id FROM messages ORDER BY id DESC LIMIT 1`).Scan(&top); err != nil {
		return 0, s.errorf("index messages after %d: %w", from, err)
	}
	ids, through, err := readableIDs(ctx, tx, from+1, top, maxRows)
	if err != nil {
		return 0, s.errorf("index messages after %d: %w", from, err)
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `INSERT INTO message_search(rowid, sid, body, tools)
			SELECT id, sid, body, tools FROM message_search_docs WHERE id = ?`, id); err != nil && !isCorrupt(err) {
			return 0, s.errorf("index message %d: %w", id, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE message_search_state SET indexed_through = ?`, through); err != nil {
		return 0, s.errorf("index messages %d-%d: move watermark: %w", from+1, through, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, s.errorf("index messages %d-%d: %w", from+1, through, err)
	}
	return max(len(ids), 1), nil
}

// readableIDs lists, in order, the ids in a..b of the rows that can be
// read, halving each range that meets a damaged page, until it has limit
// of them. through is how far it looked (b when it looked at every id).
func readableIDs(ctx context.Context, tx *sql.Tx, a, b int64, limit int) (ids []int64, through int64, err error) {
	through = a - 1
	var walk func(a, b int64) error
	walk = func(a, b int64) error {
		if len(ids) >= limit {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		q := `SELECT id FROM messages WHERE id BETWEEN ? AND ? ORDER BY id`
		if a == b {
			q = `SELECT id FROM messages WHERE id = ? AND id = ?` // an exact seek (see salvageMessages)
		}
		rows, err := tx.QueryContext(ctx, q, a, b)
		var got []int64
		if err == nil {
			for rows.Next() {
				var id int64
				if err = rows.Scan(&id); err != nil {
					break
				}
				got = append(got, id)
			}
			if err == nil {
				err = rows.Err()
			}
			rows.Close()
		}
		switch {
		case err == nil:
			if room := limit - len(ids); len(got) > room {
				got = got[:room]
				through = got[len(got)-1]
			} else {
				through = b
			}
			ids = append(ids, got...)
			return nil
		case !isCorrupt(err):
			return err
		case a == b:
			through = b // a row on a damaged page: skipped
			return nil
		}
		mid := a + (b-a)/2
		if err := walk(a, mid); err != nil {
			return err
		}
		return walk(mid+1, b)
	}
	err = walk(a, b)
	return ids, through, err
}

// RebuildIndex empties the index in one transaction; the next catch-up
// indexes the whole log again.
func (s *Store) RebuildIndex(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.errorf("rebuild search index: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `INSERT INTO message_search(message_search) VALUES('delete-all')`); err != nil {
		return s.errorf("rebuild search index: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE message_search_state SET indexed_through = 0`); err != nil {
		return s.errorf("rebuild search index: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return s.errorf("rebuild search index: %w", err)
	}
	return nil
}

// The background indexer yields to appends, but not for ever: it indexes
// anyway once this many messages or this long behind.
const (
	indexerMaxLag  = 2000
	indexerMaxWait = 10 * time.Second
)

// RunIndexer keeps the index caught up until ctx is done, checking every
// interval (a second or two is plenty). Its caller owns it: run it in a
// goroutine and cancel ctx (and wait for it to return) before closing the
// store. Errors are passed to onErr (if not nil) and retried later; Search
// catches up by itself anyway.
//
// It gives way to a session that is writing, so that appends do not wait
// for its batches: it indexes when a check finds no message appended since
// the previous one, and stops when one is appended meanwhile, unless the
// index is more than indexerMaxLag messages or indexerMaxWait behind.
//
// After indexing it also checkpoints the WAL (PASSIVE: appends go on
// meanwhile). The index writes most of the WAL's pages, and otherwise the
// append that crosses SQLite's auto-checkpoint threshold would pay for
// copying and syncing them.
func (s *Store) RunIndexer(ctx context.Context, every time.Duration, onErr func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	s.runIndexer(ctx, t.C, onErr, nil)
}

// runIndexer is RunIndexer checking at each tick; checked (tests) is
// called after each check.
func (s *Store) runIndexer(ctx context.Context, ticks <-chan time.Time, onErr func(error), checked func()) {
	seen := int64(-1)    // the last message's rowid at the previous check
	var behind time.Time // since when the index has been behind
	for {
		top, through, err := s.indexState(ctx)
		switch {
		case err != nil:
		case top <= through:
			behind = time.Time{}
		default:
			if behind.IsZero() {
				behind = time.Now()
			}
			forced := top-through > indexerMaxLag || time.Since(behind) > indexerMaxWait
			if top == seen || forced {
				var n int
				n, err = s.catchUp(ctx, !forced)
				if err == nil && n > 0 {
					if _, cerr := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); cerr != nil {
						err = s.errorf("checkpoint: %w", cerr)
					}
				}
			}
		}
		if err != nil && ctx.Err() == nil && onErr != nil {
			onErr(err)
		}
		seen = top
		if checked != nil {
			checked()
		}
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
	}
}

// Search ranks the messages of a session (every session when sessionID is
// "") that match text, best first (BM25), and returns up to limit of them
// (default 10, at most SearchLimit) with the number that matched in all.
// It first indexes what is not indexed yet.
//
// text is plain text, never query syntax: each whitespace-separated word,
// or "a quoted phrase", is searched literally; words after the 32nd are
// ignored. Search tries, until one matches:
//  1. messages with every word;
//  2. the same, words ending in four or more letters or digits matching
//     as prefixes too ("handle" finds handleRequest);
//  3. messages with any of the words, with Partial set; the words that
//     most messages have are left out (see anyWord), so that the rare
//     words decide.
//
// Text without letters or digits matches nothing. When more than
// RankWindow messages match, the most recent RankWindow of them are
// ranked: ranking costs time in proportion to the matches.
func (s *Store) Search(ctx context.Context, sessionID, text string, limit int) ([]Hit, int, error) {
	return s.SearchWith(ctx, SearchQuery{SessionID: sessionID, Text: text, Limit: limit})
}

// SearchQuery is a search with all its options; see Search.
type SearchQuery struct {
	SessionID string // "" searches every session
	Text      string
	Limit     int
	// SkipTools leaves out the results of these tools and the assistant
	// messages whose first call is to one of them. The history tools skip
	// their own traffic this way: it repeats the log, and every search
	// would find the searches before it.
	SkipTools []string
}

// SearchWith is Search with options. A damaged index is rebuilt and
// searched again (see damage.go).
func (s *Store) SearchWith(ctx context.Context, q SearchQuery) ([]Hit, int, error) {
	hits, total, err := s.search(ctx, q)
	if isCorrupt(err) && !s.readOnly && s.indexDamaged(ctx) {
		if rerr := s.rebuildDamagedIndex(ctx); rerr != nil {
			return nil, 0, fmt.Errorf("%w (%v)", err, rerr)
		}
		hits, total, err = s.search(ctx, q)
	}
	return hits, total, err
}

func (s *Store) search(ctx context.Context, q SearchQuery) ([]Hit, int, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, SearchLimit)
	terms := parseQuery(q.Text)
	if len(terms) == 0 {
		return nil, 0, nil
	}
	if _, err := s.CatchUpIndex(ctx); err != nil {
		return nil, 0, s.errorf("search %q: %w", q.Text, err)
	}
	scope := q.scope
	for _, expr := range allWords(terms) {
		hits, total, err := s.match(ctx, scope(expr), limit, RankWindow)
		if err != nil || total > 0 {
			return hits, total, wrapSearch(q.Text, err)
		}
	}
	if len(terms) < 2 {
		return nil, 0, nil
	}
	expr, err := s.anyWord(ctx, scope, terms)
	if err != nil || expr == "" {
		return nil, 0, wrapSearch(q.Text, err)
	}
	hits, total, err := s.match(ctx, scope(expr), limit, RankWindow)
	for i := range hits {
		hits[i].Partial = true
	}
	return hits, total, wrapSearch(q.Text, err)
}

// scope restricts a match expression over the text columns to the
// query's session and leaves out the tools it skips.
func (q SearchQuery) scope(expr string) string {
	expr = "{body tools} : (" + expr + ")"
	if q.SessionID != "" {
		expr = "sid : " + quote(q.SessionID) + " AND " + expr
	}
	if len(q.SkipTools) > 0 {
		skip := make([]string, len(q.SkipTools))
		for i, name := range q.SkipTools {
			skip[i] = "^ " + quote(name) // the tools column starts with the tool's name
		}
		expr = "(" + expr + ") NOT tools : (" + strings.Join(skip, " OR ") + ")"
	}
	return expr
}

func wrapSearch(text string, err error) error {
	if err != nil {
		return fmt.Errorf("search %q: %w", text, err)
	}
	return nil
}

// RankWindow is how many matches Search ranks at most: the most recent.
const RankWindow = 5000

// match runs one scoped FTS5 expression: it counts the matches, then
// ranks (the most recent window of) them.
func (s *Store) match(ctx context.Context, expr string, limit, window int) ([]Hit, int, error) {
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM message_search WHERE message_search MATCH ?`,
		expr).Scan(&total); err != nil || total == 0 {
		return nil, 0, err
	}
	var from int64
	if total > window {
		if err := s.db.QueryRowContext(ctx, `SELECT rowid FROM message_search WHERE message_search MATCH ?
			ORDER BY rowid DESC LIMIT 1 OFFSET ?`, expr, window-1).Scan(&from); err != nil {
			return nil, 0, err
		}
	}
	// The inner query is FTS5's own ranked scan, so snippets are only made
	// for the rows returned.
	rows, err := s.db.QueryContext(ctx, `SELECT m.session_id, m.seq, m.role, m.created_at, m.name, m.tool_calls, h.body, h.tools
		FROM (SELECT rowid AS id, rank,
				snippet(message_search, 1, ?1, ?2, '…', ?3) AS body,
				snippet(message_search, 2, ?1, ?2, '…', ?3) AS tools
			FROM message_search WHERE message_search MATCH ?4 AND rowid >= ?5 ORDER BY rank LIMIT ?6) AS h
		JOIN messages AS m ON m.id = h.id ORDER BY h.rank`,
		MatchOpen, MatchClose, snippetTokens, expr, from, limit)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		var role, body, toolText string
		var created int64
		var calls sql.NullString
		if err := rows.Scan(&h.SessionID, &h.Seq, &role, &created, &h.ToolName, &calls, &body, &toolText); err != nil {
			return nil, 0, err
		}
		h.Role, h.Time = Role(role), fromMilli(created)
		if h.ToolName == "" && calls.Valid {
			h.ToolName = callNames(calls.String)
		}
		h.Snippet = body
		if !strings.Contains(body, MatchOpen) && strings.Contains(toolText, MatchOpen) {
			h.Snippet = toolText
		}
		h.Snippet = strings.Join(strings.Fields(h.Snippet), " ")
		hits = append(hits, h)
	}
	return hits, total, rows.Err()
}

// callNames lists the tool names of an assistant message's calls.
func callNames(callsJSON string) string {
	var calls []ToolCall
	if err := json.Unmarshal([]byte(callsJSON), &calls); err != nil {
		return ""
	}
	names := make([]string, 0, len(calls))
	for _, c := range calls {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// queryTerm is a word or a quoted phrase of a search text.
type queryTerm struct {
	text string
	// prefix: the term may match as a prefix, in the second step: a word
	// ending in 4+ letters or digits. (A prefix query merges the index
	// entries of every word it expands to; "the*" costs 100 ms at 100k
	// messages.)
	prefix bool
}

// parseQuery splits text into terms: whitespace-separated words, and
// double-quoted phrases (an unbalanced quote counts as plain text). Terms
// without a letter or digit are dropped, and terms after the maxTerms-th.
// NUL characters separate words.
func parseQuery(text string) []queryTerm {
	// NUL separates words (and would end FTS5's query: found by FuzzSearch).
	text = strings.ReplaceAll(text, "\x00", " ")
	var terms []queryTerm
	add := func(t string, phrase bool) {
		if len(terms) == maxTerms || !hasWordChar(t) {
			return
		}
		terms = append(terms, queryTerm{text: t,
			prefix: lastWordLen(t) >= 4 && !(phrase && strings.ContainsFunc(t, unicode.IsSpace))})
	}
	parts := strings.Split(text, `"`)
	for i, p := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			add(p, true)
			continue
		}
		for _, w := range strings.Fields(p) {
			add(w, false)
		}
	}
	return terms
}

// allWords are the expressions of Search's first steps: every term, then
// every term with prefixes. Every term is an FTS5 string, so that no
// character or keyword of the text (", *, -, :, ^, parentheses, AND, OR,
// NOT, NEAR ...) is read as syntax.
func allWords(terms []queryTerm) []string {
	exact := make([]string, len(terms))
	prefixed := make([]string, len(terms))
	hasPrefix := false
	for i, t := range terms {
		exact[i] = quote(t.text)
		prefixed[i] = exact[i]
		if t.prefix {
			prefixed[i] += " *"
			hasPrefix = true
		}
	}
	out := []string{strings.Join(exact, " AND ")}
	if hasPrefix {
		out = append(out, strings.Join(prefixed, " AND "))
	}
	return out
}

// anyWord is the expression of Search's last step: any of the terms, the
// rarest first, leaving out those whose matches would take the total past
// RankWindow (but always keeping the rarest). Common words ("the", "what")
// would otherwise match most of the log, and the rare words the user
// meant would not be ranked. "" when no term matches at all.
func (s *Store) anyWord(ctx context.Context, scope func(string) string, terms []queryTerm) (string, error) {
	type counted struct {
		expr string
		n    int
	}
	var found []counted
	for _, t := range terms {
		expr := quote(t.text)
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM message_search WHERE message_search MATCH ?`,
			scope(expr)).Scan(&n); err != nil {
			return "", err
		}
		if n > 0 && !slices.ContainsFunc(found, func(c counted) bool { return c.expr == expr }) {
			found = append(found, counted{expr, n})
		}
	}
	slices.SortStableFunc(found, func(a, b counted) int { return a.n - b.n })
	var parts []string
	sum := 0
	for i, c := range found {
		if i > 0 && sum+c.n > RankWindow {
			break
		}
		parts = append(parts, c.expr)
		sum += c.n
	}
	return strings.Join(parts, " OR "), nil
}

// quote makes s an FTS5 string: in double quotes, which are doubled inside.
// The tokenizer then splits it; several tokens make a phrase. NUL becomes
// a space: FTS5 reads its query as a C string.
func quote(s string) string {
	return `"` + strings.NewReplacer(`"`, `""`, "\x00", " ").Replace(s) + `"`
}

// isWordChar approximates unicode61's token characters: letters, numbers
// and private-use characters. Where Go's Unicode tables are newer than
// SQLite's, a term may be all separators to the tokenizer: an empty phrase,
// which matches nothing (the any-word step still finds the other terms).
func isWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

func hasWordChar(s string) bool { return strings.ContainsFunc(s, isWordChar) }

// lastWordLen is the length in runes of the last run of word characters of s.
func lastWordLen(s string) int {
	n := 0
	for len(s) > 0 {
		r, size := utf8.DecodeLastRuneInString(s)
		if !isWordChar(r) {
			if n > 0 {
				break
			}
		} else {
			n++
		}
		s = s[:len(s)-size]
	}
	return n
}
