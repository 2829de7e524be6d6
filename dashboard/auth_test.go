package dashboard_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/dashboard/dashtest"
)

func TestSession_InitData(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := newEnv(t, nil)
		e.fill(1)
		tok := e.signIn(1)
		var me dashboard.Me
		if rec := e.get(tok, dashboard.PathMe, &me); rec.Code != http.StatusOK {
			t.Fatalf("me: %d %s", rec.Code, rec.Body)
		}
		if me.Name != "Test" || me.TZ != "Asia/Shanghai" || me.Month != "2026-11" || len(me.Months) != 2 || me.Months[0] != "2026-11" {
			t.Errorf("me = %+v", me)
		}
	})
	fresh := func(e *env) string { return dashtest.InitData(botToken, 1, e.now.Add(-time.Minute)) }
	userJSON := `{"id":1,"first_name":"A"}`
	tests := []struct {
		name     string
		cfg      func(*dashboard.Config)
		body     func(e *env) string
		status   int
		code     string
		contains string
	}{
		{"Empty", nil, func(*env) string { return "" }, 401, "auth_missing", "/dashboard"},
		{"Forged", nil, func(e *env) string {
			return strings.Replace(fresh(e), url.QueryEscape(`"id":1`), url.QueryEscape(`"id":2`), 1)
		}, 401, "auth_invalid", "did not check out"},
		{"HashChanged", nil, func(e *env) string {
			q, _ := url.ParseQuery(fresh(e))
			h := []byte(q.Get("hash"))
			h[0] ^= 1
			q.Set("hash", string(h))
			return q.Encode()
		}, 401, "auth_invalid", "did not check out"},
		{"AnotherBot", nil, func(e *env) string { return dashtest.InitData("999:OTHER", 1, e.now) }, 401, "auth_invalid", "another bot"},
		{"Stale", nil, func(e *env) string { return dashtest.InitData(botToken, 1, e.now.Add(-61*time.Minute)) }, 401, "auth_stale", "too old"},
		{"StaleCustomAge", func(c *dashboard.Config) { c.MaxAuthAge = 5 * time.Minute },
			func(e *env) string { return dashtest.InitData(botToken, 1, e.now.Add(-6*time.Minute)) }, 401, "auth_stale", "too old"},
		{"Future", nil, func(e *env) string { return dashtest.InitData(botToken, 1, e.now.Add(2*time.Minute)) }, 401, "auth_invalid", "future"},
		{"Malformed", nil, func(*env) string { return "user=%zz&hash=00" }, 401, "auth_invalid", "did not check out"},
		{"NoHash", nil, func(e *env) string {
			return "auth_date=" + strconv.FormatInt(e.now.Unix(), 10) + "&user=" + url.QueryEscape(userJSON)
		}, 401, "auth_invalid", "did not check out"},
		{"DuplicateKey", nil, func(e *env) string {
			return fresh(e) + "&auth_date=" + strconv.FormatInt(e.now.Unix(), 10)
		}, 401, "auth_invalid", "repeats a field"},
		{"NoUser", nil, func(e *env) string {
			return dashtest.Sign(botToken, map[string]string{"auth_date": strconv.FormatInt(e.now.Unix(), 10)})
		}, 401, "auth_invalid", "no user"},
		{"UserIDNotInteger", nil, func(e *env) string {
			return dashtest.Sign(botToken, map[string]string{"auth_date": strconv.FormatInt(e.now.Unix(), 10), "user": `{"id":1.5}`})
		}, 401, "auth_invalid", "no user"},
		{"NoDate", nil, func(e *env) string { return dashtest.Sign(botToken, map[string]string{"user": userJSON}) }, 401, "auth_invalid", "auth_date"},
		{"NotAllowed", nil, func(e *env) string { return dashtest.InitData(botToken, 3, e.now) }, 403, "not_allowed", "may not use"},
		{"NoBotToken", func(c *dashboard.Config) { c.BotToken = "" }, fresh, 401, "auth_invalid", "/dashboard"},
		{"TooLarge", nil, func(e *env) string { return fresh(e) + "&pad=" + strings.Repeat("x", 9000) }, 413, "too_large", "8192"},
	}
	shared := newEnv(t, nil) // one ledger for the cases with the default config
	shared.fill(1)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := shared
			if tc.cfg != nil {
				e = newEnv(t, tc.cfg)
				e.fill(1)
			}
			e.t = t
			before := e.store.books.Load()
			rec := e.do(http.MethodPost, dashboard.PathSession, tc.body(e))
			refusal(t, rec, tc.status, tc.code, tc.contains)
			if n := e.store.books.Load() - before; n != 0 {
				t.Errorf("a refused sign-in read %d books", n)
			}
		})
	}
	t.Run("Replayed", func(t *testing.T) {
		e := newEnv(t, nil)
		data := fresh(e)
		if rec := e.do(http.MethodPost, dashboard.PathSession, data); rec.Code != http.StatusOK {
			t.Fatalf("first exchange: %d %s", rec.Code, rec.Body)
		}
		e.now = e.now.Add(10 * time.Second)
		refusal(t, e.do(http.MethodPost, dashboard.PathSession, data), 401, "auth_replayed", "already used")
	})
	t.Run("ChineseMessage", func(t *testing.T) {
		e := newEnv(t, nil)
		refusal(t, e.do(http.MethodPost, dashboard.PathSession, "", "Accept-Language", "zh-CN,zh;q=0.9"), 401, "auth_missing", "尚未登录")
	})
}

