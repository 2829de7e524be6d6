package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/dashboard/dashtest"
	"github.com/gpuledger/gpuledger/dashboard/static"
	"github.com/gpuledger/gpuledger/internal/browser"
)

// BenchmarkFirstRender opens the dashboard in headless Chromium, served by
// the real handler over loopback from a ledger with a year of history
// (yearServer), and reports the median time from navigation to the page's
// marks: static.RenderedMark (the first screen drawn, charts included)
// and static.CompleteMark (every chart drawn), and the slowest first
// screen of the runs.
//
// Each iteration opens, in turn, two floors and the three ways in: the
// baseline (browser.Baseline: one script, one fetch, one element), the
// chart floor (the same plus uPlot and the month's two charts drawn with
// the same options, nothing else), the month by one-time link on a phone,
// and by Telegram's initData on a phone and on a desktop. Every page opens
// in a fresh browser context (nothing cached), and every figure comes from
// the same moments of the same run, so the dashboard's time is read
// against the floors rather than as a number of its own: these machines
// are noisy.
//
// Run it with a fixed count, as BENCHMARKS.md does:
//
//	go test -run '^$' -bench BenchmarkFirstRender -benchtime 20x ./dashboard/
func BenchmarkFirstRender(b *testing.B) {
	br := browser.Start(b) // skips without Chromium, saying why
	srv, now, _ := yearServer(b)
	hub := httptest.NewServer(srv.Handler())
	b.Cleanup(hub.Close)
	base := browser.Baseline(b, static.RenderedMark)
	floor := chartFloor(b)

	// Each initData is taken once: a second earlier each time.
	opened := 0
	telegram := func() string {
		opened++
		v := url.Values{}
		v.Set("tgWebAppData", dashtest.InitData(botToken, 1, now.Add(-time.Duration(opened)*time.Second)))
		v.Set("tgWebAppVersion", "8.0")
		v.Set("tgWebAppPlatform", "android")
		v.Set("tgWebAppThemeParams", `{"bg_color":"#212d3b","secondary_bg_color":"#1d2733","text_color":"#ffffff","hint_color":"#7d8b99","link_color":"#5eabe1","button_color":"#50a8eb","button_text_color":"#ffffff"}`)
		return hub.URL + dashboard.PathApp + "#" + v.Encode()
	}
	link := func() string {
		l, _, err := srv.Link(context.Background(), 1)
		if err != nil {
			b.Fatal(err)
		}
		return hub.URL + strings.TrimPrefix(l, "https://hub.example.com")
	}
	phone := browser.Options{Viewport: browser.Phone}
	cases := []struct {
		name     string
		url      func() string
		o        browser.Options
		complete bool // the page sets static.CompleteMark too
	}{
		{"baseline", func() string { return base.URL }, phone, false},
		{"chart-floor", func() string { return floor.URL }, phone, false},
		{"link-phone", link, phone, true},
		{"telegram-phone", telegram, browser.Options{Viewport: browser.Phone, Scheme: browser.Dark}, true},
		{"telegram-desktop", telegram, browser.Options{Viewport: browser.Desktop, Scheme: browser.Dark}, true},
	}
	first := make([][]float64, len(cases))
	all := make([][]float64, len(cases))
	for b.Loop() {
		for i, c := range cases {
			p := br.Open(b, c.url(), c.o)
			if s := p.WaitState(); s != "ready" {
				b.Fatalf("%s: state %q, want ready; page: %s", c.name, s, p.Text("main"))
			}
			first[i] = append(first[i], p.Mark(static.RenderedMark))
			if c.complete {
				all[i] = append(all[i], p.Mark(static.CompleteMark))
			}
			p.Close()
		}
	}
	median := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	for i, c := range cases {
		b.ReportMetric(median(first[i]), c.name+"_ms")
		if c.complete {
			// The slowest of the runs too: a target is a bound on each
			// open, not on the typical one.
			b.ReportMetric(slices.Max(first[i]), c.name+"_max_ms")
			b.ReportMetric(median(all[i]), c.name+"_all_ms")
		}
	}
}

// chartFloor serves the least page that draws the month's charts: the
// baseline's one script and one fetch, plus uPlot (the embedded file) and
// two charts of 31 days with the options the dashboard uses, and the same
// mark a task later. What the dashboard takes beyond it is its own.
func chartFloor(b *testing.B) *httptest.Server {
	b.Helper()
	lib, err := static.FS.ReadFile("uPlot.iife.min.js")
	if err != nil {
		b.Fatal(err)
	}
	days := make([]string, 31)
	for i := range days {
		days[i] = fmt.Sprint(i + 1)
	}
	js := `fetch('/d.json').then(function (r) { return r.json() }).then(function (d) {
  var xs = d.days, n = xs.length, ys = xs.map(function (x) { return 40 + (x * 7) % 30 }), cum = [], run = 0;
  ys.forEach(function (y) { run += y; cum.push(run) });
  var opts = function () { return { width: document.body.clientWidth - 24, height: 200, legend: { show: false }, cursor: { show: false }, select: { show: false },
    scales: { x: { time: false } }, axes: [{ font: '13px sans-serif' }, { font: '13px sans-serif', size: 52 }] } };
  var a = opts(); a.series = [{}, { fill: '#3b82f6', stroke: '#3b82f6', width: 0, paths: uPlot.paths.bars({ size: [0.72, 48] }) }];
  var c = opts(); c.series = [{}, { stroke: '#3b82f6', width: 2, fill: 'rgba(59,130,246,0.2)', points: { show: false } }];
  var e1 = document.createElement('div'), e2 = document.createElement('div');
  document.body.appendChild(e1); document.body.appendChild(e2);
  new uPlot(a, [xs, ys], e1); new uPlot(c, [xs, cum], e2);
  document.body.dataset.state = 'ready'; setTimeout(function () { performance.mark('` + static.RenderedMark + `') }, 0) })`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/u.js":
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write(lib)
		case "/f.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, js)
		case "/d.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"days":[%s]}`, strings.Join(days, ","))
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>floor</title><script src="/u.js" defer></script><script src="/f.js" defer></script><body data-state="loading" style="margin:0 12px">`)
		}
	}))
	b.Cleanup(srv.Close)
	return srv
}
