package connsync_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/ledger"
)

// billing is one RunPod /billing/pods record of a day.
func billing(pod, amount string, billedFor time.Duration, day time.Time) map[string]any {
	return map[string]any{"podId": pod, "time": day.Format(time.RFC3339), "amount": amount, "timeBilledMs": billedFor.Milliseconds()}
}

func TestSyncer_Reconcile(t *testing.T) {
	ctx := context.Background()
	e := newActEnv(t, time.Minute)
	day := e.clk.Now().Truncate(24 * time.Hour)
	// Each rental ran 2h at $0.79/h by the ledger: $1.58.
	e.rp.SetPods(runpodfake.NewPod("pod-ok", "ok", "RUNNING", "0.79", "A100", 1, e.start))
	e.synced("runpod", "pod-ok", "ok", "0.79", ledger.USD)
	e.synced("runpod", "pod-disk", "disk", "0.79", ledger.USD)
	e.synced("runpod", "pod-price", "price", "0.79", ledger.USD)
	e.synced("runpod", "pod-idle", "idle", "0.79", ledger.USD)
	e.synced("runpod", "pod-late", "late", "0.79", ledger.USD)
	// RunPod now lists pod-price at $0.89.
	ins, _ := e.db.PlatformInstances(ctx, 1, "runpod")
	for _, in := range ins {
		if in.PlatformID == "pod-price" {
			in.Price = ledger.MustDecimal("0.89")
			if _, err := e.db.SavePlatformInstance(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.rp.SetBilling(
		billing("pod-ok", "1.59", 2*time.Hour, day), // a cent of rounding
		billing("pod-disk", "2.10", 2*time.Hour, day),
		billing("pod-price", "1.78", 2*time.Hour, day),
		billing("pod-late", "2.37", 3*time.Hour, day),
		billing("pod-ghost", "0.50", 30*time.Minute, day),
	)
	rs, err := e.s.Reconcile(ctx, 1, day, day.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Platform != "lambda" || rs[1].Platform != "runpod" {
		t.Fatalf("reconciliations %+v: want lambda and runpod", rs)
	}
	if rs[0].Err == "" || rs[0].Lines != nil {
		t.Errorf("lambda: %+v; want an Err saying its API reports neither", rs[0])
	}
	rp := rs[1]
	if rp.Err != "" || rp.Source != "billing" {
		t.Fatalf("runpod: Err %q Source %q", rp.Err, rp.Source)
	}
	want := map[string]ledger.ReconcileCause{"ok": ledger.CauseNone, "disk": ledger.CauseStorage, "price": ledger.CausePrice,
		"idle": ledger.CauseNotBilled, "late": ledger.CauseTime, "": ledger.CauseNotInLedger}
	for _, l := range rp.Lines {
		c, ok := want[l.Name]
		if l.PlatformID == "pod-ghost" {
			c, ok = want[""], true
		}
		if !ok || l.Cause != c {
			t.Errorf("line %s (%s): cause %q, want %q (ledger %s, platform %s)", l.Name, l.PlatformID, l.Cause, c, l.Ledger.Format(), l.Platform.Format())
		}
		delete(want, l.Name)
		if l.PlatformID == "pod-ghost" {
			delete(want, "")
		}
	}
	if len(want) != 0 {
		t.Errorf("lines missing: %v", want)
	}
	// 5 rentals × $1.58 against $8.34 billed.
	if rp.LedgerTotal.String() != "7.90" || rp.PlatformTotal.String() != "8.34" || rp.DriftTotal.String() != "0.44" {
		t.Errorf("totals ledger %s platform %s drift %s; want 7.90, 8.34, 0.44", rp.LedgerTotal, rp.PlatformTotal, rp.DriftTotal)
	}
	t.Run("PlatformDown", func(t *testing.T) {
		e.rp.SetFault(runpodfake.Status(503, "text/html", "<html>down</html>"))
		defer e.rp.SetFault(nil)
		rs, err := e.s.Reconcile(ctx, 1, day, day.Add(24*time.Hour))
		if err != nil || len(rs) != 2 || rs[1].Err == "" || rs[1].Lines != nil {
			t.Fatalf("Reconcile = %+v, %v; want runpod's Err filled, no lines", rs, err)
		}
	})
	t.Run("ErrEmptyPeriod", func(t *testing.T) {
		if _, err := e.s.Reconcile(ctx, 1, day, day); ledger.ErrorCode(err) != ledger.EINVALID {
			t.Fatalf("Reconcile of an empty period = %v, want EINVALID", err)
		}
	})
	t.Run("Balance", func(t *testing.T) {
		e.connect("autodl", actAutoDLKey)
		// A hand-logged AutoDL rental from 08:00 at ¥6/h: ¥9.00 by 09:30.
		if _, err := e.db.CreateRental(ctx, ledger.Action{UserID: 1, At: e.start}, ledger.Rental{Name: "cn1", Platform: "autodl",
			GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Priced: true, Currency: ledger.CNY,
			Price:  ledger.Price{Amount: ledger.MustDecimal("6"), Unit: ledger.UnitHour},
			Events: []ledger.Event{{Kind: ledger.EventStart, At: e.start}}}); err != nil {
			t.Fatal(err)
		}
		for _, b := range []struct {
			amount string
			at     time.Time
		}{{"100", day.Add(time.Hour)}, {"100", day.Add(9*time.Hour + 30*time.Minute)}} {
			if _, err := e.db.RecordPlatformBalance(ctx, ledger.BalanceRecord{UserID: 1, Platform: "autodl", Amount: ledger.MustDecimal(b.amount), Currency: ledger.CNY, At: b.at}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.db.AddTopUp(ctx, ledger.Action{UserID: 1, At: day.Add(5 * time.Hour)}, ledger.TopUp{UserID: 1, Platform: "autodl", Amount: ledger.MustDecimal("10"), Currency: ledger.CNY, At: day.Add(5 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		rs, err := e.s.Reconcile(ctx, 1, day, day.Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var ad *ledger.Reconciliation
		for i := range rs {
			if rs[i].Platform == "autodl" {
				ad = &rs[i]
			}
		}
		if ad == nil || ad.Err != "" || ad.Source != "balance" || ad.Lines != nil {
			t.Fatalf("autodl: %+v; want a balance reconciliation without lines", ad)
		}
		// The balance fell ¥0 with ¥10 topped up: ¥10 spent, against ¥9.00.
		if ad.LedgerTotal.String() != "9.00" || ad.PlatformTotal.String() != "10.00" || ad.Cause != ledger.CauseStorage {
			t.Fatalf("ledger %s platform %s cause %q; want 9.00, 10.00, storage", ad.LedgerTotal, ad.PlatformTotal, ad.Cause)
		}
	})
}
