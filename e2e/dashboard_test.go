package e2e

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/dashboard/dashtest"
	"github.com/gpuledger/gpuledger/dashboard/static"
	"github.com/gpuledger/gpuledger/internal/browser"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// linkRE finds /dashboard's one-time link in its reply.
var linkRE = regexp.MustCompile(`https?://[^\s"<>]+/app/login\?code=[A-Za-z0-9_-]+`)

// TestDashboard runs the real server with the fake Bot API and opens its
// dashboard in headless Chromium, both ways a user reaches it: the
// one-time link /dashboard gives (phone, light), and Telegram's signed
// initData as the Mini App gets it (phone, Telegram's dark theme; and a
// desktop). Each time the page must draw its charts and show the month's
// total that the period CSV export (fetched by the page's own session)
// and `gpuledger export` give; the rental page must show its timeline; a
// used link and forged initData must be refused. Screenshots are kept in
// $GPULEDGER_ARTIFACTS; the first-render time is logged.
func TestDashboard(t *testing.T) {
	br := browser.Start(t) // skips (or fails in CI) without Chromium, saying why
	now := time.Now().UTC()
	monthStart, _ := ledger.MonthRange(now, time.UTC)
	// Everything happens this month and nothing runs any more, so the
	// month's figures stand still while the test reads them.
	start := now.Add(-50 * time.Minute)
	if start.Before(monthStart) {
		start = monthStart
	}
	span := now.Sub(start)
	at := func(f float64) time.Time { return start.Add(time.Duration(f * float64(span))).Truncate(time.Second) }
	var rid int64

	w := startWorldEnv(t, []string{"GPULEDGER_PUBLIC_URL=https://ledger.example.test"}, func(ctx context.Context, w *world, db *sqlite.DB) {
		s := fastSettings()
		if _, err := db.EnsureUser(ctx, ledger.User{ID: userID, Lang: "en", TZ: "UTC", Settings: s,
			Budgets: []ledger.MonthlyBudget{{Currency: ledger.CNY, Amount: ledger.MustDecimal("500")}}}); err != nil {
			t.Fatal(err)
		}
		a := ledger.Action{UserID: userID}
		r, err := db.CreateRental(ctx, a, ledger.Rental{
			Name: "trainer", Platform: "autodl", GPU: "RTX 4090", GPUCount: 2, Mode: ledger.PerSecond, Priced: true,
			Price: ledger.Price{Amount: ledger.MustDecimal("3.76"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
			Events: []ledger.Event{{Kind: ledger.EventStart, At: at(0)}},
		})
		if err != nil {
			t.Fatal(err)
		}
		rid = r.ID
		for _, ev := range []ledger.Event{{Kind: ledger.EventStop, At: at(0.4)}, {Kind: ledger.EventResume, At: at(0.5)}, {Kind: ledger.EventStop, At: at(0.9)}} {
			if _, err := db.AppendEvent(ctx, a, "trainer", ev); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.CreateRental(ctx, a, ledger.Rental{
			Name: "eval", Platform: "runpod", GPU: "A40", GPUCount: 1, Mode: ledger.PerSecond, Priced: true,
			Price: ledger.Price{Amount: ledger.MustDecimal("0.79"), Unit: ledger.UnitHour}, Currency: ledger.USD,
			Events: []ledger.Event{{Kind: ledger.EventStart, At: at(0.1)}},
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.AppendEvent(ctx, a, "eval", ledger.Event{Kind: ledger.EventRelease, At: at(0.7)}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.AddCharge(ctx, a, "trainer", ledger.Charge{At: at(0.3), Amount: ledger.MustDecimal("12.50"), Currency: ledger.CNY, Note: "dataset disk"}); err != nil {
			t.Fatal(err)
		}
	})
	art := artifactsDir(t)

	// The menu button opens the Mini App (the public URL is https).
	waitUntil(t, 20*time.Second, "the menu button set to the dashboard", func() bool {
		m, ok := w.fake.Menu()
		return ok && m.Type == "web_app" && m.URL == "https://ledger.example.test/app/"
	})

	// /dashboard: a one-time link to the public URL, without a preview
	// (which would spend it), and the Open dashboard button in private.
	w.fake.SendText(userID, userID, "/dashboard")
	reply := w.waitText(t, 0, 20*time.Second, "/app/login?code=")
	if !reply.NoPreview {
		t.Error("the /dashboard reply asked for a link preview: a preview fetches, and spends, the one-time link")
	}
	if !hasWebApp(reply, "https://ledger.example.test/app/") {
		t.Errorf("the /dashboard reply has no Open dashboard web-app button: %+v", reply.Buttons)
	}
	link := linkRE.FindString(plainText(reply.Text))
	if link == "" {
		t.Fatalf("no link in the /dashboard reply: %q", reply.Text)
	}
	// The public URL is the proxy's; the test reaches the hub directly.
	local := "http://" + w.addr + strings.TrimPrefix(link, "https://ledger.example.test")
	if strings.Contains(w.srvLog.String(), link[strings.Index(link, "code=")+5:]) {
		t.Fatal("the one-time code is in the server's log")
	}

	exp := w.exportJSON(t)
	wantCNY := monthTotal(t, exp, "CNY")
	wantUSD := monthTotal(t, exp, "USD")
	month := now.Format("2006-01")

	// The floor this machine's browser sets: the least page, served from
	// loopback and timed the same way. The dashboard's figure is read
	// against it (BenchmarkFirstRender in package dashboard measures both
	// over many runs).
	t.Run("baseline", func(t *testing.T) {
		p := br.Open(t, browser.Baseline(t, static.RenderedMark).URL, browser.Options{Viewport: browser.Phone})
		if st := p.WaitState(); st != "ready" {
			t.Fatalf("baseline page state %q", st)
		}
		logRender(t, p, "baseline, phone", false)
	})

	t.Run("link", func(t *testing.T) {
		p := br.Open(t, local, browser.Options{Viewport: browser.Phone, Scheme: browser.Light})
		if st := p.WaitState(); st != "ready" {
			t.Fatalf("page state %q after the one-time link, want ready", st)
		}
		checkMonth(t, p, wantCNY, wantUSD, month)
		logRender(t, p, "link, phone", true)
		p.Screenshot(filepath.Join(art, "e2e-dashboard-link-phone-light.png"))
		p.CheckClean(nil)

		// The rental page: its timeline has the running and stopped
		// stretches the events give.
		browser.Eval[bool](p, fmt.Sprintf(`(location.hash = '#/rental/%d', true)`, rid))
		waitSel(t, p, `[data-test="timeline"] [data-test="segment"]`)
		states := browser.Eval[[]string](p, `Array.from(document.querySelectorAll('[data-test="segment"]')).map(function (e) { return e.dataset.state })`)
		if !contains(states, "stopped") || !(contains(states, "running") || contains(states, "silent")) {
			t.Errorf("timeline states %v, want running (or silent) and stopped stretches", states)
		}
		if got := p.Text(`[data-test="rental-name"]`); got != "trainer" {
			t.Errorf("rental page name %q, want trainer", got)
		}
		p.Screenshot(filepath.Join(art, "e2e-dashboard-rental-phone.png"))
		p.CheckClean(nil)
	})

	t.Run("link used twice", func(t *testing.T) {
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(local)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode < 400 || len(res.Cookies()) != 0 {
			t.Errorf("a used link answered %d with %d cookies; want a refusal and no session", res.StatusCode, len(res.Cookies()))
		}
	})

	t.Run("telegram", func(t *testing.T) {
		theme, _ := json.Marshal(map[string]string{"bg_color": "#212d3b", "secondary_bg_color": "#1d2733", "text_color": "#ffffff",
			"hint_color": "#7d8b99", "link_color": "#5eabe1", "button_color": "#50a8eb", "button_text_color": "#ffffff"})
		// Each open has initData of its own, its auth_date a second before
		// the last one's. auth_date counts whole seconds, so initData made
		// from the clock at each open was the same for two opens within
		// one second: a replay, which the server refuses.
		signed := time.Now()
		for i, vp := range []browser.Viewport{browser.Phone, browser.Desktop} {
			init := dashtest.InitData(tgToken, userID, signed.Add(-time.Duration(i)*time.Second))
			u := "http://" + w.addr + "/app/#tgWebAppData=" + url.QueryEscape(init) + "&tgWebAppVersion=8.0&tgWebAppPlatform=android&tgWebAppThemeParams=" + url.QueryEscape(string(theme))
			p := br.Open(t, u, browser.Options{Viewport: vp, Scheme: browser.Dark})
			if st := p.WaitState(); st != "ready" {
				t.Fatalf("%s: page state %q with signed initData, want ready; page: %s", vp.Name, st, p.Text("main"))
			}
			checkMonth(t, p, wantCNY, wantUSD, month)
			if bg := browser.Eval[string](p, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(33, 45, 59)" {
				t.Errorf("%s: body background %s, want Telegram's bg_color #212d3b", vp.Name, bg)
			}
			logRender(t, p, "telegram, "+vp.Name, true)
			p.Screenshot(filepath.Join(art, "e2e-dashboard-telegram-dark-"+vp.Name+".png"))
			p.CheckClean(nil)
		}
	})

	t.Run("forged initData", func(t *testing.T) {
		init := dashtest.InitData("999:another-bots-token", userID, time.Now())
		p := br.Open(t, "http://"+w.addr+"/app/#tgWebAppData="+url.QueryEscape(init), browser.Options{Viewport: browser.Phone})
		if st := p.WaitState(); st != "signin" {
			t.Fatalf("page state %q with another bot's initData, want signin", st)
		}
		if p.Count(`[data-test^="total-"]`) != 0 {
			t.Error("a figure of the ledger is on the page after a refused sign-in")
		}
	})
}

// checkMonth checks the month page's totals against the export and that
// its charts drew, and fetches the period CSV with the page's own session
// to check the same totals there.
func checkMonth(t *testing.T, p *browser.Page, cny, usd, month string) {
	t.Helper()
	for cur, want := range map[string]string{"CNY": cny, "USD": usd} {
		if got := p.Text(`[data-test="total-` + cur + `"]`); !strings.Contains(got, want) {
			t.Errorf("month total %s shows %q, want %s (the export's)", cur, got, want)
		}
	}
	drawn := browser.Eval[[]int](p, `Array.from(document.querySelectorAll('[data-test^="chart-"] canvas')).map(function (c) {
  var d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, n = 0;
  for (var i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
  return n; })`)
	if len(drawn) < 4 {
		t.Errorf("%d chart canvases, want a daily and a cumulative chart per currency (4)", len(drawn))
	}
	for i, n := range drawn {
		if n < 1000 {
			t.Errorf("chart %d drew %d pixels: not drawn", i, n)
		}
	}
	body := browser.Eval[string](p, `(async function () {
  var h = {}, tok = sessionStorage.getItem('gpuledger.token') || '';
  if (tok) h.Authorization = 'Bearer ' + tok;
  var r = await fetch('api/export.csv?month=`+month+`', { credentials: 'same-origin', headers: h });
  return r.status + '\n' + await r.text(); })()`)
	status, csvText, _ := strings.Cut(body, "\n")
	if status != "200" {
		t.Fatalf("the page's session fetched the CSV with status %s: %s", status, csvText)
	}
	sums := csvTotals(t, csvText)
	if sums["CNY"] != cny || sums["USD"] != usd {
		t.Errorf("the period CSV sums to %v, want CNY %s and USD %s", sums, cny, usd)
	}
}

// csvTotals reads the CSV export's totals per currency, and checks that
// its rental rows add up to them exactly (every line of the test is a
// rental's).
func csvTotals(t *testing.T, text string) map[string]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("period CSV: %v (%d rows)\n%s", err, len(rows), text)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	ri, ok0 := col["record"]
	ci, ok1 := col["currency"]
	ti, ok2 := col["total"]
	if !ok0 || !ok1 || !ok2 {
		t.Fatalf("period CSV header %v has no record, currency or total column", rows[0])
	}
	sums := map[string]*big.Rat{}
	totals := map[string]string{}
	for _, r := range rows[1:] {
		if r[ri] == "total" {
			totals[r[ci]] = r[ti]
		}
		if r[ri] != "rental" || r[ti] == "" || r[ti] == ledger.Unpriced {
			continue
		}
		v, ok := new(big.Rat).SetString(r[ti])
		if !ok {
			t.Fatalf("period CSV total %q is not a number", r[ti])
		}
		if sums[r[ci]] == nil {
			sums[r[ci]] = new(big.Rat)
		}
		sums[r[ci]].Add(sums[r[ci]], v)
	}
	for c, v := range sums {
		if got := v.FloatString(2); got != totals[c] {
			t.Errorf("period CSV: the %s rentals add up to %s, its totals row says %s", c, got, totals[c])
		}
	}
	return totals
}

// monthTotal is the export's total of a currency: everything in the test
// falls in this month.
func monthTotal(t *testing.T, exp map[string]any, cur string) string {
	t.Helper()
	tot, _ := exp["totals"].(map[string]any)
	c, _ := tot[cur].(map[string]any)
	s, _ := c["total"].(string)
	if s == "" {
		t.Fatalf("the export has no %s total: %v", cur, exp["totals"])
	}
	return s
}

// logRender logs how long the first page took to draw (the page's
// static.RenderedMark, from navigation start; Mark waits for it) and, for
// the dashboard, when its last chart was (static.CompleteMark).
func logRender(t *testing.T, p *browser.Page, what string, dashboard bool) {
	t.Helper()
	t.Logf("%s: first render %.0f ms after navigation", what, p.Mark(static.RenderedMark))
	if dashboard {
		t.Logf("%s: every chart drawn %.0f ms after navigation", what, p.Mark(static.CompleteMark))
		// Preloaded, then run by the script: fetched once, not twice.
		if n := browser.Eval[int](p, `performance.getEntriesByType('resource').filter(function (e) { return /uPlot\.iife\.min\.js$/.test(e.name) }).length`); n != 1 {
			t.Errorf("%s: the chart library was fetched %d times, want once", what, n)
		}
	}
	// The whole page as transferred (compressed, headers included): the
	// document, its files and every answer it asked for.
	bytes := browser.Eval[float64](p, `performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource')).reduce(function (n, e) { return n + e.transferSize }, 0)`)
	t.Logf("%s: %.1f KB transferred", what, bytes/1024)
	if bytes <= 0 || bytes > 150<<10 {
		t.Errorf("%s: the page transferred %.0f bytes, want some and under 150 KB", what, bytes)
	}
}

func waitSel(t *testing.T, p *browser.Page, sel string) {
	t.Helper()
	browser.Eval[bool](p, `new Promise(function (r) { (function w() { document.querySelector('`+sel+`') && document.body.dataset.state !== 'loading' ? r(true) : setTimeout(w, 10) })() })`)
}

// hasWebApp reports whether the message has a web-app button to url.
func hasWebApp(m tgfake.Message, url string) bool {
	for _, row := range m.Buttons {
		for _, b := range row {
			if b.WebApp == url {
				return true
			}
		}
	}
	return false
}

func waitUntil(t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// artifactsDir is where screenshots go: $GPULEDGER_ARTIFACTS (kept by
// CI), else the test's temporary directory.
func artifactsDir(t *testing.T) string {
	if d := os.Getenv("GPULEDGER_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}
