// Package sqlite implements ledger.Store on a SQLite file with
// modernc.org/sqlite (pure Go, so the server builds with CGO_ENABLED=0).
//
// # Connections
//
// A DB holds two pools on the same file. Writes go through a pool of one
// connection whose transactions begin with BEGIN IMMEDIATE (_txlock=immediate):
// database/sql queues writers of this process on that one connection, so they
// never meet SQLITE_BUSY, and the immediate lock makes a write transaction
// take the file's write lock before it reads, so a writer in another process
// (a backup, a second server by mistake) waits for busy_timeout instead of
// failing mid-transaction with SQLITE_BUSY, as deferred read-then-write
// transactions do. Reads (User, Users, Book, Meta, the query helpers) use a
// separate pool of query_only connections; in WAL mode they read a
// consistent snapshot without blocking the writer or each other.
//
// Every connection gets its PRAGMAs from the DSN (busy_timeout, WAL,
// foreign keys, synchronous), since a PRAGMA run with Exec reaches only one
// pooled connection.
//
// # Files and a full disk
//
// The database file is created owner-only (0600) whatever the umask, and
// SQLite gives its -wal and -shm files the database file's mode, so the
// ledger (platform keys sealed, but balances and hosts in the clear) is
// never readable by other users of the machine. A file found with a
// looser mode is tightened at open, with a warning (see tighten).
//
// A write that meets a full disk fails with EFULL and changes nothing.
// The write-ahead log is what fills first: it grows until a checkpoint
// copies it into the database file, and the checkpoint needs room of its
// own. So after a full-disk failure the store makes sure the failed
// transaction left nothing open on its connection, checkpoints the log
// and truncates it
// (wal_checkpoint(TRUNCATE)), and if that worked tries the transaction
// once more; until a checkpoint works, each successful write is followed
// by one, so the room freed goes to the checkpoint before the growing log
// spends it. Once a few megabytes are free, writes go on without a
// restart. journal_size_limit keeps the log small after every checkpoint.
//
// # Durability
//
// The default synchronous=NORMAL is durable against process crashes
// (SIGKILL, a panic, an OOM kill): a committed transaction is in the WAL file
// and survives. Against power loss or a kernel crash the last transactions
// may be rolled back (the database stays consistent). WithFullSync selects
// synchronous=FULL, which fsyncs the WAL on every commit and so survives
// power loss too, at about 0.2-0.3 ms more per write transaction.
//
// # Representation
//
// Times are stored as INTEGER Unix seconds in UTC: integers compare and sort
// fast, and the ledger bills by the second, so event and action times are
// truncated to whole seconds before they are checked and stored (what a
// method checks is exactly what it stores). Durations are INTEGER seconds
// where the domain requires whole seconds (min, step) and INTEGER
// nanoseconds (columns ending in _ns) elsewhere, so every time.Duration
// round-trips. Decimals (prices, sizes, amounts) are TEXT in
// ledger.Decimal.String form and parsed back with ledger.ParseDecimal:
// exact, never REAL.
//
// # Journal and undo
//
// Every mutating call inserts one row into actions (user, kind, name, time,
// the optional idempotency key, UNIQUE) in the same transaction as its
// change; every row it inserts carries that action's id, and a call that
// updates a row stores the previous value in the action, so Undo can delete
// and restore exactly what the action did.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/gpuledger/gpuledger/ledger"
)

