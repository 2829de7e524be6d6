package static_test

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/dashboard/static"
)

// CSP is the policy the hub serves the dashboard under.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'"

const (
	initData = "query_id=AAE&user=%7B%22id%22%3A42%2C%22first_name%22%3A%22Ada%22%7D&auth_date=1796000000&hash=0a1b2c"
	token    = "tok-bearer-1"
	cookie   = "cookie-session-1"
	code     = "one-time-code"
)

// fixtures are the JSON answers, decoded into the API's own types so that
// a field the page reads and the API lacks fails here.
type fixtures struct {
	me     dashboard.Me
	month  dashboard.MonthPage
	rental dashboard.RentalPage
	cmp    dashboard.ComparePage
	team   dashboard.TeamPage
}

func load(t *testing.T) fixtures {
	t.Helper()
	var f fixtures
	for name, v := range map[string]any{"me.json": &f.me, "month.json": &f.month, "rental-7.json": &f.rental, "compare.json": &f.cmp, "team.json": &f.team} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("testdata/%s does not match dashboard's types: %v", name, err)
		}
	}
	return f
}

// fakeHub serves static.FS as the hub does, and the fixtures as the API's
// answers, to a session made either way the package doc describes.
type fakeHub struct {
	t    *testing.T
	f    fixtures
	lang string // Me.lang override
	// outsider: the user was admitted to a team only (Me.personal false,
	// the personal pages answer 403 not_personal).
	outsider bool
	// slowRental delays the rental page's answer: a user who leaves it
	// before it comes.
	slowRental time.Duration
	// hang, while set, holds every data answer (api/me, month, rental,
	// the session) for hangFor: a network that lost its way.
	hang atomic.Bool

	mu       sync.Mutex
	sessions []string // initData bodies posted to api/session
	bearer   int      // API calls authorised by the bearer token
	cookied  int      // API calls authorised by the cookie
	exports  []string // export.csv calls, "month auth"
}

// hangFor is how long a hanging answer is held: longer than the page's
// shortened time limit in the tests that set hang.
const hangFor = 3 * time.Second

// wait holds the answer while hang is set, until hangFor or the client
// gives up.
func (h *fakeHub) wait(r *http.Request) {
	if !h.hang.Load() {
		return
	}
	select {
	case <-time.After(hangFor):
	case <-r.Context().Done():
	}
}

func (h *fakeHub) serve() *httptest.Server {
	mux := http.NewServeMux()
	files := http.StripPrefix("/app/static/", http.FileServerFS(static.FS))
	mux.HandleFunc("GET /app/static/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/app/static/index.html" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /app/{$}", func(w http.ResponseWriter, r *http.Request) {
		raw, err := fs.ReadFile(static.FS, "index.html")
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(raw)
	})
	mux.HandleFunc("GET /app/login", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("code") != code {
			refuse(w, 401, "link_expired")
			return
		}
		http.SetCookie(w, &http.Cookie{Name: dashboard.CookieName, Value: cookie, Path: "/app/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/app/", http.StatusSeeOther)
	})
	mux.HandleFunc("POST /app/api/session", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<10))
		h.mu.Lock()
		h.sessions = append(h.sessions, string(body))
		h.mu.Unlock()
		h.wait(r)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || string(body) != initData {
			refuse(w, 401, "auth_invalid")
			return
		}
		answer(w, dashboard.SessionAnswer{Token: token})
	})
	api := func(fn func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			via := ""
			if r.Header.Get("Authorization") == "Bearer "+token {
				via = "bearer"
			} else if c, err := r.Cookie(dashboard.CookieName); err == nil && c.Value == cookie {
				via = "cookie"
			}
			h.mu.Lock()
			switch via {
			case "bearer":
				h.bearer++
			case "cookie":
				h.cookied++
			}
			h.mu.Unlock()
			if via == "" {
				refuse(w, 401, "auth_missing")
				return
			}
			h.wait(r)
			if r.URL.Path == dashboard.PathExport {
				h.mu.Lock()
				h.exports = append(h.exports, r.URL.Query().Get("month")+" "+via)
				h.mu.Unlock()
			}
			fn(w, r)
		}
	}
	mux.HandleFunc("GET "+dashboard.PathMe, api(func(w http.ResponseWriter, r *http.Request) {
		me := h.f.me
		if h.lang != "" {
			me.Lang = h.lang
		}
		if h.outsider {
			me.Personal, me.Months = false, []string{}
		}
		answer(w, me)
	}))
	mux.HandleFunc("GET "+dashboard.PathTeam, api(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("team") != fmt.Sprint(h.f.team.Team.ID) {
			refuse(w, 404, "not_found")
			return
		}
		answer(w, h.f.team)
	}))
	mux.HandleFunc("GET "+dashboard.PathMonth, api(func(w http.ResponseWriter, r *http.Request) {
		if h.outsider {
			refuse(w, 403, "not_personal")
			return
		}
		m := r.URL.Query().Get("month")
		if m == h.f.month.Month || m == "" {
			answer(w, h.f.month)
			return
		}
		if m == pastMonth {
			answer(w, past(h.f.month))
			return
		}
		answer(w, dashboard.MonthPage{Month: m, Currencies: []dashboard.CurrencyMonth{}})
	}))
	mux.HandleFunc("GET "+dashboard.PathRental, api(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(h.slowRental)
		if r.URL.Query().Get("id") != fmt.Sprint(h.f.rental.Rental.ID) {
			refuse(w, 404, "not_found")
			return
		}
		answer(w, h.f.rental)
	}))
	mux.HandleFunc("GET "+dashboard.PathCompare, api(func(w http.ResponseWriter, r *http.Request) {
		answer(w, h.f.cmp)
	}))
	mux.HandleFunc("GET "+dashboard.PathExport, api(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="gpuledger.csv"`)
		_, _ = io.WriteString(w, "rental,total\nllama-ft,930.81\n")
	}))
	// Telegram Web: the Mini App in an iframe of Telegram's page, which
	// talks to it by postMessage. This stand-in records what the app posts.
	mux.HandleFunc("GET /telegram-web", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><html><head><link rel="icon" href="data:,"></head><body>
<script>window.__msgs = []; addEventListener('message', function (e) { window.__msgs.push(JSON.parse(e.data).eventType) });</script>
<iframe id="app" width="390" height="700" src="`+r.URL.Query().Get("src")+`"></iframe></body></html>`)
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/telegram-web" {
			w.Header().Set("Content-Security-Policy", CSP)
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		mux.ServeHTTP(w, r)
	}))
	h.t.Cleanup(srv.Close)
	return srv
}

