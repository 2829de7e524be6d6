package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// TestSummaries_NameUnpricedLines: the nightly summary, whose totals
// leave out an UNPRICED volume, names it and gives the command that
// prices it, as /summary does.
func TestSummaries_NameUnpricedLines(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if _, err := e.db.CreateVolume(ctx, ledger.Action{UserID: 1, At: t0}, ledger.Volume{
		UserID: 1, Name: "vd3", RentalName: "box1", Platform: "autodl", Currency: ledger.CNY,
		Events: []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: t0, SizeGB: ledger.MustDecimal("50")}},
	}); err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New(scheduler.Config{Store: e.db, Sender: e.chat, Buttons: testButtons(), Now: e.clk.Now, Tick: 30 * time.Second, NoChart: true})
	if err != nil {
		t.Fatal(err)
	}
	e.clk.Set(t0.Add(12*time.Hour + time.Minute)) // 22:01 in Shanghai
	if err := s.Summaries(ctx); err != nil {
		t.Fatal(err)
	}
	m := e.chat.NewMessages()
	if len(m) != 1 {
		t.Fatalf("summary = %+v", m)
	}
	for _, w := range []string{"UNPRICED", "vd3", "<code>/storage vd3 price=0.10/GB/month</code>"} {
		if !strings.Contains(m[0].Text, w) {
			t.Errorf("summary %q lacks %q", m[0].Text, w)
		}
	}
}
