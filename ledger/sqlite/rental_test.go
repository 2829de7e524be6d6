package sqlite_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestDB_CreateRental(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		in := box("big", at(-2*time.Hour+300*time.Millisecond))
		in.UserID = 999 // ignored: the action's user owns it
		in.GPU, in.GPUCount, in.Mode = "H100", 8, ledger.PerHour
		in.Price = ledger.Price{Amount: ledger.MustDecimal("21.52"), Unit: ledger.UnitHour}
		in.Currency = ledger.USD
		in.Min, in.Step = 10*time.Minute, time.Minute
		in.Floor = ledger.MustDecimal("0.01")
		in.Lease = 90*time.Minute + 500*time.Millisecond
		in.Traffic = ledger.TrafficTerms{Priced: true, PricePerGB: ledger.MustDecimal("0.8"), FreeGB: ledger.MustDecimal("100")}
		got, err := db.CreateRental(ctx, act(1), in)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID == 0 || got.UserID != 1 || len(got.Events) != 1 || got.Events[0].ID == 0 {
			t.Fatalf("CreateRental = %+v: IDs not set", got)
		}
		want := in
		want.ID, want.UserID, want.CreatedAt = got.ID, 1, t0
		want.Events = []ledger.Event{{ID: got.Events[0].ID, Kind: ledger.EventStart, At: at(-2 * time.Hour), RecordedAt: t0}} // truncated to the second; logged at the action's time
		want.Traffic.Direction = ledger.Out                                                                                   // the default
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("CreateRental =\n%+v\nwant\n%+v", *got, want)
		}
		again, err := db.Rental(ctx, 1, "big")
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("Rental = %+v, %v; want %+v", again, err, got)
		}
		// Unpriced rentals keep their empty price.
		free := box("free", t0)
		free.Priced, free.Price = false, ledger.Price{}
		r, err := db.CreateRental(ctx, act(1), free)
		if err != nil || r.Priced || !r.Price.Amount.IsZero() {
			t.Fatalf("unpriced rental = %+v, %v", r, err)
		}
	})
	t.Run("NameReuseAfterRelease", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		first := mustRent(t, db, 1, "box1", at(-3*time.Hour))
		mustEvent(t, db, 1, "box1", ledger.EventRelease, at(-2*time.Hour))
		second := mustRent(t, db, 1, "box1", at(-time.Hour))
		if second.ID == first.ID {
			t.Fatal("reused the released rental's row")
		}
		got, err := db.Rental(ctx, 1, "box1")
		if err != nil || got.ID != second.ID {
			t.Fatalf("Rental(box1) = %v, %v; want the new one", got, err)
		}
		// With both released, the latest one is found.
		mustEvent(t, db, 1, "box1", ledger.EventRelease, t0)
		if got, _ := db.Rental(ctx, 1, "box1"); got.ID != second.ID {
			t.Fatalf("Rental(box1) = %d, want latest %d", got.ID, second.ID)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		if _, err := db.CreateRental(ctx, keyed(1, "k1"), box("box1", t0)); err != nil {
			t.Fatal(err)
		}
		mod := func(f func(r *ledger.Rental)) ledger.Rental {
			r := box("box2", t0)
			f(&r)
			return r
		}
		for _, tc := range []struct {
			name string
			a    ledger.Action
			r    ledger.Rental
			code string
			msg  string
		}{
			{"bad name", act(1), mod(func(r *ledger.Rental) { r.Name = "box 2" }), ledger.EINVALID, "may use only"},
			{"no platform", act(1), mod(func(r *ledger.Rental) { r.Platform = "" }), ledger.EINVALID, "platform"},
			{"no GPUs", act(1), mod(func(r *ledger.Rental) { r.GPUCount = 0 }), ledger.EINVALID, "GPU count"},
			{"negative price", act(1), mod(func(r *ledger.Rental) { r.Price.Amount = ledger.MustDecimal("-1") }), ledger.EINVALID, "negative"},
			{"no events", act(1), mod(func(r *ledger.Rental) { r.Events = nil }), ledger.EINVALID, "start"},
			{"two events", act(1), mod(func(r *ledger.Rental) {
				r.Events = append(r.Events, ledger.Event{Kind: ledger.EventStop, At: t0})
			}), ledger.EINVALID, "start"},
			{"starts with stop", act(1), mod(func(r *ledger.Rental) { r.Events[0].Kind = ledger.EventStop }), ledger.EINVALID, "start"},
			{"no start time", act(1), mod(func(r *ledger.Rental) { r.Events[0].At = time.Time{} }), ledger.EINVALID, "no time"},
			{"bad traffic", act(1), mod(func(r *ledger.Rental) { r.Traffic.Direction = "sideways" }), ledger.EINVALID, "direction"},
			{"unknown user", act(2), mod(func(*ledger.Rental) {}), ledger.ENOTFOUND, "not registered"},
			{"no user", act(0), mod(func(*ledger.Rental) {}), ledger.EINVALID, "no user"},
			{"live name", act(1), box("box1", t0), ledger.ECONFLICT, "an unreleased rental named box1 already exists"},
			{"duplicate key", keyed(1, "k1"), mod(func(*ledger.Rental) {}), ledger.EDUPLICATE, "already applied"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				unchanged(t, db, tc.code, func() error {
					_, err := db.CreateRental(ctx, tc.a, tc.r)
					if err != nil && !strings.Contains(userText(err), tc.msg) {
						t.Errorf("message %q does not mention %q", userText(err), tc.msg)
					}
					return err
				})
			})
		}
	})
}

