package sqlite_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestDB_Undo_Sync(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		r, in := mustSync(t, db, 1, "pod-1", "train")
		res, err := db.Undo(ctx, act(1))
		if err != nil || res.Kind != ledger.ActionSync || res.Name != "train" {
			t.Fatalf("Undo = %+v, %v; want the sync of train", res, err)
		}
		if _, err := db.RentalByID(ctx, r.ID); ledger.ErrorCode(err) != ledger.ENOTFOUND {
			t.Fatalf("the synced rental survived its undo: %v", err)
		}
		got, err := db.PlatformInstance(ctx, 1, in.ID)
		if err != nil || got.Status != ledger.PlatformDeclined || got.RentalID != 0 {
			t.Fatalf("instance after undo = %+v, %v; want declined, no rental", got, err)
		}
		// The sync cannot create it again by mistake without seeing declined;
		// a rental for it may still be made on purpose.
		if _, _, err := db.AddSyncedRental(ctx, act(1), got, synced("train", t0)); err != nil {
			t.Fatalf("AddSyncedRental after undo: %v", err)
		}
	})
	t.Run("RentOfBoundRental", func(t *testing.T) {
		// A rental logged by hand, then bound by an answer: undoing the
		// rent leaves the instance declined, not bound to nothing.
		db := openDB(t)
		mustUser(t, db, 1)
		r, err := db.CreateRental(ctx, act(1), synced("mine", t0))
		if err != nil {
			t.Fatal(err)
		}
		_, in, err := db.BindPlatformRental(ctx, act(1), listed(1, "pod-7"), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := db.Undo(ctx, act(1)); err != nil || res.Kind != ledger.ActionRent {
			t.Fatalf("Undo = %+v, %v; want the rent (a bind is not on the stack)", res, err)
		}
		got, err := db.PlatformInstance(ctx, 1, in.ID)
		if err != nil || got.Status != ledger.PlatformDeclined || got.RentalID != 0 {
			t.Fatalf("instance after undoing its rental = %+v, %v; want declined", got, err)
		}
	})
}

func TestDB_AddSyncedRental_Concurrent(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = db.AddSyncedRental(ctx, act(1), listed(1, "pod-1"), synced("train", t0))
		}()
	}
	wg.Wait()
	ok, conflict := 0, 0
	for _, err := range errs {
		switch ledger.ErrorCode(err) {
		case "":
			ok++
		case ledger.ECONFLICT:
			conflict++
		default:
			t.Fatalf("unexpected error %v", err)
		}
	}
	if ok != 1 || conflict != 1 {
		t.Fatalf("%d created, %d conflicts; want 1 and 1", ok, conflict)
	}
	b, err := db.Book(ctx, 1)
	if err != nil || len(b.Rentals) != 1 {
		t.Fatalf("Book has %d rentals (%v), want 1", len(b.Rentals), err)
	}
}