// seen returns what the hub saw so far, under its lock (the browser's
// requests run on the server's goroutines).
func (h *fakeHub) seen() (sessions []string, bearer, cookied int, exports []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.sessions...), h.bearer, h.cookied, append([]string(nil), h.exports...)
}

func answer(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func refuse(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(dashboard.ErrorAnswer{Code: code, Message: "refused: " + code})
}

// telegramURL is the address Telegram opens a Mini App at: initData and
// the theme in the fragment.
func telegramURL(base string, theme map[string]string) string {
	th, _ := json.Marshal(theme)
	v := url.Values{}
	v.Set("tgWebAppData", initData)
	v.Set("tgWebAppVersion", "8.0")
	v.Set("tgWebAppPlatform", "android")
	v.Set("tgWebAppThemeParams", string(th))
	return base + "/app/#" + v.Encode()
}

func TestFS_Files(t *testing.T) {
	total := 0
	for _, name := range []string{"index.html", "app.js", "app.css", "uPlot.iife.min.js", "uPlot.min.css", "uPlot.LICENSE"} {
		raw, err := fs.ReadFile(static.FS, name)
		if err != nil {
			t.Fatalf("static.FS lacks %s: %v", name, err)
		}
		if !strings.HasPrefix(name, "uPlot.") {
			total += len(raw)
		}
	}
	if total > 150<<10-51<<10 {
		t.Errorf("the page's own files are %d bytes; with uPlot the page must stay under 150 KB", total)
	}
	html, _ := fs.ReadFile(static.FS, "index.html")
	for _, bad := range []string{"<script>", " style=", "http://", "https://", "<style"} {
		if strings.Contains(string(html), bad) {
			t.Errorf("index.html contains %q: the CSP allows no inline script or style and nothing from elsewhere", bad)
		}
	}
	lic, _ := fs.ReadFile(static.FS, "uPlot.LICENSE")
	if !strings.Contains(string(lic), "MIT") {
		t.Errorf("uPlot.LICENSE does not read as uPlot's MIT licence")
	}
}

// pastMonth is the month the fake hub answers with past(the fixture's
// month).
const pastMonth = "2026-11"

// past is the fixture's month as the server shows a month that has
// ended: as of its end, no budget but today's beside it, no projection
// or burn, the first rental running at the month's end and released
// since, the last one watched by no agent, balances with no runway.
func past(m dashboard.MonthPage) dashboard.MonthPage {
	var p dashboard.MonthPage
	raw, _ := json.Marshal(m)
	_ = json.Unmarshal(raw, &p)
	p.Month, p.Current = pastMonth, false
	p.From, p.To = m.From.AddDate(0, -1, 0), m.From
	p.AsOf = p.To
	for i := range p.Currencies {
		c := &p.Currencies[i]
		c.BudgetNow, c.Budget, c.BudgetPercent, c.Projection, c.BurnPerHour = c.Budget, nil, nil, nil, nil
		c.NoAgent = 1
	}
	for i := range p.Rentals {
		p.Rentals[i].StateAt = p.AsOf
	}
	p.Rentals[0].State, p.Rentals[0].StateNow = "running", "released"
	last := &p.Rentals[len(p.Rentals)-1]
	last.HasAgent, last.Idle = false, nil
	for i := range p.Balances {
		b := &p.Balances[i]
		b.AsOf, b.ReadingAt, b.BurnPerHour, b.RunsOutAt, b.Computed = p.AsOf, p.AsOf.Add(-50*time.Hour), nil, nil, true
	}
	p.ExportURL = dashboard.PathExport + "?month=" + pastMonth
	return p
}
