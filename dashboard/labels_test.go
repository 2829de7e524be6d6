package dashboard_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestMonth_PastAsAtItsEnd: a past month is shown as it was at its end:
// no budget (the store keeps today's only), no projection or burn, each
// rental's state at the month's end with its state now beside it when
// that differs, and the balances as of the month's end without a runway.
func TestMonth_PastAsAtItsEnd(t *testing.T) {
	e := newEnv(t, nil)
	_, old := e.fill(1) // "old" runs from Oct 30 10:00 local to Nov 1 12:00 local
	ctx := context.Background()
	u, _ := e.db.User(ctx, 1)
	u.Budgets = []ledger.MonthlyBudget{{Currency: ledger.CNY, Amount: ledger.MustDecimal("5")}}
	if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: 1, At: e.now}, u); err != nil {
		t.Fatal(err)
	}
	tok := e.signIn(1)
	var page dashboard.MonthPage
	if rec := e.get(tok, dashboard.PathMonth+"?month=2026-10", &page); rec.Code != 200 {
		t.Fatalf("month: %d %s", rec.Code, rec.Body)
	}
	end := time.Date(2026, 10, 31, 16, 0, 0, 0, time.UTC) // Nov 1 00:00 in Shanghai
	if page.Current || !page.AsOf.Equal(end) {
		t.Errorf("October: current %v, as of %s; want a past month as of %s", page.Current, page.AsOf, end)
	}
	if len(page.Currencies) != 1 {
		t.Fatalf("currencies %+v", page.Currencies)
	}
	cm := page.Currencies[0]
	if cm.Budget != nil || cm.BudgetPercent != nil {
		t.Errorf("October is measured against today's budget: %v (%v%%)", *cm.Budget, *cm.BudgetPercent)
	}
	if cm.BudgetNow == nil || *cm.BudgetNow != "5.00" {
		t.Errorf("budget_now %v, want today's 5.00 beside a past month", cm.BudgetNow)
	}
	if cm.Projection != nil || cm.BurnPerHour != nil {
		t.Errorf("a past month has a projection %v and burn %v", cm.Projection, cm.BurnPerHour)
	}
	var row *dashboard.RentalRow
	for i := range page.Rentals {
		if page.Rentals[i].ID == old.ID {
			row = &page.Rentals[i]
		}
	}
	if row == nil {
		t.Fatalf("old is not in October: %+v", page.Rentals)
	}
	if row.State != "running" || !row.StateAt.Equal(end) || row.StateNow != "released" {
		t.Errorf("old in October: state %q at %s, now %q; want running at %s, released now", row.State, row.StateAt, row.StateNow, end)
	}
	if len(page.Balances) != 1 {
		t.Fatalf("balances %+v", page.Balances)
	}
	b := page.Balances[0]
	book, err := e.db.Book(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := ledger.Balances(book, end)["autodl"].Balance.String()
	if !b.AsOf.Equal(end) || b.Balance != want || b.BurnPerHour != nil || b.RunsOutAt != nil {
		t.Errorf("October's balance %s as of %s, burn %v, runs out %v; want %s as of %s and no runway", b.Balance, b.AsOf, b.BurnPerHour, b.RunsOutAt, want, end)
	}

	t.Run("ThisMonth", func(t *testing.T) {
		var page dashboard.MonthPage
		if rec := e.get(tok, dashboard.PathMonth+"?month=2026-11", &page); rec.Code != 200 {
			t.Fatalf("month: %d %s", rec.Code, rec.Body)
		}
		cm := page.Currencies[0]
		if !page.Current || !page.AsOf.Equal(e.now) || cm.Budget == nil || *cm.Budget != "5.00" || cm.BudgetNow != nil || cm.Projection == nil || cm.BurnPerHour == nil {
			t.Errorf("this month: current %v as of %s, budget %v (now %v), projection %v, burn %v", page.Current, page.AsOf, cm.Budget, cm.BudgetNow, cm.Projection, cm.BurnPerHour)
		}
		for _, r := range page.Rentals {
			if !r.StateAt.Equal(e.now) || r.StateNow != "" {
				t.Errorf("%s this month: state %q at %s, now %q", r.Name, r.State, r.StateAt, r.StateNow)
			}
		}
		if b := page.Balances[0]; !b.AsOf.Equal(e.now) || b.BurnPerHour == nil || b.RunsOutAt == nil {
			t.Errorf("this month's balance %+v", b)
		}
	})
}

