package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// TestDB_ConcurrentWriters runs read-then-write transactions from many
// goroutines on one DB and on a second DB opened on the same file (as a
// second process would), with readers loading Books meanwhile. No call may
// fail: SQLITE_BUSY would show up here as an internal error.
func TestDB_ConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	db1 := openPath(t, path)
	db2 := openPath(t, path)
	const writers, perWriter = 8, 15
	for w := range writers {
		mustUser(t, db1, int64(w+1))
	}
	var writersWG, readersWG sync.WaitGroup
	errs := make(chan error, writers+2)
	for w := range writers {
		db := db1
		if w%2 == 1 {
			db = db2
		}
		user := int64(w + 1)
		writersWG.Go(func() {
			for i := range perWriter {
				name := fmt.Sprintf("r%d", i)
				start := at(time.Duration(i) * time.Minute)
				if _, err := db.CreateRental(ctx, ledger.Action{UserID: user, Key: fmt.Sprintf("%d:%d", user, i)}, box(name, start)); err != nil {
					errs <- fmt.Errorf("writer %d create %s: %w", user, name, err)
					return
				}
				if _, err := db.AppendEvent(ctx, act(user), name, ledger.Event{Kind: ledger.EventStop, At: start.Add(time.Second)}); err != nil {
					errs <- fmt.Errorf("writer %d stop %s: %w", user, name, err)
					return
				}
				if _, err := db.AddCharge(ctx, act(user), name, ledger.Charge{Amount: ledger.MustDecimal("0.01")}); err != nil {
					errs <- fmt.Errorf("writer %d charge %s: %w", user, name, err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	for r := range 2 {
		db := db1
		if r == 1 {
			db = db2
		}
		readersWG.Go(func() {
			for {
				select {
				case <-done:
					return
				case <-time.After(time.Millisecond):
				}
				if _, err := db.Book(ctx, int64(r+1)); err != nil {
					errs <- fmt.Errorf("reader: %w", err)
					return
				}
			}
		})
	}
	writersWG.Wait()
	close(done)
	readersWG.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := range writers {
		b, err := db2.Book(ctx, int64(w+1))
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Rentals) != perWriter || len(b.Charges) != perWriter {
			t.Fatalf("user %d: %d rentals, %d charges; want %d each", w+1, len(b.Rentals), len(b.Charges), perWriter)
		}
	}
}

// TestDB_ConcurrentSameKey sends one keyed action from many goroutines at
// once: exactly one applies, the others get EDUPLICATE.
func TestDB_ConcurrentSameKey(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	const n = 16
	codes := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, err := db.AddTopUp(ctx, keyed(1, "same"), ledger.TopUp{Platform: "autodl", Amount: ledger.MustDecimal("1"), Currency: ledger.CNY})
			codes <- ledger.ErrorCode(err)
		})
	}
	wg.Wait()
	close(codes)
	count := map[string]int{}
	for c := range codes {
		count[c]++
	}
	if count[""] != 1 || count[ledger.EDUPLICATE] != n-1 {
		t.Fatalf("results %v, want one success and %d duplicates", count, n-1)
	}
	b, _ := db.Book(ctx, 1)
	if len(b.TopUps) != 1 {
		t.Fatalf("%d top-ups, want 1", len(b.TopUps))
	}
}

var _ ledger.Store = (*sqlite.DB)(nil)
