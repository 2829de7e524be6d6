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
			contains(t, e.say(alice, "/undo"), c.kind, "pod-abc", c.line)
			got, err := e.db.PlatformInstance(ctx, alice, saved.ID)
			if err != nil || got.Status != ledger.PlatformDeclined {
				t.Fatalf("instance after /undo = %+v, %v; want declined", got, err)
			}
		})
	}
}