func TestDB_Platform_Hostile(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	other := mustRent(t, db, 2, "theirs", t0)
	cases := []struct {
		name string
		edit func(in *ledger.PlatformInstance)
		key  string
	}{
		{"10 KB ID", func(in *ledger.PlatformInstance) { in.PlatformID = strings.Repeat("a", 10<<10) }, "platform_id_long"},
		{"empty ID", func(in *ledger.PlatformInstance) { in.PlatformID = "" }, "platform_id_empty"},
		{"NUL", func(in *ledger.PlatformInstance) { in.PlatformID = "pod\x00x" }, "platform_id_chars"},
		{"newline", func(in *ledger.PlatformInstance) { in.PlatformID = "pod\nx" }, "platform_id_chars"},
		{"RTL mark", func(in *ledger.PlatformInstance) { in.PlatformID = "pod\u202ex" }, "platform_id_chars"},
		{"bad UTF-8", func(in *ledger.PlatformInstance) { in.PlatformID = "pod\xffx" }, "platform_id_chars"},
		{"status", func(in *ledger.PlatformInstance) { in.Status = "maybe" }, "platform_status"},
		{"state", func(in *ledger.PlatformInstance) { in.State = "exploded" }, "platform_state"},
		{"negative GPUs", func(in *ledger.PlatformInstance) { in.GPUCount = -1 }, "instance_gpu_count"},
		{"negative price", func(in *ledger.PlatformInstance) { in.Price = ledger.MustDecimal("-1") }, "price_negative"},
		{"absurd price", func(in *ledger.PlatformInstance) { in.Price = ledger.MustDecimal("1000000") }, "price_absurd"},
		{"currency", func(in *ledger.PlatformInstance) { in.Currency = "usd" }, "instance_currency"},
		{"label", func(in *ledger.PlatformInstance) { in.Name = "a\x1b[31mred" }, "instance_label_chars"},
		{"platform", func(in *ledger.PlatformInstance) { in.Platform = "Run Pod" }, "platform_key"},
		{"asked with rental", func(in *ledger.PlatformInstance) { in.RentalID = other.ID }, "platform_status_rental"},
		{"another user's rental", func(in *ledger.PlatformInstance) { in.Status, in.RentalID = ledger.PlatformBound, other.ID }, "no_rental_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := listed(1, "pod-1")
			c.edit(&in)
			_, err := db.SavePlatformInstance(ctx, in)
			if le, ok := err.(*ledger.Error); !ok || le.Key != c.key {
				t.Fatalf("SavePlatformInstance: %v; want key %s", err, c.key)
			}
			switch c.key {
			case "no_rental_id", "platform_status", "platform_status_rental":
				return // AddSyncedRental sets the status and rental itself
			case "platform_key":
				c.key = "platform_mismatch" // the rental's platform is checked first
			}
			_, _, err = db.AddSyncedRental(ctx, act(1), in, synced("train", t0))
			if le, ok := err.(*ledger.Error); !ok || le.Key != c.key {
				t.Fatalf("AddSyncedRental: %v; want key %s", err, c.key)
			}
		})
	}
	if _, _, err := db.BindPlatformRental(ctx, act(1), listed(1, "pod-1"), other.ID); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("BindPlatformRental to another user's rental: %v, want ENOTFOUND", err)
	}
	r := synced("long", t0)
	r.PlatformID = strings.Repeat("x", 129)
	_, err := db.CreateRental(ctx, act(1), r)
	if le, ok := err.(*ledger.Error); !ok || le.Key != "platform_id_long" {
		t.Fatalf("CreateRental with a 129-byte ID: %v", err)
	}
	b, err := db.Book(ctx, 1)
	if err != nil || len(b.Rentals) != 0 {
		t.Fatalf("hostile input stored %d rentals (%v)", len(b.Rentals), err)
	}
	if ins, err := db.PlatformInstances(ctx, 1, "runpod"); err != nil || len(ins) != 0 {
		t.Fatalf("hostile input stored instances %+v (%v)", ins, err)
	}
	if _, err := db.PlatformInstance(ctx, 2, 1); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("PlatformInstance of none: %v", err)
	}
}

func TestDB_ApplyPlatformEvent(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		_, in := mustSync(t, db, 1, "pod-1", "train")
		in.State, in.StateAt = "stopped", at(time.Hour)
		r, got, err := db.ApplyPlatformEvent(ctx, act(1), in, ledger.Event{Kind: ledger.EventStop, At: at(time.Hour)})
		if err != nil || r.State() != ledger.Stopped || got.State != "stopped" {
			t.Fatalf("ApplyPlatformEvent = %v, %+v, %v", r, got, err)
		}
		res, err := db.Undo(ctx, act(1))
		if err != nil || res.Kind != ledger.ActionStop || res.Name != "train" {
			t.Fatalf("Undo = %+v, %v; want the stop of train", res, err)
		}
		if r, _ := db.Rental(ctx, 1, "train"); r.State() != ledger.Running {
			t.Fatalf("after undo train is %s", r.State())
		}
		// The instance keeps the state applied: the next poll of the same
		// state is no change, so the undo is not redone.
		if got, _ := db.PlatformInstance(ctx, 1, in.ID); got.State != "stopped" {
			t.Fatalf("instance state after undo = %q", got.State)
		}
	})
	t.Run("ErrCheckEvent", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		_, in := mustSync(t, db, 1, "pod-1", "train")
		in.State, in.StateAt = "running", at(time.Hour)
		in.Name = "renamed"
		_, _, err := db.ApplyPlatformEvent(ctx, act(1), in, ledger.Event{Kind: ledger.EventResume, At: at(time.Hour)})
		wantCode(t, err, ledger.ECONFLICT)
		got, _ := db.PlatformInstance(ctx, 1, in.ID)
		if got.Name != "train" || !got.StateAt.Equal(t0) {
			t.Fatalf("a refused event changed the instance: %+v", got)
		}
	})
	t.Run("ErrNotBound", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		in, err := db.SavePlatformInstance(ctx, listed(1, "pod-1"))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = db.ApplyPlatformEvent(ctx, act(1), in, ledger.Event{Kind: ledger.EventStop, At: t0})
		wantCode(t, err, ledger.ENOTFOUND)
		_, _, err = db.ApplyPlatformEvent(ctx, act(1), in, ledger.Event{Kind: ledger.EventPrice, At: t0})
		wantCode(t, err, ledger.EINVALID)
	})
}

