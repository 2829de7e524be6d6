package hub_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// Attacks on enrolment: what a leaked enrolment token, a forged rental
// token, a slow network and a crash can do, against the real hub over
// HTTP on a real database.

// TestAttack_EnrolFlood: a leaked enrolment token announcing 1,000
// distinct instances in a burst stores and tells at most
// ledger.MaxPendingInstances, answers the rest held, and the hub's
// memory holds no more instances than were stored; with the default
// rate bucket most of the burst is refused before anything is read.
func TestAttack_EnrolFlood(t *testing.T) {
	e := newEnrolEnv(t)
	h, err := hub.New(hub.Config{Store: e.store, Now: e.clk.Now, Listener: e.rec, RateBurst: 5000})
	if err != nil {
		t.Fatal(err)
	}
	e.hub = h
	e.srv = httptest.NewServer(h.Handler())
	t.Cleanup(e.srv.Close)
	var from int
	states := map[string]int{}
	for i := range 1000 {
		f := e.facts(fmt.Sprintf("forged%04d", i), t0)
		f.Instance.MachineID = fmt.Sprintf("m%d", i)
		states[string(e.answer(f).State)]++
	}
	if states[string(wire.EnrolWaiting)] != ledger.MaxPendingInstances || states[string(wire.EnrolHeld)] != 1000-ledger.MaxPendingInstances {
		t.Fatalf("answers %v; want %d waiting, the rest held", states, ledger.MaxPendingInstances)
	}
	if n := len(e.pending()); n != ledger.MaxPendingInstances {
		t.Fatalf("%d pending stored, want %d", n, ledger.MaxPendingInstances)
	}
	if ev := e.events(&from); len(ev) != ledger.MaxPendingInstances {
		t.Fatalf("%d announcements told, want %d", len(ev), ledger.MaxPendingInstances)
	}
	if n := h.InstancesRemembered(); n > ledger.MaxPendingInstances {
		t.Fatalf("the hub remembers %d instances after the flood, want at most %d", n, ledger.MaxPendingInstances)
	}
	toks, err := h.Enrolment().Tokens(context.Background(), 1)
	if err != nil || len(toks) != 1 || toks[0].Instances != ledger.MaxPendingInstances {
		t.Fatalf("token after the flood: %+v, %v", toks, err)
	}

	t.Run("DefaultBucket", func(t *testing.T) {
		e := newEnrolEnv(t)
		limited := 0
		for i := range 1000 {
			code, _, _ := e.send(e.enrol, e.facts(fmt.Sprintf("burst%04d", i), t0))
			if code == http.StatusTooManyRequests {
				limited++
			}
		}
		if limited < 1000-40 {
			t.Fatalf("%d of a burst of 1000 refused by the token's bucket, want at least %d", limited, 1000-40)
		}
	})
}

// TestAttack_ForgedFacts: what an agent claims of its host is kept only
// as plain, short, printable text: control characters (newlines that
// break a card's lines, escapes a terminal obeys, bidirectional
// overrides that reorder what a person reads) are dropped, a 60 KiB
// host name is clipped, a path as the platform is no platform, a boot
// in 1970 or in the future is clamped, and the rental a Log makes of it
// has a valid name.
func TestAttack_ForgedFacts(t *testing.T) {
	e := newEnrolEnv(t)
	e.clk.Add(time.Hour)
	now := e.clk.Now()
	f := e.facts("ab c\n12\x1b[31m", time.Unix(0, 0))
	f.Instance.Platform = "../../etc"
	f.Instance.PlatformSource = "env\x00X\u202eY"
	f.Host.Hostname = "<b>evil</b>\r\n\u202e\x07" + strings.Repeat("h", 60<<10)
	f.Host.GPUs = []wire.GPUFact{{Name: "NVIDIA A40\n<i>x</i>"}}
	if got := e.answer(f); got.State != wire.EnrolWaiting {
		t.Fatalf("answer %+v", got)
	}
	p := e.pending()
	if len(p) != 1 {
		t.Fatalf("pending %+v", p)
	}
	in := p[0]
	for what, s := range map[string]string{"key": in.Key, "id": in.PlatformID, "source": in.Source, "host": in.Hostname, "gpu": in.GPUModel} {
		if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\u202e' }) >= 0 {
			t.Errorf("stored %s %q holds control characters", what, s)
		}
	}
	if in.Platform != "" || len(in.Hostname) > wire.MaxStrLen || !in.BootAt.Equal(now.Add(-ledger.MaxBootAge)) {
		t.Errorf("stored %+v", in)
	}
	offer := &ledger.PriceOffer{Price: ledger.Price{Amount: ledger.MustDecimal("0.5"), Unit: ledger.UnitHour}, Currency: ledger.USD}
	r, err := e.hub.Enrolment().Adopt(context.Background(), act(now, ""), in.ID, offer)
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.ValidateName(r.Name); err != nil || !r.StartedAt().Equal(t0) || r.Platform != ledger.UnknownPlatform {
		t.Fatalf("rental %q (%v) from %v on %q", r.Name, err, r.StartedAt(), r.Platform)
	}
}
