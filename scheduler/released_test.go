package scheduler_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/scheduler"
)

// beatStatus posts a busy heartbeat and returns the HTTP status.
func (e *env) beatStatus() int {
	e.t.Helper()
	e.seq++
	b, _ := json.Marshal(wire.HeartbeatRequest{Version: wire.Version, Seq: e.seq, BootID: "b1", Verdict: wire.VerdictBusy,
		Samples: 6, BusySamples: 6, WindowStart: e.clk.Now().Add(-30 * time.Second), WindowEnd: e.clk.Now()})
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+wire.PathHeartbeat, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestMarkReleased_RevokesAtOnce: "I released it" revokes the agent's
// token in the hub at once, not when its 30 s cache expires.
func TestMarkReleased_RevokesAtOnce(t *testing.T) {
	e := newEnv(t, nil)
	e.clk.Add(time.Hour)
	if code := e.beatStatus(); code != http.StatusOK {
		t.Fatalf("heartbeat: %d", code)
	}
	e.clk.Add(5 * time.Second)
	e.press(scheduler.ActReleased, 0)
	if code := e.beatStatus(); code != http.StatusUnauthorized {
		t.Fatalf("heartbeat 5s after I released it: %d, want 401", code)
	}
}
