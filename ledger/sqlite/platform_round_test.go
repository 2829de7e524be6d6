package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestDB_FinishSyncRound: one transaction refreshes the named instances'
// LastSeen (never back, an unknown ID skipped) and marks the connector
// synced; without a connector the refreshes are kept and ENOTFOUND says
// why; a malformed platform changes nothing.
func TestDB_FinishSyncRound(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustSave(t, db, conn(1, "runpod", "A"))
	mustSync(t, db, 1, "pod-1", "one")
	mustSync(t, db, 1, "pod-2", "two")
	_, gen, err := db.PlatformInstancesGen(ctx, 1, "runpod")
	if err != nil {
		t.Fatal(err)
	}
	seen, synced := t0.Add(20*time.Minute+500*time.Millisecond), t0.Add(21*time.Minute)
	got, current, err := db.FinishSyncRound(ctx, ledger.SyncRoundEnd{UserID: 1, Platform: "runpod",
		Seen: []string{"pod-1", "pod-nope"}, SeenAt: seen, SyncedAt: synced, Gen: gen})
	if err != nil || !current || got == gen {
		t.Fatalf("FinishSyncRound = %d, %v, %v; want current, a new generation after %d", got, current, err, gen)
	}
	ins, g2, err := db.PlatformInstancesGen(ctx, 1, "runpod")
	if err != nil || g2 != got {
		t.Fatalf("PlatformInstancesGen = gen %d, %v; want the round's %d", g2, err, got)
	}
	if !ins[0].LastSeen.Equal(seen.Truncate(time.Second)) || !ins[1].LastSeen.Equal(t0) {
		t.Fatalf("LastSeen = %s, %s; want %s (refreshed), %s (not named)", ins[0].LastSeen, ins[1].LastSeen, seen.Truncate(time.Second), t0)
	}
	if c := mustConnectors(t, db, 1)[0]; !c.LastSyncAt.Equal(synced) || !c.CheckedAt.Equal(synced) || c.LastError != "" {
		t.Fatalf("connector after a clean round: %+v; want synced and checked at %s", c, synced)
	}

	// Never back; a failed round keeps CheckedAt.
	g3, current, err := db.FinishSyncRound(ctx, ledger.SyncRoundEnd{UserID: 1, Platform: "runpod",
		Seen: []string{"pod-1"}, SeenAt: t0, SyncedAt: synced.Add(time.Minute), Err: "applying the list: boom", Gen: got})
	if err != nil || !current || g3 != got {
		t.Fatalf("FinishSyncRound(older) = %d, %v, %v; want current, generation %d unchanged (no row moved)", g3, current, err, got)
	}
	if ins, _ := db.PlatformInstances(ctx, 1, "runpod"); !ins[0].LastSeen.Equal(seen.Truncate(time.Second)) {
		t.Fatalf("LastSeen moved back to %s", ins[0].LastSeen)
	}
	if c := mustConnectors(t, db, 1)[0]; c.LastError != "applying the list: boom" || !c.CheckedAt.Equal(synced) {
		t.Fatalf("connector after a failed round: %+v", c)
	}

	// No connector: ENOTFOUND, the refreshes committed.
	later := seen.Add(time.Hour)
	_, _, err = db.FinishSyncRound(ctx, ledger.SyncRoundEnd{UserID: 1, Platform: "vast", Seen: []string{"x"}, SeenAt: later, Gen: 0})
	wantCodeOf(t, "FinishSyncRound(no connector)", err, ledger.ENOTFOUND)
	_, _, err = db.FinishSyncRound(ctx, ledger.SyncRoundEnd{UserID: 1, Platform: "Run Pod", Seen: []string{"pod-1"}, SeenAt: later})
	wantCodeOf(t, "FinishSyncRound(bad platform)", err, ledger.EINVALID)
	if ins, _ := db.PlatformInstances(ctx, 1, "runpod"); !ins[0].LastSeen.Equal(seen.Truncate(time.Second)) {
		t.Fatalf("a refused round moved LastSeen to %s", ins[0].LastSeen)
	}
}

// TestDB_PlatformGeneration: every change to a user's instances of a
// platform moves its generation, the ones made by a trigger (an /undo of
// a synced rental declines its instance) included; other users' and
// platforms' changes and reads do not; a change between a read and the
// round's end makes the end not current.
func TestDB_PlatformGeneration(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	mustSave(t, db, conn(1, "runpod", "A"))
	gen := func() int64 {
		t.Helper()
		g, err := db.PlatformGeneration(ctx, 1, "runpod")
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	if g := gen(); g != 0 {
		t.Fatalf("generation with no instances = %d, want 0", g)
	}
	_, in := mustSync(t, db, 1, "pod-1", "one")
	g1 := gen()
	if g1 == 0 {
		t.Fatal("a synced instance left the generation at 0")
	}
	mustSync(t, db, 2, "pod-1", "theirs")
	if _, err := db.SavePlatformInstance(ctx, ledger.PlatformInstance{UserID: 1, Platform: "vast", PlatformID: "9", Status: ledger.PlatformAsked}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PlatformInstances(ctx, 1, "runpod"); err != nil {
		t.Fatal(err)
	}
	if g := gen(); g != g1 {
		t.Fatalf("another user's or platform's change, or a read, moved the generation %d → %d", g1, g)
	}
	in.Name = "renamed"
	if _, err := db.SavePlatformInstance(ctx, in); err != nil {
		t.Fatal(err)
	}
	g2 := gen()
	if g2 == g1 {
		t.Fatal("SavePlatformInstance did not move the generation")
	}
	if _, err := db.Undo(ctx, act(1)); err != nil {
		t.Fatal(err)
	}
	g3 := gen()
	if g3 == g2 {
		t.Fatal("the undo's trigger declined the instance without moving the generation")
	}
	if _, current, err := db.FinishSyncRound(ctx, ledger.SyncRoundEnd{UserID: 1, Platform: "runpod", SeenAt: t0, Gen: g2}); err != nil || current {
		t.Fatalf("FinishSyncRound after a change behind the reader = current %v, %v; want not current", current, err)
	}
	_, err := db.PlatformGeneration(ctx, 1, "Run Pod")
	wantCodeOf(t, "PlatformGeneration(bad platform)", err, ledger.EINVALID)
}
