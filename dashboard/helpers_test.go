package dashboard_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/dashboard/dashtest"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

const botToken = "123456:TEST-token"

// countingStore is the real SQLite store, counting the reads the
// dashboard makes (to show that a refusal reads nothing).
type countingStore struct {
	*sqlite.DB
	books, hours atomic.Int64
	hourRentals  []int64
}

func (c *countingStore) Book(ctx context.Context, userID int64) (*ledger.Book, error) {
	c.books.Add(1)
	return c.DB.Book(ctx, userID)
}

func (c *countingStore) HourStats(ctx context.Context, rentalID int64, from, to time.Time) ([]ledger.HourStat, error) {
	c.hours.Add(1)
	c.hourRentals = append(c.hourRentals, rentalID)
	return c.DB.HourStats(ctx, rentalID, from, to)
}

// env is a dashboard over a real SQLite ledger with a settable clock.
type env struct {
	t     *testing.T
	db    *sqlite.DB
	store *countingStore
	srv   *dashboard.Server
	h     http.Handler
	now   time.Time
}

var t0 = time.Date(2026, 11, 20, 4, 0, 0, 0, time.UTC) // 12:00 in Shanghai

func newEnv(t *testing.T, mod func(*dashboard.Config)) *env {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ledger.db"), sqlite.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &env{t: t, db: db, store: &countingStore{DB: db}, now: t0}
	db.Now = func() time.Time { return e.now }
	cfg := dashboard.Config{Store: e.store, BotToken: botToken, PublicURL: "https://hub.example.com",
		Allowed: func(id int64) bool { return id == 1 || id == 2 }, Now: func() time.Time { return e.now },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mod != nil {
		mod(&cfg)
	}
	e.srv, err = dashboard.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.h = e.srv.Handler()
	return e
}

// do serves one request through the real handler.
func (e *env) do(method, target, body string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

// signIn exchanges fresh initData for user and returns the bearer token.
func (e *env) signIn(user int64) string {
	e.t.Helper()
	rec := e.do(http.MethodPost, dashboard.PathSession, dashtest.InitData(botToken, user, e.now.Add(-time.Minute)), "Content-Type", "text/plain")
	if rec.Code != http.StatusOK {
		e.t.Fatalf("sign in %d: %d %s", user, rec.Code, rec.Body)
	}
	var a dashboard.SessionAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || a.Token == "" {
		e.t.Fatalf("session answer %s: %v", rec.Body, err)
	}
	return a.Token
}

// get is an authenticated GET; it decodes a 200 JSON answer into v.
func (e *env) get(token, target string, v any) *httptest.ResponseRecorder {
	e.t.Helper()
	rec := e.do(http.MethodGet, target, "", "Authorization", "Bearer "+token)
	if rec.Code == http.StatusOK && v != nil {
		if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
			e.t.Fatalf("decode %s: %v\n%s", target, err, rec.Body)
		}
	}
	return rec
}

// refusal checks a JSON refusal's status and code, and that its message
// contains want.
func refusal(t *testing.T, rec *httptest.ResponseRecorder, status int, code, want string) {
	t.Helper()
	var a dashboard.ErrorAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("not a JSON refusal (%d): %s", rec.Code, rec.Body)
	}
	if rec.Code != status || a.Code != code || !strings.Contains(a.Message, want) {
		t.Errorf("got %d %q %q, want %d %q with %q", rec.Code, a.Code, a.Message, status, code, want)
	}
}

// fill gives user a small ledger in Shanghai: a running per-second
// rental "box" (¥1.88/h, started Nov 19 10:00 local), a released one in
// October, a volume and a recorded balance.
func (e *env) fill(user int64) (box, old *ledger.Rental) {
	e.t.Helper()
	ctx := context.Background()
	if _, err := e.db.EnsureUser(ctx, ledger.User{ID: user, Lang: "en", TZ: "Asia/Shanghai", CreatedAt: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)}); err != nil {
		e.t.Fatal(err)
	}
	a := func(at time.Time) ledger.Action { return ledger.Action{UserID: user, At: at} }
	rent := func(name string, at time.Time) *ledger.Rental {
		r, err := e.db.CreateRental(ctx, a(at), ledger.Rental{UserID: user, Name: name, Platform: "autodl", GPU: "RTX 4090", GPUCount: 1,
			Mode: ledger.PerSecond, Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour},
			Currency: ledger.CNY, Events: []ledger.Event{{Kind: ledger.EventStart, At: at}}})
		if err != nil {
			e.t.Fatal(err)
		}
		return r
	}
	oldAt := time.Date(2026, 10, 30, 2, 0, 0, 0, time.UTC)
	old = rent("old", oldAt)
	if _, err := e.db.AppendEvent(ctx, a(oldAt.Add(50*time.Hour)), "old", ledger.Event{Kind: ledger.EventRelease, At: oldAt.Add(50 * time.Hour)}); err != nil {
		e.t.Fatal(err)
	}
	box = rent("box", time.Date(2026, 11, 19, 2, 0, 0, 0, time.UTC))
	_, err := e.db.CreateVolume(ctx, a(oldAt), ledger.Volume{UserID: user, Name: "data", Platform: "autodl", Currency: ledger.CNY, Priced: true,
		Price: ledger.MustDecimal("0.0066"), PriceUnit: ledger.PerGBDay, FreeGB: ledger.MustDecimal("50"),
		Events: []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: oldAt, SizeGB: ledger.MustDecimal("200")}}})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.db.RecordBalance(ctx, a(oldAt), ledger.BalanceRecord{UserID: user, Platform: "autodl", Amount: ledger.MustDecimal("500"), Currency: ledger.CNY, At: oldAt}); err != nil {
		e.t.Fatal(err)
	}
	return box, old
}

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func tokenOf(tb testing.TB, body []byte) string {
	tb.Helper()
	var a dashboard.SessionAnswer
	if err := json.Unmarshal(body, &a); err != nil || a.Token == "" {
		tb.Fatalf("session answer %s: %v", body, err)
	}
	return a.Token
}

// The chat core takes the server as its dashboard links, and has it
// revoke a link it could not deliver.
var (
	_ bot.DashboardLinks = (*dashboard.Server)(nil)
	_ bot.LinkRevoker    = (*dashboard.Server)(nil)
)
