package dashboard_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/ledger"
)

func TestServer_Headers(t *testing.T) {
	e := newEnv(t, nil)
	e.fill(1)
	tok := e.signIn(1)
	for _, tc := range []struct {
		method, target string
		hdr            []string
		status         int
		noStore        bool
	}{
		{"GET", dashboard.PathApp, nil, 200, false},
		{"GET", dashboard.PathMonth, []string{"Authorization", "Bearer " + tok}, 200, true},
		{"GET", dashboard.PathMe, nil, 401, true},
		{"GET", dashboard.PathExport, []string{"Authorization", "Bearer " + tok}, 200, true},
		{"GET", dashboard.PathLogin + "?code=x", nil, 410, true},
		{"GET", dashboard.PathApp + "static/nothing.js", nil, 404, false},
		{"GET", dashboard.PathApp + "api/nothing", nil, 404, true},
		{"POST", dashboard.PathMonth, nil, 405, true},
		{"DELETE", dashboard.PathSession, nil, 405, true},
		{"PUT", dashboard.PathApp, nil, 405, false},
		{"GET", dashboard.PathSession, nil, 405, true},
	} {
		rec := e.do(tc.method, tc.target, "", tc.hdr...)
		h := rec.Header()
		if rec.Code != tc.status {
			t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.target, rec.Code, tc.status, rec.Body)
		}
		if h.Get("Content-Security-Policy") != dashboard.CSP || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s %s: headers %v", tc.method, tc.target, h)
		}
		if tc.noStore && h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s: Cache-Control %q", tc.method, tc.target, h.Get("Cache-Control"))
		}
		if rec.Code == 405 && h.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", tc.method, tc.target)
		}
	}
	if !strings.Contains(dashboard.CSP, "frame-ancestors https://web.telegram.org") || strings.Contains(dashboard.CSP, "unsafe-inline") {
		t.Errorf("CSP %s", dashboard.CSP)
	}
}

func TestServer_Static(t *testing.T) {
	e := newEnv(t, nil)
	plain := e.do("GET", dashboard.PathApp, "")
	if plain.Code != 200 || !strings.HasPrefix(plain.Header().Get("Content-Type"), "text/html") || plain.Header().Get("Content-Encoding") != "" {
		t.Fatalf("index: %d %v", plain.Code, plain.Header())
	}
	gz := e.do("GET", dashboard.PathApp, "", "Accept-Encoding", "br, gzip;q=0.8")
	if gz.Header().Get("Content-Encoding") != "gzip" {
		t.Skip("index.html does not shrink with gzip (the front end's page is tiny); nothing to check until it grows")
	}
	zr, err := gzip.NewReader(gz.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(zr)
	if !bytes.Equal(body, plain.Body.Bytes()) || gz.Header().Get("Vary") != "Accept-Encoding" {
		t.Errorf("gzip body differs from the plain one")
	}
	if no := e.do("GET", dashboard.PathApp, "", "Accept-Encoding", "gzip;q=0"); no.Header().Get("Content-Encoding") != "" {
		t.Errorf("gzip;q=0 got gzip")
	}
	if gz.Header().Get("ETag") == plain.Header().Get("ETag") {
		t.Errorf("both encodings have the tag %s", gz.Header().Get("ETag"))
	}
	if nm := e.do("GET", dashboard.PathApp, "", "Accept-Encoding", "gzip", "If-None-Match", gz.Header().Get("ETag")); nm.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", nm.Code)
	}
}

func TestServer_BadQuery(t *testing.T) {
	e := newEnv(t, nil)
	e.fill(1)
	tok := e.signIn(1)
	for _, tc := range []struct{ target, want string }{
		{dashboard.PathMonth + "?month=" + strings.Repeat("9", 1100), "too long"},
		{dashboard.PathMonth + "?month=2026-11&month=2026-10", `"month" is given more than once`},
		{dashboard.PathMonth + "?month=%zz", "malformed"},
		{dashboard.PathMonth + "?month=11-2026", "YYYY-MM"},
		{dashboard.PathMonth + "?month=2026-13", "YYYY-MM"},
		{dashboard.PathMonth + "?month=2026-12", "2026-10 to 2026-11"},
		{dashboard.PathMonth + "?month=2025-01", "2026-10 to 2026-11"},
		{dashboard.PathExport + "?month=2026-1", "YYYY-MM"},
		{dashboard.PathRental + "?id=abc", "positive whole number"},
		{dashboard.PathRental + "?id=-3", "positive whole number"},
		{dashboard.PathRental, "positive whole number"},
		{dashboard.PathRental + "?id=99999999999999999999999", "positive whole number"},
	} {
		t.Run(tc.target[:min(len(tc.target), 40)], func(t *testing.T) {
			before := e.store.hours.Load()
			refusal(t, e.get(tok, tc.target, nil), 400, "bad_request", tc.want)
			if e.store.hours.Load() != before {
				t.Error("a refused request read heartbeats")
			}
		})
	}
}

