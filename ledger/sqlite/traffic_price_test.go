package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestDB_SetTrafficPriceAt: a traffic price change from a time on bills
// the GB used before it at the old price and after it at the new, also on
// a released rental; it is refused before the start, in the future, on
// unpriced traffic and in another currency, and /undo removes it exactly.
func TestDB_SetTrafficPriceAt(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustRent(t, db, 1, "box1", at(-10*time.Hour))
	traffic := func(t *testing.T, want string) {
		t.Helper()
		b, err := db.Book(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := ledger.StatementAsOf(b, t0).Total(ledger.CNY).Traffic.String(); got != want {
			t.Fatalf("traffic = %s, want %s", got, want)
		}
	}
	_, err := db.SetTrafficPriceAt(ctx, act(1), "box1", "", ledger.TrafficPrice{At: at(-5 * time.Hour), PricePerGB: ledger.MustDecimal("0.8")})
	if keyOf(err) != "traffic_price_unpriced" {
		t.Fatalf("unpriced traffic: err = %v, want traffic_price_unpriced", err)
	}
	if _, err := db.SetTraffic(ctx, act(1), "box1", ledger.TrafficTerms{Priced: true, PricePerGB: ledger.MustDecimal("0.5"), Direction: ledger.Out}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []ledger.TrafficUsage{{At: at(-8 * time.Hour), Bytes: 10 << 30}, {At: at(-2 * time.Hour), Bytes: 20 << 30}} {
		if _, err := db.AddTraffic(ctx, act(1), "box1", u); err != nil {
			t.Fatal(err)
		}
	}
	mustEvent(t, db, 1, "box1", ledger.EventRelease, at(-time.Hour))
	traffic(t, "15.00")
	r, err := db.SetTrafficPriceAt(ctx, keyed(1, "tp"), "box1", "", ledger.TrafficPrice{At: at(-5 * time.Hour), PricePerGB: ledger.MustDecimal("0.8")})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.TrafficPrices) != 1 || r.TrafficPrices[0].ID == 0 || r.TrafficPrices[0].PricePerGB.String() != "0.8" {
		t.Fatalf("SetTrafficPriceAt = %+v", r.TrafficPrices)
	}
	traffic(t, "21.00")
	if _, err := db.SetTrafficPriceAt(ctx, keyed(1, "tp"), "box1", "", ledger.TrafficPrice{At: at(-5 * time.Hour), PricePerGB: ledger.MustDecimal("0.8")}); ledger.ErrorCode(err) != ledger.EDUPLICATE {
		t.Fatalf("repeated key: err = %v, want EDUPLICATE", err)
	}
	for _, tt := range []struct {
		name string
		cur  ledger.Currency
		p    ledger.TrafficPrice
		key  string
	}{
		{"before the start", "", ledger.TrafficPrice{At: at(-11 * time.Hour), PricePerGB: ledger.MustDecimal("1")}, "traffic_price_before_start"},
		{"in the future", "", ledger.TrafficPrice{At: at(time.Hour), PricePerGB: ledger.MustDecimal("1")}, "volume_price_future"},
		{"negative", "", ledger.TrafficPrice{At: at(-3 * time.Hour), PricePerGB: ledger.MustDecimal("-1")}, "price_negative"},
		{"another currency", ledger.USD, ledger.TrafficPrice{At: at(-3 * time.Hour), PricePerGB: ledger.MustDecimal("1")}, "currency_mismatch"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.SetTrafficPriceAt(ctx, act(1), "box1", tt.cur, tt.p)
			if ledger.ErrorCode(err) != ledger.EINVALID || keyOf(err) != tt.key {
				t.Fatalf("err = %v (key %q), want EINVALID %s", err, keyOf(err), tt.key)
			}
			traffic(t, "21.00")
		})
	}
	res, err := db.Undo(ctx, act(1))
	if err != nil || res.Kind != ledger.ActionTraffic || res.Name != "box1" {
		t.Fatalf("Undo = %+v, %v", res, err)
	}
	traffic(t, "15.00")
	if r, err := db.Rental(ctx, 1, "box1"); err != nil || len(r.TrafficPrices) != 0 || r.Traffic.PricePerGB.String() != "0.5" {
		t.Fatalf("rental after undo = %+v, %v", r, err)
	}
}
