package connector

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHTTP_Statuses(t *testing.T) {
	const key = "sekrit-key-123"
	for _, c := range []struct {
		name   string
		status int
		ctype  string
		body   string
		header map[string]string
		want   error
		retry  time.Duration
	}{
		{"ok", 200, "application/json", `{"a": 0.79}`, nil, nil, 0},
		{"json with charset", 200, "application/json; charset=utf-8", `{"a": 1}`, nil, nil, 0},
		{"unauthorized", 401, "application/json", `{"error":"bad key ` + key + `"}`, nil, ErrUnauthorized, 0},
		{"forbidden", 403, "text/plain", `no`, nil, ErrUnauthorized, 0},
		{"not found", 404, "application/json", `{}`, nil, ErrNotFound, 0},
		{"rate limited with hint", 429, "application/json", `{}`, map[string]string{"Retry-After": "7"}, nil, 7 * time.Second},
		{"rate limited without hint", 429, "text/plain", `API requests too frequent`, nil, nil, DefaultRetryAfter},
		{"server error", 502, "text/html", `<html>bad gateway</html>`, nil, ErrUnavailable, 0},
		{"timeout status", 408, "", ``, nil, ErrUnavailable, 0},
		{"html instead of json", 200, "text/html", `<html>login</html>`, nil, ErrBadAnswer, 0},
		{"malformed json", 200, "application/json", `{"a": `, nil, ErrBadAnswer, 0},
		{"wrong type", 200, "application/json", `{"a": "x"}`, nil, ErrBadAnswer, 0},
		{"other 4xx", 400, "application/json", `{"error":"bad"}`, nil, ErrBadAnswer, 0},
		{"too large", 200, "application/json", `{"a": 1, "pad": "` + strings.Repeat("x", MaxBody) + `"}`, nil, ErrBadAnswer, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer "+key || strings.Contains(r.URL.String(), key) {
					t.Errorf("credentials: header %q, URL %q", r.Header.Get("Authorization"), r.URL)
				}
				if c.ctype != "" {
					w.Header().Set("Content-Type", c.ctype)
				}
				for k, v := range c.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(c.status)
				w.Write([]byte(c.body))
			}))
			defer srv.Close()
			h := &HTTP{Platform: "test", Base: srv.URL, Secret: key, Auth: func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+key) }}
			var out struct {
				A json.Number `json:"a"`
			}
			err := h.Do(context.Background(), http.MethodGet, "/x", nil, &out)
			var rl *RateLimitedError
			switch {
			case c.retry != 0:
				if !errors.As(err, &rl) || rl.RetryAfter != c.retry || !IsTransient(err) {
					t.Fatalf("err = %v, want rate limited for %s", err, c.retry)
				}
			case c.want == nil:
				if err != nil {
					t.Fatalf("err = %v", err)
				}
			case !errors.Is(err, c.want):
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), key) {
				t.Errorf("the key is in the error: %v", err)
			}
		})
	}
}

func TestHTTP_Unreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(200 * time.Millisecond) }))
	defer srv.Close()
	h := &HTTP{Platform: "test", Base: srv.URL, Client: &http.Client{Timeout: 50 * time.Millisecond}}
	if err := h.Do(context.Background(), http.MethodGet, "/", nil, nil); !errors.Is(err, ErrUnavailable) || !IsTransient(err) {
		t.Fatalf("slow platform: %v, want unavailable", err)
	}
	srv.Close()
	if err := h.Do(context.Background(), http.MethodGet, "/", nil, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("platform down: %v, want unavailable", err)
	}
}

func TestDecimal(t *testing.T) {
	for in, want := range map[any]string{
		json.Number("0.79"):   "0.79",
		"0.74":                "0.74",
		json.Number("3"):      "3",
		json.Number("7.9e-1"): "0.79",
		json.Number("1.5E2"):  "150",
		" 2.50 ":              "2.5",
	} {
		d, err := Decimal(in)
		if err != nil || d.String() != want {
			t.Errorf("Decimal(%#v) = %v, %v; want %s", in, d, err, want)
		}
	}
	for _, in := range []any{true, nil, 0.79, map[string]any{}, "abc", json.Number("1e400"), json.Number("1e-30"), "NaN", "1/3"} {
		if d, err := Decimal(in); !errors.Is(err, ErrBadAnswer) {
			t.Errorf("Decimal(%#v) = %v, %v; want a bad answer", in, d, err)
		}
	}
	if d, err := Scaled(json.Number("12345"), 3); err != nil || d.String() != "12.345" {
		t.Errorf("Scaled(12345, 3) = %v, %v", d, err)
	}
	for _, in := range []any{json.Number("1.5"), "x", true, json.Number("999999999999999999")} {
		if _, err := Scaled(in, 3); !errors.Is(err, ErrBadAnswer) {
			t.Errorf("Scaled(%#v) = %v; want a bad answer", in, err)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              DefaultRetryAfter,
		"5":                             5 * time.Second,
		"0":                             time.Second,
		"999999":                        time.Hour,
		"soon":                          DefaultRetryAfter,
		"Tue, 01 Dec 2026 10:02:00 GMT": 2 * time.Minute,
	} {
		h := http.Header{}
		if v != "" {
			h.Set("Retry-After", v)
		}
		if got := RetryAfter(h, now); got != want {
			t.Errorf("RetryAfter(%q) = %s, want %s", v, got, want)
		}
	}
}

func TestHTTP_Explain(t *testing.T) {
	const key = "sekrit-key-123"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/bad-key":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"code":"invalid-key","message":"key ` + key + ` is wrong"}}`))
		case "/busy":
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":{"code":"busy","message":"later"}}`))
		case "/limit":
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	h := &HTTP{Platform: "test", Base: srv.URL, Secret: key, Explain: func(status int, body []byte) (string, error) {
		var env struct {
			Error struct{ Code, Message string }
		}
		if json.Unmarshal(body, &env) != nil {
			return "", nil
		}
		if env.Error.Code == "invalid-key" {
			return env.Error.Code + ": " + env.Error.Message, ErrUnauthorized
		}
		return env.Error.Code + ": " + env.Error.Message, nil
	}}
	err := h.Do(context.Background(), http.MethodGet, "/bad-key", nil, nil)
	if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "invalid-key: key REDACTED is wrong") || strings.Contains(err.Error(), key) {
		t.Errorf("a code that overrides the status: %v", err)
	}
	err = h.Do(context.Background(), http.MethodGet, "/busy", nil, nil)
	if !errors.Is(err, ErrUnavailable) || !strings.HasSuffix(err.Error(), "answered 503: busy: later") {
		t.Errorf("a detail that keeps the status's kind: %v", err)
	}
	var rl *RateLimitedError
	if err := h.Do(context.Background(), http.MethodGet, "/limit", nil, nil); !errors.As(err, &rl) {
		t.Errorf("429 with Explain set: %v", err)
	}
}

