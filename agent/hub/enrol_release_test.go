package hub_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestEnrol_ReleasedStillReporting: the rental an enrolled instance was
// logged as is released in the chat while the instance runs on. Its
// agent, refused with the rental's token, announces itself with the
// enrolment token from the same run: the instance is still up, so it is
// not a new instance to offer as one. The user is told once (after the
// few minutes a release takes to take effect) that the released rental's
// agent still reports; the instance stays out of the pending ones. Once
// the agent starts again (the instance came back), it is announced anew.
func TestEnrol_ReleasedStillReporting(t *testing.T) {
	e := newEnrolEnv(t)
	var from int
	ctx := context.Background()
	_, r := e.adopted(t0)
	tok := e.answer(e.facts("abc123", t0)).Token
	if code, _, _ := e.send(tok, e.facts("abc123", t0)); code != http.StatusOK {
		t.Fatal(code)
	}
	e.events(&from)
	e.clk.Add(30 * time.Second)
	if _, err := e.db.AppendEvent(ctx, act(e.clk.Now(), ""), r.Name, ledger.Event{Kind: ledger.EventRelease, At: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	e.hub.Refresh(r.ID)
	// The same agent run, with the enrolment token, for a while.
	for i := range 12 {
		e.clk.Add(30 * time.Second)
		got := e.answer(e.facts("abc123", t0))
		if got.State != wire.EnrolWaiting || got.Token != "" {
			t.Fatalf("heartbeat %d after the release: %+v", i, got)
		}
	}
	if p := e.pending(); len(p) != 0 {
		t.Errorf("the released instance still running is pending again, as a new one: %+v", p)
	}
	if ev := e.events(&from); !slices.Equal(ev, []string{"after-release:" + r.Name}) {
		t.Errorf("events %v, want one after-release:%s and no announcement", ev, r.Name)
	}
	// The agent starts again (the instance restarted, or a new one took
	// its ID): a new instance.
	e.clk.Add(time.Hour)
	h := e.facts("abc123", e.clk.Now().Add(-time.Minute))
	h.BootID = "boot2"
	if got := e.answer(h); got.State != wire.EnrolWaiting || got.Token != "" {
		t.Fatalf("a new run after the release: %+v", got)
	}
	if ev := e.events(&from); !slices.Equal(ev, []string{"announced:" + "runpod:abc123"}) {
		t.Errorf("events %v after a new run, want it announced anew", ev)
	}
	if p := e.pending(); len(p) != 1 {
		t.Errorf("pending after a new run: %+v", p)
	}
}
