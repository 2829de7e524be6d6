package scheduler_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// unavailableUsers is the real store whose User fails as a busy database
// does.
type unavailableUsers struct{ scheduler.Store }

func (unavailableUsers) User(context.Context, int64) (ledger.User, error) {
	return ledger.User{}, ledger.Errorc(ledger.EUNAVAILABLE, "store_unavailable")
}

// unavailableRentals is the real store whose RentalByID fails as a busy
// database does.
type unavailableRentals struct{ scheduler.Store }

func (unavailableRentals) RentalByID(context.Context, int64) (*ledger.Rental, error) {
	return nil, ledger.Errorc(ledger.EUNAVAILABLE, "store_unavailable")
}

// TestPress_StoreUnavailable presses Keep while the store cannot serve
// the user or the rental: the toast is the scheduler's own "something went
// wrong" (a press is not retried), not the store's "it will be retried",
// and not "that rental is not yours".
func TestPress_StoreUnavailable(t *testing.T) {
	for _, c := range []struct {
		name  string
		store func(scheduler.Store) scheduler.Store
	}{
		{"User", func(s scheduler.Store) scheduler.Store { return unavailableUsers{s} }},
		{"RentalByID", func(s scheduler.Store) scheduler.Store { return unavailableRentals{s} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			btn := testButtons()
			_, err := scheduler.New(scheduler.Config{Store: c.store(e.db), Hub: e.hub, Sender: e.chat, Buttons: btn,
				Now: e.clk.Now, Tick: 30 * time.Second, NoChart: true, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			e.btn = btn
			e.press(scheduler.ActKeep, 1)
			toasts := e.chat.Toasts()
			if len(toasts) != 1 || toasts[0] != "Something went wrong; nothing was changed. Try again." {
				t.Errorf("toasts %q, want the internal-error toast", toasts)
			}
		})
	}
}
