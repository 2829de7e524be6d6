package ledger

import "testing"

// TestRental_PriceAtOnReleased corrects the rate of a rental that was
// already released: the new rate bills from the time it applied, and the
// statement splits the running segment there.
func TestRental_PriceAtOnReleased(t *testing.T) {
	// Ran 4 h at 2.00/h, released; the bill shows 3.00/h from hour 1.
	r := newRental("box1", PerSecond, "2.00", UnitHour, CNY,
		ev(EventStart, 0), ev(EventStop, 2*hour), ev(EventResume, 3*hour), ev(EventRelease, 5*hour))
	money(t, StatementAsOf(bookOf(r), off(6*hour)).Rentals[0].Compute, "8.00")

	fix := priceEv(1*hour, "3.00", UnitHour)
	if err := r.CheckPriceAt(fix); err != nil {
		t.Fatalf("CheckPriceAt inside the life: %v", err)
	}
	r.InsertEvent(fix)
	if r.Events[1] != fix || r.Events[len(r.Events)-1].Kind != EventRelease {
		t.Fatalf("events after insert: %+v", r.Events)
	}
	// 1 h at 2.00 + 1 h at 3.00 (to the stop) + 2 h at 3.00 (resumed).
	money(t, StatementAsOf(bookOf(r), off(6*hour)).Rentals[0].Compute, "11.00")

	t.Run("ErrOutsideLife", func(t *testing.T) {
		for _, at := range []Event{priceEv(-hour, "3", UnitHour), priceEv(5*hour, "3", UnitHour), priceEv(7*hour, "3", UnitHour)} {
			if err := r.CheckPriceAt(at); ErrorCode(err) != EINVALID {
				t.Errorf("price at %s: got %v, want EINVALID", at.At, err)
			}
		}
	})
	t.Run("ErrBadPrice", func(t *testing.T) {
		if err := r.CheckPriceAt(priceEv(hour, "-1", UnitHour)); err == nil {
			t.Error("a negative price was accepted")
		}
	})
}
