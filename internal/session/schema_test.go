package session

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFreshSchemaIsTheMigratedOne: a new store is created by one script of
// the final schema (freshSchema), an existing one migrated step by step;
// both must end as the same store. The migrated one comes from the real
// migration list, from the oldest schema on (version 1, as the first
// gencode wrote it), through Open: a migration added without its change in
// freshSchema, or freshVersion left behind, fails here.
func TestFreshSchemaIsTheMigratedOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	fresh, err := Open(ctx, t.TempDir())
	require.NoError(t, err)
	defer fresh.Close()

	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName)+"?_pragma=journal_mode(WAL)")
	require.NoError(t, err)
	_, err = db.Exec(migrations[0] + `; PRAGMA user_version = 1`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	migrated, err := Open(ctx, dir)
	require.NoError(t, err)
	defer migrated.Close()

	// The script itself, run on an empty database as Open runs it.
	script, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), FileName)+"?_pragma=journal_mode(WAL)")
	require.NoError(t, err)
	defer script.Close()
	_, err = script.Exec(freshSchema + fmt.Sprintf(`; PRAGMA user_version = %d`, freshVersion))
	require.NoError(t, err)

	require.Equal(t, len(migrations), freshVersion,
		"freshVersion is not the last migration: put migrations %d-%d's changes in freshSchema and move freshVersion up",
		freshVersion+1, len(migrations))
	want := schemaOf(t, migrated.DB())
	require.Equal(t, want, schemaOf(t, script), "freshSchema (+) differs from the schema migrated from version 1 (-)")
	require.Equal(t, want, schemaOf(t, fresh.DB()), "a new store (+) differs from one migrated from version 1 (-)")
	require.Contains(t, want, fmt.Sprintf("user_version %d", len(migrations)))
	// Open made the new store with the script (the migrations word its
	// tables' SQL otherwise).
	require.Equal(t, tableSQL(t, script), tableSQL(t, fresh.DB()), "Open did not create the new store with freshSchema")
	require.NotEqual(t, tableSQL(t, migrated.DB()), tableSQL(t, fresh.DB()))
}

// tableSQL is the SQL sqlite_schema holds for the messages table.
func tableSQL(t *testing.T, db *sql.DB) string {
	t.Helper()
	var text string
	require.NoError(t, db.QueryRow(`SELECT sql FROM sqlite_schema WHERE name = 'messages'`).Scan(&text))
	return text
}

// TestNewStoreOpenedAtOnce: gencodes started together on a new data dir
// (two panes, a script's print turns) all open the store, and it is
// created once: each reads the version again under the write lock, and
// the ones that find the schema made meanwhile leave it as it is.
func TestNewStoreOpenedAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	const n = 4
	stores := make([]*Store, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = Open(ctx, dir)
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i], "open %d", i)
		defer stores[i].Close()
	}
	want := schemaOf(t, stores[0].DB())
	require.Contains(t, want, fmt.Sprintf("user_version %d", len(migrations)))
	for i := 1; i < n; i++ {
		require.Equal(t, want, schemaOf(t, stores[i].DB()), "open %d", i)
	}
}