// DB is the SQLite ledger store. It is safe for concurrent use.
//
// Its methods live on the aggregates it embeds (Rentals, Volumes, Money,
// Agents, ...; see aggregates.go), each implementing the ledger's sets of
// its part: the aggregates are the unit of the store's contract, and the
// embedding keeps one handle for callers, which pass the whole DB where a
// consumer's interface names several sets. DB itself keeps the
// connections and the transactions, and reads the Book, which is every
// aggregate's.
type DB struct {
	Accounts
	Journal
	Rentals
	Volumes
	Money
	Agents
	Orders
	Enrolments
	Connections
	Platforms
	Notices
	Inbox
	Benchmarks
	Rosters

	// Now is the store's clock, read once per transaction for the time of
	// an action when the caller left Action.At zero, and for creation
	// times. It defaults to time.Now; tests set it before use.
	Now func() time.Time

	path     string
	writer   *sql.DB // one connection, BEGIN IMMEDIATE
	reader   *sql.DB // query_only connections
	log      *slog.Logger
	readOnly bool // OpenReadOnly: writer is a mode=ro connection too
	// afterFull is set while a write has failed on a full disk and no
	// checkpoint has completed since (see withTx).
	afterFull atomic.Bool

	mu     sync.Mutex
	stmts  map[string]*sql.Stmt // prepared on the writer's one connection
	rstmts map[string]*sql.Stmt // prepared on the read pool (readStmt)
	closed bool
}

var _ ledger.Store = (*DB)(nil)

// Option configures Open.
type Option func(*config)

type config struct {
	fullSync bool
	readers  int
	logger   *slog.Logger
}

// WithFullSync sets synchronous=FULL: every commit is fsynced, so committed
// writes survive power loss, not only process crashes.
func WithFullSync() Option { return func(c *config) { c.fullSync = true } }

// WithReaders sets the size of the read pool (default: the number of CPUs,
// at least 2).
func WithReaders(n int) Option { return func(c *config) { c.readers = n } }

// WithLogger sets the logger used for migrations (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// openConfig applies opts over the defaults and checks them and path,
// for Open and OpenReadOnly alike.
func openConfig(path string, opts []Option) (config, error) {
	cfg := config{readers: max(runtime.NumCPU(), 2), logger: slog.Default()}
	for _, o := range opts {
		o(&cfg)
	}
	if path == "" || path == ":memory:" {
		return config{}, fmt.Errorf("sqlite: open: a file path is required, got %q", path)
	}
	if cfg.readers < 1 {
		return config{}, fmt.Errorf("sqlite: open: readers must be at least 1, got %d", cfg.readers)
	}
	return cfg, nil
}

// Open opens or creates the database file at path and migrates it to the
// latest schema. path must name a file: an in-memory database would not be
// shared between the write and read pools.
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	cfg, err := openConfig(path, opts)
	if err != nil {
		return nil, err
	}
	if err := checkFile(path); err != nil {
		return nil, err
	}
	created, err := createPrivate(path)
	if err != nil {
		return nil, err
	}
	if !created {
		tighten(path, cfg.logger)
	}
	sync := "normal"
	if cfg.fullSync {
		sync = "full"
	}
	pragmas := url.Values{}
	pragmas.Add("_pragma", "busy_timeout(5000)")
	pragmas.Add("_pragma", "journal_mode(wal)")
	// After a checkpoint the log is cut back to this size rather than
	// kept at its largest: the room it held goes back to the disk.
	pragmas.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", walSizeLimit))
	pragmas.Add("_pragma", "foreign_keys(1)")
	pragmas.Add("_pragma", "synchronous("+sync+")")
	// secure_delete zeroes what a delete or update frees, in the page
	// itself: without it the text of a handled update (which may hold a
	// platform API key sent with /connect) stays readable in free space
	// of the file after its row is gone. See ScrubDeleted for the WAL.
	pragmas.Add("_pragma", "secure_delete(1)")

	wq := url.Values{}
	for k, v := range pragmas {
		wq[k] = append([]string(nil), v...)
	}
	wq.Set("_txlock", "immediate")
	writer, err := sql.Open("sqlite", "file:"+path+"?"+wq.Encode())
	if err != nil {
		removeCreated(path, created)
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)

	db := &DB{Now: time.Now, path: path, writer: writer, log: cfg.logger}
	bindAggregates(db)
	// Check before migrating: a damaged file is not migrated, and a file
	// that cannot be written is refused now rather than at every write.
	if err := retryBusy(ctx, path, db.check); err != nil {
		writer.Close()
		removeCreated(path, created)
		return nil, err
	}
	// Migrate before the read pool exists: the first connection creates the
	// file and switches it to WAL.
	if err := retryBusy(ctx, path, db.migrate); err != nil {
		writer.Close()
		removeCreated(path, created)
		return nil, err
	}

	rq := pragmas
	rq.Add("_pragma", "query_only(1)")
	reader, err := sql.Open("sqlite", "file:"+path+"?"+rq.Encode())
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlite: open %s for reading: %w", path, err)
	}
	reader.SetMaxOpenConns(cfg.readers)
	reader.SetMaxIdleConns(cfg.readers)
	if err := reader.PingContext(ctx); err != nil {
		writer.Close()
		reader.Close()
		return nil, fmt.Errorf("sqlite: open %s for reading: %w", path, err)
	}
	db.reader = reader
	return db, nil
}

