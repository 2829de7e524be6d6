package agent

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hubtest"
	"github.com/gpuledger/gpuledger/agent/wire"
)

// sim90 is a GPU 90% busy, the host otherwise quiet.
const sim90 = `{"gpus": [{"name": "NVIDIA H200", "uuid": "GPU-1", "memory_total_mib": 143771, "memory_used_mib": 20000, "utilization": 90, "power_w": 500, "temperature_c": 60}], "host": {"cpu_percent": 1, "net_bytes_per_s": 0}}`

// runAgent runs the whole agent against hub until ctx ends, on a
// simulated GPU read from sim; it returns the marker file the release
// command writes and a function that waits for the agent to stop.
func runAgent(t *testing.T, ctx context.Context, hub *hubtest.Hub, sim string, mut func(*Config)) (string, func() string) {
	t.Helper()
	dir := t.TempDir()
	simPath := filepath.Join(dir, "sim.json")
	if err := os.WriteFile(simPath, []byte(sim), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(hub.Handler())
	t.Cleanup(srv.Close)
	marker := filepath.Join(dir, "released")
	var logs strings.Builder
	var mu syncWriter
	mu.w = &logs
	cfg := Config{Server: srv.URL, Token: hub.Token, Interval: 200 * time.Millisecond, Sample: 50 * time.Millisecond,
		ReleaseCmd: "echo released >> " + marker, Simulate: simPath, Thresholds: DefaultThresholds,
		StateDir: filepath.Join(dir, "state"), Log: newTextLogger(&mu)}
	if mut != nil {
		mut(&cfg)
	}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	return marker, func() string {
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		return mu.String()
	}
}

// TestRun_UnsignedPolicyCannotRelease is the attack of a fake hub (plain
// HTTP, a wrong --server): a lease that ended and a threshold of 99.9%
// in an unsigned answer must not release a host whose GPU is 90% busy.
func TestRun_UnsignedPolicyCannotRelease(t *testing.T) {
	hub := hubtest.New("tok-1", "box1")
	past := time.Now().Add(-time.Hour).UTC()
	hub.SetPolicy(wire.Policy{UtilThreshold: 99.9, LeaseUntil: &past})
	ctx, cancel := context.WithCancel(t.Context())
	marker, wait := runAgent(t, ctx, hub, sim90, nil)
	waitHeartbeats(t, hub, 8)
	cancel()
	logs := wait()
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the release command ran on a 90%% busy host from an unsigned policy: %q\n%s", b, logs)
	}
	for _, hb := range hub.Heartbeats() {
		if hb.Verdict == wire.VerdictIdle {
			t.Fatalf("a 90%% busy GPU reported idle: the unsigned threshold was applied\n%s", logs)
		}
	}
	// The refusal is reported to the server and logged once.
	hbs := hub.Heartbeats()
	if last := hbs[len(hbs)-1]; !strings.Contains(last.PolicyRefused, "unsigned") {
		t.Fatalf("policy_refused %q", last.PolicyRefused)
	}
	if n := strings.Count(logs, "server policy refused"); n != 1 {
		t.Fatalf("refusal logged %d times:\n%s", n, logs)
	}
}

// TestRun_SignedPolicy: the real hub's signed policy still works: a lease
// that ended releases an idle host, but its threshold can never make a
// busy GPU read idle.
func TestRun_SignedPolicy(t *testing.T) {
	past := time.Now().Add(-time.Hour).UTC()
	t.Run("OK/LeaseEndedIdleHostReleased", func(t *testing.T) {
		hub := hubtest.New("tok-1", "box1")
		hub.SetPolicy(hub.SignedPolicy(wire.Policy{LeaseUntil: &past}, wire.PolicyTTL))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		marker, wait := runAgent(t, ctx, hub, simIdleHost, nil)
		deadline := time.Now().Add(20 * time.Second)
		for {
			if _, err := os.Stat(marker); err == nil {
				break
			}
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("a signed ended lease did not release an idle host:\n%s", wait())
			}
			time.Sleep(20 * time.Millisecond)
		}
		waitHeartbeats(t, hub, 2)
		cancel()
		wait()
		hbs := hub.Heartbeats()
		if hbs[len(hbs)-1].PolicyRefused != "" {
			t.Fatalf("signed policy reported refused: %q", hbs[len(hbs)-1].PolicyRefused)
		}
	})
	t.Run("Err/ThresholdNeverAboveLocal", func(t *testing.T) {
		hub := hubtest.New("tok-1", "box1")
		hub.SetPolicy(hub.SignedPolicy(wire.Policy{UtilThreshold: 99.9, LeaseUntil: &past}, wire.PolicyTTL))
		ctx, cancel := context.WithCancel(t.Context())
		marker, wait := runAgent(t, ctx, hub, sim90, nil)
		waitHeartbeats(t, hub, 8)
		cancel()
		logs := wait()
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("a signed 99.9%% threshold released a 90%% busy host:\n%s", logs)
		}
		if !strings.Contains(logs, "above the local --util-threshold") {
			t.Fatalf("no note about the clamped threshold:\n%s", logs)
		}
	})
}

const simIdleHost = `{"gpus": [{"name": "NVIDIA H200", "uuid": "GPU-1", "memory_total_mib": 143771, "memory_used_mib": 0, "utilization": 0, "power_w": 80, "temperature_c": 30}], "host": {"cpu_percent": 1, "net_bytes_per_s": 0}}`

func waitHeartbeats(t *testing.T, hub *hubtest.Hub, n int) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for len(hub.Heartbeats()) < n {
		select {
		case <-hub.Changed():
		case <-deadline:
			t.Fatalf("timed out waiting for %d heartbeats (got %d)", n, len(hub.Heartbeats()))
		}
	}
}