func TestDB_BindPlatformRental(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mine, err := db.CreateRental(ctx, act(1), synced("mine", t0))
	if err != nil {
		t.Fatal(err)
	}
	a := keyed(1, "tg:1:cb:9")
	r, in, err := db.BindPlatformRental(ctx, a, listed(1, "pod-7"), mine.ID)
	if err != nil || r.PlatformID != "pod-7" || in.RentalID != mine.ID || in.Status != ledger.PlatformBound {
		t.Fatalf("BindPlatformRental = %+v, %+v, %v", r, in, err)
	}
	_, _, err = db.BindPlatformRental(ctx, a, listed(1, "pod-8"), mine.ID)
	wantCode(t, err, ledger.EDUPLICATE)
	_, _, err = db.BindPlatformRental(ctx, act(1), listed(1, "pod-8"), mine.ID)
	wantCode(t, err, ledger.ECONFLICT) // mine is pod-7 already
	second, err := db.CreateRental(ctx, act(1), synced("second", t0))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = db.BindPlatformRental(ctx, act(1), listed(1, "pod-7"), second.ID)
	wantCode(t, err, ledger.ECONFLICT) // pod-7 is mine
	auto := box("auto", t0)            // on autodl
	ar, err := db.CreateRental(ctx, act(1), auto)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = db.BindPlatformRental(ctx, act(1), listed(1, "pod-9"), ar.ID)
	wantCode(t, err, ledger.ECONFLICT)
	if got, _ := db.RentalByPlatformID(ctx, 1, "runpod", "pod-7"); got == nil || got.ID != mine.ID {
		t.Fatalf("RentalByPlatformID(pod-7) = %+v", got)
	}
	_, err = db.RentalByPlatformID(ctx, 1, "runpod", "pod-9")
	wantCode(t, err, ledger.ENOTFOUND)
	_, err = db.RentalByPlatformID(ctx, 2, "runpod", "pod-7")
	wantCode(t, err, ledger.ENOTFOUND)
}

// TestDB_AddSyncedRental_Stopped: an instance first listed stopped is
// created stopped in one journaled action, so one /undo removes it and
// declines the instance; a second event other than a stop after the
// start is refused and stores nothing.
func TestDB_AddSyncedRental_Stopped(t *testing.T) {
	ctx := context.Background()
	stopped := func(name string) ledger.Rental {
		r := synced(name, t0)
		r.Events = append(r.Events, ledger.Event{Kind: ledger.EventStop, At: t0})
		return r
	}
	t.Run("OneUndo", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		in := listed(1, "pod-s")
		in.State = "stopped"
		r, saved, err := db.AddSyncedRental(ctx, act(1), in, stopped("train"))
		if err != nil {
			t.Fatalf("AddSyncedRental(stopped): %v", err)
		}
		if r.State() != ledger.Stopped || len(r.Events) != 2 || saved.State != "stopped" {
			t.Fatalf("rental %s with %d events, instance state %q; want stopped, 2 events, stopped", r.State(), len(r.Events), saved.State)
		}
		got, err := db.RentalByID(ctx, r.ID)
		if err != nil || got.State() != ledger.Stopped || len(got.Events) != 2 {
			t.Fatalf("stored rental = %+v, %v; want stopped with start and stop", got, err)
		}
		res, err := db.Undo(ctx, act(1))
		if err != nil || res.Kind != ledger.ActionSync {
			t.Fatalf("Undo = %+v, %v; want the sync", res, err)
		}
		if _, err := db.RentalByID(ctx, r.ID); ledger.ErrorCode(err) != ledger.ENOTFOUND {
			t.Fatalf("one /undo left the stopped synced rental: %v", err)
		}
		if in, err := db.PlatformInstance(ctx, 1, saved.ID); err != nil || in.Status != ledger.PlatformDeclined {
			t.Fatalf("instance after one /undo = %+v, %v; want declined", in, err)
		}
		if _, err := db.Undo(ctx, act(1)); ledger.ErrorCode(err) != ledger.ENOTFOUND {
			t.Fatalf("second Undo = %v; want nothing to undo", err)
		}
	})
	for name, evs := range map[string][]ledger.Event{
		"Resume":      {{Kind: ledger.EventStart, At: t0}, {Kind: ledger.EventResume, At: t0}},
		"StopBefore":  {{Kind: ledger.EventStart, At: t0}, {Kind: ledger.EventStop, At: t0.Add(-time.Minute)}},
		"ThreeEvents": {{Kind: ledger.EventStart, At: t0}, {Kind: ledger.EventStop, At: t0}, {Kind: ledger.EventResume, At: t0}},
	} {
		t.Run("ErrInvalid/"+name, func(t *testing.T) {
			db := openDB(t)
			mustUser(t, db, 1)
			r := synced("train", t0)
			r.Events = evs
			_, _, err := db.AddSyncedRental(ctx, act(1), listed(1, "pod-x"), r)
			if ledger.ErrorCode(err) != ledger.EINVALID {
				t.Fatalf("AddSyncedRental(%s) = %v; want EINVALID", name, err)
			}
			if ins, err := db.PlatformInstances(ctx, 1, "runpod"); err != nil || len(ins) != 0 {
				t.Fatalf("a refused sync stored %+v, %v", ins, err)
			}
		})
	}
}
