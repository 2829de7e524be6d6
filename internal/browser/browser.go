// Package browser is a small headless-Chromium harness for tests: it opens
// a page at a phone or desktop viewport in a light or dark colour scheme,
// waits for the page to say it is done, reads text, evaluates script, takes
// screenshots and collects every console error, uncaught exception and
// Content-Security-Policy violation, so that a test can fail on any.
//
// It drives Debian's chromium through chromedp. When no browser is
// installed the test is skipped with the fix, unless
// GPULEDGER_BROWSER_REQUIRED=1 (set in CI), where a skip would hide a
// missing browser as a pass.
package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// EnvPath names the Chromium binary; default DefaultPath.
const EnvPath = "GPULEDGER_CHROMIUM"

// EnvRequired, when "1", turns a missing browser from a skip into a failure.
const EnvRequired = "GPULEDGER_BROWSER_REQUIRED"

// DefaultPath is where Debian's chromium package installs the browser.
const DefaultPath = "/usr/bin/chromium"

// Viewport is a window size; Mobile also emulates touch and a phone's
// viewport meta handling.
type Viewport struct {
	Name          string
	Width, Height int64
	Scale         float64
	Mobile        bool
}

// Phone and Desktop are the two viewports the dashboard is checked at.
var (
	Phone   = Viewport{Name: "phone", Width: 390, Height: 844, Scale: 2, Mobile: true}
	Desktop = Viewport{Name: "desktop", Width: 1280, Height: 800, Scale: 1}
)

// Scheme is an emulated prefers-color-scheme.
type Scheme string

// The two colour schemes.
const (
	Light Scheme = "light"
	Dark  Scheme = "dark"
)

// Browser is one running Chromium; each Open is a new tab. It is safe for
// use by one test goroutine at a time.
type Browser struct {
	ctx context.Context // the browser's chromedp context
}

// Find returns the Chromium binary to use, or an error that says how to
// install one.
func Find() (string, error) {
	path := os.Getenv(EnvPath)
	if path == "" {
		path = DefaultPath
	}
	if _, err := exec.LookPath(path); err != nil {
		return "", fmt.Errorf("browser: no Chromium at %s (%w): install it with \"apt-get install chromium\" or set %s to its path", path, err, EnvPath)
	}
	return path, nil
}

// Start starts a headless Chromium for the test and stops it when the test
// ends. Without a browser it skips the test (or fails it when
// GPULEDGER_BROWSER_REQUIRED=1).
func Start(t testing.TB) *Browser {
	t.Helper()
	path, err := Find()
	if err != nil {
		if os.Getenv(EnvRequired) == "1" {
			t.Fatalf("%v (%s=1, so a missing browser fails)", err, EnvRequired)
		}
		t.Skipf("%v; the browser test runs once it is installed", err)
	}
	// Not t.TempDir: Chromium may still write there while it exits, and a
	// failed RemoveAll would fail the test.
	dir, err := os.MkdirTemp("", "gpuledger-chromium-")
	if err != nil {
		t.Fatalf("browser: profile directory: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // tests run as root in containers
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		// Without these the browser dials Google's services, which the
		// closed test network refuses, and logs errors for each.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(dir),
	)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(func() { bcancel(); acancel() })
	// Start the browser now, so that a broken install fails here.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("browser: start %s: %v", path, err)
	}
	return &Browser{ctx: bctx}
}

// Options says how to open a page.
type Options struct {
	Viewport Viewport
	Scheme   Scheme // default Light
	// InitScript runs in every document before the page's own scripts
	// (a stand-in for what a host such as Telegram injects).
	InitScript string
	// Timeout bounds each step; default 20 s.
	Timeout time.Duration
}

// Problem is a console error, an uncaught exception or a CSP violation.
type Problem struct {
	Type   string // "error", "exception", or a browser log level
	Source string // browser log source ("network", "security"...), "" for the page's own
	Text   string
	URL    string
}

func (p Problem) String() string {
	s := p.Type
	if p.Source != "" {
		s += "/" + p.Source
	}
	if p.URL != "" {
		return s + ": " + p.Text + " (" + p.URL + ")"
	}
	return s + ": " + p.Text
}

// Page is one open tab.
type Page struct {
	t       testing.TB
	ctx     context.Context
	cancel  context.CancelFunc
	timeout time.Duration

	mu       sync.Mutex
	problems []Problem
}

