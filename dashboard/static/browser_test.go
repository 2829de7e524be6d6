package static_test

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/dashboard/static"
	"github.com/gpuledger/gpuledger/internal/browser"
)

// artifacts is where screenshots go: $GPULEDGER_ARTIFACTS (kept by CI) or
// the test's temporary directory.
func artifacts(t *testing.T) string {
	if d := os.Getenv("GPULEDGER_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// chartClock records, per chart box (by id), when uPlot's root went into
// it: performance.now(), the clock the marks use.
const chartClock = `window.__chartAt = {};
new MutationObserver(function (ms) {
  ms.forEach(function (m) {
    m.addedNodes.forEach(function (n) {
      if (n.nodeType === 1 && n.classList.contains('uplot') && m.target.id && !(m.target.id in window.__chartAt)) window.__chartAt[m.target.id] = performance.now();
    });
  });
}).observe(document, { childList: true, subtree: true });`

// tgRecorder stands in for the Telegram app's side of the bridge: it
// records what the page posts.
const tgRecorder = `window.__tgEvents = [];
window.TelegramWebviewProxy = { postEvent: function (type, data) { window.__tgEvents.push(type); } };`

// telegramDark is the theme Telegram's Android app sends in night mode.
var telegramDark = map[string]string{
	"bg_color": "#212d3b", "secondary_bg_color": "#1d2733", "text_color": "#ffffff", "hint_color": "#7d8b99",
	"link_color": "#5eabe1", "button_color": "#50a8eb", "button_text_color": "#ffffff",
}

// chartPixels counts, per chart canvas under the selector, the pixels
// drawn at all and those near the colour of the CSS variable.
func chartPixels(p *browser.Page, selector, cssVar string) [][2]int {
	return browser.Eval[[][2]int](p, `(function () {
  var want = getComputedStyle(document.documentElement).getPropertyValue('`+cssVar+`').trim();
  var m = /^#(..)(..)(..)$/.exec(want), rgb = m ? [1, 2, 3].map(function (i) { return parseInt(m[i], 16) }) : [-99, -99, -99];
  return Array.from(document.querySelectorAll('`+selector+` canvas')).map(function (c) {
    var d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, any = 0, near = 0;
    for (var i = 0; i < d.length; i += 4) {
      if (d[i + 3] === 0) continue;
      any++;
      if (Math.abs(d[i] - rgb[0]) < 12 && Math.abs(d[i + 1] - rgb[1]) < 12 && Math.abs(d[i + 2] - rgb[2]) < 12) near++;
    }
    return [any, near];
  });
})()`)
}

func checkCharts(t *testing.T, p *browser.Page, selector, cssVar string, want int) {
	t.Helper()
	got := chartPixels(p, selector, cssVar)
	if len(got) != want {
		t.Fatalf("%d chart canvases under %s, want %d", len(got), selector, want)
	}
	for i, px := range got {
		if px[0] < 1000 || px[1] < 100 {
			t.Errorf("chart %d under %s: %d pixels drawn, %d in %s; want a drawn chart (≥ 1000 and ≥ 100)", i, selector, px[0], px[1], cssVar)
		}
	}
}

// waitFor waits until the selector matches and the page is not loading.
func waitFor(t *testing.T, p *browser.Page, sel string) {
	t.Helper()
	browser.Eval[bool](p, `new Promise(function (r) { (function w() { document.querySelector('`+sel+`') && document.body.dataset.state !== 'loading' ? r(true) : setTimeout(w, 10) })() })`)
}

// renderedMark logs when the page marked its first screen and its last
// chart drawn, and fails unless each mark is set once, in that order.
func renderedMark(t *testing.T, p *browser.Page, label string) {
	t.Helper()
	first, all := p.Mark(static.RenderedMark), p.Mark(static.CompleteMark)
	n := browser.Eval[[2]int](p, `[performance.getEntriesByName('`+static.RenderedMark+`').length, performance.getEntriesByName('`+static.CompleteMark+`').length]`)
	if n != [2]int{1, 1} || all < first {
		t.Errorf("%s: %d first-screen mark(s) at %.0f ms, %d every-chart mark(s) at %.0f ms; want one of each, in that order", label, n[0], first, n[1], all)
	}
	t.Logf("%s: first screen drawn %.0f ms after navigation, every chart %.0f ms", label, first, all)
}

// expectText fails unless the element's text equals want.
func expectText(t *testing.T, p *browser.Page, sel, want string) {
	t.Helper()
	if got := p.Text(sel); got != want {
		t.Errorf("%s = %q, want %q", sel, got, want)
	}
}

func money(s *string, cur string) string {
	if s == nil {
		return "no price"
	}
	return *s + " " + cur
}

func checkMonth(t *testing.T, p *browser.Page, f fixtures, noPrice string) {
	t.Helper()
	for _, c := range f.month.Currencies {
		expectText(t, p, `[data-test="total-`+c.Currency+`"]`, money(c.Totals.Total, c.Currency))
		if c.Projection != nil {
			expectText(t, p, `[data-test="projection-`+c.Currency+`"]`, money(c.Projection, c.Currency))
		}
		expectText(t, p, `[data-test="idle-`+c.Currency+`"]`, money(c.Totals.Idle, c.Currency))
		if c.Budget != nil {
			expectText(t, p, `[data-test="budget-`+c.Currency+`"]`, money(c.Budget, c.Currency))
		}
	}
	// Rentals in the API's order, most expensive first; an unpriced total
	// reads as text, never 0.
	order := browser.Eval[[]string](p, `Array.from(document.querySelectorAll('[data-test^="rental-row-"]')).map(function (e) { return e.dataset.test })`)
	var want []string
	for _, r := range f.month.Rentals {
		want = append(want, fmt.Sprintf("rental-row-%d", r.ID))
		row := p.Text(fmt.Sprintf(`[data-test="rental-row-%d"] td.num`, r.ID))
		if r.Total == nil {
			if !strings.Contains(row, noPrice) {
				t.Errorf("rental %d has no price; its total reads %q, want %q", r.ID, row, noPrice)
			}
		} else if !strings.HasPrefix(row, *r.Total+" "+r.Currency) {
			t.Errorf("rental %d total reads %q, want %s %s", r.ID, row, *r.Total, r.Currency)
		}
	}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("rental rows %v, want %v", order, want)
	}
	for _, b := range f.month.Balances {
		got := p.Text(`[data-test="balance-` + b.Platform + `"]`)
		if !strings.Contains(got, b.Balance+" "+b.Currency) {
			t.Errorf("balance-%s reads %q, want it to show %s %s", b.Platform, got, b.Balance, b.Currency)
		}
	}
	for _, pl := range f.month.Platforms {
		got := p.Text(`[data-test="platform-` + pl.Platform + `-` + pl.Currency + `"]`)
		if !strings.Contains(got, *pl.Total+" "+pl.Currency) || !strings.HasPrefix(got, pl.PlatformName) {
			t.Errorf("platform %s reads %q, want its name %s and total %s", pl.Platform, got, pl.PlatformName, *pl.Total)
		}
	}
	for _, r := range f.month.Rentals {
		if got := p.Text(fmt.Sprintf(`[data-test="rental-row-%d"] .hint`, r.ID)); !strings.HasPrefix(got, r.PlatformName+" · ") {
			t.Errorf("rental %d's line reads %q, want the platform named %s", r.ID, got, r.PlatformName)
		}
	}
	for _, b := range f.month.Balances {
		if got := p.Text(`[data-test="balance-` + b.Platform + `"] .label`); got != b.PlatformName {
			t.Errorf("balance-%s is labelled %q, want %s", b.Platform, got, b.PlatformName)
		}
	}
	checkCharts(t, p, `[data-test^="chart-daily-"]`, "--c-compute", len(f.month.Currencies))
	checkCharts(t, p, `[data-test^="chart-cumulative-"]`, "--c-compute", len(f.month.Currencies))
}

// chartsFit fails unless every chart's canvas lies within its card's
// content box (its padding inside), and uses most of it.
func chartsFit(t *testing.T, p *browser.Page, label string) {
	t.Helper()
	type fit struct {
		ID                 string
		Canvas, Left, Room float64
		CardLeft           float64
	}
	fits := browser.Eval[[]fit](p, `Array.from(document.querySelectorAll('.chart')).map(function (e) {
  var card = e.closest('.card'), cs = getComputedStyle(card), cb = card.getBoundingClientRect();
  var cv = e.querySelector('canvas'), r = cv ? cv.getBoundingClientRect() : { left: 0, right: 0, width: 0 };
  var inner = { left: cb.left + parseFloat(cs.paddingLeft), right: cb.right - parseFloat(cs.paddingRight) };
  return { ID: e.id, Canvas: r.width, Left: r.left - inner.left, Room: inner.right - r.right, CardLeft: inner.right - inner.left };
})`)
	if len(fits) == 0 {
		t.Fatalf("%s: no charts", label)
	}
	for _, f := range fits {
		if f.Canvas == 0 || f.Left < -0.5 || f.Room < -0.5 {
			t.Errorf("%s: chart %s is %.0f px wide and runs %.0f px past its card's right edge (%.0f px of room)", label, f.ID, f.Canvas, -f.Room, f.CardLeft)
		}
	}
}

func TestDashboard_Browser(t *testing.T) {
	f := load(t)
	b := browser.Start(t)
	dir := artifacts(t)
	shot := func(t *testing.T, p *browser.Page, name string) {
		path := filepath.Join(dir, "dashboard-"+name+".png")
		p.Screenshot(path)
		t.Logf("screenshot %s", path)
	}

	t.Run("MonthByLink", func(t *testing.T) {
		for _, vp := range []browser.Viewport{browser.Phone, browser.Desktop} {
			for _, sc := range []browser.Scheme{browser.Light, browser.Dark} {
				label := vp.Name + "-" + string(sc)
				hub := &fakeHub{t: t, f: f}
				srv := hub.serve()
				p := b.Open(t, srv.URL+dashboard.PathLogin+"?code="+code, browser.Options{Viewport: vp, Scheme: sc})
				if s := p.WaitState(); s != "ready" {
					t.Fatalf("%s: state %q, want ready; page: %s", label, s, p.Text("main"))
				}
				checkMonth(t, p, f, "no price")
				renderedMark(t, p, label)
				if w := browser.Eval[[2]int](p, `[document.documentElement.scrollWidth, document.documentElement.clientWidth]`); w[0] > w[1] {
					t.Errorf("%s: the page is %d px wide in a %d px window", label, w[0], w[1])
				}
				wantBG := map[browser.Scheme]string{browser.Light: "rgb(255, 255, 255)", browser.Dark: "rgb(17, 20, 24)"}[sc]
				if bg := browser.Eval[string](p, `getComputedStyle(document.body).backgroundColor`); bg != wantBG {
					t.Errorf("%s: body background %s, want %s from prefers-color-scheme", label, bg, wantBG)
				}
				if _, bearer, cookied, _ := hub.seen(); cookied == 0 || bearer != 0 {
					t.Errorf("%s: %d calls by cookie, %d by bearer; want the cookie alone", label, cookied, bearer)
				}
				shot(t, p, "month-"+label)
				p.CheckClean(nil)
			}
		}
	})

	t.Run("FirstScreenFirst", func(t *testing.T) {
		// On a phone the second currency's charts are below the first
		// screen: they are made after the first screen is marked drawn;
		// every chart on that screen, before. The page records when each
		// chart's uPlot root went into its box.
		hub := &fakeHub{t: t, f: f}
		srv := hub.serve()
		p := b.Open(t, srv.URL+dashboard.PathLogin+"?code="+code, browser.Options{Viewport: browser.Phone, InitScript: chartClock})
		if s := p.WaitState(); s != "ready" {
			t.Fatalf("state %q, want ready", s)
		}
		first := p.Mark(static.RenderedMark)
		type chart struct {
			ID  string
			Top float64
			At  float64
		}
		charts := browser.Eval[[]chart](p, `Array.from(document.querySelectorAll('.chart')).map(function (e) {
  return { ID: e.id, Top: e.getBoundingClientRect().top + scrollY, At: (window.__chartAt[e.id] || -1) } })`)
		screen := browser.Eval[float64](p, `innerHeight`)
		var above, below int
		for _, c := range charts {
			switch {
			case c.At < 0:
				t.Errorf("chart %s was never drawn", c.ID)
			case c.Top < screen && c.At > first:
				t.Errorf("chart %s is on the first screen (top %.0f of %.0f px) but was drawn at %.0f ms, after the first screen's mark at %.0f ms", c.ID, c.Top, screen, c.At, first)
			case c.Top >= screen && c.At < first:
				t.Errorf("chart %s is below the first screen (top %.0f of %.0f px) but was drawn at %.0f ms, before the first screen's mark at %.0f ms", c.ID, c.Top, screen, c.At, first)
			}
			if c.Top < screen {
				above++
			} else {
				below++
			}
		}
		if above == 0 || below == 0 {
			t.Errorf("%d charts on the first screen, %d below; the fixture should give both (two currencies on a phone)", above, below)
		}
		checkMonth(t, p, f, "no price")
		p.CheckClean(nil)
	})

	t.Run("LeftBeforeItCame", func(t *testing.T) {
		// The rental is asked for, and the user goes back to the month
		// before its answer comes: the month stays on screen, ready, and
		// the late rental draws nothing over it.
		hub := &fakeHub{t: t, f: f, slowRental: 400 * time.Millisecond}
		srv := hub.serve()
		p := b.Open(t, srv.URL+dashboard.PathLogin+"?code="+code, browser.Options{Viewport: browser.Phone})
		p.WaitState()
		browser.Eval[bool](p, `(location.hash = '#/rental/7', true)`)
		// While the next page loads, the header stays (only the first
		// load hides it).
		if d := browser.Eval[string](p, `new Promise(function (r) { setTimeout(function () { r(document.body.dataset.state + ' ' + getComputedStyle(document.querySelector('.top')).display) }, 20) })`); d != "loading flex" {
			t.Errorf("while the rental loads: state and header display %q, want %q", d, "loading flex")
		}
		browser.Eval[bool](p, `new Promise(function (r) { setTimeout(function () { location.hash = '#/month/2026-12'; r(true) }, 50) })`)
		waitFor(t, p, `[data-test="currency-USD"]`)
		// Past the rental's answer.
		browser.Eval[bool](p, `new Promise(function (r) { setTimeout(function () { r(true) }, 600) })`)
		if n := p.Count(`[data-test="timeline"]`); n != 0 {
			t.Errorf("the late rental answer drew its page over the month (%d timelines)", n)
		}
		if s := browser.Eval[string](p, `document.body.dataset.state`); s != "ready" {
			t.Errorf("state %q after the month was drawn, want ready", s)
		}
		checkMonth(t, p, f, "no price")
		p.CheckClean(nil)
	})

	t.Run("NoAnswer", func(t *testing.T) {
		// The network loses its way: a request that gets no answer
		// within the page's time limit (shortened here to 400 ms) ends in
		// an error that says so, and its retry button loads the page once
		// answers come again. First the first load, sign-in included,
		// then a later page.
		limit := `window.gpuledgerTimeoutMs = 400;`
		for _, way := range []string{"link", "telegram"} {
			t.Run(way, func(t *testing.T) {
				hub := &fakeHub{t: t, f: f}
				hub.hang.Store(true)
				srv := hub.serve()
				u := srv.URL + dashboard.PathLogin + "?code=" + code
				if way == "telegram" {
					u = telegramURL(srv.URL, telegramDark)
				}
				p := b.Open(t, u, browser.Options{Viewport: browser.Phone, InitScript: limit})
				if s := p.WaitState(); s != "error" {
					t.Fatalf("state %q with no answers, want error; page: %s", s, p.Text("main"))
				}
				if got := p.Text(`[data-test="error"]`); !strings.Contains(got, "did not answer within") {
					t.Errorf("error %q, want it to say the server did not answer", got)
				}
				hub.hang.Store(false)
				browser.Eval[bool](p, `(document.querySelector('[data-test="retry"]').click(), true)`)
				if s := p.WaitState(); s != "ready" {
					t.Fatalf("state %q after the retry, want ready; page: %s", s, p.Text("main"))
				}
				checkMonth(t, p, f, "no price")

				hub.hang.Store(true)
				browser.Eval[bool](p, `(location.hash = '#/rental/7', true)`)
				browser.Eval[bool](p, `new Promise(function (r) { (function w() { document.body.dataset.state === 'error' ? r(true) : setTimeout(w, 10) })() })`)
				hub.hang.Store(false)
				browser.Eval[bool](p, `(document.querySelector('[data-test="retry"]').click(), true)`)
				waitFor(t, p, `[data-test="timeline"]`)
				expectText(t, p, `[data-test="rental-name"]`, f.rental.Rental.Name)
				if way == "telegram" {
					hub.mu.Lock()
					n := len(hub.sessions)
					hub.mu.Unlock()
					if n != 2 {
						t.Errorf("%d session exchanges, want 2: the one that got no answer and the retry's", n)
					}
				}
				// The requests the page gave up on are the only problems.
				p.CheckClean(func(pr browser.Problem) bool {
					return strings.Contains(pr.Text, "abort") || strings.Contains(pr.Text, "ERR_")
				})
			})
		}
	})

	t.Run("Narrow", func(t *testing.T) {
		// The narrowest phones in use: 360 px, month and rental.
		hub := &fakeHub{t: t, f: f}
		srv := hub.serve()
		p := b.Open(t, srv.URL+dashboard.PathLogin+"?code="+code, browser.Options{Viewport: browser.Viewport{Name: "narrow", Width: 360, Height: 740, Scale: 2, Mobile: true}})
		p.WaitState()
		for route, sel := range map[string]string{"#/rental/7": `[data-test="timeline"]`, "#/month/2026-12": `[data-test="currency-USD"]`} {
			browser.Eval[bool](p, `(location.hash = '`+route+`', true)`)
			waitFor(t, p, sel)
			if w := browser.Eval[[2]int](p, `[document.documentElement.scrollWidth, document.documentElement.clientWidth]`); w[0] > w[1] {
				t.Errorf("%s: the page is %d px wide in a %d px window", route, w[0], w[1])
			}
		}
		p.CheckClean(nil)
	})

	t.Run("EachFigureSaysWhatItIs", func(t *testing.T) {
		// This month: its figures as of now, each balance says whether it
		// is a reading or worked out from one. A past month: as it was at
		// its end, in both languages.
		for _, lang := range []string{"en", "zh"} {
			hub := &fakeHub{t: t, f: f, lang: lang}
			srv := hub.serve()
			p := b.Open(t, srv.URL+dashboard.PathLogin+"?code="+code, browser.Options{Viewport: browser.Phone})
			if s := p.WaitState(); s != "ready" {
				t.Fatalf("%s: state %q, want ready", lang, s)
			}
			want := map[string]map[string]string{
				"en": {"asof": "Figures as of 15 Dec 2026, 10:00", "runpod": "Computed for 15 Dec 2026, 10:00: the platform's reading at 15 Dec 2026, 09:55 (84.47 USD), minus spend since",
					"autodl": "Typed in with /balance at 12 Dec 2026, 17:30"},
				"zh": {"asof": "数据截至 2026年12月15日 10:00", "runpod": "按 2026年12月15日 10:00 计算：2026年12月15日 09:55 的平台读数（84.47 USD），减去此后花费",
					"autodl": "2026年12月12日 17:30 用 /balance 录入"},
			}[lang]
			expectText(t, p, `[data-test="as-of"]`, want["asof"])
			expectText(t, p, `[data-test="balance-runpod"] [data-test="balance-says"]`, want["runpod"])
			expectText(t, p, `[data-test="balance-autodl"] [data-test="balance-says"]`, want["autodl"])

			browser.Eval[bool](p, `(location.hash = '#/month/`+pastMonth+`', true)`)
			waitFor(t, p, `[data-test="as-of"]:not(:empty)`)
			waitFor(t, p, `[data-test="budget-USD"]`)
			pm := past(f.month)
			first, last := pm.Rentals[0], pm.Rentals[len(pm.Rentals)-1]
			want = map[string]map[string]string{
				"en": {"asof": "As the month was at its end (1 Dec 2026, 00:00)", "budget": "Not kept for past months", "state": "running at month end · released since",
					"idle": "Idle cost no agent", "balance": "Computed for 1 Dec 2026, 00:00", "balances": "Balances at month end", "noagent": "1 rental(s) without an agent"},
				"zh": {"asof": "按月末（2026年12月1日 00:00）的状况", "budget": "往月的预算不保存", "state": "月末运行中 · 之后已释放",
					"idle": "空闲花费 无代理", "balance": "按 2026年12月1日 00:00 计算", "balances": "月末余额", "noagent": "1 个实例没有代理"},
			}[lang]
			expectText(t, p, `[data-test="as-of"]`, want["asof"])
			expectText(t, p, `[data-test="budget-USD"]`, want["budget"])
			expectText(t, p, fmt.Sprintf(`[data-test="rental-row-%d"] [data-test="row-state"]`, first.ID), want["state"])
			if got := p.Text(fmt.Sprintf(`[data-test="rental-row-%d"] td.num`, last.ID)); !strings.Contains(got, want["idle"]) {
				t.Errorf("%s: a rental without an agent reads %q, want %q", lang, got, want["idle"])
			}
			page := p.Text("main")
			for _, w := range []string{want["balance"], want["balances"], want["noagent"]} {
				if !strings.Contains(page, w) {
					t.Errorf("%s: the past month lacks %q", lang, w)
				}
			}
			for _, bad := range []string{"% used", "已用", "Runs out", "预计用完", "projection", "预计"} {
				if strings.Contains(page, bad) {
					t.Errorf("%s: the past month says %q: %s", lang, bad, page)
				}
			}
			// The longer state ("running at month end · released since")
			// wraps: each rental's total stays in sight on a phone.
			if cut := browser.Eval[[]string](p, `Array.from(document.querySelectorAll('[data-test^="rental-row-"] td.num')).filter(function (td) {
  return td.getBoundingClientRect().right > td.closest('.card').getBoundingClientRect().right + 0.5 }).map(function (td) { return td.textContent })`); len(cut) > 0 {
				t.Errorf("%s: rental totals past the card's edge: %q", lang, cut)
			}
			if n := p.Count(`[data-test^="projection-"]`); n != 0 {
				t.Errorf("%s: %d projections on a past month", lang, n)
			}
			if lang == "en" {
				shot(t, p, "month-past-phone")
			}
			p.CheckClean(nil)
		}
	})

	t.Run("ChartsFitTheirCards", func(t *testing.T) {
		// Every chart stays inside its card at any width from 320 px up,
		// in both themes, with the desktop's classic scroll bars (which
		// take width from the page once it grows long), and follows its
		// card when the card narrows without the window changing.
		for _, w := range []int64{320, 390} {
			for _, sc := range []browser.Scheme{browser.Light, browser.Dark} {
				label := fmt.Sprintf("%d-%s", w, sc)
				hub := &fakeHub{t: t, f: f}
				srv := hub.serve()
				p := b.Open(t, srv.URL+dashboard.PathLogin+"?code="+code, browser.Options{Viewport: browser.Viewport{Name: label, Width: w, Height: 800, Scale: 1}, Scheme: sc})
				if s := p.WaitState(); s != "ready" {
					t.Fatalf("%s: state %q, want ready", label, s)
				}
				chartsFit(t, p, label+" month")
				browser.Eval[bool](p, `(location.hash = '#/rental/7', true)`)
				waitFor(t, p, `[data-test="chart-hours"] canvas`)
				chartsFit(t, p, label+" rental")
				if w == 390 {
					shot(t, p, "rental-"+label)
				}
			}
		}
		hub := &fakeHub{t: t, f: f}
		srv := hub.serve()
		p := b.Open(t, srv.URL+dashboard.PathLogin+"?code="+code, browser.Options{Viewport: browser.Desktop})
		p.WaitState()
		chartsFit(t, p, "desktop")
		for _, w := range []string{"700px", "340px", "1100px"} {
			browser.Eval[bool](p, `(document.body.style.maxWidth = '`+w+`', true)`)
			browser.Eval[bool](p, `new Promise(function (r) { setTimeout(function () { r(true) }, 400) })`)
			chartsFit(t, p, "body narrowed to "+w)
		}
		shot(t, p, "month-narrowed")
		p.CheckClean(nil)
	})

	t.Run("MonthInTelegramDark", func(t *testing.T) {
		hub := &fakeHub{t: t, f: f, lang: "zh"}
		srv := hub.serve()
		p := b.Open(t, telegramURL(srv.URL, telegramDark), browser.Options{Viewport: browser.Phone, Scheme: browser.Light, InitScript: tgRecorder})
		if s := p.WaitState(); s != "ready" {
			t.Fatalf("state %q, want ready; page: %s", s, p.Text("main"))
		}
		sessions, bearer, cookied, _ := hub.seen()
		if len(sessions) != 1 || sessions[0] != initData {
			t.Errorf("api/session got %q, want initData once, decoded", sessions)
		}
		if bearer == 0 || cookied != 0 {
			t.Errorf("%d calls by bearer, %d by cookie; want the bearer token alone", bearer, cookied)
		}
		if h := browser.Eval[string](p, `location.hash`); strings.Contains(h, "tgWebAppData") {
			t.Errorf("initData left in the address: %q", h)
		}
		if bg := browser.Eval[string](p, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(33, 45, 59)" {
			t.Errorf("body background %q, want Telegram's bg_color #212d3b", bg)
		}
		ev := browser.Eval[[]string](p, `window.__tgEvents`)
		if s := strings.Join(ev, ","); !strings.Contains(s, "web_app_ready") || !strings.Contains(s, "web_app_expand") {
			t.Errorf("posted events %v, want web_app_ready and web_app_expand", ev)
		}
		checkMonth(t, p, f, "未定价")
		if got := p.Text(`[data-test="currency-USD"]`); !strings.Contains(got, "月末预计") {
			t.Errorf("a zh user's month reads %q, want Chinese labels", got)
		}
		renderedMark(t, p, "telegram-dark")
		shot(t, p, "month-phone-telegram-dark")

		// The CSV button fetches with the bearer token.
		browser.Eval[bool](p, `(document.querySelector('[data-test="csv"]').click(), true)`)
		browser.Eval[bool](p, `new Promise(function (r) { setTimeout(function () { r(true) }, 200) })`)
		_, _, _, ex := hub.seen()
		if exports := strings.Join(ex, ";"); exports != f.month.Month+" bearer" {
			t.Errorf("export calls %q, want one for %s with the bearer token", exports, f.month.Month)
		}

		// A theme change re-applies the variables.
		browser.Eval[bool](p, `(Telegram.WebView.receiveEvent('theme_changed', {theme_params: {bg_color: '#102030'}}), true)`)
		if v := browser.Eval[string](p, `getComputedStyle(document.documentElement).getPropertyValue('--tg-theme-bg-color').trim()`); v != "#102030" {
			t.Errorf("after theme_changed --tg-theme-bg-color = %q, want #102030", v)
		}
		if sc := browser.Eval[string](p, `document.documentElement.dataset.scheme + ' ' + getComputedStyle(document.documentElement).getPropertyValue('--s-stopped').trim()`); sc != "dark #3a414b" {
			t.Errorf("scheme and stopped colour %q under a dark Telegram theme on a light device, want dark #3a414b", sc)
		}
		if n := p.Count(`[data-test^="chart-"] canvas`); n != 2*len(f.month.Currencies) {
			t.Errorf("%d charts after the theme change, want %d", n, 2*len(f.month.Currencies))
		}
		// Clicking a rental row opens its page.
		browser.Eval[bool](p, `(document.querySelector('[data-test="rental-row-7"]').click(), true)`)
		browser.Eval[bool](p, `new Promise(function (r) { (function w() { document.querySelector('[data-test="rental-name"]') && document.body.dataset.state === 'ready' ? r(true) : setTimeout(w, 10) })() })`)
		expectText(t, p, `[data-test="rental-name"]`, f.rental.Rental.Name)
		if ev := browser.Eval[[]string](p, `window.__tgEvents`); ev[len(ev)-1] != "web_app_setup_back_button" {
			t.Errorf("posted events %v, want Telegram's back button shown on the rental's page", ev)
		}
		browser.Eval[bool](p, `(Telegram.WebView.receiveEvent('back_button_pressed'), true)`)
		waitFor(t, p, `[data-test="month-picker"]`)

		// Another month from the picker: its (empty) page, no error.
		browser.Eval[bool](p, `(function () { var s = document.querySelector('[data-test="month-picker"]'); s.value = '2026-10'; s.dispatchEvent(new Event('change')); return true })()`)
		waitFor(t, p, `[data-test="empty"]`)
		if h := browser.Eval[string](p, `location.hash`); h != "#/month/2026-10" {
			t.Errorf("after picking October the address is %q", h)
		}
		p.CheckClean(nil)
	})

	t.Run("UnknownRental", func(t *testing.T) {
		hub := &fakeHub{t: t, f: f}
		srv := hub.serve()
		p := b.Open(t, srv.URL+dashboard.PathLogin+"?code="+code, browser.Options{Viewport: browser.Phone})
		p.WaitState()
		browser.Eval[bool](p, `(location.hash = '#/rental/999', true)`)
		waitFor(t, p, `[data-test="error"]`)
		if s := browser.Eval[string](p, `document.body.dataset.state`); s != "error" {
			t.Errorf("state %q for another user's rental, want error", s)
		}
		if msg := p.Text(`[data-test="error"]`); !strings.Contains(msg, "not_found") {
			t.Errorf("error reads %q, want the server's message", msg)
		}
		p.CheckClean(func(pr browser.Problem) bool { return pr.Source == "network" && strings.Contains(pr.Text, "404") })
	})

	t.Run("Rental", func(t *testing.T) {
		for _, vp := range []browser.Viewport{browser.Phone, browser.Desktop} {
			hub := &fakeHub{t: t, f: f}
			srv := hub.serve()
			// Sign in by the link, then open the rental's address.
			p := b.Open(t, srv.URL+dashboard.PathLogin+"?code="+code, browser.Options{Viewport: vp})
			p.WaitState()
			browser.Eval[bool](p, `(location.hash = '#/rental/7', true)`)
			browser.Eval[bool](p, `new Promise(function (r) { (function w() { document.querySelector('[data-test="timeline"]') && document.body.dataset.state === 'ready' ? r(true) : setTimeout(w, 10) })() })`)
			r := f.rental
			expectText(t, p, `[data-test="rental-name"]`, r.Rental.Name)
			expectText(t, p, `[data-test="rental-total"]`, money(r.Rental.Total, r.Rental.Currency))
			expectText(t, p, `[data-test="rental-idle"]`, money(r.Rental.Idle, r.Rental.Currency))
			expectText(t, p, `[data-test="rental-compute"]`, money(r.Rental.Compute, r.Rental.Currency))
			expectText(t, p, `[data-test="rental-price"]`, *r.PriceText)
			expectText(t, p, `[data-test="rental-mode"]`, r.ModeName)
			if got := p.Text(`[data-test="rental-platform"]`); !strings.HasPrefix(got, r.Rental.PlatformName) {
				t.Errorf("platform reads %q, want %s", got, r.Rental.PlatformName)
			}
			states := browser.Eval[[]string](p, `Array.from(document.querySelectorAll('[data-test="segment"]')).map(function (e) { return e.dataset.state })`)
			var want []string
			for _, s := range r.Timeline {
				want = append(want, s.State)
			}
			if strings.Join(states, ",") != strings.Join(want, ",") {
				t.Errorf("timeline segments %v, want %v", states, want)
			}
			widths := browser.Eval[float64](p, `Array.from(document.querySelectorAll('[data-test="segment"]')).reduce(function (a, e) { return a + e.getBoundingClientRect().width }, 0) / document.querySelector('[data-test="timeline"]').getBoundingClientRect().width`)
			if widths < 0.97 || widths > 1.03 {
				t.Errorf("segments fill %.2f of the strip, want all of it", widths)
			}
			checkCharts(t, p, `[data-test="chart-hours"]`, "--s-busy", 1)
			// Started at local midnight in the user's zone (16:00 UTC the day before).
			if got := p.Text(`[data-test="rental-started"]`); !strings.Contains(got, "1 Dec 2026") || !strings.Contains(got, "00:00") {
				t.Errorf("started reads %q, want 1 Dec 2026, 00:00 in %s", got, f.me.TZ)
			}
			// The receipt: its head, the price per unit of work, every
			// figure with its label and text as the server wrote them, and
			// that it is the agent's claim.
			rc := r.Receipt
			expectText(t, p, `[data-test="receipt-head"]`, rc.Headline)
			if got := p.Text(`[data-test="receipt-per-unit"]`); !strings.Contains(got, rc.PricePerTFLOPHourText) || !strings.Contains(got, rc.PriceText) {
				t.Errorf("per unit reads %q, want %s → %s", got, rc.PriceText, rc.PricePerTFLOPHourText)
			}
			for _, g := range rc.GPUs {
				for _, fg := range g.Figures {
					sel := fmt.Sprintf(`[data-test="fig-%d-%s"]`, g.Index, fg.Name)
					if got := p.Text(sel + ` .label`); got != fg.Label {
						t.Errorf("%s is labelled %q, want %q", fg.Name, got, fg.Label)
					}
					expectText(t, p, sel+` .value`, fg.Text)
				}
			}
			for _, fg := range rc.Host {
				expectText(t, p, `[data-test="fig-host-`+fg.Name+`"] .label`, fg.Label)
			}
			if got := p.Text(`[data-test="receipt-warnings"]`); len(rc.Warnings) == 0 || !strings.Contains(got, rc.Warnings[0].Text) {
				t.Errorf("warnings read %q, want %+v", got, rc.Warnings)
			}
			expectText(t, p, `[data-test="receipt-claim"]`, rc.Claim)
			shot(t, p, "rental-"+vp.Name)
			p.CheckClean(nil)
		}
	})

	// Team: the month page links the user's team; its page shows the
	// totals per currency and the split by person, by project and by
	// platform under the server's headings, each amount with its currency.
	t.Run("Team", func(t *testing.T) {
		hub := &fakeHub{t: t, f: f}
		srv := hub.serve()
		p := b.Open(t, srv.URL+dashboard.PathLogin+"?code="+code, browser.Options{Viewport: browser.Phone})
		p.WaitState()
		browser.Eval[bool](p, `(document.querySelector('[data-test="team-link-3"]').click(), true)`)
		browser.Eval[bool](p, `new Promise(function (r) { (function w() { document.querySelector('[data-test="team-note"]') && document.body.dataset.state === 'ready' ? r(true) : setTimeout(w, 10) })() })`)
		tp := f.team
		expectText(t, p, `[data-test="team-title"]`, tp.Labels.Title)
		for sel, want := range map[string][]string{
			`[data-test="team-people"]`:    {tp.Labels.ByPerson, tp.People[0].Name, tp.People[0].Amount + " CNY", tp.People[3].Name, tp.People[3].Amount + " USD"},
			`[data-test="team-projects"]`:  {tp.Labels.ByProject, tp.Projects[1].Name, tp.Projects[1].Amount + " CNY"},
			`[data-test="team-platforms"]`: {tp.Labels.ByPlatform, "RunPod", "599.63 USD"},
			`[data-test="team-total-USD"]`: {"599.63 USD"},
		} {
			got := p.Text(sel)
			for _, w := range want {
				if !strings.Contains(got, w) {
					t.Errorf("%s reads %q, want %q", sel, got, w)
				}
			}
		}
		shot(t, p, "team-phone")
		p.CheckClean(nil)
	})

	// TeamOnly: a person admitted to a team only has no month (403
	// not_personal): the dashboard opens on their team's page, signed in.
	t.Run("TeamOnly", func(t *testing.T) {
		hub := &fakeHub{t: t, f: f, outsider: true}
		srv := hub.serve()
		p := b.Open(t, srv.URL+dashboard.PathLogin+"?code="+code, browser.Options{Viewport: browser.Phone})
		p.WaitState()
		if st := browser.Eval[string](p, `document.body.dataset.state`); st != "ready" {
			t.Fatalf("state %q, want ready; page: %s", st, p.Text("main"))
		}
		expectText(t, p, `[data-test="team-title"]`, f.team.Labels.Title)
		if got := browser.Eval[string](p, `location.hash`); got != "#/team/3" {
			t.Errorf("address %q, want the team's page", got)
		}
		if browser.Eval[bool](p, `!!document.querySelector('a.back')`) {
			t.Error("the team-only page links back to a month of their own")
		}
		// The month is asked for with api/me, before the page knows it
		// has none: its 403 is expected.
		p.CheckClean(func(pr browser.Problem) bool {
			return pr.Source == "network" && strings.Contains(pr.Text, "403") && strings.HasSuffix(pr.URL, dashboard.PathMonth)
		})
	})

	t.Run("Compare", func(t *testing.T) {
		hub := &fakeHub{t: t, f: f}
		srv := hub.serve()
		p := b.Open(t, srv.URL+dashboard.PathLogin+"?code="+code, browser.Options{Viewport: browser.Phone})
		p.WaitState()
		browser.Eval[bool](p, `(document.querySelector('[data-test="compare-link"]').click(), true)`)
		browser.Eval[bool](p, `new Promise(function (r) { (function w() { document.querySelector('[data-test="compare-claim"]') && document.body.dataset.state === 'ready' ? r(true) : setTimeout(w, 10) })() })`)
		for _, c := range f.cmp.Cards {
			got := p.Text(`[data-test="card-` + c.Platform + `-` + c.GPU + `"]`)
			if c.PerTFLOPHourPrice == "" || !strings.Contains(got, c.PerTFLOPHourPrice) || !strings.Contains(got, c.PlatformName) {
				t.Errorf("card row reads %q, want %s and %s", got, c.PlatformName, c.PerTFLOPHourPrice)
			}
		}
		for _, lt := range f.cmp.Tables {
			got := p.Text(`[data-test="label-` + lt.Label + `"]`)
			for _, want := range []string{f.cmp.Columns["money"], f.cmp.Columns["time"], lt.Rows[0].MoneyText, lt.Rows[0].TimeText} {
				if !strings.Contains(got, want) {
					t.Errorf("label %s reads %q, want %q", lt.Label, got, want)
				}
			}
		}
		shot(t, p, "compare-phone")
		p.CheckClean(nil)
	})

	t.Run("TelegramWebFrame", func(t *testing.T) {
		hub := &fakeHub{t: t, f: f}
		srv := hub.serve()
		app := strings.TrimPrefix(telegramURL(srv.URL, map[string]string{"bg_color": "#ffffff", "text_color": "#000000"}), srv.URL)
		p := b.Open(t, srv.URL+"/telegram-web?src="+url.QueryEscape(app), browser.Options{Viewport: browser.Desktop})
		state := browser.Eval[string](p, `new Promise(function (r) { (function w() {
  var d = document.getElementById('app').contentDocument, s = d && d.body && d.body.dataset.state;
  s && s !== 'loading' ? r(s) : setTimeout(w, 10) })() })`)
		if state != "ready" {
			t.Fatalf("framed app state %q, want ready", state)
		}
		msgs := browser.Eval[[]string](p, `window.__msgs`)
		if s := strings.Join(msgs, ","); !strings.Contains(s, "web_app_ready") || !strings.Contains(s, "web_app_expand") {
			t.Errorf("the frame posted %v, want web_app_ready and web_app_expand", msgs)
		}
		// Telegram Web sends theme changes by postMessage.
		bg := browser.Eval[string](p, `new Promise(function (r) {
  var f = document.getElementById('app');
  f.contentWindow.postMessage(JSON.stringify({eventType: 'theme_changed', eventData: {theme_params: {bg_color: '#0e1621'}}}), '*');
  setTimeout(function () { r(getComputedStyle(f.contentDocument.body).backgroundColor) }, 100) })`)
		if bg != "rgb(14, 22, 33)" {
			t.Errorf("framed app background %q after theme_changed, want rgb(14, 22, 33)", bg)
		}
		p.CheckClean(nil)
	})

	t.Run("SignInOn401", func(t *testing.T) {
		hub := &fakeHub{t: t, f: f}
		srv := hub.serve()
		p := b.Open(t, srv.URL+"/app/", browser.Options{Viewport: browser.Phone, Scheme: browser.Dark})
		if s := p.WaitState(); s != "signin" {
			t.Fatalf("state %q, want signin", s)
		}
		msg := p.Text(`[data-test="signin"]`)
		for _, want := range []string{"/dashboard", "menu button", "菜单按钮", "请先登录"} {
			if !strings.Contains(msg, want) {
				t.Errorf("sign-in message %q lacks %q", msg, want)
			}
		}
		shot(t, p, "signin-phone")
		// The refused request is logged by the browser; nothing else may be.
		p.CheckClean(func(pr browser.Problem) bool { return pr.Source == "network" && strings.Contains(pr.Text, "401") })
	})

	t.Run("ForgedInitData", func(t *testing.T) {
		hub := &fakeHub{t: t, f: f}
		srv := hub.serve()
		u := strings.Replace(telegramURL(srv.URL, nil), "hash%3D0a1b2c", "hash%3Dffffff", 1)
		p := b.Open(t, u, browser.Options{Viewport: browser.Phone})
		if s := p.WaitState(); s != "signin" {
			t.Fatalf("state %q with refused initData, want signin", s)
		}
		p.CheckClean(func(pr browser.Problem) bool { return pr.Source == "network" && strings.Contains(pr.Text, "401") })
	})

	t.Run("Strings", func(t *testing.T) {
		hub := &fakeHub{t: t, f: f}
		srv := hub.serve()
		p := b.Open(t, srv.URL+dashboard.PathLogin+"?code="+code, browser.Options{Viewport: browser.Desktop})
		p.WaitState()
		bad := browser.Eval[[]string](p, `(function () {
  var S = window.gpuledgerStrings, bad = [];
  function args(s) { return (s.match(/\{\d\}/g) || []).sort().join() }
  Object.keys(S.en).forEach(function (k) { if (!(k in S.zh)) bad.push('zh lacks ' + k); else if (args(S.en[k]) !== args(S.zh[k])) bad.push(k + ': arguments differ'); });
  Object.keys(S.zh).forEach(function (k) { if (!(k in S.en)) bad.push('en lacks ' + k); });
  return bad;
})()`)
		if len(bad) > 0 {
			t.Errorf("catalog: %v", bad)
		}
	})
}
