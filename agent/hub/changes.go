package hub

import (
	"context"
	"errors"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// RentalChanged is told that a rental's state changed outside the hub (a
// /stop, /resume or /release typed in chat, or an /undo of one). The hub
// caches rentals and tokens for up to TokenTTL; without this, an agent
// could keep reporting for a released rental, or an idle streak could be
// opened on a stopped one, until the cache expired. It forgets the cached
// rental; for a rental no longer running it closes the open idle interval
// at the stop or release; for a released rental it revokes the token at
// once (revocation is final: an undone release needs a new token from
// /agent). It implements the conversation core's rental watcher.
func (t *Tokens) RentalChanged(ctx context.Context, r *ledger.Rental) error {
	h := t.hub
	h.Refresh(r.ID)
	var errs []error
	if st := r.State(); st != ledger.Running {
		errs = append(errs, h.CloseIdleAt(ctx, r.ID, lastStop(r)))
	}
	if r.State() == ledger.Released {
		errs = append(errs, t.Revoke(ctx, r.ID))
	}
	return errors.Join(errs...)
}

// lastStop returns when r last stopped running (its last stop or release).
func lastStop(r *ledger.Rental) time.Time {
	var at time.Time
	for _, e := range r.Events {
		if e.Kind == ledger.EventStop || e.Kind == ledger.EventRelease {
			at = e.At
		}
	}
	if at.IsZero() {
		at = r.LastEventAt()
	}
	return at
}
