package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hubtest"
	"github.com/gpuledger/gpuledger/agent/wire"
)

// TestE2E_ReplayAfterRestart: an order captured on the wire and handed to
// the agent again after it restarted (SIGKILL, then the same start line)
// must not run the release command a second time.
func TestE2E_ReplayAfterRestart(t *testing.T) {
	bin := buildAgent(t)
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim.json")
	writeFile(t, sim, simIdle)
	marker := filepath.Join(dir, "released")
	hub := hubtest.New("e2e-token", "box1")
	srv := httptest.NewServer(hub.Handler())
	defer srv.Close()

	start := func() (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.CommandContext(t.Context(), bin, "run", "--server", srv.URL, "--simulate", sim,
			"--sample", "100ms", "--interval", "300ms", "--release-cmd", "echo $GPULEDGER_ORDER_ID >> "+marker)
		// The default state directory is below $HOME, where the install
		// script puts the agent.
		cmd.Env = append(os.Environ(), "GPULEDGER_AGENT_TOKEN=e2e-token", "HOME="+dir)
		var logs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &logs
	}
	outcome := func(id string) func() bool {
		return func() bool {
			for _, r := range hub.Results() {
				if r.OrderID == id && (r.Outcome == wire.OutcomeDone || strings.HasPrefix(r.Outcome, "rejected_") || strings.HasPrefix(r.Outcome, "refused_")) {
					return true
				}
			}
			return false
		}
	}
	cmd, logs := start()
	// The hub issues orders only to an agent that reported.
	waitFor(t, hub, "the first heartbeat", func() bool { return len(hub.Heartbeats()) > 0 })
	o := hub.NewOrder(wire.ActionStop, 5*time.Minute)
	hub.Queue(o)
	waitFor(t, hub, "the release to finish", outcome(o.ID))
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// The same order again, to a new agent process.
	cmd, logs2 := start()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if t.Failed() {
			t.Logf("first agent:\n%s\nsecond agent:\n%s\nresults %+v", logs.String(), logs2.String(), hub.Results())
		}
	}()
	n := len(hub.Heartbeats())
	hub.Queue(o)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	// Wait until the second agent took the order (a heartbeat answered
	// with it) and a few more heartbeats passed.
	for len(hub.Heartbeats()) < n+6 {
		select {
		case <-hub.Changed():
		case <-ctx.Done():
			t.Fatal("the restarted agent sent no heartbeats")
		}
	}
	b, _ := os.ReadFile(marker)
	if got := strings.Count(string(b), o.ID); got != 1 {
		t.Fatalf("the release command ran %d times for one order (marker %q)", got, b)
	}
}

// TestE2E_FakeHubCannotRelease: anything that answers in the hub's place
// (plain HTTP intercepted, a wrong --server) and sends an unsigned policy
// with a lease that ended and a threshold of 99.9% must not make the real
// binary run its release command on a busy host.
func TestE2E_FakeHubCannotRelease(t *testing.T) {
	bin := buildAgent(t)
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim.json")
	writeFile(t, sim, simBusy)
	marker := filepath.Join(dir, "released")
	hub := hubtest.New("e2e-token", "box1")
	past := time.Now().Add(-time.Hour).UTC()
	hub.SetPolicy(wire.Policy{UtilThreshold: 99.9, LeaseUntil: &past})
	srv := httptest.NewServer(hub.Handler())
	defer srv.Close()
	cmd := exec.CommandContext(t.Context(), bin, "run", "--server", srv.URL, "--simulate", sim,
		"--sample", "100ms", "--interval", "300ms", "--release-cmd", "echo released >> "+marker)
	cmd.Env = append(os.Environ(), "GPULEDGER_AGENT_TOKEN=e2e-token", "HOME="+dir)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, hub, "8 heartbeats", func() bool { return len(hub.Heartbeats()) >= 8 })
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("an unsigned policy released a busy host (marker %q):\n%s", b, logs.String())
	}
	for _, hb := range hub.Heartbeats() {
		// A heartbeat cut with no sample in it (the last one, sent while
		// the agent stops) has no verdict to give.
		if hb.Samples > 0 && hb.Verdict != wire.VerdictBusy {
			t.Fatalf("a 97%% busy GPU reported %s (%+v): the unsigned threshold was applied\n%s", hb.Verdict, hb, logs.String())
		}
	}
}
