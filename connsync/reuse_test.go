package connsync_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestSync_ReusedNameSaysAddress: a listed instance logged under the name
// of a released rental says so, with the address that reaches the older
// one now.
func TestSync_ReusedNameSaysAddress(t *testing.T) {
	e := newEnv(t)
	old := ledger.Rental{Name: "box1", Platform: "runpod", GPU: "A40", GPUCount: 1, Mode: ledger.PerSecond, Priced: true,
		Price: ledger.Price{Amount: ledger.MustDecimal("0.5"), Unit: ledger.UnitHour}, Currency: ledger.USD,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0.Add(-72 * time.Hour)}}}
	if _, err := e.db.CreateRental(e.ctx, ledger.Action{UserID: uid, At: t0}, old); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.AppendEvent(e.ctx, ledger.Action{UserID: uid, At: t0}, "box1", ledger.Event{Kind: ledger.EventRelease, At: t0.Add(-48 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	e.rp.SetPods(pod("xyz789", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
	e.connect("runpod")
	e.round()
	ms := e.snd.take()
	if len(ms) != 1 || !strings.Contains(ms[0].Text, "box1@2026-11-28") || !strings.Contains(ms[0].Text, "Nov 28 – Nov 29") {
		t.Fatalf("messages = %q, want the earlier box1's address box1@2026-11-28", texts(ms))
	}
}

// TestSync_ReusedNameSaysAddressOnNew: the same note when the user answers
// the sync's question with "A new rental".
func TestSync_ReusedNameSaysAddressOnNew(t *testing.T) {
	e := newEnv(t)
	rent := func(name string, start time.Time) {
		r := ledger.Rental{Name: name, Platform: "runpod", GPU: "A40", GPUCount: 1, Mode: ledger.PerSecond, Priced: true,
			Price: ledger.Price{Amount: ledger.MustDecimal("0.5"), Unit: ledger.UnitHour}, Currency: ledger.USD,
			Events: []ledger.Event{{Kind: ledger.EventStart, At: start}}}
		if _, err := e.db.CreateRental(e.ctx, ledger.Action{UserID: uid, At: t0}, r); err != nil {
			t.Fatal(err)
		}
	}
	rent("box1", t0.Add(-72*time.Hour))
	if _, err := e.db.AppendEvent(e.ctx, ledger.Action{UserID: uid, At: t0}, "box1", ledger.Event{Kind: ledger.EventRelease, At: t0.Add(-48 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	rent("typed", t0.Add(-2*time.Hour)) // unbound: the sync asks whether the pod is it
	e.rp.SetPods(pod("xyz789", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
	e.connect("runpod")
	e.round()
	ms := e.snd.take()
	if len(ms) != 1 || len(ms[0].Buttons) < 2 {
		t.Fatalf("messages = %q, want the question", texts(ms))
	}
	newBtn := ms[0].Buttons[len(ms[0].Buttons)-1][0]
	if newBtn.Text != "A new rental" {
		t.Fatalf("button %q", newBtn.Text)
	}
	e.press(newBtn.Data, "tg:update:7")
	all := texts(e.snd.take()) + "\n" + strings.Join(e.snd.answers, "\n")
	if !strings.Contains(all, "box1@2026-11-28") {
		t.Fatalf("after A new rental: %q, want the earlier box1's address", all)
	}
}
