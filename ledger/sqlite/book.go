package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// Book loads everything the cost engine needs for one user, from one
// snapshot: the user, rentals with events, traffic usage and idle
// intervals, volumes with events, charges, top-ups and balance records.
// It runs a fixed ten queries however long the history: each child table
// is read once for the user and attached by parent id. Errors: ENOTFOUND
// for an unknown user.
//
// It leaves Book.Benches and Book.JobRuns empty: every chat command,
// dashboard request and card loads a book, and a user's benches and job
// runs (which an agent's token adds to, 12 an hour) would be read and
// decoded by all of them for the few that use them. Those read them
// with the Benchmarks' methods (ledger.LoadDelivered).
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
		return loadAmounts(ctx, tx, "balances", userID, func(id, ref int64, p string, amt ledger.Decimal, c ledger.Currency, at time.Time, api bool) {
			b.Balances = append(b.Balances, ledger.BalanceRecord{ID: id, UserID: userID, Platform: p, Amount: amt, Currency: c, At: at, API: api, Ref: ref})
		})
	})
	if err != nil {
		return nil, err
	}
	return &b, nil
}