func TestDB_AppendEvent(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		mustRent(t, db, 1, "box1", at(-4*time.Hour))
		steps := []struct {
			ev    ledger.Event
			state ledger.State
		}{
			{ledger.Event{Kind: ledger.EventStop, At: at(-3 * time.Hour)}, ledger.Stopped},
			{ledger.Event{Kind: ledger.EventPrice, At: at(-3 * time.Hour), Price: ledger.Price{Amount: ledger.MustDecimal("2.5"), Unit: ledger.UnitHour}}, ledger.Stopped},
			{ledger.Event{Kind: ledger.EventResume, At: at(-2 * time.Hour)}, ledger.Running},
			{ledger.Event{Kind: ledger.EventRelease, At: at(-time.Hour)}, ledger.Released},
		}
		for i := range steps {
			steps[i].ev.RecordedAt = t0 // the action's time, hours after the event's
		}
		for i, s := range steps {
			r, err := db.AppendEvent(ctx, act(1), "box1", s.ev)
			if err != nil {
				t.Fatalf("step %d (%s): %v", i, s.ev.Kind, err)
			}
			if r.State() != s.state || len(r.Events) != i+2 {
				t.Fatalf("step %d: state %s with %d events, want %s with %d", i, r.State(), len(r.Events), s.state, i+2)
			}
			last := r.Events[len(r.Events)-1]
			s.ev.ID = last.ID
			if last.ID == 0 || !reflect.DeepEqual(last, s.ev) {
				t.Fatalf("step %d: stored %+v, want %+v", i, last, s.ev)
			}
		}
		stored, err := db.Rental(ctx, 1, "box1")
		if err != nil {
			t.Fatal(err)
		}
		if stored.State() != ledger.Released || len(stored.Events) != len(steps)+1 {
			t.Fatalf("stored %s with %d events, want released with %d", stored.State(), len(stored.Events), len(steps)+1)
		}
		for i, s := range steps {
			s.ev.ID = stored.Events[i+1].ID
			if !reflect.DeepEqual(stored.Events[i+1], s.ev) {
				t.Fatalf("stored event %d = %+v, want %+v", i+1, stored.Events[i+1], s.ev)
			}
		}
	})
	t.Run("OK/RecordedAt", func(t *testing.T) {
		// Each event is loaded with the time its action was recorded,
		// whether or not it was backdated and whether or not it has a
		// price.
		db := openDB(t)
		mustUser(t, db, 1)
		mustRent(t, db, 1, "box1", at(-4*time.Hour))
		rate := ledger.Price{Amount: ledger.MustDecimal("2.5"), Unit: ledger.UnitHour}
		steps := []struct {
			ev ledger.Event
			by time.Time // the action's time
		}{
			{ledger.Event{Kind: ledger.EventStop, At: at(-3 * time.Hour)}, at(-3 * time.Hour)},
			{ledger.Event{Kind: ledger.EventPrice, At: at(-3 * time.Hour), Price: rate}, at(-3 * time.Hour)},
			{ledger.Event{Kind: ledger.EventResume, At: at(-2 * time.Hour)}, at(-time.Hour)},
			{ledger.Event{Kind: ledger.EventPrice, At: at(-2 * time.Hour), Price: rate}, at(-time.Hour)},
		}
		for i, s := range steps {
			if _, err := db.AppendEvent(ctx, ledger.Action{UserID: 1, At: s.by}, "box1", s.ev); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		r, err := db.Rental(ctx, 1, "box1")
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Events[0].RecordedAt; !got.Equal(t0) {
			t.Errorf("start recorded at %s, want %s", got, t0)
		}
		for i, s := range steps {
			got := r.Events[i+1]
			if got.Kind != s.ev.Kind || !got.At.Equal(s.ev.At) || !got.RecordedAt.Equal(s.by) || got.Price != s.ev.Price {
				t.Errorf("event %d = %+v, want %+v recorded at %s", i+1, got, s.ev, s.by)
			}
		}
	})
	t.Run("Errors", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		mustRent(t, db, 1, "box1", at(-4*time.Hour))
		if _, err := db.AppendEvent(ctx, keyed(1, "k-stop"), "box1", ledger.Event{Kind: ledger.EventStop, At: at(-3 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		mustRent(t, db, 1, "gone", at(-4*time.Hour))
		mustEvent(t, db, 1, "gone", ledger.EventRelease, at(-3*time.Hour))
		ev := func(k ledger.EventKind, when time.Time) ledger.Event { return ledger.Event{Kind: k, At: when} }
		for _, tc := range []struct {
			name string
			a    ledger.Action
			rent string
			ev   ledger.Event
			code string
			msg  string
		}{
			{"before start", act(1), "box1", ev(ledger.EventResume, at(-5*time.Hour)), ledger.EINVALID, "before box1 started"},
			{"out of order", act(1), "box1", ev(ledger.EventResume, at(-3*time.Hour-time.Minute)), ledger.EINVALID, "in order"},
			{"stop when stopped", act(1), "box1", ev(ledger.EventStop, t0), ledger.ECONFLICT, "already stopped"},
			{"start again", act(1), "box1", ev(ledger.EventStart, t0), ledger.ECONFLICT, "already started"},
			{"no time", act(1), "box1", ev(ledger.EventResume, time.Time{}), ledger.EINVALID, "no time"},
			{"unknown kind", act(1), "box1", ev("reboot", t0), ledger.EINVALID, "unknown event"},
			{"bad price", act(1), "box1", ledger.Event{Kind: ledger.EventPrice, At: t0, Price: ledger.Price{Amount: ledger.MustDecimal("1"), Unit: "fortnight"}}, ledger.EINVALID, "unit"},
			{"absurd price", act(1), "box1", ledger.Event{Kind: ledger.EventPrice, At: t0, Price: ledger.Price{Amount: ledger.MustDecimal("999999"), Unit: ledger.UnitSecond}}, ledger.EINVALID, "absurd"},
			{"resume released", act(1), "gone", ev(ledger.EventResume, t0), ledger.ECONFLICT, "already released"},
			{"release released", act(1), "gone", ev(ledger.EventRelease, t0), ledger.ECONFLICT, "already released"},
			{"unknown rental", act(1), "nope", ev(ledger.EventStop, t0), ledger.ENOTFOUND, "no rental named nope"},
			// The key is checked first: a retried stop is a duplicate, not "already stopped".
			{"duplicate key", keyed(1, "k-stop"), "box1", ev(ledger.EventStop, at(-3*time.Hour)), ledger.EDUPLICATE, "already applied"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				unchanged(t, db, tc.code, func() error {
					_, err := db.AppendEvent(ctx, tc.a, tc.rent, tc.ev)
					if err != nil && !strings.Contains(userText(err), tc.msg) {
						t.Errorf("message %q does not mention %q", userText(err), tc.msg)
					}
					return err
				})
			})
		}
	})
}

func TestDB_UserIsolation(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	const alice, bob = 1, 2
	mustUser(t, db, alice)
	mustUser(t, db, bob)
	mustRent(t, db, alice, "box1", at(-time.Hour))
	if _, err := db.CreateVolume(ctx, act(alice), disk("data1", "box1", at(-time.Hour))); err != nil {
		t.Fatal(err)
	}

	unchanged(t, db, ledger.ENOTFOUND, func() error {
		_, err := db.AppendEvent(ctx, act(bob), "box1", ledger.Event{Kind: ledger.EventStop, At: t0})
		return err
	})
	unchanged(t, db, ledger.ENOTFOUND, func() error {
		_, err := db.SetTraffic(ctx, act(bob), "box1", ledger.TrafficTerms{Priced: true, PricePerGB: ledger.MustDecimal("1")})
		return err
	})
	unchanged(t, db, ledger.ENOTFOUND, func() error {
		_, err := db.AddTraffic(ctx, act(bob), "box1", ledger.TrafficUsage{Bytes: 1 << 30, At: t0})
		return err
	})
	unchanged(t, db, ledger.ENOTFOUND, func() error {
		_, err := db.AddCharge(ctx, act(bob), "box1", ledger.Charge{Amount: ledger.MustDecimal("5")})
		return err
	})
	unchanged(t, db, ledger.ENOTFOUND, func() error {
		_, err := db.AppendVolumeEvent(ctx, act(bob), "data1", ledger.VolumeEvent{Kind: ledger.VolumeDelete, At: t0})
		return err
	})
	unchanged(t, db, ledger.ENOTFOUND, func() error {
		_, err := db.CreateVolume(ctx, act(bob), disk("mine", "box1", t0))
		return err
	})
	unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.Undo(ctx, act(bob)); return err })
	if _, err := db.Rental(ctx, bob, "box1"); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("bob sees alice's box1: %v", err)
	}
	if _, err := db.Volume(ctx, bob, "data1"); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("bob sees alice's data1: %v", err)
	}
	b, err := db.Book(ctx, bob)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Rentals)+len(b.Volumes)+len(b.Charges) != 0 {
		t.Fatalf("bob's book holds alice's rows: %+v", b)
	}
	// Bob may use the same names for his own rentals.
	mine := mustRent(t, db, bob, "box1", t0)
	if mine.UserID != bob {
		t.Fatalf("bob's box1 belongs to %d", mine.UserID)
	}
	a, _ := db.Rental(ctx, alice, "box1")
	if a.State() != ledger.Running || a.UserID != alice {
		t.Fatalf("alice's box1 changed: %v", a)
	}
}

