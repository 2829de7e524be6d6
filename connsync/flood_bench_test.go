package connsync_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connsync"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
)

// listing is a platform client in memory that lists what it holds: the
// benchmark measures the sync's and the store's work, not a fake's HTTP
// and JSON on the same two cores.
type listing struct {
	connector.Client // nil: only the methods below are called
	mu               sync.Mutex
	list             []connector.Instance
	calls            atomic.Int64 // Instances calls: the rounds that ran
}

func (l *listing) Platform() string            { return "runpod" }
func (l *listing) Check(context.Context) error { return nil }
func (l *listing) MinInterval() time.Duration  { return time.Second }
func (l *listing) Balance(context.Context) (connector.Balance, error) {
	return connector.Balance{}, connector.ErrNotSupported
}
func (l *listing) Instances(context.Context) ([]connector.Instance, error) {
	l.calls.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.list, nil
}

// set lists n running instances whose IDs start with prefix.
func (l *listing) set(prefix string, n int) {
	list := make([]connector.Instance, n)
	for i := range list {
		list[i] = connector.Instance{ID: fmt.Sprintf("%s%05d", prefix, i), Name: fmt.Sprintf("n%d", i), State: connector.Running,
			GPU: "A40", GPUCount: 1, Price: ledger.MustDecimal("0.79"), PriceOK: true, Currency: ledger.USD, StartedAt: t0.Add(-time.Hour)}
	}
	l.mu.Lock()
	l.list = list
	l.mu.Unlock()
}

// BenchmarkStatusDuringSync is the chat's /status (the real core, the
// real SQLite store, the user's year of history) while the sync loop
// polls a platform that lists 10,000 instances the user has not logged,
// against the same with no sync, in one run:
//
//	go test -run '^$' -bench BenchmarkStatusDuringSync -benchtime 300x -count 5 ./connsync/
//
// no-sync: nothing else runs. flood: rounds back to back over the
// listing with its card open (no rental, nothing written). new-ids: each
// round lists 10,000 IDs it has never listed (the card is edited only
// when the number changes); the same mode on the code before the cap
// logged 10,000 rentals a round, with a line each. ignore: each
// round lists 10,000 new IDs, and every other round applies an [Ignore]
// (10,000 declined rows written, 200 a transaction). ignored: rounds
// over 10,000 instances already declined.
func BenchmarkStatusDuringSync(b *testing.B) {
	for _, mode := range []string{"no-sync", "flood", "new-ids", "ignore", "ignored"} {
		b.Run(mode, func(b *testing.B) { benchStatusDuringSync(b, mode) })
	}
}

func benchStatusDuringSync(b *testing.B, mode string) {
	const n = 10000
	ctx := context.Background()
	e := newEnv(b)
	testkit.Year(b, e.db, uid, time.Date(2025, 11, 1, 2, 0, 0, 0, time.UTC))
	l := &listing{}
	l.set("a", n)
	btn := testButtons()
	snd := &sent{}
	s, err := connsync.New(connsync.Config{Store: e.db, Vault: e.vault, Platforms: platforms, Buttons: btn, Now: e.clk.Now, Interval: time.Second, Logger: slog.New(slog.DiscardHandler),
		Clients: func(string, string) (connector.Client, error) { return l, nil }})
	if err != nil {
		b.Fatal(err)
	}
	s.SetSender(snd)
	if _, err := s.Connect(ctx, uid, "runpod", rpKey); err != nil {
		b.Fatal(err)
	}
	round := func() {
		e.clk.Add(2 * time.Second)
		if err := s.Round(ctx); err != nil {
			b.Error(err)
		}
	}
	press := func(action string) {
		data, err := btn.Sign(uid, action, "runpod")
		if err != nil {
			b.Fatal(err)
		}
		dispatch(b, e.db, btn, snd, chat.ButtonPress{Update: chat.Update{Kind: chat.KindCallback, UserID: uid, ChatID: uid, MessageID: 1, CallbackID: "cb", CallbackData: data},
			Now: e.clk.Now()})
	}
	round() // the card
	if mode == "ignored" {
		press("syfi")
		round()
	}
	core, err := bot.New(ctx, bot.Config{Store: e.db, AllowedUsers: []int64{uid}})
	if err != nil {
		b.Fatal(err)
	}
	var (
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	if mode != "no-sync" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for gen := 0; !stop.Load(); gen++ {
				if mode == "new-ids" {
					l.set(fmt.Sprintf("g%d-", gen), n)
				}
				if mode == "ignore" && gen%2 == 1 {
					l.set(fmt.Sprintf("g%d-", gen), n) // new IDs: a card, then an Ignore
					round()
					press("syfi")
				}
				round()
			}
		}()
	}
	durs := make([]time.Duration, 0, b.N)
	calls0 := l.calls.Load()
	b.ResetTimer()
	for i := range b.N {
		u := chat.Update{Key: fmt.Sprintf("bench:%d", i), Kind: chat.KindText, UserID: uid, ChatID: uid, ChatType: chat.ChatPrivate, Text: "/status"}
		t := time.Now()
		if err := core.Handle(ctx, u, nopSender{}); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(t))
	}
	b.StopTimer()
	stop.Store(true)
	wg.Wait()
	rounds := l.calls.Load() - calls0
	if mode != "no-sync" && rounds == 0 {
		b.Fatal("no sync round ran during the measurement")
	}
	slices.Sort(durs)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(durs[len(durs)/2]), "p50-ms")
	b.ReportMetric(ms(durs[(len(durs)*99)/100]), "p99-ms")
	b.ReportMetric(float64(rounds), "rounds")
}

type nopSender struct{}

func (nopSender) Send(context.Context, chat.Outgoing) (int, error)     { return 1, nil }
func (nopSender) AnswerCallback(context.Context, string, string) error { return nil }
