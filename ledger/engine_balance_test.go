package ledger

import (
	"testing"
	"time"
)

func TestBalances(t *testing.T) {
	box := newRental("box1", PerSecond, "3.6", UnitHour, CNY, ev(EventStart, 0))
	box.Platform = "autodl"
	pkg := newRental("pkg", AlwaysOn, "24", UnitDay, CNY, ev(EventStart, 0))
	pkg.Platform = "featurize"
	aon := newRental("aon", AlwaysOn, "3.6", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, hour))
	aon.Platform = "featurize"
	stopped := newRental("s", PerSecond, "36", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, hour))
	stopped.Platform = "autodl"
	usd := newRental("u", PerSecond, "3.6", UnitHour, USD, ev(EventStart, 0))
	usd.Platform = "runpod"
	vol := volume("data1", "200", "50", "0.0066", PerGBDay, CNY) // 0.99/day
	b := bookOf(box, pkg, aon, stopped, usd)
	b.Volumes = []*Volume{vol}
	b.Balances = []BalanceRecord{
		{Platform: "autodl", Amount: MustDecimal("500"), Currency: CNY, At: off(-day)},
		{Platform: "autodl", Amount: MustDecimal("100"), Currency: CNY, At: off(2 * hour)},
	}
	b.TopUps = []TopUp{
		{Platform: "autodl", Amount: MustDecimal("50"), Currency: CNY, At: off(2 * hour)}, // in the record
		{Platform: "autodl", Amount: MustDecimal("20"), Currency: CNY, At: off(3 * hour)},
		{Platform: "featurize", Amount: MustDecimal("100"), Currency: CNY, At: off(0)},
		{Platform: "runpod", Amount: MustDecimal("1"), Currency: USD, At: off(0)},
		{Platform: "runpod", Amount: MustDecimal("5"), Currency: USD, At: off(10 * day)}, // future
	}
	b.Charges = []Charge{{Platform: "autodl", Amount: MustDecimal("1.50"), Currency: CNY, At: off(150 * min1)}}
	now := off(4 * hour)
	got := Balances(b, now)
	if len(got) != 3 {
		t.Fatalf("got %d platforms, want 3: %+v", len(got), got)
	}
	// autodl: 100 at 2h + 20 − box1 2h × 3.6 − storage 2h × 0.99/24 − 1.50.
	// box1 7.20, storage 0.0825 → 0.08 (C(4h) 0.165 → 0.17, C(2h) 0.0825 → 0.08: 0.09).
	a := got["autodl"]
	money(t, a.Balance, "111.21")
	if !a.Recorded || !a.Since.Equal(off(2*hour)) {
		t.Errorf("autodl since %s recorded %v", a.Since, a.Recorded)
	}
	// burn: box1 3.6/h + storage 0.04125/h; stopped rental burns nothing.
	money(t, a.BurnPerHour, "3.64")
	wantOut := now.Add(109950 * time.Second) // ⌊111.21 / (3.64125/3600)⌋
	if a.RunsOutAt == nil || !a.RunsOutAt.Equal(wantOut) {
		t.Errorf("autodl runs out at %v, want about %s", a.RunsOutAt, wantOut)
	}
	// featurize: 100 − day package 24 − always-on 4h × 3.6 (stopped still bills).
	f := got["featurize"]
	money(t, f.Balance, "61.60")
	if f.Recorded {
		t.Errorf("featurize from top-ups only")
	}
	money(t, f.BurnPerHour, "3.60") // the package burns nothing until day 2
	// runpod: 1 − 4h × 3.6 USD → negative: runs out now.
	r := got["runpod"]
	money(t, r.Balance, "-13.40")
	if r.Currency != USD || r.RunsOutAt == nil || !r.RunsOutAt.Equal(now) {
		t.Errorf("runpod: %+v", r)
	}
	if _, ok := got["vast"]; ok {
		t.Errorf("a platform with no money facts has a balance")
	}
}

func TestBalances_NothingBurns(t *testing.T) {
	r := newRental("a", PerSecond, "3.6", UnitHour, CNY, ev(EventStart, 0), ev(EventStop, hour))
	r.Platform = "autodl"
	b := bookOf(r)
	b.TopUps = []TopUp{{Platform: "autodl", Amount: MustDecimal("10"), Currency: CNY, At: off(0)}}
	got := Balances(b, off(2*hour))["autodl"]
	money(t, got.Balance, "6.40")
	if got.RunsOutAt != nil {
		t.Errorf("runs out at %s with nothing running", got.RunsOutAt)
	}
}

