package withcore_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// BenchmarkTransport_Charges measures updates through the whole chat path:
// the fake Bot API, the transport (with its inbox), the core and a SQLite
// file. One op is one /charge message from one of 4 users, fetched,
// stored, applied and answered; the clock stops when all b.N charges are
// in the ledger.
func BenchmarkTransport_Charges(b *testing.B) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "ledger.db"), sqlite.WithLogger(quiet))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	users := []int64{1, 2, 3, 4}
	core, err := bot.New(ctx, bot.Config{Store: db, AllowedUsers: users, TZ: "UTC", Logger: quiet, BotName: tgfake.BotUsername})
	if err != nil {
		b.Fatal(err)
	}
	fake := tgfake.New(b, "42:TEST")
	tr, err := telegram.New(telegram.Config{
		Token: fake.Token(), Endpoint: fake.Endpoint(), Handler: core, Store: db, Logger: quiet,
		PollTimeout: time.Second,
		Pacing:      telegram.Pacing{Chat: time.Microsecond, Group: time.Microsecond, Global: time.Microsecond, ChatBurst: 1000},
		FloodBurst:  1 << 30, FloodInterval: time.Nanosecond,
	})
	if err != nil {
		b.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- tr.Run(runCtx) }()
	defer func() { cancel(); <-done }()
	for _, u := range users {
		fake.SendText(u, u, "/rent box1 autodl 4090 1.88/h")
	}
	charges := func() int {
		n := 0
		for _, u := range users {
			if bk, err := db.Book(ctx, u); err == nil {
				n += len(bk.Charges)
			}
		}
		return n
	}
	base := charges()
	b.ResetTimer()
	for i := range b.N {
		u := users[i%len(users)]
		fake.SendText(u, u, fmt.Sprintf("/charge box1 1 n%d", i))
	}
	for charges() < base+b.N {
		time.Sleep(10 * time.Millisecond)
	}
	b.StopTimer()
}
