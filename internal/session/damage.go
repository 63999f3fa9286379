package session

// Reading around damage.
//
// A damaged page (a disk error, a bad sector, a tool that wrote into the
// file) makes every query that touches it fail with SQLITE_CORRUPT. One bad
// page of the messages table used to make its whole session unreadable,
// since the log is read in one query. When such a query fails, the rows
// are read again by rowid ranges, halving each range that fails, so that
// only the rows on the damaged pages are lost. What was lost is recorded
// (Damage) for the front end to report, with the way to recover the rest.
//
// A damaged search index is rebuilt: it holds nothing the log does not.
//
// At open, a database of up to quickCheckMax bytes is checked whole
// (PRAGMA quick_check): measured ~3.5 ms per MB here, warm and alone, ~7
// ms per MB inside a print-mode turn, so 7-14 ms at the bound, against ~2
// ms for the open itself. A larger one is not checked at open; damage is
// then handled where a read meets it. The bound keeps what every run pays
// from growing with the store: at 8 MB, a print-mode turn of a 600-turn
// session paid 20 ms more for the check than one of the first 50 (make
// bench-session).

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// quickCheckMax is the largest database checked whole at open.
const quickCheckMax = 2 << 20

// withQuickCheckMax sets the largest database checked at open (tests).
func withQuickCheckMax(n int64) Option { return func(s *Store) { s.quickCheckMax = n } }

// Damage is what the store found damaged so far.
type Damage struct {
	// Lost maps a session id to the sequence numbers of its messages
	// that could not be read (sorted).
	Lost map[string][]int64
	// IndexRebuilt: the search index was damaged and was rebuilt (emptied;
	// the next catch-up indexes the log again).
	IndexRebuilt bool
	// Check is what the check at open found damaged elsewhere (the first
	// lines of PRAGMA quick_check), "" when nothing or not checked.
	Check string
}

// Any reports whether anything was found damaged.
func (d Damage) Any() bool { return len(d.Lost) > 0 || d.IndexRebuilt || d.Check != "" }

// damageLog collects the damage a Store met.
type damageLog struct {
	mu sync.Mutex
	d  Damage
}

// Damage returns what the store found damaged since it was opened.
func (s *Store) Damage() Damage {
	s.damage.mu.Lock()
	defer s.damage.mu.Unlock()
	d := s.damage.d
	d.Lost = make(map[string][]int64, len(d.Lost))
	for id, seqs := range s.damage.d.Lost {
		d.Lost[id] = slices.Clone(seqs)
	}
	return d
}

func (s *Store) recordLost(sessionID string, lost []int64) {
	if len(lost) == 0 {
		return
	}
	s.damage.mu.Lock()
	defer s.damage.mu.Unlock()
	if s.damage.d.Lost == nil {
		s.damage.d.Lost = map[string][]int64{}
	}
	all := append(s.damage.d.Lost[sessionID], lost...)
	slices.Sort(all)
	s.damage.d.Lost[sessionID] = slices.Compact(all)
}

// isCorrupt reports whether err is SQLite finding a damaged page.
func isCorrupt(err error) bool {
	c := sqliteCode(err) & 0xff
	return c == sqliteCorrupt || c == sqliteNotADB
}

// salvageMessages reads a session's messages with from <= seq <= to around
// damaged pages, and records the seqs it could not read.
func (s *Store) salvageMessages(ctx context.Context, sessionID string, from, to int64) ([]Message, error) {
	var out []Message
	var read func(a, b int64) error
	read = func(a, b int64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		// One id is read by an exact seek: a range scan steps on to the
		// next page to see where the range ends, and that one may be the
		// damaged page.
		ids := `id BETWEEN ? AND ?`
		if a == b {
			ids = `id = ? AND id = ?`
		}
		msgs, err := s.queryMessages(ctx, `SELECT `+messageCols+` FROM messages NOT INDEXED
			WHERE `+ids+` AND session_id = ? AND seq BETWEEN ? AND ?`, a, b, sessionID, from, to)
		switch {
		case err == nil:
			out = append(out, msgs...)
			return nil
		case !isCorrupt(err):
			return err
		case a == b:
			return nil // a row on a damaged page
		}
		mid := a + (b-a)/2
		if err := read(a, mid); err != nil {
			return err
		}
		return read(mid+1, b)
	}
	// The rows' ids lie between the first and the last row of the table
	// (read from its two ends, which a damaged middle does not stop).
	var lo, hi sql.NullInt64
	_ = s.db.QueryRowContext(ctx, `SELECT id FROM messages ORDER BY id LIMIT 1`).Scan(&lo)
	_ = s.db.QueryRowContext(ctx, `SELECT id FROM messages ORDER BY id DESC LIMIT 1`).Scan(&hi)
	first, last := int64(1), int64(1)<<62
	if lo.Valid {
		first = lo.Int64
	}
	if hi.Valid {
		last = hi.Int64
	}
	if err := read(first, last); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Message) int { return cmp.Compare(a.Seq, b.Seq) })
	s.recordLost(sessionID, missing(out, from, s.lastSeq(ctx, sessionID, to, out)))
	return out, nil
}

// lastSeq is the last seq a read up to `to` should have found: the
// session's last_seq when readable, else the last one read.
func (s *Store) lastSeq(ctx context.Context, sessionID string, to int64, read []Message) int64 {
	var ls int64
	if err := s.db.QueryRowContext(ctx, `SELECT last_seq FROM sessions WHERE id = ?`, sessionID).Scan(&ls); err == nil {
		return min(to, ls)
	}
	if len(read) > 0 {
		return min(to, read[len(read)-1].Seq)
	}
	return 0
}