func TestServer_Session(t *testing.T) {
	t.Run("ErrMissing", func(t *testing.T) {
		e := newEnv(t, nil)
		refusal(t, e.do(http.MethodGet, dashboard.PathMonth, ""), 401, "auth_missing", "Not signed in")
	})
	t.Run("ErrUnknownToken", func(t *testing.T) {
		e := newEnv(t, nil)
		refusal(t, e.get("nope", dashboard.PathMonth, nil), 401, "auth_invalid", "not known")
		refusal(t, e.do(http.MethodGet, dashboard.PathMonth, "", "Authorization", "Basic eDp5"), 401, "auth_invalid", "Bearer")
	})
	t.Run("ErrExpired", func(t *testing.T) {
		e := newEnv(t, nil)
		e.fill(1)
		tok := e.signIn(1)
		e.now = e.now.Add(dashboard.SessionTTL + time.Second)
		refusal(t, e.get(tok, dashboard.PathMonth, nil), 401, "auth_stale", "ended")
		if n := e.store.books.Load(); n != 0 {
			t.Errorf("an expired session read %d books", n)
		}
	})
	t.Run("ErrNoLongerAllowed", func(t *testing.T) {
		// The decision is asked at each request: the chat's owner
		// removing a user refuses their session at once.
		var removed atomic.Bool
		e := newEnv(t, func(c *dashboard.Config) { c.Allowed = func(id int64) bool { return id == 1 && !removed.Load() } })
		e.fill(1)
		tok := e.signIn(1)
		removed.Store(true)
		refusal(t, e.get(tok, dashboard.PathMonth, nil), 403, "not_allowed", "may not use")
	})
	t.Run("NobodyWithoutAllowed", func(t *testing.T) {
		e := newEnv(t, func(c *dashboard.Config) { c.Allowed = nil })
		refusal(t, e.do(http.MethodPost, dashboard.PathSession, dashtest.InitData(botToken, 1, e.now)), 403, "not_allowed", "may not use")
	})
}

