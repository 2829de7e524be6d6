package scheduler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestForgedHostCycles: whoever holds an AWS rental's own token forges,
// every heartbeat for a day, a shutdown of the host and a new boot (a
// new boot time each time, or an old one back). AWS stops billing on a
// shutdown from inside, so a stop is recorded without a tap; the forger
// must not get a stop and a resume per heartbeat, nor per few minutes:
// at most one automatic stop per scheduler.AutoStopEvery, the rest are
// asked (within the token's budget of messages).
func TestForgedHostCycles(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	r := e.hostRental("x", "aws")
	tok, err := e.hub.Tokens().Issue(ctx, 1, "x")
	if err != nil {
		t.Fatal(err)
	}
	e.chat.Take()
	seq := uint64(0)
	post := func(boot time.Time, sd *wire.Shutdown) {
		t.Helper()
		seq++
		now := e.clk.Now()
		h := wire.HeartbeatRequest{Version: wire.Version, Seq: seq, BootID: fmt.Sprintf("b%d", seq), Verdict: wire.VerdictBusy,
			Samples: 6, BusySamples: 6, WindowStart: now.Add(-30 * time.Second), WindowEnd: now, SentAt: now,
			Host:     wire.HostFacts{Hostname: "h", GPUSource: "nvml", GPUs: []wire.GPUFact{{Name: "NVIDIA A100"}}},
			Instance: &wire.InstanceFacts{Platform: "aws", ID: "i-0abc", BootedAt: boot}, Shutdown: sd}
		b, _ := json.Marshal(h)
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+wire.PathHeartbeat, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("heartbeat %d: status %d", seq, res.StatusCode)
		}
		e.s.DrainEvents(ctx)
	}
	const day = 24 * time.Hour
	start := e.clk.Now()
	for i := 0; e.clk.Now().Sub(start) < day; i++ {
		now := e.clk.Now()
		switch i % 3 {
		case 0: // a new boot, just now
			post(now, nil)
		case 1: // the host is going down, it says, since long ago
			post(now, &wire.Shutdown{At: now.Add(-12 * time.Hour), Host: true})
		default: // an old boot back
			post(start, nil)
		}
		e.clk.Add(30 * time.Second)
	}
	got := e.reload(r)
	stops := 0
	var missed time.Duration
	for i, ev := range got.Events {
		if ev.Kind == ledger.EventStop {
			stops++
			if i+1 < len(got.Events) && got.Events[i+1].Kind == ledger.EventResume {
				missed += got.Events[i+1].At.Sub(ev.At)
			}
		}
	}
	if max := int(day/(6*time.Hour)) + 1; stops > max {
		t.Errorf("a day of forged shutdowns and boots recorded %d stops without a tap (%v not billed), want at most %d", stops, missed, max)
	}
	// Each stop recorded lasts until the next forged boot: minutes.
	if missed > time.Duration(stops)*5*time.Minute {
		t.Errorf("forged shutdowns took %v off the bill without a tap in %d stops", missed, stops)
	}
	if n := len(e.chat.NewMessages()); n > 6*24 {
		t.Errorf("%d messages in a day, want at most the token's budget (%d)", n, 6*24)
	}
}
