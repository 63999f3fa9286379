package session

import (
	"context"
	"database/sql"
	"sync"
)

// stmts are the statements a store runs again and again (each request's
// view and tally, each append), prepared once: database/sql keeps each
// prepared on every connection that ran it, so SQLite parses it once per
// connection instead of at every call (parsing was ~8% of loading a view
// and of a tally). Queries are cached by their text; a text not known
// yet is prepared on its first call.
type stmts struct {
	mu     sync.Mutex
	m      map[string]*sql.Stmt
	closed bool
}

// maxStmts bounds the cache: past it, queries run unprepared (only a
// query text built from data would get there, which none is meant to).
const maxStmts = 128

// prepared is the statement for q, or nil when it cannot be prepared (the
// store closed, the cache full, or an error, which the query, run
// unprepared, then reports as before).
func (s *Store) prepared(ctx context.Context, q string) *sql.Stmt {
	c := &s.stmts
	c.mu.Lock()
	st, ok := c.m[q]
	full := c.closed || len(c.m) >= maxStmts
	c.mu.Unlock()
	if ok || full {
		return st
	}
	st, err := s.db.PrepareContext(ctx, q)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[q]; ok || c.closed { // prepared meanwhile, or closed
		_ = st.Close()
		return old
	}
	if c.m == nil {
		c.m = map[string]*sql.Stmt{}
	}
	c.m[q] = st
	return st
}

// closeStmts closes the cached statements (Close).
func (s *Store) closeStmts() {
	c := &s.stmts
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, st := range c.m {
		_ = st.Close()
	}
	c.m = nil
}

// query is db.QueryContext with q prepared once.
func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := s.prepared(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.db.QueryContext(ctx, q, args...)
}

// queryRow is db.QueryRowContext with q prepared once.
func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if st := s.prepared(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.db.QueryRowContext(ctx, q, args...)
}

// inTx runs a transaction's queries with the store's prepared statements
// (tx.StmtContext uses the one prepared on the transaction's connection).
// A statement first met in a transaction is prepared on another
// connection of the pool, which is not limited (a pool of one would wait
// on the transaction's own connection here).
type inTx struct {
	s  *Store
	tx *sql.Tx
}

func (t inTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if st := t.s.prepared(ctx, q); st != nil {
		return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, q, args...)
}

func (t inTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := t.s.prepared(ctx, q); st != nil {
		return t.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, q, args...)
}

func (t inTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if st := t.s.prepared(ctx, q); st != nil {
		return t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, q, args...)
}

// txStmt is q prepared once, for tx: run it as often as needed in the
// transaction (closed when it ends).
func (s *Store) txStmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	if st := s.prepared(ctx, q); st != nil {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, q)
}
