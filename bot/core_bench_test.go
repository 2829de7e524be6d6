package bot_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

type nopSender struct{}

func (nopSender) Send(context.Context, chat.Outgoing) (int, error)     { return 1, nil }
func (nopSender) AnswerCallback(context.Context, string, string) error { return nil }

const (
	benchUsers   = 100
	benchRentals = 52 // one a week for a year
)

// fillYear gives each user a year of history: a rental a week (started,
// stopped, resumed, released; the last two still live), a volume a month,
// monthly top-ups and balance records.
func fillYear(b *testing.B, db *sqlite.DB, start time.Time) {
	ctx := context.Background()
	for u := int64(1); u <= benchUsers; u++ {
		if _, err := db.EnsureUser(ctx, ledger.User{ID: u, Lang: "en", TZ: "Asia/Shanghai"}); err != nil {
			b.Fatal(err)
		}
		a := func(at time.Time) ledger.Action { return ledger.Action{UserID: u, At: at} }
		for i := 0; i < benchRentals; i++ {
			at := start.Add(time.Duration(i) * 7 * 24 * time.Hour)
			name := fmt.Sprintf("r%d", i)
			_, err := db.CreateRental(ctx, a(at), ledger.Rental{UserID: u, Name: name, Platform: "autodl", GPU: "RTX 4090", GPUCount: 1 + i%2,
				Mode: ledger.PerSecond, Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour},
				Currency: ledger.CNY, Events: []ledger.Event{{Kind: ledger.EventStart, At: at}}})
			if err != nil {
				b.Fatal(err)
			}
			if i >= benchRentals-2 {
				continue
			}
			for j, k := range []ledger.EventKind{ledger.EventStop, ledger.EventResume, ledger.EventRelease} {
				t := at.Add(time.Duration(5*(j+1)) * time.Hour)
				if _, err := db.AppendEvent(ctx, a(t), name, ledger.Event{Kind: k, At: t}); err != nil {
					b.Fatal(err)
				}
			}
			if i%4 == 0 {
				_, err := db.CreateVolume(ctx, a(at), ledger.Volume{UserID: u, Name: fmt.Sprintf("v%d", i), RentalName: name, Platform: "autodl",
					Currency: ledger.CNY, Priced: true, Price: ledger.MustDecimal("0.0066"), PriceUnit: ledger.PerGBDay, FreeGB: ledger.MustDecimal("50"),
					Events: []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: at, SizeGB: ledger.MustDecimal("200")}}})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := db.AddTopUp(ctx, a(at), ledger.TopUp{UserID: u, Platform: "autodl", Amount: ledger.MustDecimal("100"), Currency: ledger.CNY, At: at}); err != nil {
					b.Fatal(err)
				}
				if _, err := db.RecordBalance(ctx, a(at), ledger.BalanceRecord{UserID: u, Platform: "autodl", Amount: ledger.MustDecimal("50"), Currency: ledger.CNY, At: at}); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkHandle measures one update through the core with the real
// SQLite store holding a year of history for 100 users, and reports the
// median and 99th percentile per operation.
func BenchmarkHandle(b *testing.B) {
	ctx := context.Background()
	db := openStore(b)
	start := time.Date(2025, 11, 1, 2, 0, 0, 0, time.UTC)
	now := start.Add(365 * 24 * time.Hour)
	db.Now = func() time.Time { return now }
	fillYear(b, db, start)
	users := make([]int64, benchUsers)
	for i := range users {
		users[i] = int64(i + 1)
	}
	core, err := bot.New(ctx, bot.Config{Store: db, AllowedUsers: users, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	var key int64
	upd := func(user int64, text string) chat.Update {
		key++
		return chat.Update{Key: fmt.Sprintf("bench:%d", key), Kind: chat.KindText, UserID: user, ChatID: user, ChatType: chat.ChatPrivate, Text: text}
	}
	run := func(b *testing.B, op func(i int)) {
		durs := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t := time.Now()
			op(i)
			durs = append(durs, time.Since(t))
		}
		b.StopTimer()
		slices.Sort(durs)
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		b.ReportMetric(ms(durs[len(durs)/2]), "p50-ms")
		b.ReportMetric(ms(durs[(len(durs)*99)/100]), "p99-ms")
	}
	handle := func(b *testing.B, u chat.Update) {
		if err := core.Handle(ctx, u, nopSender{}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("status", func(b *testing.B) {
		run(b, func(i int) { handle(b, upd(users[i%benchUsers], "/status")) })
	})
	b.Run("spend-month", func(b *testing.B) {
		run(b, func(i int) { handle(b, upd(users[i%benchUsers], "/spend month")) })
	})
	b.Run("rent+stop", func(b *testing.B) {
		run(b, func(i int) {
			u := users[i%benchUsers]
			name := fmt.Sprintf("n%d", i)
			handle(b, upd(u, "/rent "+name+" autodl 4090 1.88/h"))
			handle(b, upd(u, "/stop "+name))
		})
	})
}
