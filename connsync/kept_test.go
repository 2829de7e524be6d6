package connsync_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// TestSync_InstancesKept: steady rounds read the stored instances once
// and then only their generation, while the 15-minute last-seen refresh
// still reaches the store; a change behind the sync (an /undo from
// another process, whose trigger declines the instance) is read again at
// the next round, which then acts on the stored rows, not the kept ones.
func TestSync_InstancesKept(t *testing.T) {
	e := newEnv(t)
	e.rp.SetPods(pod("p1", "one", "RUNNING", "0.79", t0), pod("p2", "two", "RUNNING", "0.79", t0), pod("p3", "three", "RUNNING", "0.79", t0))
	e.connect("runpod")
	e.round() // logs the three
	e.round() // settles their stored state
	e.snd.take()
	reads := e.reads.Load()
	for range 20 { // 20 min 20 s: one last-seen refresh of each
		e.round()
	}
	if n := e.reads.Load() - reads; n != 0 {
		t.Fatalf("20 steady rounds read the instances' rows %d times, want 0 (kept between rounds)", n)
	}
	ins, err := e.db.PlatformInstances(e.ctx, uid, "runpod")
	if err != nil || len(ins) != 3 {
		t.Fatalf("instances = %+v, %v", ins, err)
	}
	for _, in := range ins {
		if in.LastSeen.Before(t0.Add(15 * time.Minute)) {
			t.Errorf("%s: stored LastSeen %s, want refreshed past %s", in.PlatformID, in.LastSeen, t0.Add(15*time.Minute))
		}
	}

	// An /undo in another process: the last synced rental goes, its
	// instance is declined behind the sync's back.
	other, err := sqlite.Open(e.ctx, e.path, sqlite.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	res, err := other.Undo(e.ctx, ledger.Action{UserID: uid, At: e.clk.Now()})
	if err != nil || res.Kind != ledger.ActionSync {
		t.Fatalf("Undo = %+v, %v; want a sync", res, err)
	}
	gone := res.Name
	var goneID string
	for _, in := range ins {
		if in.Name == gone {
			goneID = in.PlatformID
		}
	}
	if goneID == "" {
		t.Fatalf("the undone rental %q is none of the instances %+v", gone, ins)
	}
	// The platform now lists it renamed and stopped: kept rows would say
	// bound to the deleted rental, and the round would fail on it.
	names := map[string]string{"p1": "one", "p2": "two", "p3": "three"}
	var pods []runpodfake.Pod
	for _, id := range []string{"p1", "p2", "p3"} {
		if id == goneID {
			pods = append(pods, pod(id, "renamed", "EXITED", "0.79", t0))
		} else {
			pods = append(pods, pod(id, names[id], "RUNNING", "0.79", t0))
		}
	}
	e.rp.SetPods(pods...)
	e.round()
	if n := e.reads.Load() - reads; n != 1 {
		t.Fatalf("the round after the change read the rows %d times, want 1", n)
	}
	got, err := e.db.PlatformInstances(e.ctx, uid, "runpod")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range got {
		if in.PlatformID == goneID && (in.Status != ledger.PlatformDeclined || in.Name != "renamed") {
			t.Fatalf("undone instance stored as %+v; want declined, its new name kept", in)
		}
	}
	if _, err := e.db.Rental(e.ctx, uid, gone); err == nil {
		t.Fatalf("the undone rental %s came back", gone)
	}
	if ms := e.snd.take(); len(ms) != 0 {
		t.Fatalf("the round told %q about an undone instance", texts(ms))
	}
	if s := e.snapshot(); strings.Contains(s, goneID) {
		t.Fatalf("ledger holds the undone instance: %s", s)
	}
}
