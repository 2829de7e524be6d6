package bot_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/testkit"
)

type nopSender struct{}

func (nopSender) Send(context.Context, chat.Outgoing) (int, error)     { return 1, nil }
func (nopSender) AnswerCallback(context.Context, string, string) error { return nil }

// benchUsers each have testkit.Year's year of history.
const benchUsers = 100

// BenchmarkHandle measures one update through the core with the real
// SQLite store holding a year of history for 100 users, and reports the
// median and 99th percentile per operation.
func BenchmarkHandle(b *testing.B) {
	ctx := context.Background()
	db := openStore(b)
	start := time.Date(2025, 11, 1, 2, 0, 0, 0, time.UTC)
	now := start.Add(365 * 24 * time.Hour)
	db.Now = func() time.Time { return now }
	for u := int64(1); u <= benchUsers; u++ {
		testkit.Year(b, db, u, start)
	}
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
