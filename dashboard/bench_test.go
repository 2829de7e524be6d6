package dashboard_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/dashboard/dashtest"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// fillYear gives user 1 the chat benchmark's year (testkit.Year) plus a
// rental running all year with eight GPUs and an agent, whose hourly
// roll-ups are 8,760 agent_hours rows, and returns that rental's ID.
func fillYear(b *testing.B, db *sqlite.DB, start time.Time) int64 {
	ctx := context.Background()
	testkit.Year(b, db, 1, start)
	long, err := db.CreateRental(ctx, ledger.Action{UserID: 1, At: start}, ledger.Rental{UserID: 1, Name: "long", Platform: "autodl", GPU: "RTX 4090", GPUCount: 8,
		Mode: ledger.PerSecond, Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour},
		Currency: ledger.CNY, Events: []ledger.Event{{Kind: ledger.EventStart, At: start}}})
	if err != nil {
		b.Fatal(err)
	}
	beats := make([]ledger.Beat, 0, 1000)
	for h := range 365 * 24 {
		bt := ledger.Beat{RentalID: long.ID, At: start.Add(time.Duration(h)*time.Hour + time.Minute), Verdict: ledger.VerdictBusy,
			BusyS: 3600, UtilMean: 800, UtilMax: 990, Samples: 720}
		if h%7 == 3 {
			bt.Verdict, bt.BusyS, bt.IdleS, bt.UtilMean = ledger.VerdictIdle, 0, 3600, 0
		}
		beats = append(beats, bt)
		if len(beats) == cap(beats) {
			if err := db.SaveBeats(ctx, beats, nil); err != nil {
				b.Fatal(err)
			}
			beats = beats[:0]
		}
	}
	if err := db.SaveBeats(ctx, beats, nil); err != nil {
		b.Fatal(err)
	}
	return long.ID
}

// yearServer is the dashboard over a real SQLite ledger in which user 1
// has a year of history (fillYear), a clock stopped 30 minutes after that
// year, and the ID of the rental that ran all year.
func yearServer(b *testing.B) (*dashboard.Server, time.Time, int64) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "ledger.db"), sqlite.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	start := time.Date(2025, 11, 1, 2, 0, 0, 0, time.UTC)
	now := start.Add(365*24*time.Hour + 30*time.Minute)
	db.Now = func() time.Time { return now }
	long := fillYear(b, db, start)
	if st, err := db.HourStats(ctx, long, start, now); err != nil || len(st) != 8760 {
		b.Fatalf("%d roll-ups (%v), want 8760", len(st), err)
	}
	srv, err := dashboard.New(dashboard.Config{Store: db, BotToken: botToken, PublicURL: "https://hub.example.com",
		Allowed: func(int64) bool { return true }, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	return srv, now, long
}

// BenchmarkPages measures the data answers (month, rental, export)
// through the real handler and SQLite for a user with a year of history,
// and reports the median and 99th percentile of each.
func BenchmarkPages(b *testing.B) {
	srv, now, long := yearServer(b)
	h := srv.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, dashboard.PathSession, stringsReader(dashtest.InitData(botToken, 1, now))))
	if rec.Code != 200 {
		b.Fatalf("sign in: %d %s", rec.Code, rec.Body)
	}
	tok := tokenOf(b, rec.Body.Bytes())
	for _, pg := range []struct{ name, target string }{
		{"month", dashboard.PathMonth},
		{"rental", dashboard.PathRental + "?id=" + strconv.FormatInt(long, 10)},
		{"export", dashboard.PathExport},
	} {
		b.Run(pg.name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, pg.target, nil)
				req.Header.Set("Authorization", "Bearer "+tok)
				rec := httptest.NewRecorder()
				t := time.Now()
				h.ServeHTTP(rec, req)
				lat = append(lat, time.Since(t))
				if rec.Code != 200 {
					b.Fatalf("%s: %d %s", pg.target, rec.Code, rec.Body)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
		})
	}
}