// TestMonth_BalanceSaysWhatItIs: a balance worked out from an older
// reading says so, with the reading and its time; a reading shown as it
// is says it is one.
func TestMonth_BalanceSaysWhatItIs(t *testing.T) {
	e := newEnv(t, nil)
	e.fill(1) // a typed reading of 500.00 on Oct 30 02:00 UTC; autodl has burnt since
	ctx := context.Background()
	oldAt := time.Date(2026, 10, 30, 2, 0, 0, 0, time.UTC)
	if _, err := e.db.AddTopUp(ctx, ledger.Action{UserID: 1, At: oldAt.Add(time.Hour)}, ledger.TopUp{UserID: 1, Platform: "autodl",
		Amount: ledger.MustDecimal("100"), Currency: ledger.CNY, At: oldAt.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.RecordPlatformBalance(ctx, ledger.BalanceRecord{UserID: 1, Platform: "runpod",
		Amount: ledger.MustDecimal("84.20"), Currency: ledger.USD, At: e.now}); err != nil {
		t.Fatal(err)
	}
	var page dashboard.MonthPage
	if rec := e.get(e.signIn(1), dashboard.PathMonth, &page); rec.Code != 200 {
		t.Fatalf("month: %d %s", rec.Code, rec.Body)
	}
	got := map[string]dashboard.Balance{}
	for _, b := range page.Balances {
		got[b.Platform] = b
	}
	a := got["autodl"]
	if !a.Computed || a.Source != "typed" || a.Reading == nil || *a.Reading != "500.00" || !a.ReadingAt.Equal(oldAt) || a.TopUps != 1 || !a.AsOf.Equal(e.now) {
		t.Errorf("autodl %+v; want computed now from the typed 500.00 of %s plus one top-up", a, oldAt)
	}
	r := got["runpod"]
	if r.Computed || r.Source != "api" || r.Reading == nil || *r.Reading != "84.20" || r.Balance != "84.20" || !r.ReadingAt.Equal(e.now) || r.TopUps != 0 {
		t.Errorf("runpod %+v; want the platform's reading of now as it is", r)
	}
}

// TestMonth_IdleSaysWhyItIsMissing: a rental no agent watched has no idle
// figure (not 0, and not "no price"), the month counts those rentals, and
// a platform's idle cost is its rentals' sum, not left out.
func TestMonth_IdleSaysWhyItIsMissing(t *testing.T) {
	e := newEnv(t, nil)
	box, old := e.fill(1)
	ctx := context.Background()
	if err := e.db.OpenIdle(ctx, box.ID, box.StartedAt().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := e.db.CloseIdle(ctx, box.ID, box.StartedAt().Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	var page dashboard.MonthPage
	if rec := e.get(e.signIn(1), dashboard.PathMonth, &page); rec.Code != 200 {
		t.Fatalf("month: %d %s", rec.Code, rec.Body)
	}
	for _, r := range page.Rentals {
		switch r.ID {
		case box.ID:
			if !r.HasAgent || r.Idle == nil || *r.Idle != "1.88" {
				t.Errorf("box (an agent saw it idle an hour): has_agent %v, idle %v; want 1.88", r.HasAgent, r.Idle)
			}
		case old.ID:
			if r.HasAgent || r.Idle != nil || r.Compute == nil {
				t.Errorf("old (no agent): has_agent %v, idle %v; want no idle figure beside its priced compute", r.HasAgent, r.Idle)
			}
		}
	}
	if cm := page.Currencies[0]; cm.NoAgent != 1 || cm.Totals.Idle == nil || *cm.Totals.Idle != "1.88" {
		t.Errorf("month: %d rentals without an agent, idle %v; want 1 and 1.88", cm.NoAgent, cm.Totals.Idle)
	}
	if len(page.Platforms) != 1 || page.Platforms[0].Idle == nil || *page.Platforms[0].Idle != "1.88" {
		t.Errorf("platforms %+v; want autodl's idle 1.88", page.Platforms)
	}
}

// TestPages_NamesInTheUsersLanguage: platforms, the billing mode and the
// price are named as the chat names them, in Chinese for a Chinese user
// (恒源云, 按秒, ¥1.88/小时), not by their stored keys.
func TestPages_NamesInTheUsersLanguage(t *testing.T) {
	for _, tc := range []struct {
		lang, platform, mode, price string
	}{{"zh", "恒源云", "按秒", "¥1.88/小时"}, {"en", "恒源云", "per-second", "¥1.88/h"}} {
		t.Run(tc.lang, func(t *testing.T) {
			e := newEnv(t, nil)
			ctx := context.Background()
			if _, err := e.db.EnsureUser(ctx, ledger.User{ID: 1, Lang: tc.lang, TZ: "Asia/Shanghai"}); err != nil {
				t.Fatal(err)
			}
			at := e.now.Add(-2 * time.Hour)
			r, err := e.db.CreateRental(ctx, ledger.Action{UserID: 1, At: at}, ledger.Rental{UserID: 1, Name: "hy", Platform: "gpushare", GPU: "RTX 4090",
				GPUCount: 1, Mode: ledger.PerSecond, Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour},
				Currency: ledger.CNY, Events: []ledger.Event{{Kind: ledger.EventStart, At: at}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.db.RecordBalance(ctx, ledger.Action{UserID: 1, At: at}, ledger.BalanceRecord{UserID: 1, Platform: "gpushare",
				Amount: ledger.MustDecimal("100"), Currency: ledger.CNY, At: at}); err != nil {
				t.Fatal(err)
			}
			tok := e.signIn(1)
			var page dashboard.MonthPage
			if rec := e.get(tok, dashboard.PathMonth, &page); rec.Code != 200 {
				t.Fatalf("month: %d %s", rec.Code, rec.Body)
			}
			if len(page.Rentals) != 1 || page.Rentals[0].PlatformName != tc.platform || len(page.Platforms) != 1 || page.Platforms[0].PlatformName != tc.platform ||
				len(page.Balances) != 1 || page.Balances[0].PlatformName != tc.platform {
				t.Errorf("platform names: rentals %+v, platforms %+v, balances %+v; want %s", page.Rentals, page.Platforms, page.Balances, tc.platform)
			}
			var rp dashboard.RentalPage
			if rec := e.get(tok, dashboard.PathRental+"?id="+strconv.FormatInt(r.ID, 10), &rp); rec.Code != 200 {
				t.Fatalf("rental: %d %s", rec.Code, rec.Body)
			}
			if rp.HasAgent || rp.Rental.HasAgent || rp.Rental.Idle != nil {
				t.Errorf("rental page of a rental no agent watched: has_agent %v/%v, idle %v; want no idle figure", rp.HasAgent, rp.Rental.HasAgent, rp.Rental.Idle)
			}
			if rp.Rental.PlatformName != tc.platform || rp.ModeName != tc.mode || rp.PriceText == nil || *rp.PriceText != tc.price {
				t.Errorf("rental page: platform %q, mode %q, price %v; want %s, %s, %s", rp.Rental.PlatformName, rp.ModeName, rp.PriceText, tc.platform, tc.mode, tc.price)
			}
		})
	}
}

// TestMonth_AgentOfALaterLine: a rental released before the month but in
// it by its traffic, recorded later, counts as watched when an agent had a
// token for it.
func TestMonth_AgentOfALaterLine(t *testing.T) {
	e := newEnv(t, nil)
	e.fill(1)
	ctx := context.Background()
	at := time.Date(2026, 10, 20, 2, 0, 0, 0, time.UTC)
	a := func(at time.Time) ledger.Action { return ledger.Action{UserID: 1, At: at} }
	net, err := e.db.CreateRental(ctx, a(at), ledger.Rental{UserID: 1, Name: "net", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1,
		Mode: ledger.PerSecond, Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour},
		Currency: ledger.CNY, Events: []ledger.Event{{Kind: ledger.EventStart, At: at}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.IssueToken(ctx, 1, "net", [32]byte{1}, at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.AppendEvent(ctx, a(at.Add(5*24*time.Hour)), "net", ledger.Event{Kind: ledger.EventRelease, At: at.Add(5 * 24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.AddTraffic(ctx, a(e.now), "net", ledger.TrafficUsage{At: time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC), Bytes: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	var page dashboard.MonthPage
	if rec := e.get(e.signIn(1), dashboard.PathMonth+"?month=2026-11", &page); rec.Code != 200 {
		t.Fatalf("month: %d %s", rec.Code, rec.Body)
	}
	var found bool
	for _, r := range page.Rentals {
		if r.ID == net.ID {
			found = true
			if !r.HasAgent {
				t.Errorf("net (a token was issued) is in November by its traffic, without an agent: %+v", r)
			}
		}
	}
	if !found {
		t.Fatalf("net is not in November: %+v", page.Rentals)
	}
	if n := page.Currencies[0].NoAgent; n != 2 {
		t.Errorf("November counts %d rentals without an agent, want 2 (box and old)", n)
	}
}