// missing lists the seqs from..last that msgs (sorted by seq) lacks: the
// log's seqs run without gaps.
func missing(msgs []Message, from, last int64) []int64 {
	var lost []int64
	next := from
	for _, m := range msgs {
		for ; next < m.Seq && next <= last; next++ {
			lost = append(lost, next)
		}
		next = max(next, m.Seq+1)
	}
	for ; next <= last; next++ {
		lost = append(lost, next)
	}
	return lost
}

// readMessages runs a messages query; when it meets a damaged page, it
// reads the range from..to around the damage instead.
func (s *Store) readMessages(ctx context.Context, sessionID string, from, to int64, query string, args ...any) ([]Message, error) {
	msgs, err := s.queryMessages(ctx, query, args...)
	if err == nil || !isCorrupt(err) {
		return msgs, err
	}
	return s.salvageMessages(ctx, sessionID, from, to)
}

// neverUsed matches a quick_check line about a page no table uses
// (compiled when a check finds something: not at every process's start).
var neverUsed = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Page \d+:? (is )?never used$`) })

// treeRef matches the b-tree a quick_check line is about.
var treeRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`Tree (\d+) page`) })

// checkAtOpen checks a small database whole; a damaged search index is
// rebuilt (when the store can be written), other damage is recorded.
func (s *Store) checkAtOpen(ctx context.Context) {
	fi, err := os.Stat(s.path)
	if err != nil || fi.Size() > s.quickCheckMax {
		return
	}
	rows, err := s.db.QueryContext(ctx, `PRAGMA quick_check(20)`)
	if err != nil {
		s.noteCheck(err.Error())
		return
	}
	var lines []string
	for rows.Next() {
		var line string
		if rows.Scan(&line) != nil {
			continue
		}
		for _, l := range strings.Split(line, "\n") {
			// "Page N: never used" is space lost (a rebuilt index leaves
			// its old pages so), not data.
			if l != "ok" && l != "*** in database main ***" && !neverUsed().MatchString(l) {
				lines = append(lines, l)
			}
		}
	}
	if err := rows.Err(); err != nil {
		lines = append(lines, err.Error())
	}
	rows.Close()
	if len(lines) == 0 {
		return
	}
	if !s.readOnly && s.onlyIndexDamaged(ctx, lines) {
		if err := s.rebuildDamagedIndex(ctx); err == nil {
			return
		}
	}
	s.noteCheck(strings.Join(lines, "; "))
}

func (s *Store) noteCheck(what string) {
	what = strings.Join(strings.Fields(what), " ")
	if len(what) > 300 {
		what = what[:300] + "…"
	}
	s.damage.mu.Lock()
	s.damage.d.Check = what
	s.damage.mu.Unlock()
}

// onlyIndexDamaged reports whether every b-tree quick_check names is one
// of the search index's own tables.
func (s *Store) onlyIndexDamaged(ctx context.Context, lines []string) bool {
	roots := map[int]bool{}
	for _, l := range lines {
		for _, m := range treeRef().FindAllStringSubmatch(l, -1) {
			n, _ := strconv.Atoi(m[1])
			roots[n] = true
		}
	}
	if len(roots) == 0 {
		return false
	}
	for root := range roots {
		var name string
		if err := s.db.QueryRowContext(ctx, `SELECT name FROM sqlite_schema WHERE rootpage = ?`, root).Scan(&name); err != nil ||
			!slices.Contains(indexTables, name) {
			return false
		}
	}
	return true
}

// indexTables are the search index's own tables (FTS5's shadow tables).
var indexTables = []string{"message_search_data", "message_search_idx", "message_search_docsize", "message_search_config"}

// indexDamaged reports whether a b-tree of the search index is damaged
// (a damaged page of the log makes searches fail too, but rebuilding the
// index would not help).
func (s *Store) indexDamaged(ctx context.Context) bool {
	for _, t := range indexTables {
		var res string
		if err := s.db.QueryRowContext(ctx, `PRAGMA quick_check(`+t+`)`).Scan(&res); err != nil || res != "ok" {
			return true
		}
	}
	return false
}

// rebuildDamagedIndex creates the search index anew, empty; the next
// catch-up indexes the whole log again. The damaged one cannot be dropped
// (dropping reads every page of its tables), so its entries are taken out
// of the schema and its pages left unused: they are free again at the
// next VACUUM, and the check at open does not count them as damage.
func (s *Store) rebuildDamagedIndex(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return s.errorf("rebuild damaged search index: %w", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return s.errorf("rebuild damaged search index: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var version int
	if err := tx.QueryRowContext(ctx, `PRAGMA schema_version`).Scan(&version); err != nil {
		return s.errorf("rebuild damaged search index: %w", err)
	}
	names := `'message_search', '` + strings.Join(indexTables, `', '`) + `'`
	for _, q := range []string{
		`PRAGMA writable_schema = ON`,
		`DELETE FROM sqlite_schema WHERE tbl_name IN (` + names + `)`,
		fmt.Sprintf(`PRAGMA schema_version = %d`, version+1),
		`PRAGMA writable_schema = RESET`,
		searchTable,
		`UPDATE message_search_state SET indexed_through = 0`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			_, _ = conn.ExecContext(ctx, `PRAGMA writable_schema = OFF`)
			return s.errorf("rebuild damaged search index: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.errorf("rebuild damaged search index: %w", err)
	}
	s.damage.mu.Lock()
	s.damage.d.IndexRebuilt = true
	s.damage.mu.Unlock()
	return nil
}

// RecoverHint says how to get back what SQLite can of a damaged database
// file at path, for a front end to show.
func RecoverHint(path string) string {
	return fmt.Sprintf("to recover what SQLite can, quit gencode, keep a copy of %s, then run: sqlite3 %s .recover | sqlite3 recovered.db && mv recovered.db %s",
		path, path, path)
}
