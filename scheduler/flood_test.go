package scheduler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// TestForgedHeartbeatFlood: whoever holds a stolen token can send a
// heartbeat a second, each with a new job end time, a new agent start and
// GPUs other than the rental's. What reaches the chat stays bounded: one
// "finished… Release?" card per job, at most one per rental every few
// minutes, one GPU-mismatch note per distinct mismatch, and a budget of
// agent-triggered messages per hour for the whole token.
func TestForgedHeartbeatFlood(t *testing.T) {
	e := newEnv(t, nil)
	e.clk.Add(time.Hour)
	code := 0
	post := func(i int, job *wire.JobState, gpu string) {
		h := wire.HeartbeatRequest{Version: wire.Version, Seq: 1, BootID: fmt.Sprintf("boot-%d", i), Verdict: wire.VerdictBusy,
			Samples: 6, BusySamples: 6, WindowStart: e.clk.Now().Add(-time.Second), WindowEnd: e.clk.Now(), Job: job,
			Host: wire.HostFacts{GPUSource: "nvml", GPUs: []wire.GPUFact{{Name: gpu}}}}
		b, _ := json.Marshal(h)
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+wire.PathHeartbeat, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+e.token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("heartbeat %d: status %d", i, res.StatusCode)
		}
		e.s.DrainEvents(context.Background())
	}
	// One hour, one forged heartbeat a second: every one a different
	// job (its own start and end), a restarted agent, other GPUs.
	const n = 3600
	for i := range n {
		end := e.clk.Now().Add(-time.Duration(i%50) * time.Second)
		job := &wire.JobState{Command: "python train.py", Exited: true, ExitCode: &code,
			StartedAt: end.Add(-time.Duration(i+1) * time.Minute), EndedAt: &end, DurationSeconds: float64(i+1) * 60}
		post(i, job, fmt.Sprintf("NVIDIA GeForce GTX %d", 1000+i))
		e.clk.Add(time.Second)
	}
	msgs := e.chat.NewMessages()
	var jobs, mismatch int
	for _, m := range msgs {
		switch {
		case strings.Contains(m.Text, "Release?"):
			jobs++
		case strings.Contains(m.Text, "the agent sees"):
			mismatch++
		}
	}
	// The hub's budget: 6 agent-triggered messages an hour in all.
	if len(msgs) > 6 {
		t.Fatalf("%d forged heartbeats sent %d messages (%d job cards, %d GPU notes); want at most 6 in the hour", n, len(msgs), jobs, mismatch)
	}
	if jobs == 0 {
		t.Fatal("no job card at all: the first finished job must still be told")
	}
}
