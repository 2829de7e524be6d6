package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// Book loads everything the cost engine needs for one user, from one
// snapshot: the user, rentals with events, traffic usage and idle
// intervals, volumes with events, charges, top-ups and balance records,
// and the benches and job runs of the rentals. It runs a fixed twelve
// queries however long the history: each child table
// is read once for the user and attached by parent id. Errors: ENOTFOUND
// for an unknown user.
func (db *DB) Book(ctx context.Context, userID int64) (*ledger.Book, error) {
	var (
		b      ledger.Book
		missed []string
	)
	defer func() { stmtTx{db: db, missed: &missed}.prepare(ctx) }()
	err := db.withRead(ctx, func(rtx *sql.Tx) error {
		missed = missed[:0] // a retried read notes them again
		tx := stmtTx{db, rtx, &missed}
		var err error
		if b.User, err = userByID(ctx, tx, userID); err != nil {
			return err
		}
		if b.Rentals, err = loadRentals(ctx, tx, `r.user_id = ?`, userID); err != nil {
			return err
		}
		if b.Volumes, err = loadVolumes(ctx, tx, `v.user_id = ?`, userID); err != nil {
			return err
		}
		if b.Charges, err = loadCharges(ctx, tx, userID); err != nil {
			return err
		}
		err = loadAmounts(ctx, tx, "topups", userID, func(id, ref int64, p string, amt ledger.Decimal, c ledger.Currency, at time.Time, _ bool) {
			b.TopUps = append(b.TopUps, ledger.TopUp{ID: id, UserID: userID, Platform: p, Amount: amt, Currency: c, At: at, Ref: ref})
		})
		if err != nil {
			return err
		}
		err = loadAmounts(ctx, tx, "balances", userID, func(id, ref int64, p string, amt ledger.Decimal, c ledger.Currency, at time.Time, api bool) {
			b.Balances = append(b.Balances, ledger.BalanceRecord{ID: id, UserID: userID, Platform: p, Amount: amt, Currency: c, At: at, API: api, Ref: ref})
		})
		if err != nil {
			return err
		}
		if b.Benches, err = queryAll(ctx, tx, "list benches", scanBench,
			`SELECT `+benchCols+` FROM benches WHERE user_id = ? ORDER BY received_at, id`, userID); err != nil {
			return err
		}
		b.JobRuns, err = queryAll(ctx, tx, "list job runs", scanJobRun,
			`SELECT `+jobRunCols+` FROM job_runs WHERE user_id = ? ORDER BY started_at, id`, userID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &b, nil
}