func TestBudgets(t *testing.T) {
	r := newRental("a", PerSecond, "10", UnitDay, CNY, ev(EventStart, -5*day))
	b := bookOf(r)
	if got := Budgets(b, off(10*day)); len(got) != 0 {
		t.Fatalf("budgets reported with none set: %+v", got)
	}
	one := func(at time.Duration) BudgetStatus {
		t.Helper()
		got := Budgets(b, off(at))
		if len(got) != 1 {
			t.Fatalf("%d budget statuses, want 1", len(got))
		}
		return got[0]
	}
	b.User.Budgets = b.User.WithBudget(CNY, MustDecimal("300"))
	got := one(10*day + 12*hour)
	money(t, got.Spent, "105.00") // November only: 10.5 days
	money(t, got.Budget, "300.00")
	if got.Percent != 35 || got.Fraction.RatString() != "7/20" || got.Over {
		t.Errorf("percent %d fraction %s over %v", got.Percent, got.Fraction.RatString(), got.Over)
	}
	if !got.Month.Equal(t0) || !got.End.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("month %s..%s", got.Month, got.End)
	}
	got = one(29*day + 23*hour)
	if got.Percent != 99 || got.Over {
		t.Errorf("end of month: %d%% over %v", got.Percent, got.Over)
	}
	b.User.Budgets = b.User.WithBudget(CNY, MustDecimal("100"))
	got = one(10*day + 12*hour)
	if !got.Over || got.Percent != 105 {
		t.Errorf("over budget: %d%% over %v", got.Percent, got.Over)
	}
}

// TestBudgets_EachCurrency: spend in each currency is compared with that
// currency's budget only.
func TestBudgets_EachCurrency(t *testing.T) {
	b := bookOf(newRental("a", PerSecond, "10", UnitDay, CNY, ev(EventStart, 0)),
		newRental("b", PerSecond, "2", UnitDay, USD, ev(EventStart, 0)))
	b.User.Budgets = b.User.WithBudget(USD, MustDecimal("10"))
	b.User.Budgets = b.User.WithBudget(CNY, MustDecimal("300"))
	got := Budgets(b, off(3*day))
	if len(got) != 2 || got[0].Budget.Currency != CNY || got[1].Budget.Currency != USD {
		t.Fatalf("budgets %+v", got)
	}
	money(t, got[0].Spent, "30.00")
	money(t, got[1].Spent, "6.00")
	if got[0].Percent != 10 || got[1].Percent != 60 {
		t.Errorf("percents %d, %d; want 10, 60", got[0].Percent, got[1].Percent)
	}
	b.User.Budgets = b.User.WithBudget(USD, Decimal{})
	if got := Budgets(b, off(3*day)); len(got) != 1 || got[0].Budget.Currency != CNY {
		t.Errorf("after removing USD: %+v", got)
	}
}

func TestDailySpend(t *testing.T) {
	loc, _ := time.LoadLocation("Asia/Shanghai")
	start := time.Date(2026, 11, 1, 22, 0, 0, 0, loc)
	r := &Rental{ID: 1, Name: "a", Platform: "autodl", GPUCount: 1, Mode: PerSecond, Priced: true,
		Price: Price{MustDecimal("2.4"), UnitHour}, Currency: CNY,
		Events: []Event{{Kind: EventStart, At: start}},
		Idle:   []Interval{{From: start.Add(hour), To: start.Add(3 * hour)}}}
	b := &Book{User: User{TZ: "Asia/Shanghai"}, Rentals: []*Rental{r}}
	b.Charges = []Charge{{ID: 1, Amount: MustDecimal("3"), Currency: CNY, At: time.Date(2026, 11, 2, 0, 0, 0, 0, loc)}}
	now := time.Date(2026, 11, 3, 6, 0, 0, 0, loc)
	days := DailySpend(b, 3, now)
	if len(days) != 3 {
		t.Fatalf("%d days", len(days))
	}
	want := []struct{ compute, other, idle string }{{"4.80", "0.00", "2.40"}, {"57.60", "3.00", "2.40"}, {"14.40", "0.00", "0.00"}}
	for i, d := range days {
		if d.Day.Day() != 1+i || d.Day.Location().String() != "Asia/Shanghai" || d.Day.Hour() != 0 {
			t.Errorf("day %d starts %s", i, d.Day)
		}
		tot := d.Totals[CNY]
		if tot == nil {
			tot = newTotals(CNY)
		}
		money(t, tot.Compute, want[i].compute)
		money(t, tot.Other, want[i].other)
		money(t, d.Idle[CNY], want[i].idle)
	}
	if !days[2].End.Equal(now) {
		t.Errorf("today ends %s, want now", days[2].End)
	}
	if DailySpend(b, 0, now) != nil {
		t.Errorf("zero days gave days")
	}
}

// TestBalances_FromAPI: a balance says whether the record it starts from
// was read from the platform's API: the latest record decides, a typed
// one after an API one makes it typed again, and top-ups alone are
// never from the API.
func TestBalances_FromAPI(t *testing.T) {
	b := bookOf()
	b.Balances = []BalanceRecord{
		{Platform: "runpod", Amount: MustDecimal("50"), Currency: USD, At: off(0), API: true},
		{Platform: "vast", Amount: MustDecimal("9"), Currency: USD, At: off(0), API: true},
		{Platform: "vast", Amount: MustDecimal("8"), Currency: USD, At: off(hour)},
	}
	b.TopUps = []TopUp{{Platform: "lambda", Amount: MustDecimal("5"), Currency: USD, At: off(0)}}
	got := Balances(b, off(2*hour))
	for p, want := range map[string]bool{"runpod": true, "vast": false, "lambda": false} {
		if got[p].FromAPI != want {
			t.Errorf("%s: FromAPI = %v, want %v (%+v)", p, got[p].FromAPI, want, got[p])
		}
	}
	if !got["runpod"].Since.Equal(off(0)) {
		t.Errorf("runpod's API balance dates from %s, want its record's time", got["runpod"].Since)
	}
}
