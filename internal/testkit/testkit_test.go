package testkit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
)

func TestClock(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	c := testkit.NewClock(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() { defer wg.Done(); c.Add(time.Minute); _ = c.Now() }()
	}
	wg.Wait()
	if got := c.Now(); !got.Equal(t0.Add(10 * time.Minute)) {
		t.Errorf("after ten Add(1m) = %v, want %v", got, t0.Add(10*time.Minute))
	}
	c.Set(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Errorf("after Set = %v, want %v", got, t0)
	}
}

func TestDB(t *testing.T) {
	ctx := context.Background()
	db := testkit.DB(t)
	if _, err := db.EnsureUser(ctx, ledger.User{ID: 1, TZ: "UTC"}); err != nil {
		t.Fatalf("the fresh database is not migrated: %v", err)
	}
	again := testkit.DBAt(t, db.Path())
	if _, err := again.User(ctx, 1); err != nil {
		t.Errorf("DBAt on the same file does not see its user: %v", err)
	}
}
