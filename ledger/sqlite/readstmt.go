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