func TestRounded(t *testing.T) {
	for in, want := range map[any]string{
		json.Number("0.30000000000000004"): "0.3",
		json.Number("0.8699999999999999"):  "0.87",
		"0.0000000005":                     "0.000000001", // half away from zero
		json.Number("-0.0000000005"):       "-0.000000001",
		json.Number("0.79"):                "0.79",
	} {
		d, err := Rounded(in)
		if err != nil || d.String() != want {
			t.Errorf("Rounded(%#v) = %v, %v; want %s", in, d, err, want)
		}
	}
	for _, in := range []any{true, 0.3, "abc", json.Number("1e400"), "1/3", strings.Repeat("1", 70)} {
		if d, err := Rounded(in); !errors.Is(err, ErrBadAnswer) {
			t.Errorf("Rounded(%#v) = %v, %v; want a bad answer", in, d, err)
		}
	}
}

// TestHTTP_RedirectToAnotherOrigin: a platform that answers with a
// redirect to another origin (here another port of the same host, where
// Go's client would still send Authorization) gets a clear error, and the
// other origin receives nothing: neither the key in a header nor the key
// in the query string. A redirect within the origin is followed.
func TestHTTP_RedirectToAnotherOrigin(t *testing.T) {
	const key = "sekrit-key-redirect-4567"
	var reached []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = append(reached, r.Header.Get("Authorization")+" "+r.URL.String())
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"a": 1}`))
	}))
	defer other.Close()
	var origin *httptest.Server
	origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/x?"+r.URL.RawQuery, http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, other.URL+"/x?"+r.URL.RawQuery, http.StatusMovedPermanently)
		case "/home":
			http.Redirect(w, r, origin.URL+"/here?"+r.URL.RawQuery, http.StatusFound)
		case "/here":
			if r.Header.Get("Authorization") != "Bearer "+key && r.URL.Query().Get("api_key") != key {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"a": 2}`))
		}
	}))
	defer origin.Close()
	header := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+key) }
	query := func(r *http.Request) {
		q := r.URL.Query()
		q.Set("api_key", key)
		r.URL.RawQuery = q.Encode()
	}
	for _, c := range []struct {
		name string
		auth func(*http.Request)
		path string
	}{
		{"header, 307", header, "/away"},
		{"header, 301", header, "/moved"},
		{"query, 307", query, "/away"},
		{"query, 301", query, "/moved"},
	} {
		t.Run(c.name, func(t *testing.T) {
			reached = nil
			h := &HTTP{Platform: "test", Base: origin.URL, Secret: key, Auth: c.auth}
			err := h.Do(context.Background(), http.MethodGet, c.path, nil, nil)
			if !errors.Is(err, ErrBadAnswer) || !strings.Contains(err.Error(), "redirect") {
				t.Errorf("err = %v, want ErrBadAnswer saying the platform redirected", err)
			}
			if err != nil && strings.Contains(err.Error(), key) {
				t.Errorf("the key is in the error: %v", err)
			}
			if len(reached) != 0 {
				t.Errorf("the other origin was sent %q", reached)
			}
		})
	}
	for name, auth := range map[string]func(*http.Request){"header": header, "query": query} {
		t.Run("same origin, "+name, func(t *testing.T) {
			h := &HTTP{Platform: "test", Base: origin.URL, Secret: key, Auth: auth}
			var out struct {
				A json.Number `json:"a"`
			}
			if err := h.Do(context.Background(), http.MethodGet, "/home", nil, &out); err != nil || out.A != "2" {
				t.Fatalf("a redirect within the origin: %v, a = %q", err, out.A)
			}
		})
	}
}