// ErrUnusable is wrapped by the errors Open returns for a database file it
// refuses to start on: empty, damaged, not a database, or not writable.
// Their text says what is wrong and what to do.
var ErrUnusable = errors.New("database unusable")

// emptyWait is how long an empty database file may stay empty before
// Open takes it for a lost ledger rather than one being created.
const emptyWait = time.Second

// restoreHint is the advice for a file whose contents are lost or damaged.
const restoreHint = "stop the server and restore the latest backup as docs/deploy.md (\"Backups and restore\") describes; " +
	"to start an empty ledger instead, move the file away"

// checkFile refuses a file that exists but is empty: SQLite would take it
// for a new database and the server would start with an empty ledger, as
// if every entry had been lost. A missing file is a new ledger. A file
// that another process has just created is empty for a few milliseconds,
// until that process writes its first page: an empty file is refused only
// once it has stayed empty for emptyWait.
func checkFile(path string) error {
	fi, err := os.Stat(path)
	for deadline := time.Now().Add(emptyWait); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		fi, err = os.Stat(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sqlite: %w: cannot read %s: %w (fix the path or its permissions: the server needs to read and write the file and its directory)", ErrUnusable, path, err)
	}
	if fi.IsDir() {
		return fmt.Errorf("sqlite: %w: %s is a directory, not a database file (GPULEDGER_DB names the file)", ErrUnusable, path)
	}
	if fi.Size() == 0 {
		return fmt.Errorf("sqlite: %w: %s is an empty file (0 bytes), not a ledger: it was truncated or replaced; %s", ErrUnusable, path, restoreHint)
	}
	return nil
}

// walSizeLimit is the journal_size_limit: the size, in bytes, the
// write-ahead log is cut back to after a checkpoint. The log grows to
// about 4 MB (SQLite's automatic checkpoint at 1000 pages) between
// checkpoints; keeping 1 MB of it saves regrowing it from nothing.
const walSizeLimit = 1 << 20

// check runs PRAGMA quick_check on the file and takes a write transaction
// that changes nothing, so that a damaged database, a file that is not a
// database, or one that cannot be written (a read-only file, a directory
// where the -wal and -shm files cannot be created, a read-only mount)
// stops the start with a message that says what to do, instead of a
// server that answers "Something went wrong" to every write. quick_check
// reads every page once and costs about 20-30 ms per MB on a small shared
// VM (BENCHMARKS.md: under a second for a year-sized 36 MB ledger); it
// skips the cross-check of indexes against tables that makes
// integrity_check about three times slower.
func (db *DB) check(ctx context.Context) error {
	var problems []string
	rows, err := db.writer.QueryContext(ctx, `PRAGMA quick_check(5)`)
	if err == nil {
		for rows.Next() {
			var msg string
			if err = rows.Scan(&msg); err != nil {
				break
			}
			if msg != "ok" {
				problems = append(problems, msg)
			}
		}
		if err == nil {
			err = rows.Err()
		}
		rows.Close()
	}
	if err != nil {
		return unusable(db.path, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("sqlite: %w: %s is damaged (quick_check: %s); %s", ErrUnusable, db.path, strings.Join(problems, "; "), restoreHint)
	}
	// A write that changes nothing: user_version set to what it is.
	err = db.withTx(ctx, func(tx *sql.Tx) error {
		var v int64
		if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, v))
		return err
	})
	if err != nil {
		return unusable(db.path, err)
	}
	return nil
}

