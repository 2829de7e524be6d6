package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// TestInstanceCard_LogReusedName: a card's Log of an instance whose
// name a released rental had logs it under a name no rental has had
// (NAME-2): the released rental keeps its bare name, and no note is
// needed to reach it.
func TestInstanceCard_LogReusedName(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	name := ledger.InstanceRentalName(ledger.Instance{Platform: "autodl", PlatformID: "ABC123xyz"})
	a := ledger.Action{UserID: 1, At: t0}
	if _, err := e.db.CreateRental(ctx, a, ledger.Rental{Name: name, Platform: "autodl", GPU: "RTX 4090", GPUCount: 1,
		Mode: ledger.PerSecond, Currency: ledger.CNY, Events: []ledger.Event{{Kind: ledger.EventStart, At: t0.Add(-48 * time.Hour)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.AppendEvent(ctx, a, name, ledger.Event{Kind: ledger.EventRelease, At: t0.Add(-47 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	tok := e.enrolToken()
	e.chat.Take()
	e.clk.Add(time.Hour)
	e.announce(tok, instance{platform: "autodl", id: "ABC123xyz", host: "autodl-container-1", gpu: "NVIDIA GeForce RTX 4090", gpus: 1, boot: t0.Add(50 * time.Minute)})
	card := e.onlyNew()
	act, payload := buttonData(t, card, "Log at")
	if act != scheduler.ActAdopt {
		t.Fatalf("Log button action %q", act)
	}
	e.pressAs(1, "tg:update:reuse1", act, payload, 1)
	edit := e.onlyNew()
	if !strings.Contains(edit.Text, "Logged as <b>"+name+"-2</b>") || strings.Contains(edit.Text, "is now") {
		t.Fatalf("card edited to %q: want it logged as %s-2, beside the released %s", edit.Text, name, name)
	}
	if x, err := e.db.Rental(ctx, 1, name); err != nil || x.State() != ledger.Released {
		t.Fatalf("Rental(%s) = %+v, %v; want the released one, still by its bare name", name, x, err)
	}
}
