package testkit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// Year gives user a year of history from start, the shape the chat's and
// the dashboard's benchmarks read (one shape, so their figures compare):
// a rental a week, r0 to r51, on AutoDL at 1.88 CNY/h, one or two GPUs,
// each stopped 5 h after its start, resumed at 10 h and released at 15 h,
// except the last two, which still run; and every fourth week a 200 GB
// volume with 50 GB free, a 100 CNY top-up and a 50 CNY balance record.
// The user is English, in Asia/Shanghai.
func Year(tb testing.TB, db *sqlite.DB, user int64, start time.Time) {
	tb.Helper()
	ctx := context.Background()
	if _, err := db.EnsureUser(ctx, ledger.User{ID: user, Lang: "en", TZ: "Asia/Shanghai"}); err != nil {
		tb.Fatal(err)
	}
	a := func(at time.Time) ledger.Action { return ledger.Action{UserID: user, At: at} }
	const weeks = 52
	for i := range weeks {
		at := start.Add(time.Duration(i) * 7 * 24 * time.Hour)
		name := fmt.Sprintf("r%d", i)
		_, err := db.CreateRental(ctx, a(at), ledger.Rental{UserID: user, Name: name, Platform: "autodl", GPU: "RTX 4090", GPUCount: 1 + i%2,
			Mode: ledger.PerSecond, Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour},
			Currency: ledger.CNY, Events: []ledger.Event{{Kind: ledger.EventStart, At: at}}})
		if err != nil {
			tb.Fatal(err)
		}
		if i >= weeks-2 {
			continue
		}
		for j, k := range []ledger.EventKind{ledger.EventStop, ledger.EventResume, ledger.EventRelease} {
			t := at.Add(time.Duration(5*(j+1)) * time.Hour)
			if _, err := db.AppendEvent(ctx, a(t), name, ledger.Event{Kind: k, At: t}); err != nil {
				tb.Fatal(err)
			}
		}
		if i%4 != 0 {
			continue
		}
		if _, err := db.CreateVolume(ctx, a(at), ledger.Volume{UserID: user, Name: fmt.Sprintf("v%d", i), RentalName: name, Platform: "autodl",
			Currency: ledger.CNY, Priced: true, Price: ledger.MustDecimal("0.0066"), PriceUnit: ledger.PerGBDay, FreeGB: ledger.MustDecimal("50"),
			Events: []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: at, SizeGB: ledger.MustDecimal("200")}}}); err != nil {
			tb.Fatal(err)
		}
		if _, err := db.AddTopUp(ctx, a(at), ledger.TopUp{UserID: user, Platform: "autodl", Amount: ledger.MustDecimal("100"), Currency: ledger.CNY, At: at}); err != nil {
			tb.Fatal(err)
		}
		if _, err := db.RecordBalance(ctx, a(at), ledger.BalanceRecord{UserID: user, Platform: "autodl", Amount: ledger.MustDecimal("50"), Currency: ledger.CNY, At: at}); err != nil {
			tb.Fatal(err)
		}
	}
}
