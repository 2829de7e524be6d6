package bot

import (
	"context"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// ReceiptStore is what /receipt reads of ledger.BenchStore: a rental's
// benches, the user's first works and job runs. The Store answers it when
// it keeps them (ledger/sqlite's DB does); a Store that does not makes
// /receipt say receipts are off.
type ReceiptStore interface {
	Benches(ctx context.Context, userID, rentalID int64) ([]ledger.BenchRecord, error)
	FirstWorks(ctx context.Context, userID int64) (map[int64]time.Time, error)
	JobRuns(ctx context.Context, userID int64, label string) ([]ledger.JobRun, error)
}

// receipts is the family of /receipt: what a rental delivered for what it
// costs, from the bench its agent ran.
type receipts struct{ *req }

func (receipts) register(t *table) {
	on(t, receipts.receipt)
}

// receipt shows the user's rental's receipt (ledger.BuildReceipt, as the
// card and the dashboard make it): released rentals too. Another user's
// rental is not found, as a name nobody has. Without a bench it says why
// and how to get one.
func (r receipts) receipt(c command.ReceiptCmd) error {
	st, _ := r.c.store.(ReceiptStore)
	if st == nil {
		return r.answer(r.plain(view.ReceiptsOffText(r.lang)))
	}
	x, err := r.named(c.Name)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		return ledger.Errorc(ledger.ENOTFOUND, "no_rental_called", c.Name)
	}
	if err != nil {
		return err
	}
	name := r.shown(c.Name, x)
	benches, err := st.Benches(r.ctx, r.ledgerID, x.ID)
	if err != nil {
		return err
	}
	if len(benches) == 0 {
		return r.answer(r.plain(view.NoReceiptText(r.lang, name, r.noReceipt(x))))
	}
	b, err := r.book()
	if err != nil {
		return err
	}
	fw, err := st.FirstWorks(r.ctx, r.ledgerID)
	if err != nil {
		return err
	}
	runs, err := st.JobRuns(r.ctx, r.ledgerID, "")
	if err != nil {
		return err
	}
	in := ledger.ReceiptInput{Book: b, Rental: x, Benches: benches, FirstWork: fw[x.ID], Jobs: runs, Now: r.now}
	for _, y := range b.Rentals {
		if y.ID == x.ID {
			in.Rental = y
		}
	}
	rc := ledger.BuildReceipt(in)
	return r.answer(r.plain(view.ReceiptText(r.lang, rc, name, r.loc, r.now)))
}

// noReceipt says why rental x has no bench: the user turned benches off,
// no agent reports for it, or its agent has not sent one (an older agent,
// --no-bench, a GPU kept busy).
func (r receipts) noReceipt(x *ledger.Rental) view.NoReceipt {
	if r.lu.Settings.BenchOff {
		return view.NoReceiptOff
	}
	if x.State() == ledger.Released {
		return view.NoReceiptReleased
	}
	if ag := r.c.states; ag != nil {
		if _, seen := ag.AgentState(x.ID); !seen {
			return view.NoReceiptNoAgent
		}
	}
	return view.NoReceiptYet
}