func TestDB_SetTraffic(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustRent(t, db, 1, "box1", at(-time.Hour))
	terms := ledger.TrafficTerms{Priced: true, PricePerGB: ledger.MustDecimal("0.75"), FreeGB: ledger.MustDecimal("10"), Direction: ledger.Both}
	r, err := db.SetTraffic(ctx, act(1), "box1", terms)
	if err != nil || r.Traffic != terms {
		t.Fatalf("SetTraffic = %+v, %v", r, err)
	}
	if got, _ := db.Rental(ctx, 1, "box1"); got.Traffic != terms {
		t.Fatalf("stored terms %+v, want %+v", got.Traffic, terms)
	}
	for _, tc := range []struct {
		name  string
		rent  string
		terms ledger.TrafficTerms
		code  string
	}{
		{"negative price", "box1", ledger.TrafficTerms{Priced: true, PricePerGB: ledger.MustDecimal("-1")}, ledger.EINVALID},
		{"negative free", "box1", ledger.TrafficTerms{FreeGB: ledger.MustDecimal("-1")}, ledger.EINVALID},
		{"bad direction", "box1", ledger.TrafficTerms{Direction: "up"}, ledger.EINVALID},
		{"unknown rental", "nope", terms, ledger.ENOTFOUND},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unchanged(t, db, tc.code, func() error { _, err := db.SetTraffic(ctx, act(1), tc.rent, tc.terms); return err })
		})
	}
}

