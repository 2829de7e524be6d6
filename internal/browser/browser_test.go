package browser_test

import (
	"bytes"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/internal/browser"
)

// pages serves a clean page, one with each kind of problem, under a strict
// CSP as the dashboard has.
func pages(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	csp := "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:"
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", csp)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(`<!doctype html><html><head><link rel="icon" href="data:,"><meta name="viewport" content="width=device-width"></head><body data-state="loading">` + body + `</body></html>`))
		}
	}
	script := func(js string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write([]byte(js))
		}
	}
	mux.HandleFunc("/clean", page(`<p id="x">  hello
	 world </p><script src="/ready.js"></script>`))
	mux.HandleFunc("/ready.js", script(`document.body.dataset.state = matchMedia('(prefers-color-scheme: dark)').matches ? 'dark:' + innerWidth : 'light:' + innerWidth;`))
	mux.HandleFunc("/inline", page(`<script>document.body.dataset.state = 'inline ran'</script><script src="/ready.js"></script>`))
	mux.HandleFunc("/console", page(`<script src="/console.js"></script>`))
	mux.HandleFunc("/console.js", script(`console.error('boom', 42); document.body.dataset.state = 'ready';`))
	mux.HandleFunc("/throw", page(`<script src="/throw.js"></script>`))
	mux.HandleFunc("/throw.js", script(`document.body.dataset.state = 'ready'; setTimeout(function () { null.x }, 0);`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestBrowser(t *testing.T) {
	b := browser.Start(t)
	srv := pages(t)

	t.Run("OK", func(t *testing.T) {
		p := b.Open(t, srv.URL+"/clean", browser.Options{Viewport: browser.Phone, Scheme: browser.Dark})
		if got, want := p.WaitState(), "dark:390"; got != want {
			t.Errorf("state = %q, want %q (dark scheme at the phone's width)", got, want)
		}
		if got := p.Text("#x"); got != "hello world" {
			t.Errorf("Text = %q, want %q", got, "hello world")
		}
		if n := p.Count("p"); n != 1 {
			t.Errorf("Count(p) = %d, want 1", n)
		}
		if got := browser.Eval[int](p, `Promise.resolve(6 * 7)`); got != 42 {
			t.Errorf("Eval = %d, want 42", got)
		}
		if pr := p.Problems(); len(pr) != 0 {
			t.Errorf("Problems = %v, want none", pr)
		}
		path := filepath.Join(t.TempDir(), "shot.png")
		p.Screenshot(path)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("screenshot is not a PNG: %v", err)
		}
		if w := img.Bounds().Dx(); w != 780 {
			t.Errorf("screenshot width = %d px, want 780 (390 at scale 2)", w)
		}

		d := b.Open(t, srv.URL+"/clean", browser.Options{Viewport: browser.Desktop})
		if got, want := d.WaitState(), "light:1280"; got != want {
			t.Errorf("state = %q, want %q", got, want)
		}
	})

	t.Run("BaselineMark", func(t *testing.T) {
		// The baseline page marks itself drawn; Mark waits for the mark
		// and reads it on the navigation's clock.
		p := b.Open(t, browser.Baseline(t, "drawn").URL, browser.Options{Viewport: browser.Phone})
		if s := p.WaitState(); s != "ready" {
			t.Fatalf("baseline state %q, want ready", s)
		}
		ms := p.Mark("drawn")
		if nav := browser.Eval[float64](p, `performance.now()`); ms <= 0 || ms > nav {
			t.Errorf("Mark = %.1f ms, want after navigation start and before now (%.1f ms)", ms, nav)
		}
		if got := p.Text("p"); got != "1.00" {
			t.Errorf("baseline page shows %q, want its answer 1.00", got)
		}
		p.Close()
		p.Close() // twice is harmless
	})

	for _, tc := range []struct{ path, want string }{
		{"/inline", "CSP violation"},
		{"/console", "boom 42"},
		{"/throw", "TypeError"},
	} {
		t.Run("Problem"+tc.path, func(t *testing.T) {
			p := b.Open(t, srv.URL+tc.path, browser.Options{Viewport: browser.Desktop})
			p.WaitState()
			if tc.path == "/throw" {
				// The exception is thrown in a later task.
				browser.Eval[bool](p, `new Promise(function (r) { setTimeout(function () { r(true) }, 20) })`)
			}
			var all []string
			for _, pr := range p.Problems() {
				all = append(all, pr.String())
			}
			if !strings.Contains(strings.Join(all, "\n"), tc.want) {
				t.Errorf("Problems = %q, want one containing %q", all, tc.want)
			}
			if tc.path == "/inline" {
				if s := browser.Eval[string](p, `document.body.dataset.state`); s == "inline ran" {
					t.Errorf("the inline script ran despite the CSP")
				}
			}
		})
	}
}

func TestFind(t *testing.T) {
	t.Setenv(browser.EnvPath, filepath.Join(t.TempDir(), "no-such-chromium"))
	_, err := browser.Find()
	if err == nil || !strings.Contains(err.Error(), "apt-get install chromium") {
		t.Fatalf("Find with a missing binary = %v, want an error naming the fix", err)
	}
}

// TestStart_Missing runs TestStartHelper in a child process with no browser:
// it must skip with the fix named, and fail instead when the browser is
// required (as in CI), so that a skip never passes there.
func TestStart_Missing(t *testing.T) {
	for _, tc := range []struct {
		required bool
		want     string
	}{
		{false, "--- SKIP: TestStartHelper"},
		{true, "--- FAIL: TestStartHelper"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStartHelper$", "-test.v")
		cmd.Env = append(os.Environ(), "GPULEDGER_START_HELPER=1", browser.EnvPath+"="+filepath.Join(t.TempDir(), "no-such-chromium"), browser.EnvRequired+"=")
		if tc.required {
			cmd.Env = append(cmd.Env, browser.EnvRequired+"=1")
		}
		out, err := cmd.CombinedOutput()
		if !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "apt-get install chromium") {
			t.Errorf("required=%v: child said (err %v):\n%s\nwant %q and the fix", tc.required, err, out, tc.want)
		}
		if tc.required != (err != nil) {
			t.Errorf("required=%v: child exit error %v", tc.required, err)
		}
	}
}

func TestStartHelper(t *testing.T) {
	if os.Getenv("GPULEDGER_START_HELPER") != "1" {
		t.Skip("run by TestStart_Missing in a child process")
	}
	browser.Start(t)
	t.Fatal("Start returned without a browser")
}
