package sqlite_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// TestBook_PreparedOnce: Book's queries are prepared after the first call
// and reused by the next ones, which read the same ledger; many Books at
// once, more than the read pool has connections, all finish (a read
// transaction never waits for a second connection to prepare on).
func TestBook_PreparedOnce(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	if _, err := db.EnsureUser(ctx, ledger.User{ID: 7, Lang: "en", TZ: "UTC"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRental(ctx, ledger.Action{UserID: 7}, ledger.Rental{Name: "box1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1,
		Mode: ledger.PerSecond, Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour},
		Currency: ledger.CNY, Events: []ledger.Event{{Kind: ledger.EventStart, At: time.Now().Add(-time.Hour)}}}); err != nil {
		t.Fatal(err)
	}
	before := sqlite.PreparedReads(db)
	first, err := db.Book(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	after := sqlite.PreparedReads(db)
	if after-before < 8 {
		t.Fatalf("%d read queries prepared by a Book, want its queries (at least 8)", after-before)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := db.Book(ctx, 7)
			if err == nil && (len(b.Rentals) != len(first.Rentals) || b.Rentals[0].Name != "box1" || len(b.Rentals[0].Events) != 1) {
				t.Errorf("a prepared Book read %d rentals (%v), want the first's", len(b.Rentals), b.Rentals)
			}
			errs <- err
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("64 concurrent Books did not finish in 30 s")
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := sqlite.PreparedReads(db); got != after {
		t.Errorf("%d read queries prepared after more Books, want still %d", got, after)
	}
	if _, err := db.Book(ctx, 99); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Errorf("Book of an unknown user: %v, want ENOTFOUND", err)
	}
}
