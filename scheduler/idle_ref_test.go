package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestIdleCard_SharedNameByAddress: the idle card of a rental whose name
// an earlier, released rental had names it by its address, as /status
// lists it: "box1 idle 35m" left the user to guess which box1.
func TestIdleCard_SharedNameByAddress(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			e := newEnv(t, nil)
			ctx := context.Background()
			u, err := e.db.User(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			u.Lang = lang
			if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: 1, At: t0}, u); err != nil {
				t.Fatal(err)
			}
			// The env's box1 is released an hour in, and a new box1 rented.
			if _, err := e.db.AppendEvent(ctx, ledger.Action{UserID: 1, At: t0.Add(time.Hour)}, "box1",
				ledger.Event{Kind: ledger.EventRelease, At: t0.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			r, err := e.db.CreateRental(ctx, ledger.Action{UserID: 1, At: t0.Add(time.Hour)}, ledger.Rental{
				Name: "box1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond,
				Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
				Events: []ledger.Event{{Kind: ledger.EventStart, At: t0.Add(time.Hour)}},
			})
			if err != nil {
				t.Fatal(err)
			}
			e.rid = r.ID
			if e.token, err = e.hub.Tokens().Issue(ctx, 1, "box1"); err != nil {
				t.Fatal(err)
			}
			e.clk.Add(2 * time.Hour)
			e.beat(wire.VerdictIdle, 35*time.Minute, nil)
			e.tick()
			msgs := e.chat.NewMessages()
			if len(msgs) != 1 {
				t.Fatalf("messages = %d, want one card", len(msgs))
			}
			want := "box1@" + t0.In(mustShanghai(t)).Format(time.DateOnly) + "#2"
			if !strings.Contains(msgs[0].Text, want) {
				t.Fatalf("card does not name %s:\n%s", want, msgs[0].Text)
			}
		})
	}
}

func mustShanghai(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
