package sqlite

import "context"

// WriterPragma runs PRAGMA p on the writer pool's one connection, so a
// test can shrink the database's size limit or its busy timeout for the
// connection every write goes through.
func WriterPragma(ctx context.Context, db *DB, p string) error {
	_, err := db.writer.ExecContext(ctx, "PRAGMA "+p)
	return err
}

// PreparedReads says how many read queries are kept prepared.
func PreparedReads(db *DB) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return len(db.rstmts)
}
