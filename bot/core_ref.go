package bot

// Rentals that share a name: a released rental's name is free for a new
// one, and each keeps an address (ledger.RentalRef, yolo@2026-11-02) that
// reaches it. The replies here say when a name was reused, and which
// rental a bare name took when a change could have been meant for another.

import (
	"errors"
	"slices"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// sameNamed returns every rental of the user called x.Name, x among them.
// A failed read is logged and gives none: a note is not worth failing a
// change that was made.
func (r *req) sameNamed(x *ledger.Rental) []*ledger.Rental {
	rs, err := r.c.store.RentalsNamed(r.ctx, r.ledgerID, x.Name)
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
// address when one was written, else as label names it, so the reply says
// which rental changed.
func (r *req) shown(typed string, x *ledger.Rental) string {
	if ledger.IsRentalRef(typed) {
		return typed
	}
	return r.label(x)
}

// label is how a reply names rental x: its address when another rental
// of the user has its name (as /status lists it), else its name. A bare
// "yolo" in a reply leaves the user to guess which yolo it meant.
func (r *req) label(x *ledger.Rental) string {
	if x == nil {
		return ""
	}
	return r.labelIn(r.sameNamed(x), x.ID, x.Name)
}

// labelByID is label of the user's rental id, once called name (a
// journal entry's); name itself when id is 0 or no longer names one.
func (r *req) labelByID(id int64, name string) string {
	if id == 0 || name == "" {
		return name
	}
	rs, err := r.c.store.RentalsNamed(r.ctx, r.ledgerID, name)
	if err != nil {
		r.c.log.Error("bot: rentals of a name", "rental", id, "err", err)
		return name
	}
	return r.labelIn(rs, id, name)
}

// labelIn is label of rental id among same, every rental called name.
func (r *req) labelIn(same []*ledger.Rental, id int64, name string) string {
	n := 0
	for _, o := range same {
		if len(o.Events) > 0 {
			n++
		}
	}
	if n < 2 {
		return name
	}
	for _, o := range same {
		if o.ID == id && len(o.Events) > 0 {
			return ledger.RefOf(same, o, r.loc)
		}
	}
	return name
}

// refusalNamed returns err, a refusal about the rental the user wrote as
// typed, with that rental named as shown names it: the store words its
// refusals with the bare name ("yolo was already released"), which is
// ambiguous once another rental has the name. Any other error, or one
// about a rental that cannot be read, is returned as it is.
func (r *req) refusalNamed(err error, typed string) error {
	var le *ledger.Error
	if typed == "" || !errors.As(err, &le) || le.Key == "" {
		return err
	}
	x, xerr := r.named(typed)
	if xerr != nil {
		return err
	}
	name := r.shown(typed, x)
	if name == x.Name {
		return err
	}
	args := slices.Clone(le.Args)
	for i, a := range args {
		if s, ok := a.(string); ok && s == x.Name {
			args[i] = name
			ne := ledger.Errorc(le.Code, le.Key, args...)
			ne.Err = le.Err
			return ne
		}
	}
	return err
}

// typedRental is the rental name or address cmd was written with, "" for
// a command that names none.
func typedRental(cmd command.Command) string {
	switch c := cmd.(type) {
	case command.StopCmd:
		return c.Name
	case command.ResumeCmd:
		return c.Name
	case command.ReleaseCmd:
		return c.Name
	case command.PriceCmd:
		return c.Name
	case command.TrafficTermsCmd:
		return c.Name
	case command.TrafficUsageCmd:
		return c.Name
	case command.ChargeCmd:
		return c.Target
	case command.WhyCmd:
		return c.Name
	case command.AutoReleaseCmd:
		return c.Name
	}
	return ""
}

// otherAt turns err, a refusal of a change at t to the rental a bare name
// took, into one that names the earlier rental of that name that ran at
// t, when t lies before the taken one's start: "before yolo started"
// alone leaves the user to guess that another yolo is meant. Any other
// error, or an address, is returned as it is.
func (r *req) otherAt(err error, typed string, t time.Time) error {
	if ledger.ErrorCode(err) != ledger.EINVALID || ledger.IsRentalRef(typed) {
		return err
	}
	x, xerr := r.named(typed)
	if xerr != nil {
		return err
	}
	if ref := r.olderAt(typed, x, t); ref != "" {
		return ledger.Errorc(ledger.EINVALID, "ref_other_then", x.Name, t, ref)
	}
	return err
}

// olderAt returns the address of the rental of x's name that ran at t,
// when typed is a bare name that took x and t lies before x started; ""
// otherwise.
func (r *req) olderAt(typed string, x *ledger.Rental, t time.Time) string {
	if ledger.IsRentalRef(typed) || t.IsZero() || !t.Before(x.StartedAt()) {
		return ""
	}
	same := r.sameNamed(x)
	for i := len(same) - 1; i >= 0; i-- {
		o := same[i]
		if o.ID == x.ID || len(o.Events) == 0 || t.Before(o.StartedAt()) {
			continue
		}
		if end, ok := o.ReleasedAt(); ok && !t.Before(end) {
			continue
		}
		return ledger.RefOf(same, o, r.loc)
	}
	return ""
}