// unusable turns an error met while checking the file at path at start
// into one that says what is wrong and what to do.
func unusable(path string, err error) error {
	switch sqliteCode(err) & 0xff {
	case sqlite3.SQLITE_READONLY:
		return fmt.Errorf("sqlite: %w: %s cannot be written (%w): the server needs write access to the file and to its directory "+
			"(for the -wal and -shm files); fix the owner or permissions (in Docker the image runs as uid 10001: chown 10001:10001 the file and the directory), "+
			"or remount the volume read-write", ErrUnusable, path, err)
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH:
		return fmt.Errorf("sqlite: %w: cannot open %s (%w): the server needs read and write access to the file and to its directory "+
			"(for the -wal and -shm files); fix the path, the owner or the permissions", ErrUnusable, path, err)
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("sqlite: %w: %s is damaged or is not a gpuledger database (%w); %s", ErrUnusable, path, err, restoreHint)
	case sqlite3.SQLITE_FULL:
		return fmt.Errorf("sqlite: %w: the disk holding %s is full (%w): free some space and start again", ErrUnusable, path, err)
	}
	return fmt.Errorf("sqlite: open %s: %w", path, err)
}

// Close closes both pools. Pending writes have committed or rolled back
// when it returns.
func (db *DB) Close() error {
	var errs []error
	db.mu.Lock()
	for _, s := range db.stmts {
		errs = append(errs, s.Close())
	}
	db.stmts = nil
	for _, s := range db.rstmts {
		errs = append(errs, s.Close())
	}
	db.rstmts = nil
	db.closed = true
	db.mu.Unlock()
	if db.reader != nil {
		errs = append(errs, db.reader.Close())
	}
	errs = append(errs, db.writer.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// retryBusy runs a start-up step (the check, the migrations) of the file
// at path, retrying for up to about five seconds while it fails with
// SQLITE_BUSY. Processes opening a brand-new file at the same moment can
// get SQLITE_BUSY at once, without the busy timeout, while one of them
// switches the file to WAL; a retry then succeeds.
func retryBusy(ctx context.Context, path string, step func(context.Context) error) error {
	wait := 10 * time.Millisecond
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := step(ctx)
		if err == nil || sqliteCode(err)&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sqlite: open %s: %w", path, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// now returns the store's clock truncated to the second, in UTC.
func (db *DB) now() time.Time {
	f := db.Now
	if f == nil {
		f = time.Now
	}
	return f().UTC().Truncate(time.Second)
}

// withTx runs fn in one write transaction (BEGIN IMMEDIATE), committing if
// fn returns nil and rolling back otherwise.
// Its errors pass through storeError, so a busy, locked or full database
// reaches callers as a ledger code.
//
// A transaction that fails on a full disk is tried once more when a
// checkpoint gives the write-ahead log's room back (see afterFull), so fn
// may run twice: the first run's changes were rolled back, and fn must
// not keep effects outside the transaction between runs (the store's do
// not: they set their results afresh).
func (db *DB) withTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if db.readOnly {
		return fmt.Errorf("sqlite: %s is open read-only", db.path)
	}
	err := db.tx(ctx, fn)
	switch {
	case ledger.ErrorCode(err) == ledger.EFULL:
		db.dropPoisoned(ctx)
		if db.checkpoint(ctx) {
			err = db.tx(ctx, fn)
		}
		if ledger.ErrorCode(err) == ledger.EFULL && !db.afterFull.Swap(true) {
			db.log.Warn("sqlite: the disk holding the database is full: writes fail until some room is freed", "db", db.path)
		}
	case err == nil && db.afterFull.Load():
		// The first writes after room was freed: checkpoint while that
		// room lasts, before the growing log spends it.
		if db.checkpoint(ctx) {
			db.afterFull.Store(false)
			db.log.Info("sqlite: writes work again after the disk was full: the write-ahead log is checkpointed and truncated", "db", db.path)
		}
	}
	return err
}

// tx is one attempt of withTx.
func (db *DB) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return storeError(fmt.Errorf("sqlite: begin: %w", err))
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return storeError(err)
	}
	if err := tx.Commit(); err != nil {
		return storeError(fmt.Errorf("sqlite: commit: %w", err))
	}
	return nil
}

