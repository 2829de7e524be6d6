package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// readStmt returns query prepared on the read pool, preparing it the
// first time: for the small reads a loop makes every few seconds, whose
// parsing would cost more than running them (database/sql prepares it
// again on each pooled connection that runs it).
func (db *DB) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	db.mu.Lock()
	s, ok := db.rstmts[query]
	closed := db.closed
	db.mu.Unlock()
	if ok {
		return s, nil
	}
	if closed {
		return nil, fmt.Errorf("sqlite: the database is closed")
	}
	s, err := db.reader.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if prev, ok := db.rstmts[query]; ok || db.closed {
		s.Close()
		if !ok {
			return nil, fmt.Errorf("sqlite: the database is closed")
		}
		return prev, nil
	}
	if db.rstmts == nil {
		db.rstmts = map[string]*sql.Stmt{}
	}
	db.rstmts[query] = s
	return s, nil
}

// stmtTx is a read transaction whose queries run as statements prepared
// once on the read pool and bound to the transaction: Book runs the same
// fixed queries for every page and command that reads a ledger, and
// parsing them cost about a tenth of a dashboard page. A query not yet
// prepared runs plainly and is noted in missed, for prepare to prepare
// once the transaction has ended: preparing on the pool needs a
// connection of its own, which a transaction holding one must never wait
// for (with every reader busy it would wait forever). A statement bound
// with Tx.StmtContext is closed with the transaction; the pool's
// prepared copy stays for the next one.
type stmtTx struct {
	db     *DB
	tx     *sql.Tx
	missed *[]string
}

var _ querier = stmtTx{}

// stmt returns the prepared statement of query bound to the transaction,
// or nil when it is not prepared yet.
func (q stmtTx) stmt(ctx context.Context, query string) *sql.Stmt {
	q.db.mu.Lock()
	s, ok := q.db.rstmts[query]
	q.db.mu.Unlock()
	if !ok {
		*q.missed = append(*q.missed, query)
		return nil
	}
	return q.tx.StmtContext(ctx, s)
}

// prepare prepares the queries the transaction ran plainly; errors only
// leave them plain.
func (q stmtTx) prepare(ctx context.Context) {
	for _, query := range *q.missed {
		_, _ = q.db.readStmt(ctx, query)
	}
}

func (q stmtTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return q.tx.ExecContext(ctx, query, args...)
}

func (q stmtTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := q.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return q.tx.QueryContext(ctx, query, args...)
}

func (q stmtTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := q.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return q.tx.QueryRowContext(ctx, query, args...)
}