func TestDB_AddTraffic(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustRent(t, db, 1, "box1", at(-time.Hour))
	r, err := db.AddTraffic(ctx, act(1), "box1", ledger.TrafficUsage{Bytes: 12 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.TrafficUsage) != 1 || r.TrafficUsage[0].Bytes != 12<<30 || r.TrafficUsage[0].Direction != ledger.Out || !r.TrafficUsage[0].At.Equal(t0) {
		t.Fatalf("usage = %+v, want 12GiB out at the action's time", r.TrafficUsage)
	}
	r, err = db.AddTraffic(ctx, act(1), "box1", ledger.TrafficUsage{Bytes: 5, Direction: ledger.In, At: at(-30 * time.Minute)})
	if err != nil || len(r.TrafficUsage) != 2 || r.TrafficUsage[0].Bytes != 5 {
		t.Fatalf("usage = %+v, %v; want two, in time order", r.TrafficUsage, err)
	}
	for _, tc := range []struct {
		name string
		rent string
		u    ledger.TrafficUsage
		code string
	}{
		{"zero bytes", "box1", ledger.TrafficUsage{}, ledger.EINVALID},
		{"both directions", "box1", ledger.TrafficUsage{Bytes: 1, Direction: ledger.Both}, ledger.EINVALID},
		{"before start", "box1", ledger.TrafficUsage{Bytes: 1, At: at(-2 * time.Hour)}, ledger.EINVALID},
		{"unknown rental", "nope", ledger.TrafficUsage{Bytes: 1}, ledger.ENOTFOUND},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unchanged(t, db, tc.code, func() error { _, err := db.AddTraffic(ctx, act(1), tc.rent, tc.u); return err })
		})
	}
}

