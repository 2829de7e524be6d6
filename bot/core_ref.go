package bot

// Rentals that share a name: a released rental's name is free for a new
// one, and each keeps an address (ledger.RentalRef, yolo@2026-11-02) that
// reaches it. The replies here say when a name was reused, and which
// rental a bare name took when a change could have been meant for another.

import (
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// sameNamed returns every rental of the user called x.Name, x among them.
// A failed read is logged and gives none: a note is not worth failing a
// change that was made.
func (r *req) sameNamed(x *ledger.Rental) []*ledger.Rental {
	rs, err := r.c.store.RentalsNamed(r.ctx, r.u.UserID, x.Name)
	if err != nil {
		r.c.log.Error("bot: rentals of a name", "rental", x.ID, "err", err)
		return nil
	}
	return rs
}

// reuseNote is the line (with its leading newline) that tells a new
// rental's owner that its name was an earlier rental's, and that rental's
// address; "" when the name is new.
func (r *req) reuseNote(x *ledger.Rental) string {
	if n := view.ReuseNote(x, r.sameNamed(x), r.loc, r.now, r.lang); n != "" {
		return "\n" + n
	}
	return ""
}

// tookNote is the line (with its leading newline) on a change made
// through typed, which took rental x: when typed is a bare name that other
// rentals have too, it says which one it took and how to reach the
// others; "" otherwise (an address names its rental already).
func (r *req) tookNote(typed string, x *ledger.Rental) string {
	if ledger.IsRentalRef(typed) {
		return ""
	}
	if n := view.TookNote(x, r.sameNamed(x), r.loc, r.now, r.lang); n != "" {
		return "\n" + n
	}
	return ""
}

// shown is how a reply names rental x that the user wrote as typed: the
// address when one was written, so the reply says which rental changed.
func shown(typed string, x *ledger.Rental) string {
	if ledger.IsRentalRef(typed) {
		return typed
	}
	return x.Name
}
