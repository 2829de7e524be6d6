package bot_test

import (
	"context"
	"testing"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestCore_UndoSync: /undo of a rental the sync created from a platform's
// list says what it was and that it will not be created again, in both
// languages, and the instance is declined.
func TestCore_UndoSync(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ lang, kind, line string }{
		{"en", "rental created from the platform's list", "it will not be created again"},
		{"zh", "根据平台实例列表创建的租用", "之后不会再次创建"},
	} {
		t.Run(c.lang, func(t *testing.T) {
			e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
			e.say(alice, "/settings lang="+c.lang)
			in := ledger.PlatformInstance{UserID: alice, Platform: "runpod", PlatformID: "pod-abc", Status: ledger.PlatformAsked,
				GPU: "RTX 4090", GPUCount: 1, State: "running", StateAt: e.now}
			r := ledger.Rental{Name: "pod-abc", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Priced: true,
				Price: ledger.Price{Amount: ledger.MustDecimal("0.69"), Unit: ledger.UnitHour}, Currency: ledger.USD,
				Events: []ledger.Event{{Kind: ledger.EventStart, At: e.now}}}
			_, saved, err := e.db.AddSyncedRental(ctx, ledger.Action{UserID: alice, At: e.now}, in, r)
			if err != nil {
				t.Fatal(err)
			}
			// The sync made it, not the user's last command: asked first.
			contains(t, e.undoAsked(alice, "/undo").Text, c.kind, "pod-abc")
			contains(t, e.undoConfirmed(alice, "/undo"), c.kind, "pod-abc", c.line)
			got, err := e.db.PlatformInstance(ctx, alice, saved.ID)
			if err != nil || got.Status != ledger.PlatformDeclined {
				t.Fatalf("instance after /undo = %+v, %v; want declined", got, err)
			}
		})
	}
}

// TestCore_UndoSync_Stopped: a rental the sync created stopped (the
// platform first listed the instance stopped) goes with one /undo; a
// second /undo has nothing of it left to undo.
func TestCore_UndoSync_Stopped(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/settings lang=en")
	in := ledger.PlatformInstance{UserID: alice, Platform: "runpod", PlatformID: "pod-halt", Status: ledger.PlatformAsked,
		GPU: "RTX 4090", GPUCount: 1, State: "stopped", StateAt: e.now}
	r := ledger.Rental{Name: "pod-halt", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Priced: true,
		Price: ledger.Price{Amount: ledger.MustDecimal("0.69"), Unit: ledger.UnitHour}, Currency: ledger.USD,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: e.now}, {Kind: ledger.EventStop, At: e.now}}}
	got, saved, err := e.db.AddSyncedRental(ctx, ledger.Action{UserID: alice, At: e.now}, in, r)
	if err != nil {
		t.Fatal(err)
	}
	if got.State() != ledger.Stopped {
		t.Fatalf("synced rental is %s, want stopped", got.State())
	}
	contains(t, e.undoConfirmed(alice, "/undo"), "rental created from the platform's list", "pod-halt", "it will not be created again")
	if _, err := e.db.RentalByID(ctx, got.ID); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("the stopped synced rental survived one /undo: %v", err)
	}
	if inst, err := e.db.PlatformInstance(ctx, alice, saved.ID); err != nil || inst.Status != ledger.PlatformDeclined {
		t.Fatalf("instance after /undo = %+v, %v; want declined", inst, err)
	}
}
