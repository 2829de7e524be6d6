package scheduler_test

import (
	"bytes"
	"context"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
	"github.com/gpuledger/gpuledger/view"
)

// dollarsToo gives env's user a second rental, in dollars ($1/h from t0),
// and budgets of ¥100 and $20 a month.
func dollarsToo(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.db.CreateRental(ctx, ledger.Action{UserID: 1, At: t0}, ledger.Rental{
		Name: "pod1", Platform: "runpod", GPU: "A100", GPUCount: 1, Mode: ledger.PerSecond,
		Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1"), Unit: ledger.UnitHour}, Currency: ledger.USD,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}},
	}); err != nil {
		t.Fatal(err)
	}
	u, err := e.db.User(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	u.Budgets = []ledger.MonthlyBudget{{Currency: ledger.CNY, Amount: ledger.MustDecimal("100")}, {Currency: ledger.USD, Amount: ledger.MustDecimal("20")}}
	if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: 1, At: t0}, u); err != nil {
		t.Fatal(err)
	}
}

// TestBudgetAlerts_EachCurrency: each currency's month spend is compared
// with that currency's budget and alerted on its own levels.
func TestBudgetAlerts_EachCurrency(t *testing.T) {
	e := newEnv(t, nil)
	dollarsToo(t, e)
	ctx := context.Background()
	seen := 0 // newMsgs returns every message so far
	alerts := func() []string {
		t.Helper()
		if err := e.s.MoneyAlerts(ctx); err != nil {
			t.Fatal(err)
		}
		var out []string
		all := e.chat.NewMessages()
		fresh := all[seen:]
		seen = len(all)
		for _, m := range fresh {
			if strings.Contains(m.Text, "Budget") {
				out = append(out, m.Text)
			}
		}
		return out
	}
	// +11h: ¥20.68 of ¥100 (20%), $11 of $20 (55%): the dollar one only.
	e.clk.Set(t0.Add(11 * time.Hour))
	got := alerts()
	if len(got) != 1 || !strings.Contains(got[0], "$11.00 of $20.00") {
		t.Fatalf("at +11h: budget alerts %q, want one for $11.00 of $20.00", got)
	}
	// +27h: ¥50.76 (50%) and $27 (135%, over): one each.
	e.clk.Set(t0.Add(27 * time.Hour))
	got = alerts()
	if len(got) != 2 {
		t.Fatalf("at +27h: budget alerts %q, want one per currency", got)
	}
	joined := strings.Join(got, "\n")
	for _, w := range []string{"¥50.76 of ¥100.00", "$27.00 of $20.00", "over budget"} {
		if !strings.Contains(joined, w) {
			t.Errorf("at +27h: alerts %q lack %q", got, w)
		}
	}
	if got := alerts(); len(got) != 0 {
		t.Errorf("alerts repeated: %q", got)
	}
}

// TestSummaries_EachCurrency: the nightly summary states each currency's
// budget, and its chart has a panel for each currency spent in.
func TestSummaries_EachCurrency(t *testing.T) {
	e := newEnv(t, nil)
	dollarsToo(t, e)
	s, err := scheduler.New(scheduler.Config{Store: e.db, Sender: e.chat, Buttons: testButtons(), Now: e.clk.Now, Tick: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e.clk.Set(t0.Add(12*time.Hour + time.Minute)) // 22:01 in Shanghai
	if err := s.Summaries(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := e.chat.NewMessages()
	if len(m) != 2 || m[1].Photo == nil {
		t.Fatalf("summary and chart = %+v", m)
	}
	for _, w := range []string{"¥22.56 of ¥100.00", "$12.00 of $20.00"} {
		if !strings.Contains(m[0].Text, w) {
			t.Errorf("summary %q lacks %q", m[0].Text, w)
		}
	}
	img, err := png.Decode(bytes.NewReader(m[1].Photo.Data))
	if err != nil {
		t.Fatalf("chart is not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() != view.ChartWidth || r.Dy() != 2*view.ChartHeight {
		t.Fatalf("chart is %v, want %dx%d: a panel per currency", r, view.ChartWidth, 2*view.ChartHeight)
	}
	for p := range 2 {
		n := 0
		for y := p * view.ChartHeight; y < (p+1)*view.ChartHeight; y++ {
			for x := 0; x < view.ChartWidth; x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				if r>>8 == 66 && g>>8 == 133 && b>>8 == 244 {
					n++
				}
			}
		}
		if n < 50 {
			t.Errorf("panel %d has %d compute pixels", p, n)
		}
	}
	b, err := e.db.Book(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := view.ChartCurrencies(b, e.clk.Now()); len(got) != 2 || got[0] != ledger.CNY || got[1] != ledger.USD {
		t.Errorf("ChartCurrencies = %v, want [CNY USD]", got)
	}
}
