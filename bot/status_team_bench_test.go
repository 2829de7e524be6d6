package bot_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// The /status benchmarks of a team's year (BENCHMARKS.md, "Chat: /status
// of a team"). BenchmarkStatus_Personal and the builder below use only
// the store's methods that existed before teams, so this file also
// compiles, unchanged, at the commit before them: the same command
// measures the personal /status before and after. BenchmarkStatus_Team
// (status_team_bench_team_test.go) puts the same history in a team's
// ledger of 50 members.

// Shape of the year: 600 rentals over 365 days by 50 people, each stopped,
// resumed, repriced and released, the last 10 still running; a volume on
// every fifth; 1,000 one-off charges, every other one on a rental; two
// projects.
const (
	yearRentals  = 600
	yearRunning  = 10
	yearCharges  = 1000
	yearPeople   = 50
	yearPersonID = 1001 // person p is yearPersonID+p
)

var yearProjects = [2]string{"yolo-v9", "llm-sft"}

// yearHooks let a caller put the history in a team's ledger: each names the
// person (0..yearPeople-1) and project a record is for, and may fill the
// action and the record accordingly. Nil hooks leave them untouched (a
// personal ledger).
type yearHooks struct {
	act    func(a *ledger.Action, person int)
	rental func(r *ledger.Rental, person int, project string)
	volume func(v *ledger.Volume, person int, project string)
	charge func(c *ledger.Charge, person int, project string)
}

// yearHistory writes the year into ledger ledgerID (a user that exists)
// from start through the store's ordinary methods, as the chat would.
func yearHistory(tb testing.TB, db *sqlite.DB, ledgerID int64, start time.Time, h yearHooks) {
	tb.Helper()
	ctx := context.Background()
	act := func(at time.Time, person int) ledger.Action {
		a := ledger.Action{UserID: ledgerID, At: at}
		if h.act != nil {
			h.act(&a, person)
		}
		return a
	}
	must := func(err error, what string) {
		if err != nil {
			tb.Fatalf("%s: %v", what, err)
		}
	}
	step := 365 * 24 * time.Hour / yearRentals
	rentalStart := func(i int) time.Time { return start.Add(time.Duration(i) * step) }
	person := func(i int) int { return i % yearPeople }
	project := func(p int) string { return yearProjects[p%2] }
	for i := range yearRentals {
		at := rentalStart(i)
		p := person(i)
		name := fmt.Sprintf("r%d", i)
		r := ledger.Rental{UserID: ledgerID, Name: name, Platform: "autodl", GPU: "A100", GPUCount: 1 + i%4,
			Mode: ledger.PerSecond, Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour},
			Currency: ledger.CNY, Events: []ledger.Event{{Kind: ledger.EventStart, At: at}}}
		if h.rental != nil {
			h.rental(&r, p, project(p))
		}
		_, err := db.CreateRental(ctx, act(at, p), r)
		must(err, "rent "+name)
		if i%5 == 0 {
			v := ledger.Volume{UserID: ledgerID, Name: fmt.Sprintf("v%d", i), RentalName: name, Platform: "autodl",
				Currency: ledger.CNY, Priced: true, Price: ledger.MustDecimal("0.0066"), PriceUnit: ledger.PerGBDay, FreeGB: ledger.MustDecimal("50"),
				Events: []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: at, SizeGB: ledger.MustDecimal("200")}}}
			if h.volume != nil {
				h.volume(&v, p, project(p))
			}
			_, err := db.CreateVolume(ctx, act(at, p), v)
			must(err, "volume of "+name)
		}
		if i >= yearRentals-yearRunning {
			continue
		}
		for j, k := range []ledger.EventKind{ledger.EventStop, ledger.EventResume} {
			t := at.Add(time.Duration(3+2*j) * time.Hour)
			_, err := db.AppendEvent(ctx, act(t, p), name, ledger.Event{Kind: k, At: t})
			must(err, fmt.Sprintf("%s of %s", k, name))
		}
		t := at.Add(6 * time.Hour)
		_, err = db.SetPriceAt(ctx, act(t, p), name, ledger.Event{Kind: ledger.EventPrice, At: t, Price: ledger.Price{Amount: ledger.MustDecimal("2.10"), Unit: ledger.UnitHour}})
		must(err, "price of "+name)
		t = at.Add(10 * time.Hour)
		_, err = db.AppendEvent(ctx, act(t, p), name, ledger.Event{Kind: ledger.EventRelease, At: t})
		must(err, "release of "+name)
		if i%5 == 0 {
			t = t.Add(time.Hour)
			_, err := db.AppendVolumeEvent(ctx, act(t, p), fmt.Sprintf("v%d", i), ledger.VolumeEvent{Kind: ledger.VolumeDelete, At: t})
			must(err, "delete of the volume of "+name)
		}
	}
	for j := range yearCharges {
		i := j * yearRentals / yearCharges
		p := person(i)
		c := ledger.Charge{UserID: ledgerID, Platform: "autodl", Amount: ledger.MustDecimal(fmt.Sprintf("%d.%02d", 1+j%20, j%100)),
			Currency: ledger.CNY, Note: fmt.Sprintf("image %d", j), At: rentalStart(i).Add(time.Hour)}
		rental := ""
		if j%2 == 0 {
			rental = fmt.Sprintf("r%d", i)
		}
		if h.charge != nil {
			h.charge(&c, p, project(p))
		}
		_, err := db.AddCharge(ctx, act(c.At, p), rental, c)
		must(err, fmt.Sprintf("charge %d", j))
	}
	for m := range 12 {
		at := start.Add(time.Duration(m) * 30 * 24 * time.Hour)
		_, err := db.AddTopUp(ctx, act(at, 0), ledger.TopUp{UserID: ledgerID, Platform: "autodl", Amount: ledger.MustDecimal("3000"), Currency: ledger.CNY, At: at})
		must(err, "top-up")
	}
}

