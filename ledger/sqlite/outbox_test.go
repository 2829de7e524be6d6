package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// tell is a notice naming the rental as written.
func tell() *ledger.Notice {
	return &ledger.Notice{Topic: "sync:runpod", Silent: true, Text: func(r *ledger.Rental) string {
		if r == nil {
			return "no rental"
		}
		return "logged as " + r.Name
	}}
}

// TestDB_Outbox: a notice is written in the transaction of the change it
// reports, or not at all: it names the rental as written, it survives
// closing the database before it is sent, a refused change leaves none,
// and it is gone once marked sent.
func TestDB_Outbox(t *testing.T) {
	ctx := context.Background()
	t.Run("WithTheChange", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ledger.db")
		db := openPath(t, path)
		mustUser(t, db, 1)
		mustSync(t, db, 1, "pod-1", "train") // takes the name: the next is train-2
		a := act(1)
		a.Tell = tell()
		if _, _, err := db.AddSyncedRental(ctx, a, listed(1, "pod-2"), synced("train", t0)); err != nil {
			t.Fatal(err)
		}
		// The same instance again is refused: no second notice.
		if _, _, err := db.AddSyncedRental(ctx, a, listed(1, "pod-2"), synced("train", t0)); !(ledger.ErrorCode(err) == ledger.ECONFLICT) {
			t.Fatalf("second AddSyncedRental: %v, want ECONFLICT", err)
		}
		db.Close() // the process dies before the send
		db = openPath(t, path)
		items, err := db.Outbox(ctx, 1, "sync:runpod", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 1 || items[0].Text != "logged as train-2" || !items[0].Silent || items[0].UserID != 1 {
			t.Fatalf("outbox after a reopen = %+v, want the one notice naming train-2", items)
		}
		if other, _ := db.Outbox(ctx, 1, "sync:vast", 10); len(other) != 0 {
			t.Fatalf("another topic holds %+v", other)
		}
		if err := db.SentOutbox(ctx, items[0].ID); err != nil {
			t.Fatal(err)
		}
		if err := db.SentOutbox(ctx, items[0].ID); err != nil {
			t.Fatalf("a second SentOutbox: %v, want none", err)
		}
		if items, _ := db.Outbox(ctx, 1, "sync:runpod", 10); len(items) != 0 {
			t.Fatalf("outbox after sent = %+v", items)
		}
	})
	t.Run("EventAndPrice", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		_, in := mustSync(t, db, 1, "pod-1", "train")
		a := ledger.Action{UserID: 1, At: t0.Add(time.Hour), Tell: tell()}
		in.State = "stopped"
		if _, _, err := db.ApplyPlatformEvent(ctx, a, in, ledger.Event{Kind: ledger.EventStop, At: t0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		// A refused event (before the start) writes no notice.
		bad := ledger.Action{UserID: 1, At: t0, Tell: tell()}
		if _, _, err := db.ApplyPlatformEvent(ctx, bad, in, ledger.Event{Kind: ledger.EventResume, At: t0.Add(-time.Hour)}); err == nil {
			t.Fatal("a resume before the start was accepted")
		}
		in.PriceTold, in.PriceToldOK = ledger.MustDecimal("0.99"), true
		if _, err := db.TellPlatformInstance(ctx, in, *tell()); err != nil {
			t.Fatal(err)
		}
		items, err := db.Outbox(ctx, 1, "sync:runpod", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 2 || items[0].Text != "logged as train" || items[1].Text != "logged as train" || items[0].ID >= items[1].ID {
			t.Fatalf("outbox = %+v, want the stop's and the price's notices in order", items)
		}
		got, err := db.PlatformInstances(ctx, 1, "runpod")
		if err != nil || len(got) != 1 || !got[0].PriceToldOK {
			t.Fatalf("instances = %+v, %v: want the price told stored with its notice", got, err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		// A change that does not write notices refuses one, and changes nothing.
		a := act(1)
		a.Tell = tell()
		if _, err := db.CreateRental(ctx, a, box("x", t0)); !(ledger.ErrorCode(err) == ledger.EINVALID) {
			t.Fatalf("CreateRental with a notice: %v, want EINVALID", err)
		}
		if b, _ := db.Book(ctx, 1); len(b.Rentals) != 0 {
			t.Fatalf("rentals after a refused change: %d", len(b.Rentals))
		}
		r, err := db.CreateRental(ctx, act(1), synced("hand", t0))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.BindPlatformRental(ctx, a, listed(1, "pod-h"), r.ID); ledger.ErrorCode(err) != ledger.EINVALID {
			t.Fatalf("BindPlatformRental with a notice: %v, want EINVALID", err)
		}
		for name, n := range map[string]ledger.Notice{
			"NoTopic":   {Text: func(*ledger.Rental) string { return "x" }},
			"NoText":    {Topic: "t"},
			"Empty":     {Topic: "t", Text: func(*ledger.Rental) string { return "" }},
			"TooLong":   {Topic: "t", Text: func(*ledger.Rental) string { return string(make([]byte, ledger.MaxOutboxText+1)) }},
			"LongTopic": {Topic: string(make([]byte, 65)), Text: func(*ledger.Rental) string { return "x" }},
		} {
			if _, err := db.Tell(ctx, 1, n); !(ledger.ErrorCode(err) == ledger.EINVALID) {
				t.Errorf("%s: %v, want EINVALID", name, err)
			}
		}
		if _, err := db.Tell(ctx, 99, *tell()); !(ledger.ErrorCode(err) == ledger.ENOTFOUND) {
			t.Errorf("unknown user: %v, want ENOTFOUND", err)
		}
		a = act(1)
		a.Tell = &ledger.Notice{Topic: "sync:runpod"}
		if _, _, err := db.AddSyncedRental(ctx, a, listed(1, "pod-9"), synced("nine", t0)); !(ledger.ErrorCode(err) == ledger.EINVALID) {
			t.Fatalf("a bad notice: %v, want EINVALID", err)
		}
		if _, err := db.RentalByPlatformID(ctx, 1, "runpod", "pod-9"); !(ledger.ErrorCode(err) == ledger.ENOTFOUND) {
			t.Fatalf("the rental of a refused notice was written: %v", err)
		}
	})
}

// TestDB_SyncFlood: the card is kept per connector, replaced in place,
// and DeclinePlatformInstances writes declined rows in batches and
// leaves the rows it already holds.
func TestDB_SyncFlood(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	if _, err := db.SyncFlood(ctx, 1, "runpod"); !(ledger.ErrorCode(err) == ledger.ENOTFOUND) {
		t.Fatalf("no card: %v", err)
	}
	f := ledger.SyncFlood{UserID: 1, Platform: "runpod", State: ledger.FloodOpen, Count: 10000, Since: t0}
	if err := db.SaveSyncFlood(ctx, f); err != nil {
		t.Fatal(err)
	}
	f.MessageID, f.Text = 7, "card"
	if err := db.SaveSyncFlood(ctx, f); err != nil {
		t.Fatal(err)
	}
	if got, err := db.SyncFlood(ctx, 1, "runpod"); err != nil || got != f {
		t.Fatalf("card = %+v, %v; want %+v", got, err, f)
	}
	if err := db.SaveSyncFlood(ctx, ledger.SyncFlood{UserID: 1, Platform: "runpod", State: "maybe"}); !(ledger.ErrorCode(err) == ledger.EINVALID) {
		t.Fatalf("bad state: %v", err)
	}
	if err := db.DeleteSyncFlood(ctx, 1, "runpod"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SyncFlood(ctx, 1, "runpod"); !(ledger.ErrorCode(err) == ledger.ENOTFOUND) {
		t.Fatalf("deleted card: %v", err)
	}
	mustSync(t, db, 1, "pod-0", "train")
	var ins []ledger.PlatformInstance
	for i := range 450 {
		in := listed(1, "pod-"+string(rune('a'+i%26))+time.Duration(i).String())
		ins = append(ins, in)
	}
	ins = append(ins, listed(1, "pod-0"))
	n, err := db.DeclinePlatformInstances(ctx, ins)
	if err != nil || n != 450 {
		t.Fatalf("DeclinePlatformInstances = %d, %v; want 450 written", n, err)
	}
	all, _ := db.PlatformInstances(ctx, 1, "runpod")
	declined := 0
	for _, in := range all {
		if in.Status == ledger.PlatformDeclined {
			declined++
		}
		if in.PlatformID == "pod-0" && in.Status != ledger.PlatformBound {
			t.Fatalf("the bound instance became %s", in.Status)
		}
	}
	if declined != 450 {
		t.Fatalf("%d declined, want 450", declined)
	}
}