// cspProbe reports CSP violations to the console, where Page collects them
// (the browser's own log of them varies between versions).
const cspProbe = `document.addEventListener('securitypolicyviolation', function (e) {
  console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') + ' at ' + e.sourceFile + ':' + e.lineNumber);
});`

// Open opens url in a new tab, in a browser context of its own, at the
// options' viewport and colour scheme, and returns once the document has
// loaded. The tab closes when the test ends.
func (b *Browser) Open(t testing.TB, url string, o Options) *Page {
	t.Helper()
	if o.Timeout == 0 {
		o.Timeout = 20 * time.Second
	}
	if o.Scheme == "" {
		o.Scheme = Light
	}
	if o.Viewport.Width == 0 {
		o.Viewport = Phone
	}
	// A browser context of its own (an incognito profile): no cookie or
	// storage of another page's test leaks in.
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	p := &Page{t: t, ctx: ctx, cancel: cancel, timeout: o.Timeout}

	// Listen, not the Console iterator: Listen sees an event before the
	// reply to the command after it, so Problems never misses one that
	// the page wrote before the last step returned.
	if err := chromedp.Listen(ctx, p.note); err != nil {
		t.Fatalf("browser: open tab: %v", err)
	}

	scale := o.Viewport.Scale
	if scale == 0 {
		scale = 1
	}
	vp := []chromedp.EmulateViewportOption{chromedp.EmulateScale(scale), chromedp.EmulatePortrait}
	if o.Viewport.Mobile {
		vp = append(vp, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	script := cspProbe + "\n" + o.InitScript
	steps := chromedp.Steps(
		chromedp.EmulateViewport(o.Viewport.Width, o.Viewport.Height, vp...),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: string(o.Scheme)}},
			}); err != nil {
				return fmt.Errorf("color scheme: %w", err)
			}
			if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script}); err != nil {
				return fmt.Errorf("init script: %w", err)
			}
			return nil
		}),
		chromedp.Navigate(url),
	)
	if err := p.do(steps); err != nil {
		t.Fatalf("browser: open %s: %v", url, err)
	}
	return p
}

// note records one event if it is a problem. It runs on the tab's reading
// goroutine, so it only appends.
func (p *Page) note(ev any) {
	var pr Problem
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError {
			return
		}
		var parts []string
		for _, a := range ev.Args {
			switch {
			case len(a.Value) > 0:
				var s string
				if json.Unmarshal(a.Value, &s) == nil {
					parts = append(parts, s)
				} else {
					parts = append(parts, string(a.Value))
				}
			case a.Description != "":
				parts = append(parts, a.Description)
			}
		}
		pr = Problem{Type: "error", Text: strings.Join(parts, " ")}
		if ev.StackTrace != nil && len(ev.StackTrace.CallFrames) > 0 {
			pr.URL = ev.StackTrace.CallFrames[0].URL
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		if d == nil {
			return
		}
		pr = Problem{Type: "exception", Text: d.Text, URL: d.URL}
		if d.Exception != nil && d.Exception.Description != "" {
			pr.Text = d.Exception.Description
		}
	case *cdplog.EventEntryAdded:
		e := ev.Entry
		if e == nil || e.Level != cdplog.EntryLevelError {
			return
		}
		pr = Problem{Type: string(e.Level), Source: string(e.Source), Text: e.Text, URL: e.URL}
	default:
		return
	}
	p.mu.Lock()
	p.problems = append(p.problems, pr)
	p.mu.Unlock()
}

func (p *Page) do(a chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	return chromedp.Do(ctx, a)
}

// WaitState waits until document.body.dataset.state is set and is not
// "loading", and returns it.
func (p *Page) WaitState() string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Poll[string](
		`document.body && document.body.dataset.state && document.body.dataset.state !== 'loading' && document.body.dataset.state`,
		chromedp.WithPollingTimeout(p.timeout), chromedp.WithPollingInterval(10*time.Millisecond)))
	if err != nil {
		p.t.Fatalf("browser: waiting for body[data-state] other than loading: %v; problems: %v", err, p.Problems())
	}
	return s
}