func TestDB_RentalsByState(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	mustRent(t, db, 1, "run", at(-time.Hour))
	mustRent(t, db, 1, "stop", at(-time.Hour))
	mustEvent(t, db, 1, "stop", ledger.EventStop, at(-time.Minute))
	mustRent(t, db, 1, "gone", at(-time.Hour))
	mustEvent(t, db, 1, "gone", ledger.EventRelease, at(-time.Minute))
	mustRent(t, db, 2, "other", at(-time.Hour))
	names := func(rs []*ledger.Rental) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.Name)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		states []ledger.State
		want   string
	}{
		{nil, "run,stop,gone"},
		{[]ledger.State{ledger.Running}, "run"},
		{[]ledger.State{ledger.Running, ledger.Stopped}, "run,stop"},
		{[]ledger.State{ledger.Released}, "gone"},
	} {
		rs, err := db.RentalsByState(ctx, 1, tc.states...)
		if err != nil || names(rs) != tc.want {
			t.Errorf("RentalsByState(%v) = %s, %v; want %s", tc.states, names(rs), err, tc.want)
		}
	}
	live, err := db.LiveRentals(ctx)
	if err != nil || names(live) != "run,stop,other" {
		t.Fatalf("LiveRentals = %s, %v; want run,stop,other", names(live), err)
	}
}
