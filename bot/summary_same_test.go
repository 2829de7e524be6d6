package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/scheduler"
)

// TestSummary_SameLinesOnDemandAndNightly: /summary and the nightly
// summary are one builder: for the same ledger at the same moment they
// carry the same lines (the idle cost of the day too, which /summary
// left out), in English and in Chinese.
func TestSummary_SameLinesOnDemandAndNightly(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			he := newHubEnv(t)
			he.say(alice, "/settings lang="+lang)
			he.say(alice, "/rent box1 autodl 4090 1.88/h")
			he.say(alice, "/rent box2 runpod A40 $0.79/h")
			tok := he.agent("box1")
			// Idle from 11:00 to 13:00 Shanghai: an idle cost today.
			he.now = he.now.Add(time.Hour)
			he.beat(tok, wire.VerdictBusy)
			for range 8 {
				he.now = he.now.Add(15 * time.Minute)
				he.beat(tok, wire.VerdictIdle)
			}
			he.now = he.now.Add(time.Minute)
			he.beat(tok, wire.VerdictBusy)
			if err := he.hub.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			// 22:00 Shanghai, the summary's time.
			he.now = time.Date(2026, 11, 2, 14, 0, 0, 0, time.UTC)
			sent := &testkit.Sender{}
			s, err := scheduler.New(scheduler.Config{Store: he.db, Sender: sent, Buttons: testButtons(), Now: func() time.Time { return he.now }, NoChart: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Summaries(context.Background()); err != nil {
				t.Fatal(err)
			}
			msgs := sent.Take()
			if len(msgs) != 1 {
				t.Fatalf("nightly summary: %d messages", len(msgs))
			}
			nightly := msgs[0].Out.Text
			onDemand := he.say(alice, "/summary")
			if nightly != onDemand {
				t.Errorf("the nightly summary and /summary differ:\nnightly:\n%s\n\n/summary:\n%s", nightly, onDemand)
			}
			idle := map[string]string{"en": "Idle cost today", "zh": "今日空闲花费"}[lang]
			if !strings.Contains(onDemand, idle) {
				t.Errorf("/summary lacks the idle cost:\n%s", onDemand)
			}
		})
	}
}
