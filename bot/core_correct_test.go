package bot_test

import (
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
)

// statement is alice's whole ledger as of the env's clock.
func (e *env) statement(user int64) *ledger.Statement {
	e.t.Helper()
	return ledger.StatementAsOf(e.book(user), e.now)
}

// TestCore_CorrectPastTerms corrects terms after the fact: a released
// rental's rate from the time it applied, its traffic price, and the price
// of a volume created without one; each is one /undo away from the old
// terms, and a time outside the rental's life changes nothing.
func TestCore_CorrectPastTerms(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 2/h")
	e.now = t0.Add(4 * time.Hour)
	contains(t, e.say(alice, "/release box1"), "released", "¥8.00")
	compute := func(t *testing.T, want string) {
		t.Helper()
		st := e.statement(alice)
		if len(st.Rentals) != 1 || st.Rentals[0].Compute.String() != want {
			t.Fatalf("compute = %+v, want %s", st.Rentals, want)
		}
	}

	t.Run("PriceOnReleased", func(t *testing.T) {
		// 10:00 to 14:00 Shanghai; the bill says 3/h from 11:00.
		contains(t, e.say(alice, "/price box1 3/h at 11:00"), "✓", "box1", "¥3.00/h", "11:00")
		compute(t, "11.00")
		contains(t, e.say(alice, "/undo"), "undone", "price change", "box1")
		compute(t, "8.00")
	})
	t.Run("ErrPriceOutsideLife", func(t *testing.T) {
		contains(t, e.say(alice, "/price box1 3/h at 14:00"), "✗", "released")
		contains(t, e.say(alice, "/price box1 3/h at 09:00"), "✗", "before box1 started")
		compute(t, "8.00")
	})
	t.Run("TrafficOnReleased", func(t *testing.T) {
		contains(t, e.say(alice, "/traffic box1 price=0.5/GB"), "✓", "box1")
		x, err := e.db.Rental(t.Context(), alice, "box1")
		if err != nil || !x.Traffic.Priced || x.Traffic.PricePerGB.String() != "0.5" {
			t.Fatalf("traffic = %+v, %v", x, err)
		}
		contains(t, e.say(alice, "/undo"), "undone", "traffic price")
		if x, _ := e.db.Rental(t.Context(), alice, "box1"); x.Traffic.Priced {
			t.Fatalf("undo left traffic priced: %+v", x.Traffic)
		}
	})
	t.Run("PriceVolumeLater", func(t *testing.T) {
		e.now = t0
		contains(t, e.say(alice, "/storage sd1 100GB"), "sd1", "UNPRICED")
		e.now = t0.Add(24 * time.Hour)
		contains(t, e.say(alice, "/storage sd1 price=0.01/GB/day"), "✓", "sd1", "¥0.01")
		st := e.statement(alice)
		if len(st.Volumes) != 1 || !st.Volumes[0].Priced || st.Volumes[0].Charge.String() != "1.00" {
			t.Fatalf("volumes = %+v", st.Volumes)
		}
		// From a time on: 12 h at 0.01, then 12 h at 0.02, over 100 GB.
		contains(t, e.say(alice, "/storage sd1 price=0.02/GB/day at 22:00"), "✓", "sd1", "¥0.02", "22:00")
		if st := e.statement(alice); st.Volumes[0].Charge.String() != "1.50" {
			t.Fatalf("after a change at 22:00: %+v", st.Volumes[0])
		}
		contains(t, e.say(alice, "/undo"), "undone", "volume price", "sd1")
		contains(t, e.say(alice, "/undo"), "undone", "volume price", "sd1")
		if st := e.statement(alice); st.Volumes[0].Priced {
			t.Fatalf("undo left the volume priced: %+v", st.Volumes[0])
		}
		contains(t, e.say(alice, "/storage nosuch price=0.01/GB/day"), "✗", "nosuch")
	})
}