// schemaOf describes a store's schema, a line a fact, in an order that does
// not depend on the order things were created in: each table's columns
// (pragma table_xinfo: name, type, not null, default, place in the primary
// key), foreign keys, CHECK constraints and rows (a migration may insert
// some); each index's columns (pragma index_xinfo), uniqueness, origin and
// partial WHERE clause; views, triggers and virtual tables by their SQL,
// normalized; and user_version.
func schemaOf(t *testing.T, db *sql.DB) []string {
	t.Helper()
	var out []string
	var version int
	require.NoError(t, db.QueryRow(`PRAGMA user_version`).Scan(&version))
	out = append(out, fmt.Sprintf("user_version %d", version))

	type object struct{ typ, name, table, sql string }
	var objects []object
	rows, err := db.Query(`SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema ORDER BY type, name`)
	require.NoError(t, err)
	for rows.Next() {
		var o object
		require.NoError(t, rows.Scan(&o.typ, &o.name, &o.table, &o.sql))
		objects = append(objects, o)
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())

	for _, o := range objects {
		head := fmt.Sprintf("%s %s on %s", o.typ, o.name, o.table)
		text := normalizeSQL(o.sql)
		switch {
		case o.typ == "table" && strings.HasPrefix(text, "CREATE VIRTUAL TABLE"):
			out = append(out, head+": "+text)
		case o.typ == "table":
			out = append(out, head)
			for _, l := range pragmaRows(t, db, `SELECT type, ncol, wr, strict FROM pragma_table_list(?)`, o.name) {
				out = append(out, head+" kind "+l)
			}
			for _, l := range pragmaRows(t, db, `SELECT cid, name, type, "notnull", dflt_value, pk, hidden FROM pragma_table_xinfo(?) ORDER BY cid`, o.name) {
				out = append(out, head+" column "+l)
			}
			for _, l := range pragmaRows(t, db, `SELECT id, seq, "table", "from", "to", on_update, on_delete, match FROM pragma_foreign_key_list(?) ORDER BY id, seq`, o.name) {
				out = append(out, head+" foreign key "+l)
			}
			for _, c := range checks(text) {
				out = append(out, head+" "+c)
			}
			for _, l := range pragmaRows(t, db, `SELECT name, "unique", origin, partial FROM pragma_index_list(?) ORDER BY name`, o.name) {
				out = append(out, head+" index "+l)
			}
			for _, l := range pragmaRows(t, db, `SELECT * FROM "`+o.name+`"`) {
				out = append(out, head+" row "+l)
			}
		case o.typ == "index":
			out = append(out, head+": "+text)
			for _, l := range pragmaRows(t, db, `SELECT "unique", origin, partial FROM pragma_index_list(?) WHERE name = ?`, o.table, o.name) {
				out = append(out, head+" unique, origin, partial "+l)
			}
			for _, l := range pragmaRows(t, db, `SELECT seqno, cid, name, "desc", coll, "key" FROM pragma_index_xinfo(?) ORDER BY seqno`, o.name) {
				out = append(out, head+" column "+l)
			}
			if _, where, ok := cutWord(text, "WHERE"); ok {
				out = append(out, head+" where "+where)
			}
		default: // views, triggers
			out = append(out, head+": "+text)
		}
	}
	return out
}

// pragmaRows runs a query and gives each row as one line.
func pragmaRows(t *testing.T, db *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(query, args...)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		var b strings.Builder
		for i, v := range vals {
			if i > 0 {
				b.WriteString(" | ")
			}
			switch v := v.(type) {
			case nil:
				b.WriteString("NULL")
			case []byte:
				fmt.Fprintf(&b, "x'%x'", v)
			default:
				fmt.Fprintf(&b, "%v", v)
			}
		}
		out = append(out, b.String())
	}
	require.NoError(t, rows.Err())
	return out
}

var (
	sqlComment    = regexp.MustCompile(`--[^\n]*`)
	sqlSpace      = regexp.MustCompile(`\s+`)
	sqlPunctSpace = regexp.MustCompile(`\s*([(),;=<>])\s*`)
	ifNotExists   = regexp.MustCompile(`(?i)\bIF NOT EXISTS\s+`)
)

// normalizeSQL makes two texts of one statement equal when they differ
// only in comments, spacing or IF NOT EXISTS. (No statement of the schema
// has "--" inside a string.)
func normalizeSQL(s string) string {
	s = sqlComment.ReplaceAllString(s, " ")
	s = ifNotExists.ReplaceAllString(s, "")
	s = sqlSpace.ReplaceAllString(s, " ")
	s = sqlPunctSpace.ReplaceAllString(s, "$1")
	return strings.TrimSpace(s)
}

// checks are the CHECK constraints in a table's normalized SQL.
func checks(text string) []string {
	var out []string
	for rest := text; ; {
		_, after, ok := cutWord(rest, "CHECK")
		if !ok {
			return out
		}
		depth, end := 0, len(after)
	scan:
		for i, r := range after {
			switch r {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					end = i + 1
					break scan
				}
			}
		}
		out = append(out, "CHECK "+after[:end])
		rest = after[end:]
	}
}

// cutWord cuts s around the first occurrence of the SQL keyword word
// (any case, a word of its own).
func cutWord(s, word string) (before, after string, ok bool) {
	loc := regexp.MustCompile(`(?i)\b` + word + `\b`).FindStringIndex(s)
	if loc == nil {
		return s, "", false
	}
	return s[:loc[0]], strings.TrimSpace(s[loc[1]:]), true
}
