package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// TestIdleStreak_HeartbeatEverySample runs the real agent with --sample 1s
// --interval 1s on an idle simulated GPU: its windows hold 0, 1 or 2
// samples, and the server must still see one idle streak and send the
// idle card after idle_warn (here 15 s).
func TestIdleStreak_HeartbeatEverySample(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binaries for about 30 s; run without -short")
	}
	w := newWorld(t)
	ctx := context.Background()
	db, err := sqlite.Open(ctx, w.db)
	if err != nil {
		t.Fatal(err)
	}
	u, err := db.User(ctx, userID)
	if err != nil {
		t.Fatal(err)
	}
	u.Settings.IdleWarn = 15 * time.Second
	u.Settings.Silent = time.Minute
	if _, err := db.UpdateUser(ctx, ledger.Action{UserID: userID}, u); err != nil {
		t.Fatal(err)
	}
	db.Close()
	w.setGPU(0)
	w.startAgentEvery(time.Second, time.Second)
	w.waitMessage("spent idle", 40*time.Second)
	db, err = sqlite.Open(ctx, w.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.RentalByID(ctx, w.rid)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Idle) != 1 || !r.Idle[0].To.IsZero() {
		t.Fatalf("idle intervals = %+v, want one open streak", r.Idle)
	}
}