// Eval evaluates a JavaScript expression in the page and returns its value
// decoded from JSON into T (a promise is awaited first); an exception or a
// value that does not decode fails the test. Use a pointer or slice T
// where the value may be null.
func Eval[T any](p *Page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("browser: eval %q: %v", expr, err)
	}
	return v
}

// Text returns the text content of the first element matching the CSS
// selector, trimmed, or fails the test when there is none.
func (p *Page) Text(selector string) string {
	p.t.Helper()
	s, ok := p.TryText(selector)
	if !ok {
		p.t.Fatalf("browser: no element matches %q", selector)
	}
	return s
}

// TryText is Text that reports a missing element instead of failing.
func (p *Page) TryText(selector string) (string, bool) {
	p.t.Helper()
	q, err := jsString(selector)
	if err != nil {
		p.t.Fatalf("browser: selector %q: %v", selector, err)
	}
	v := Eval[*string](p, `(function(){ var e = document.querySelector(`+q+`); return e ? e.textContent.replace(/\s+/g, ' ').trim() : null })()`)
	if v == nil {
		return "", false
	}
	return *v, true
}

// Count returns how many elements match the CSS selector.
func (p *Page) Count(selector string) int {
	p.t.Helper()
	q, err := jsString(selector)
	if err != nil {
		p.t.Fatalf("browser: selector %q: %v", selector, err)
	}
	return Eval[int](p, `document.querySelectorAll(`+q+`).length`)
}

// Screenshot writes a PNG of the whole page (beyond the viewport) to path.
func (p *Page) Screenshot(path string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("browser: screenshot: %v", err)
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		p.t.Fatalf("browser: screenshot: %v", err)
	}
}

// Problems returns the console errors, exceptions and CSP violations seen
// so far.
func (p *Page) Problems() []Problem {
	// A round trip to the page: every event sent before its answer has
	// been noted when it returns.
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	_, _ = chromedp.Run(ctx, chromedp.Evaluate[int](`1`))
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Problem(nil), p.problems...)
}

// CheckClean fails the test for every problem that allow (may be nil)
// does not accept.
func (p *Page) CheckClean(allow func(Problem) bool) {
	p.t.Helper()
	var bad []string
	for _, pr := range p.Problems() {
		if allow != nil && allow(pr) {
			continue
		}
		bad = append(bad, pr.String())
	}
	if len(bad) > 0 {
		p.t.Errorf("browser: %d console problem(s):\n  %s", len(bad), strings.Join(bad, "\n  "))
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) (string, error) {
	if strings.ContainsAny(s, "\n\r\u2028\u2029") {
		return "", errors.New("newline in selector")
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(s) + "'", nil
}

// Close closes the tab now rather than when the test ends: a benchmark
// opens hundreds. Closing twice is harmless.
func (p *Page) Close() { p.cancel() }

// Mark waits until the page has set the performance mark name and returns
// its time in milliseconds from the start of navigation, the same clock
// for every page: what a page's own mark says is how long a user waited.
func (p *Page) Mark(name string) float64 {
	p.t.Helper()
	n, err := jsString(name)
	if err != nil {
		p.t.Fatalf("browser: mark name %q: %v", name, err)
	}
	return Eval[float64](p, `new Promise(function (r) { (function w() {
  var e = performance.getEntriesByName(`+n+`, 'mark');
  e.length ? r(e[0].startTime) : setTimeout(w, 5);
})() })`)
}

// Baseline serves the least page the dashboard could be: one small script
// that fetches a small JSON answer, shows it in one element and sets the
// mark a task later, as the dashboard does. Its render time, read with
// Mark, is this machine's and this browser's floor for any page, so a
// page's time is read against it (measured in the same run: these
// machines are noisy).
func Baseline(t testing.TB, mark string) *httptest.Server {
	t.Helper()
	m, err := jsString(mark)
	if err != nil {
		t.Fatalf("browser: mark name %q: %v", mark, err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/b.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `fetch('/d.json').then(function (r) { return r.json() }).then(function (d) {
  var e = document.createElement('p'); e.textContent = d.total; document.body.appendChild(e);
  document.body.dataset.state = 'ready'; setTimeout(function () { performance.mark(`+m+`) }, 0) })`)
		case "/d.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"total":"1.00"}`)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><meta charset="utf-8"><title>baseline</title><script src="/b.js" async></script><body data-state="loading">`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}
