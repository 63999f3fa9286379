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
// ("handlerequest"): found whole, and by a leading part because query
// words of three or more letters also match as prefixes ("handle" finds
// handleRequest, "test" finds TestSearch), but not by an inner part
// ("Request"). Measured on 20,000 1 KB messages: unicode61 indexes at
// ~100 us/message and adds ~0.6 KB/message; trigram (which finds any
// substring) costs 2.7x the time, 4.6x the space and 16x the query time,
// so it is not used. tokenchars '_' (snake_case as one token) measured the
// same and loses the parts, so it is not used either.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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

// indexBatchBytes and indexBatchRows bound one catch-up transaction. Appends
// wait for it (one writer at a time), so it must stay short: ~1-3 ms.
const (
	indexBatchBytes = 64 << 10
	indexBatchRows  = 64
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

// searchSchema is the migration that adds the index, empty: opening an
// existing database stays fast, and catch-up fills the index later.
func searchSchema() string {
	return `CREATE VIEW message_search_docs(id, sid, body, tools) AS
		SELECT id, ` + docColumns("") + ` FROM messages;
	CREATE VIRTUAL TABLE message_search USING fts5(sid, body, tools,
		content = 'message_search_docs', content_rowid = 'id',
		tokenize = 'unicode61 remove_diacritics 2');
	INSERT INTO message_search(message_search, rank) VALUES('rank', 'bm25(0.0, 1.0, 0.5)');
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
		return 0, fmt.Errorf("count unindexed messages: %w", err)
	}
	return n, nil
}

// CatchUpIndex indexes every message appended since the last catch-up, in
// short transactions so that appends are not held up, and returns how many
// it indexed. It is safe to run concurrently, from several processes too:
// each batch reads the watermark inside its write transaction.
func (s *Store) CatchUpIndex(ctx context.Context) (int, error) {
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("index messages: %w", err)
		}
		behind, err := s.indexBehind(ctx)
		if err != nil || !behind {
			return total, err
		}
		n, err := s.indexBatch(ctx)
		total += n
		if err != nil {
			return total, err
		}
	}
}

// indexBehind reads, without taking the write lock, whether any message is
// past the watermark.
func (s *Store) indexBehind(ctx context.Context) (bool, error) {
	var behind bool
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT coalesce(max(id), 0) FROM messages) >
		(SELECT indexed_through FROM message_search_state)`).Scan(&behind)
	if err != nil {
		return false, fmt.Errorf("read index watermark: %w", err)
	}
	return behind, nil
}

