package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestDB_AdoptInstance_NameOfReleased: the name an instance is logged
// under is the program's choice, so it is one no rental of the user has
// had: a released runpod-abc123 keeps its bare name (a /price or /charge
// by that name still reaches it), and the new rental is runpod-abc123-2,
// as the chat's proposal offers box2 rather than a released box1.
// Another user's rental of that name does not count.
func TestDB_AdoptInstance_NameOfReleased(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	mustRent(t, db, 1, "runpod-abc123", t0)
	mustEvent(t, db, 1, "runpod-abc123", ledger.EventRelease, at(30*time.Minute))
	mustRent(t, db, 2, "runpod-abc124", t0)
	mustEvent(t, db, 2, "runpod-abc124", ledger.EventRelease, at(30*time.Minute))

	in := mustAnnounce(t, db, announcement(mustEnrolToken(t, db, 1, "a", t0), "abc123", at(time.Hour)))
	r, _, err := db.AdoptInstance(ctx, act(1), in.ID, ledger.RentalFromInstance(in, nil, at(55*time.Minute)), hashOf("agent"))
	if err != nil || r.Name != "runpod-abc123-2" {
		t.Fatalf("AdoptInstance = %+v, %v; want runpod-abc123-2 beside the released runpod-abc123", r, err)
	}
	if x, err := db.Rental(ctx, 1, "runpod-abc123"); err != nil || x.ID == r.ID {
		t.Fatalf("Rental(runpod-abc123) = %+v, %v; want the released one", x, err)
	}

	in2 := mustAnnounce(t, db, announcement(mustEnrolToken(t, db, 1, "b", t0), "abc124", at(time.Hour)))
	r2, _, err := db.AdoptInstance(ctx, act(1), in2.ID, ledger.RentalFromInstance(in2, nil, at(55*time.Minute)), hashOf("agent2"))
	if err != nil || r2.Name != "runpod-abc124" {
		t.Fatalf("AdoptInstance = %+v, %v; want runpod-abc124 (only another user had it)", r2, err)
	}
}