func TestServer_Rental(t *testing.T) {
	e := newEnv(t, nil)
	box, _ := e.fill(1)
	other, _ := e.fill(2)
	ctx := context.Background()
	// Roll-ups: busy 10:00-12:00 local (02:00-04:00 UTC on Nov 19),
	// then an idle interval 03:30-03:50, then silence.
	h0 := box.StartedAt()
	if err := e.db.SaveBeats(ctx, []ledger.Beat{
		{RentalID: box.ID, At: h0.Add(10 * time.Minute), Verdict: ledger.VerdictBusy, BusyS: 600, UtilMean: 900, UtilMax: 990, Samples: 10},
		{RentalID: box.ID, At: h0.Add(70 * time.Minute), Verdict: ledger.VerdictBusy, BusyS: 600, UtilMean: 900, UtilMax: 990, Samples: 10},
	}, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.db.OpenIdle(ctx, box.ID, h0.Add(90*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := e.db.CloseIdle(ctx, box.ID, h0.Add(110*time.Minute)); err != nil {
		t.Fatal(err)
	}
	tok := e.signIn(1)
	var page dashboard.RentalPage
	if rec := e.get(tok, dashboard.PathRental+"?id="+strconv.FormatInt(box.ID, 10), &page); rec.Code != 200 {
		t.Fatalf("rental: %d %s", rec.Code, rec.Body)
	}
	if page.Rental.Name != "box" || !page.HasAgent || page.Price == nil || *page.Price != "1.88" || page.Rental.State != "running" {
		t.Errorf("page %+v", page.Rental)
	}
	// 26 h at 1.88/h = 48.88 of compute.
	if page.Rental.Compute == nil || *page.Rental.Compute != "48.88" {
		t.Errorf("compute %v, want 48.88", page.Rental.Compute)
	}
	want := []struct {
		from, to time.Duration
		state    string
	}{{0, 90 * time.Minute, "busy"}, {90 * time.Minute, 110 * time.Minute, "idle"}, {110 * time.Minute, 120 * time.Minute, "busy"}, {120 * time.Minute, 26 * time.Hour, "silent"}}
	if len(page.Timeline) != len(want) {
		t.Fatalf("timeline %+v", page.Timeline)
	}
	for i, w := range want {
		sg := page.Timeline[i]
		if !sg.From.Equal(h0.Add(w.from)) || !sg.To.Equal(h0.Add(w.to)) || sg.State != w.state {
			t.Errorf("segment %d = %+v, want %s..%s %s", i, sg, w.from, w.to, w.state)
		}
	}
	var sum int64
	for _, d := range page.Days {
		sum += d.BusyS + d.IdleS + d.SilentS + d.UnknownS + d.RunningS + d.StoppedS
	}
	if len(page.Days) != 2 || sum != 26*3600 || page.Days[0].IdleS != 1200 {
		t.Errorf("days %+v (sum %d)", page.Days, sum)
	}

	t.Run("NewHoursAfterCache", func(t *testing.T) {
		// The first page cached the final hours; later beats still show.
		e.now = e.now.Add(3 * time.Hour)
		if err := e.db.SaveBeats(ctx, []ledger.Beat{{RentalID: box.ID, At: e.now.Add(-50 * time.Minute), Verdict: ledger.VerdictBusy, BusyS: 600,
			UtilMean: 900, UtilMax: 990, Samples: 10}}, nil); err != nil {
			t.Fatal(err)
		}
		var again dashboard.RentalPage
		if rec := e.get(e.signIn(1), dashboard.PathRental+"?id="+strconv.FormatInt(box.ID, 10), &again); rec.Code != 200 {
			t.Fatalf("rental: %d %s", rec.Code, rec.Body)
		}
		n := len(again.Timeline)
		if n != 5 || again.Timeline[n-1].State != "busy" || !again.Timeline[n-1].From.Equal(e.now.Add(-time.Hour)) ||
			again.Timeline[1].State != "idle" {
			t.Errorf("timeline after new beats %+v", again.Timeline)
		}
		e.now = e.now.Add(-3 * time.Hour)
	})
	t.Run("ErrAnotherUsersRental", func(t *testing.T) {
		before := e.store.hours.Load()
		refusal(t, e.get(tok, dashboard.PathRental+"?id="+strconv.FormatInt(other.ID, 10), nil), 404, "not_found",
			"no rental "+strconv.FormatInt(other.ID, 10))
		if e.store.hours.Load() != before {
			t.Error("another user's rental's heartbeats were read")
		}
		refusal(t, e.get(tok, dashboard.PathRental+"?id=424242", nil), 404, "not_found", "no rental 424242")
	})
}

// TestServer_MonthMatchesExport: the month page's totals are the period
// CSV's total rows, its days add up to them, and the projection is the
// spend so far plus the running rental's rate to the month's end.
func TestServer_MonthMatchesExport(t *testing.T) {
	e := newEnv(t, nil)
	e.fill(1)
	ctx := context.Background()
	u, _ := e.db.User(ctx, 1)
	if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: 1, At: e.now}, func() ledger.User {
		u.Budgets = []ledger.MonthlyBudget{{Currency: ledger.CNY, Amount: ledger.MustDecimal("100")}}
		return u
	}()); err != nil {
		t.Fatal(err)
	}
	tok := e.signIn(1)
	for _, month := range []string{"2026-10", "2026-11"} {
		t.Run(month, func(t *testing.T) {
			var page dashboard.MonthPage
			if rec := e.get(tok, dashboard.PathMonth+"?month="+month, &page); rec.Code != 200 {
				t.Fatalf("month: %d %s", rec.Code, rec.Body)
			}
			rec := e.get(tok, page.ExportURL, nil)
			if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") ||
				!strings.Contains(rec.Header().Get("Content-Disposition"), "gpuledger-"+month+".csv") {
				t.Fatalf("export: %d %v", rec.Code, rec.Header())
			}
			recs, err := csv.NewReader(rec.Body).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			col := map[string]int{}
			for i, c := range recs[0] {
				col[c] = i
			}
			if len(page.Currencies) != 1 {
				t.Fatalf("currencies %+v", page.Currencies)
			}
			cm := page.Currencies[0]
			var totals int
			var rentalSum, volSum ledger.Money
			for _, r := range recs[1:] {
				switch r[col["record"]] {
				case "total":
					totals++
					for _, f := range []struct {
						name string
						got  *string
					}{{"compute", cm.Totals.Compute}, {"storage", cm.Totals.Storage}, {"total", cm.Totals.Total}} {
						if *f.got != r[col[f.name]] {
							t.Errorf("%s: page %s, CSV %s", f.name, *f.got, r[col[f.name]])
						}
					}
				case "rental":
					rentalSum = rentalSum.Add(money(t, r[col["compute"]]))
				case "volume":
					volSum = volSum.Add(money(t, r[col["charge"]]))
				}
			}
			if totals != 1 || rentalSum.String() != *cm.Totals.Compute || volSum.String() != *cm.Totals.Storage {
				t.Errorf("CSV lines: compute %s storage %s, page %s %s", rentalSum, volSum, *cm.Totals.Compute, *cm.Totals.Storage)
			}
			var days ledger.Money
			for _, d := range cm.Days {
				days = days.Add(money(t, *d.Total))
			}
			if days.String() != *cm.Totals.Total {
				t.Errorf("days sum to %s, month %s", days, *cm.Totals.Total)
			}
			switch month {
			case "2026-10":
				if len(cm.Days) != 31 || cm.Projection != nil || cm.BurnPerHour != nil {
					t.Errorf("past month %+v", cm)
				}
			case "2026-11":
				if len(cm.Days) != 20 || cm.Budget == nil || *cm.Budget != "100.00" || cm.BudgetPercent == nil {
					t.Errorf("this month: %d days, budget %v", len(cm.Days), cm.Budget)
				}
				// The box runs from now (Nov 20 12:00) to Dec 1 00:00
				// local: 252 h × 1.88 = 473.76 more; the volume 150 GB ×
				// 0.0066 × 10.5 days = 10.395 more.
				spent := money(t, *cm.Totals.Total)
				exact := spent.Decimal().Rat()
				exact.Add(exact, ledger.MustDecimal("473.76").Rat())
				got := money(t, *cm.Projection).Decimal().Rat()
				diff := new(big.Rat).Sub(got, exact)
				diff.Sub(diff, ledger.MustDecimal("10.395").Rat())
				if diff.Abs(diff).Cmp(big.NewRat(1, 100)) > 0 {
					t.Errorf("projection %s, spent %s: off by %s", *cm.Projection, spent, diff.FloatString(3))
				}
				if *cm.BurnPerHour != "1.92" { // 1.88 + 150 × 0.0066 / 24 = 1.92125
					t.Errorf("burn %s, want 1.92", *cm.BurnPerHour)
				}
				if len(page.Balances) != 1 || page.Balances[0].Source != "typed" || page.Balances[0].RunsOutAt == nil {
					t.Errorf("balances %+v", page.Balances)
				}
				if len(page.Rentals) != 2 || page.Rentals[0].Name != "box" {
					t.Errorf("rentals %+v", page.Rentals)
				}
			}
		})
	}
}

func money(t *testing.T, s string) ledger.Money {
	t.Helper()
	d, err := ledger.ParseDecimal(s)
	if err != nil {
		t.Fatalf("money %q: %v", s, err)
	}
	return ledger.MoneyFromDecimal(d, ledger.CNY)
}

// TestServer_UserLanguage: once signed in, refusals speak the user's
// /lang, and Me says it.
func TestServer_UserLanguage(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := e.db.EnsureUser(context.Background(), ledger.User{ID: 2, Lang: "zh", TZ: "Asia/Shanghai"}); err != nil {
		t.Fatal(err)
	}
	tok := e.signIn(2)
	var me dashboard.Me
	if rec := e.get(tok, dashboard.PathMe, &me); rec.Code != 200 || me.Lang != "zh" || len(me.Months) != 0 || me.Month != "2026-11" {
		t.Errorf("me %d %+v", rec.Code, me)
	}
	refusal(t, e.get(tok, dashboard.PathMonth+"?month=2026/11", nil), 400, "bad_request", "月份须写作 YYYY-MM")
	var page dashboard.MonthPage
	if rec := e.get(tok, dashboard.PathMonth, &page); rec.Code != 200 || len(page.Currencies) != 0 || page.Rentals == nil {
		t.Errorf("an empty month: %d %s", rec.Code, rec.Body)
	}
	if rec := e.get(tok, dashboard.PathExport, nil); rec.Code != 200 || !strings.HasPrefix(rec.Body.String(), "record,name,") {
		t.Errorf("an empty export: %d %s", rec.Code, rec.Body)
	}
	// An allowed user the bot has not met yet has an empty ledger.
	var fresh dashboard.Me
	if rec := e.get(e.signIn(1), dashboard.PathMe, &fresh); rec.Code != 200 || fresh.Lang != "en" || fresh.TZ != "UTC" {
		t.Errorf("a user with no ledger: %d %s", rec.Code, rec.Body)
	}
}

// TestServer_GzipAnswers: a large answer is gzipped for a client that
// accepts it, and decodes to the plain answer.
func TestServer_GzipAnswers(t *testing.T) {
	e := newEnv(t, nil)
	e.fill(1)
	tok := e.signIn(1)
	plain := e.get(tok, dashboard.PathMonth, nil)
	gz := e.do(http.MethodGet, dashboard.PathMonth, "", "Authorization", "Bearer "+tok, "Accept-Encoding", "gzip")
	if plain.Body.Len() < 1024 || gz.Header().Get("Content-Encoding") != "gzip" || plain.Header().Get("Content-Encoding") != "" {
		t.Fatalf("plain %d bytes, gzip answer encoded %q", plain.Body.Len(), gz.Header().Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(gz.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(zr)
	if !bytes.Equal(body, plain.Body.Bytes()) {
		t.Error("the gzipped answer differs from the plain one")
	}
}

// TestServer_Unpriced: a rental without a price is null in its row,
// never 0, and counted beside the totals.
func TestServer_Unpriced(t *testing.T) {
	e := newEnv(t, nil)
	e.fill(1)
	at := e.now.Add(-3 * time.Hour)
	if _, err := e.db.CreateRental(context.Background(), ledger.Action{UserID: 1, At: at}, ledger.Rental{UserID: 1, Name: "free", Platform: "lab",
		GPU: "A100", GPUCount: 1, Mode: ledger.PerSecond, Currency: ledger.CNY, Events: []ledger.Event{{Kind: ledger.EventStart, At: at}}}); err != nil {
		t.Fatal(err)
	}
	var page dashboard.MonthPage
	if rec := e.get(e.signIn(1), dashboard.PathMonth, &page); rec.Code != 200 {
		t.Fatalf("month: %d %s", rec.Code, rec.Body)
	}
	var row *dashboard.RentalRow
	for i := range page.Rentals {
		if page.Rentals[i].Name == "free" {
			row = &page.Rentals[i]
		}
	}
	if row == nil || row.Compute != nil || row.Total != nil || row.Idle != nil || row.Unpriced != 1 || row.Storage == nil {
		t.Fatalf("unpriced row %+v", row)
	}
	if page.Rentals[len(page.Rentals)-1].Name != "free" {
		t.Errorf("the unpriced rental is not last: %+v", page.Rentals)
	}
	if u := page.Currencies[0].Totals.Unpriced; u != 1 {
		t.Errorf("totals count %d unpriced lines, want 1", u)
	}
}