// indexBatch indexes the next rows after the watermark, up to
// indexBatchRows rows or indexBatchBytes of text (at least one row), and
// moves the watermark in the same transaction.
func (s *Store) indexBatch(ctx context.Context) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (see Open): one writer
	if err != nil {
		return 0, fmt.Errorf("index messages: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var from int64
	if err := tx.QueryRowContext(ctx, `SELECT indexed_through FROM message_search_state`).Scan(&from); err != nil {
		return 0, fmt.Errorf("index messages: read watermark: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, octet_length(content) + coalesce(octet_length(full_content), 0)
		+ coalesce(octet_length(tool_calls), 0) FROM messages WHERE id > ? ORDER BY id LIMIT ?`, from, indexBatchRows)
	if err != nil {
		return 0, fmt.Errorf("index messages after %d: %w", from, err)
	}
	through, n, size := from, 0, int64(0)
	for rows.Next() {
		var id, bytes int64
		if err := rows.Scan(&id, &bytes); err != nil {
			rows.Close()
			return 0, fmt.Errorf("index messages after %d: %w", from, err)
		}
		if n > 0 && size+bytes > indexBatchBytes {
			break
		}
		through, size = id, size+bytes
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("index messages after %d: %w", from, err)
	}
	if n == 0 {
		return 0, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO message_search(rowid, sid, body, tools)
		SELECT id, sid, body, tools FROM message_search_docs WHERE id > ? AND id <= ?`, from, through); err != nil {
		return 0, fmt.Errorf("index messages %d-%d: %w", from+1, through, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE message_search_state SET indexed_through = ?`, through); err != nil {
		return 0, fmt.Errorf("index messages %d-%d: move watermark: %w", from+1, through, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("index messages %d-%d: %w", from+1, through, err)
	}
	return n, nil
}

// RebuildIndex empties the index in one transaction; the next catch-up
// indexes the whole log again.
func (s *Store) RebuildIndex(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("rebuild search index: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `INSERT INTO message_search(message_search) VALUES('delete-all')`); err != nil {
		return fmt.Errorf("rebuild search index: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE message_search_state SET indexed_through = 0`); err != nil {
		return fmt.Errorf("rebuild search index: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("rebuild search index: %w", err)
	}
	return nil
}

// RunIndexer keeps the index caught up until ctx is done: it catches up,
// then again every interval. Its caller owns it: run it in a goroutine and
// cancel ctx (and wait for it to return) before closing the store. Errors
// are passed to onErr (if not nil) and retried at the next interval; Search
// catches up by itself anyway.
func (s *Store) RunIndexer(ctx context.Context, every time.Duration, onErr func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := s.CatchUpIndex(ctx); err != nil && ctx.Err() == nil && onErr != nil {
			onErr(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Search ranks the messages of a session (every session when sessionID is
// "") that match text, best first (BM25), and returns up to limit of them
// (default 10, at most SearchLimit) with the number that matched in all.
// It first indexes what is not indexed yet.
//
// text is plain text, never query syntax: each whitespace-separated word,
// or "a quoted phrase", is searched literally, and words of three or more
// letters match as prefixes too; words after the 32nd are ignored. A message matches when it has every word;
// when none has, the messages with any of them are returned, ranked, with
// Partial set. Text without letters or digits matches nothing.
func (s *Store) Search(ctx context.Context, sessionID, text string, limit int) ([]Hit, int, error) {
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, SearchLimit)
	all, anyWord, ok := matchQuery(text)
	if !ok {
		return nil, 0, nil
	}
	if _, err := s.CatchUpIndex(ctx); err != nil {
		return nil, 0, fmt.Errorf("search %q: %w", text, err)
	}
	hits, total, err := s.match(ctx, sessionID, all, limit)
	if err == nil && total == 0 && anyWord != all {
		hits, total, err = s.match(ctx, sessionID, anyWord, limit)
		for i := range hits {
			hits[i].Partial = true
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("search %q: %w", text, err)
	}
	return hits, total, nil
}

// match runs one FTS5 expression restricted to a session.
func (s *Store) match(ctx context.Context, sessionID, expr string, limit int) ([]Hit, int, error) {
	expr = "{body tools} : (" + expr + ")"
	if sessionID != "" {
		expr = "sid : " + quote(sessionID) + " AND " + expr
	}
	// The inner query is FTS5's own ranked scan, so snippets are only made
	// for the rows returned.
	rows, err := s.db.QueryContext(ctx, `SELECT m.session_id, m.seq, m.role, m.created_at, m.name, m.tool_calls, h.body, h.tools
		FROM (SELECT rowid AS id, rank,
				snippet(message_search, 1, ?1, ?2, '…', ?3) AS body,
				snippet(message_search, 2, ?1, ?2, '…', ?3) AS tools
			FROM message_search WHERE message_search MATCH ?4 ORDER BY rank LIMIT ?5) AS h
		JOIN messages AS m ON m.id = h.id ORDER BY h.rank`,
		MatchOpen, MatchClose, snippetTokens, expr, limit)
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
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	total := len(hits)
	if total == limit {
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM message_search WHERE message_search MATCH ?`,
			expr).Scan(&total); err != nil {
			return nil, 0, err
		}
	}
	return hits, total, nil
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

// matchQuery turns text into two FTS5 expressions: every term (all) and any
// term (anyWord). A term is a whitespace-separated word or a double-quoted
// phrase, always quoted as an FTS5 string, so that no character or keyword
// of the text (", *, -, :, ^, parentheses, AND, OR, NOT, NEAR ...) is read
// as syntax. ok is false when no term has a letter or digit to search for.
func matchQuery(text string) (all, anyWord string, ok bool) {
	var terms []string
	add := func(t string, phrase bool) {
		if !hasWordChar(t) {
			return
		}
		if len(terms) == maxTerms {
			return
		}
		q := quote(t)
		if last := lastWordLen(t); last >= 3 && !(phrase && strings.ContainsFunc(t, unicode.IsSpace)) {
			q += " *"
		}
		terms = append(terms, q)
	}
	// Segments between double quotes are phrases; an unbalanced quote
	// counts as plain text.
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
	if len(terms) == 0 {
		return "", "", false
	}
	return strings.Join(terms, " AND "), strings.Join(terms, " OR "), true
}

// quote makes s an FTS5 string: in double quotes, which are doubled inside.
// The tokenizer then splits it; several tokens make a phrase.
func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// isWordChar approximates unicode61's token characters: letters, numbers
// and private-use characters. Where Go's Unicode tables are newer than
// SQLite's, a term may be all separators to the tokenizer: an empty phrase,
// which matches nothing (the any-word search still finds the other terms).
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