// yearStart and yearNow bound the year; now is an hour after the last
// rental started, so the running ones have run.
var (
	yearStart = time.Date(2025, 11, 1, 2, 0, 0, 0, time.UTC)
	yearNow   = yearStart.Add(365*24*time.Hour + time.Hour)
)

// textSender keeps the text of what the core sends, to check a /status
// reply before it is timed.
type textSender struct{ texts []string }

func (s *textSender) Send(_ context.Context, m chat.Outgoing) (int, error) {
	s.texts = append(s.texts, m.Text)
	return len(s.texts), nil
}
func (s *textSender) AnswerCallback(context.Context, string, string) error { return nil }

// benchStatus times /status sent privately by user through core, after
// checking that one reply names every running rental of the year (so it
// read the ledger holding them), and reports the median and 99th
// percentile as BenchmarkHandle does. It returns the checked reply.
func benchStatus(b *testing.B, core *bot.Core, user int64) string {
	ctx := context.Background()
	var key int64
	upd := func() chat.Update {
		key++
		return chat.Update{Key: fmt.Sprintf("status-bench:%d", key), Kind: chat.KindText, UserID: user, ChatID: user, ChatType: chat.ChatPrivate, Text: "/status"}
	}
	rec := &textSender{}
	if err := core.Handle(ctx, upd(), rec); err != nil {
		b.Fatal(err)
	}
	reply := strings.Join(rec.texts, "\n")
	for i := yearRentals - yearRunning; i < yearRentals; i++ {
		if !strings.Contains(reply, fmt.Sprintf("r%d", i)) {
			b.Fatalf("/status does not name the running r%d; it said:\n%s", i, reply)
		}
	}
	b.Run("status", func(b *testing.B) {
		durs := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			t := time.Now()
			if err := core.Handle(ctx, upd(), nopSender{}); err != nil {
				b.Fatal(err)
			}
			durs = append(durs, time.Since(t))
		}
		b.StopTimer()
		slices.Sort(durs)
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		b.ReportMetric(ms(durs[len(durs)/2]), "p50-ms")
		b.ReportMetric(ms(durs[(len(durs)*99)/100]), "p99-ms")
	})
	return reply
}

// BenchmarkStatus_Personal is /status of one person whose own ledger holds
// the whole year (the chat's latency before teams).
func BenchmarkStatus_Personal(b *testing.B) {
	ctx := context.Background()
	db := openStore(b)
	db.Now = func() time.Time { return yearNow }
	const user = yearPersonID + 1
	if _, err := db.EnsureUser(ctx, ledger.User{ID: user, Lang: "en", TZ: "Asia/Shanghai"}); err != nil {
		b.Fatal(err)
	}
	yearHistory(b, db, user, yearStart, yearHooks{})
	core, err := bot.New(ctx, bot.Config{Store: db, AllowedUsers: []int64{user}, Now: func() time.Time { return yearNow }})
	if err != nil {
		b.Fatal(err)
	}
	benchStatus(b, core, user)
}