// dropPoisoned runs after a write failed on a full disk. SQLite rolls the
// transaction back itself on a full disk, and database/sql then returns
// the connection to the pool; should the failure have left the connection
// inside a transaction (a failed COMMIT that SQLite kept open), every
// later BEGIN on it would fail and the store would stay blocked. So it
// asks the connection to roll back: when there was something to roll
// back, the connection is closed instead of reused, and the next write
// opens a fresh one with the same PRAGMAs.
func (db *DB) dropPoisoned(ctx context.Context) {
	conn, err := db.writer.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
		return // "no transaction is active": the connection is clean
	}
	db.log.Warn("sqlite: a write on a full disk left its connection inside a transaction: closed it", "db", db.path)
	// driver.ErrBadConn makes database/sql close the connection rather
	// than return it to the pool.
	conn.Raw(func(any) error { return driver.ErrBadConn })
}

// checkpoint copies the write-ahead log into the database file and
// truncates the log to nothing (wal_checkpoint(TRUNCATE)), and reports
// whether it completed. The log grows until a checkpoint, and the
// checkpoint itself needs room in the database file: after a full disk,
// the few megabytes freed were spent by the growing log before the next
// automatic checkpoint (at about 4 MB of log), and writes stayed blocked
// until a restart. Checkpointing at once gives the log's room back while
// there is still room to do it.
func (db *DB) checkpoint(ctx context.Context) bool {
	var busy, logPages, done int
	err := db.writer.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logPages, &done)
	return err == nil && busy == 0
}

// withWrite is withTx with statements prepared once and reused (see wtx),
// for the write paths that run often.
func (db *DB) withWrite(ctx context.Context, fn func(tx *wtx) error) error {
	t := &wtx{db: db}
	err := db.withTx(ctx, func(tx *sql.Tx) error {
		t.Tx = tx
		return fn(t)
	})
	// Prepare what this transaction ran unprepared, now that the one
	// writer connection is free again: preparing on the DB while the
	// transaction holds that connection would wait for it forever.
	for _, q := range t.miss {
		s, perr := db.writer.PrepareContext(ctx, q)
		if perr != nil {
			continue // it stays unprepared; the statement itself reported any real error
		}
		db.mu.Lock()
		if _, ok := db.stmts[q]; ok || db.closed {
			s.Close()
		} else {
			if db.stmts == nil {
				db.stmts = map[string]*sql.Stmt{}
			}
			db.stmts[q] = s
		}
		db.mu.Unlock()
	}
	return err
}

// wtx is a write transaction whose statements are prepared once per DB and
// reused: the writer pool has one connection, so a statement prepared on
// it stays prepared there, and SQLite skips parsing and planning the same
// SQL on every write (a third of a small transaction's CPU time
// otherwise). A statement not prepared yet runs unprepared and is
// prepared after the transaction.
type wtx struct {
	*sql.Tx
	db   *DB
	miss []string
}

// stmt returns the cached statement for query bound to the transaction,
// or nil if there is none yet.
func (t *wtx) stmt(ctx context.Context, query string) *sql.Stmt {
	t.db.mu.Lock()
	s, ok := t.db.stmts[query]
	t.db.mu.Unlock()
	if !ok {
		if len(t.miss) < 32 {
			t.miss = append(t.miss, query)
		}
		return nil
	}
	return t.Tx.StmtContext(ctx, s)
}