func TestServer_Link(t *testing.T) {
	login := func(t *testing.T, e *env, method string) (string, *http.Response) {
		t.Helper()
		link, exp, err := e.srv.Link(t.Context(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if !exp.Equal(e.now.Add(dashboard.LinkTTL)) || !strings.Contains(link, dashboard.PathLogin+"?code=") {
			t.Fatalf("link %s until %s", link, exp)
		}
		u, _ := url.Parse(link)
		rec := e.do(method, u.RequestURI(), "")
		return u.RequestURI(), rec.Result()
	}
	t.Run("OK", func(t *testing.T) {
		e := newEnv(t, nil)
		e.fill(1)
		target, res := login(t, e, http.MethodGet)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != dashboard.PathApp {
			t.Fatalf("login: %d to %q", res.StatusCode, res.Header.Get("Location"))
		}
		cs := res.Cookies()
		if len(cs) != 1 {
			t.Fatalf("cookies %v", cs)
		}
		c := cs[0]
		if c.Name != dashboard.CookieName || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/app/" || c.MaxAge != 3600 {
			t.Errorf("cookie %+v", c)
		}
		rec := e.do(http.MethodGet, dashboard.PathMonth, "", "Cookie", c.Name+"="+c.Value)
		if rec.Code != http.StatusOK {
			t.Fatalf("month with the cookie: %d %s", rec.Code, rec.Body)
		}
		// Reused: the code was consumed.
		again := e.do(http.MethodGet, target, "")
		body := again.Body.String()
		if again.Code != http.StatusGone || !strings.Contains(body, "/dashboard") || !strings.Contains(body, "已过期") ||
			!strings.HasPrefix(again.Header().Get("Content-Type"), "text/html") {
			t.Errorf("reused link: %d %s", again.Code, body)
		}
	})
	t.Run("HeadDoesNotConsume", func(t *testing.T) {
		e := newEnv(t, nil)
		target, res := login(t, e, http.MethodHead)
		if res.StatusCode != http.StatusOK || len(res.Cookies()) != 0 {
			t.Fatalf("HEAD: %d, cookies %v", res.StatusCode, res.Cookies())
		}
		if rec := e.do(http.MethodGet, target, ""); rec.Code != http.StatusSeeOther {
			t.Errorf("GET after HEAD: %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("ErrExpired", func(t *testing.T) {
		e := newEnv(t, nil)
		link, _, _ := e.srv.Link(t.Context(), 1)
		u, _ := url.Parse(link)
		e.now = e.now.Add(dashboard.LinkTTL + time.Second)
		rec := e.do(http.MethodGet, u.RequestURI(), "")
		if rec.Code != http.StatusGone || !strings.Contains(rec.Body.String(), "Send /dashboard") || len(rec.Result().Cookies()) != 0 {
			t.Errorf("expired link: %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("ErrBad", func(t *testing.T) {
		e := newEnv(t, nil)
		for _, target := range []string{dashboard.PathLogin, dashboard.PathLogin + "?code=", dashboard.PathLogin + "?code=a&code=b",
			dashboard.PathLogin + "?code=" + strings.Repeat("A", 2000), dashboard.PathLogin + "?code=%zz", dashboard.PathLogin + "?code=unknown"} {
			rec := e.do(http.MethodGet, target, "")
			if rec.Code < 400 || !strings.Contains(rec.Body.String(), "/dashboard") || strings.Contains(rec.Body.String(), "goroutine") {
				t.Errorf("%.60s: %d %s", target, rec.Code, rec.Body)
			}
		}
	})
	t.Run("ErrNotAllowed", func(t *testing.T) {
		e := newEnv(t, nil)
		link, _, _ := e.srv.Link(t.Context(), 7)
		u, _ := url.Parse(link)
		rec := e.do(http.MethodGet, u.RequestURI(), "")
		if rec.Code != http.StatusForbidden || len(rec.Result().Cookies()) != 0 {
			t.Errorf("a link of a user not allowed: %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("FivePerUser", func(t *testing.T) {
		e := newEnv(t, nil)
		var targets []string
		for i := range 6 {
			link, _, _ := e.srv.Link(t.Context(), 1)
			u, _ := url.Parse(link)
			targets = append(targets, u.RequestURI())
			e.now = e.now.Add(time.Duration(i+1) * time.Second)
		}
		if rec := e.do(http.MethodGet, targets[0], ""); rec.Code != http.StatusGone {
			t.Errorf("the oldest of six links still works: %d", rec.Code)
		}
		for _, tg := range targets[1:] {
			if rec := e.do(http.MethodGet, tg, ""); rec.Code != http.StatusSeeOther {
				t.Errorf("a newer link was evicted: %d", rec.Code)
			}
		}
	})
	t.Run("Revoked", func(t *testing.T) {
		// A link the bot could not deliver is revoked: it no longer signs
		// in, and it frees its place, so five later links all work.
		e := newEnv(t, nil)
		gone, _, _ := e.srv.Link(t.Context(), 1)
		e.srv.Revoke(t.Context(), gone)
		for _, junk := range []string{"", "%zz", "https://hub.example.com/app/login", "https://hub.example.com/app/login?code=unknown"} {
			e.srv.Revoke(t.Context(), junk) // ignored, without panic
		}
		var targets []string
		for i := range 5 {
			e.now = e.now.Add(time.Duration(i+1) * time.Second)
			link, _, _ := e.srv.Link(t.Context(), 1)
			u, _ := url.Parse(link)
			targets = append(targets, u.RequestURI())
		}
		u, _ := url.Parse(gone)
		if rec := e.do(http.MethodGet, u.RequestURI(), ""); rec.Code != http.StatusGone || len(rec.Result().Cookies()) != 0 {
			t.Errorf("a revoked link: %d %s", rec.Code, rec.Body)
		}
		for i, tg := range targets {
			if rec := e.do(http.MethodGet, tg, ""); rec.Code != http.StatusSeeOther {
				t.Errorf("link %d of five after a revoked one: %d", i+1, rec.Code)
			}
		}
	})
	t.Run("HTTP", func(t *testing.T) {
		e := newEnv(t, func(c *dashboard.Config) { c.PublicURL = "http://127.0.0.1:8080/" })
		if got := e.srv.AppURL(); got != "" {
			t.Errorf("AppURL over http = %q, want \"\"", got)
		}
		_, res := login(t, &env{t: t, srv: e.srv, h: e.h, now: e.now}, http.MethodGet)
		if cs := res.Cookies(); len(cs) != 1 || cs[0].Secure {
			t.Errorf("cookie over http: %v", cs)
		}
	})
	t.Run("AppURL", func(t *testing.T) {
		e := newEnv(t, nil)
		if got := e.srv.AppURL(); got != "https://hub.example.com/app/" {
			t.Errorf("AppURL = %q", got)
		}
	})
	t.Run("ErrNoPublicURL", func(t *testing.T) {
		e := newEnv(t, func(c *dashboard.Config) { c.PublicURL = "" })
		if _, _, err := e.srv.Link(t.Context(), 1); err == nil || !strings.Contains(err.Error(), "GPULEDGER_PUBLIC_URL") {
			t.Errorf("Link without a public URL: %v", err)
		}
	})
}

func TestNew_Errors(t *testing.T) {
	if _, err := dashboard.New(dashboard.Config{}); err == nil || !strings.Contains(err.Error(), "Store") {
		t.Errorf("no store: %v", err)
	}
	e := newEnv(t, nil)
	for _, bad := range []string{"hub.example.com", "https://hub.example.com/?x=1", "https://hub.example.com/ledger#top", "https://hub.example.com?"} {
		if _, err := dashboard.New(dashboard.Config{Store: e.store, PublicURL: bad}); err == nil || !strings.Contains(err.Error(), "PublicURL") {
			t.Errorf("bad public URL %q: %v", bad, err)
		}
	}
}

// TestServer_BehindPrefix: a reverse proxy serves the hub under /ledger
// and strips it (http.StripPrefix here). A one-time link, followed by a
// real client with a cookie jar, must end on the page at /ledger/app/,
// and the cookie must reach the data and the month's CSV through the
// same prefix.
func TestServer_BehindPrefix(t *testing.T) {
	hub := httptest.NewUnstartedServer(nil)
	public := "http://" + hub.Listener.Addr().String() + "/ledger"
	e := newEnv(t, func(c *dashboard.Config) { c.PublicURL = public + "/" })
	e.fill(1)
	hub.Config.Handler = http.StripPrefix("/ledger", e.h)
	hub.Start()
	t.Cleanup(hub.Close)

	link, _, err := e.srv.Link(t.Context(), 1)
	if err != nil || !strings.HasPrefix(link, public+dashboard.PathLogin+"?code=") {
		t.Fatalf("link %q: %v", link, err)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar}
	get := func(target string) (*http.Response, string) {
		t.Helper()
		res, err := c.Get(target)
		if err != nil {
			t.Fatalf("GET %s: %v", target, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	res, body := get(link)
	if res.StatusCode != http.StatusOK || res.Request.URL.Path != "/ledger"+dashboard.PathApp || !strings.Contains(body, "static/app.js") {
		t.Fatalf("the link ended on %s with %d: %.200s", res.Request.URL, res.StatusCode, body)
	}
	u, _ := url.Parse(public + dashboard.PathApp)
	if cs := jar.Cookies(u); len(cs) != 1 || cs[0].Name != dashboard.CookieName {
		t.Fatalf("cookies for %s: %v", u, cs)
	}
	res, body = get(public + dashboard.PathMonth)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("month through the prefix: %d %s", res.StatusCode, body)
	}
	var page dashboard.MonthPage
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatal(err)
	}
	if want := "/ledger" + dashboard.PathExport + "?month=" + page.Month; page.ExportURL != want {
		t.Fatalf("export_url %q, want %q", page.ExportURL, want)
	}
	ref, err := url.Parse(page.ExportURL)
	if err != nil {
		t.Fatal(err)
	}
	res, body = get(u.ResolveReference(ref).String())
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") || !strings.Contains(body, "\n") {
		t.Fatalf("the month's CSV through the prefix: %d %q %.200s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
}

// TestServer_LinkBound: at most 10,000 live links in all; the next one
// evicts the oldest.
func TestServer_LinkBound(t *testing.T) {
	e := newEnv(t, func(c *dashboard.Config) { c.Allowed = func(int64) bool { return true } })
	var first string
	for i := range 10000 {
		link, _, err := e.srv.Link(t.Context(), int64(1+i/5))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			u, _ := url.Parse(link)
			first = u.RequestURI()
		}
		if i%1000 == 0 {
			e.now = e.now.Add(time.Millisecond)
		}
	}
	e.now = e.now.Add(time.Millisecond)
	last, _, _ := e.srv.Link(t.Context(), 99999)
	u, _ := url.Parse(last)
	if rec := e.do(http.MethodGet, first, ""); rec.Code != http.StatusGone {
		t.Errorf("the oldest link survived the 10,001st: %d", rec.Code)
	}
	if rec := e.do(http.MethodGet, u.RequestURI(), ""); rec.Code != http.StatusSeeOther {
		t.Errorf("the newest link: %d", rec.Code)
	}
}