// ExecContext runs a cached prepared statement in the transaction.
func (t *wtx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := t.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

// QueryContext runs a cached prepared query in the transaction.
func (t *wtx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := t.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a cached prepared query in the transaction.
func (t *wtx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := t.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

// withRead runs fn in one read transaction on the read pool, so that all
// its queries see the same snapshot.
// Its errors pass through storeError, as withTx's do.
func (db *DB) withRead(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return storeError(fmt.Errorf("sqlite: begin read: %w", err))
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return storeError(err)
	}
	return storeError(tx.Commit())
}

// sqliteCode returns the extended result code of a SQLite error, or 0.
func sqliteCode(err error) int {
	var e *msqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

// storeError maps what SQLite (or the file system, or database/sql) says
// about the store itself to a ledger code, so that no caller needs to know
// SQLite's result codes: a full disk (SQLITE_FULL, ENOSPC) is EFULL; a
// busy or locked database, an I/O error, a file that cannot be opened, a
// closed pool or a cancelled or expired context is EUNAVAILABLE. Both
// mean "nothing was changed, try again later". The cause stays in the
// chain (ledger.Error.Err) for logs and for this package's own checks
// (sqliteCode). A *ledger.Error, nil, and anything else (a constraint
// failure, a bug) are returned as they are.
func storeError(err error) error {
	if err == nil {
		return nil
	}
	var le *ledger.Error
	if errors.As(err, &le) {
		return err
	}
	code := ""
	switch sqliteCode(err) & 0xff {
	case sqlite3.SQLITE_FULL:
		code = ledger.EFULL
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
		code = ledger.EUNAVAILABLE
	}
	switch {
	case errors.Is(err, syscall.ENOSPC):
		code = ledger.EFULL
	case code != "":
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, sql.ErrConnDone):
		code = ledger.EUNAVAILABLE
	}
	switch code {
	case ledger.EFULL:
		e := ledger.Errorc(ledger.EFULL, "disk_full")
		e.Err = err
		return e
	case ledger.EUNAVAILABLE:
		e := ledger.Errorc(ledger.EUNAVAILABLE, "store_unavailable")
		e.Err = err
		return e
	}
	return err
}

// isConstraint reports whether err is a constraint failure of any kind.
func isConstraint(err error) bool {
	return sqliteCode(err)&0xff == sqlite3.SQLITE_CONSTRAINT
}

// isUnique reports whether err is a UNIQUE or PRIMARY KEY violation.
func isUnique(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// constraintError maps a constraint failure to ECONFLICT with msg and
// wraps anything else as an internal error with op as context.
func constraintError(err error, op, msg string) error {
	if isConstraint(err) {
		return ledger.Errorf(ledger.ECONFLICT, "%s", msg)
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// unix converts t to the stored form: Unix seconds, UTC.
func unix(t time.Time) int64 { return t.Unix() }

// fromUnix converts a stored time back, in UTC.
func fromUnix(s int64) time.Time { return time.Unix(s, 0).UTC() }

// nullUnix stores a zero time as NULL.
func nullUnix(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.Unix(), Valid: true}
}

// fromNullUnix is the inverse of nullUnix.
func fromNullUnix(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return fromUnix(n.Int64)
}

// sec truncates t to whole seconds in UTC, the store's time resolution.
func sec(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Second)
}

// dec parses a stored decimal; a malformed one is corruption, reported as
// an internal error.
func dec(s, column string) (ledger.Decimal, error) {
	d, err := ledger.ParseDecimal(s)
	if err != nil {
		return ledger.Decimal{}, fmt.Errorf("sqlite: column %s holds %q, not a decimal: %v", column, s, err) // %v: a corrupt column is internal, not the caller's invalid input
	}
	return d, nil
}

// boolInt stores a bool as 0 or 1.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
