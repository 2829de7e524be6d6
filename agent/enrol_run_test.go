package agent

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hubtest"
	"github.com/gpuledger/gpuledger/agent/platform"
	"github.com/gpuledger/gpuledger/agent/wire"
)

// runpodEnv poses as a RunPod pod: only the environment (no files).
func runpodEnv(t *testing.T) *platform.Env {
	root := t.TempDir()
	return &platform.Env{Getenv: func(k string) string {
		if k == "RUNPOD_POD_ID" {
			return "abc123xyz"
		}
		return ""
	}, Root: root}
}

// waitUntil waits (bounded) until cond holds over the hub's state.
func waitUntil(t *testing.T, hub *hubtest.Hub, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-hub.Changed():
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func lastToken(hub *hubtest.Hub) string {
	toks := hub.Tokens()
	if len(toks) == 0 {
		return ""
	}
	return toks[len(toks)-1]
}

// TestRun_Enrolment: an agent started with an enrolment token announces
// its instance; once the hub answers bound it saves the rental token,
// reports with it, carries out an order signed with the rental token's
// hash (and refuses one signed with the enrolment token's), and after a
// 409 on the rental token forgets it and enrols again.
func TestRun_Enrolment(t *testing.T) {
	hub := hubtest.New(testRentalToken, "runpod-abc123")
	hub.EnrolToken = testEnrolToken
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stateDir string
	marker, wait := runAgent(t, ctx, hub, simIdleHost, func(c *Config) {
		c.Token = testEnrolToken
		c.InstanceEnv = runpodEnv(t)
		stateDir = c.StateDir
	})
	waitUntil(t, hub, "an enrolment heartbeat", func() bool { return len(hub.Heartbeats()) >= 2 })
	hb := hub.Heartbeats()[0]
	if hb.Instance == nil || hb.Instance.Platform != "runpod" || hb.Instance.ID != "abc123xyz" || hb.Instance.PlatformSource != "env RUNPOD_POD_ID" {
		t.Fatalf("instance %+v", hb.Instance)
	}
	if lastToken(hub) != testEnrolToken {
		t.Fatal("first heartbeats not sent with the enrolment token")
	}

	hub.SetEnrolment(&wire.EnrolmentAnswer{State: wire.EnrolBound, Rental: "runpod-abc123", Token: testRentalToken})
	waitUntil(t, hub, "a heartbeat with the rental token", func() bool { return lastToken(hub) == testRentalToken })
	b, ok, err := loadBinding(stateDir)
	if !ok || err != nil || b.Token != testRentalToken || b.InstanceKey != "runpod:abc123xyz" {
		t.Fatalf("binding %+v ok %v err %v", b, ok, err)
	}
	// Every later heartbeat carries the rental token and the instance.
	n := len(hub.Heartbeats())
	waitUntil(t, hub, "two more heartbeats", func() bool { return len(hub.Heartbeats()) >= n+2 })
	hbs, toks := hub.Heartbeats(), hub.Tokens()
	for i := n; i < len(toks); i++ {
		if toks[i] != testRentalToken || hbs[i].Instance == nil || hbs[i].Instance.ID != "abc123xyz" {
			t.Fatalf("heartbeat %d after the switch: token is rental %v, instance %+v", i, toks[i] == testRentalToken, hbs[i].Instance)
		}
	}

	// An order signed with the enrolment token's hash is forged; one
	// signed with the rental token's is carried out.
	forged := hub.NewOrder(wire.ActionStop, time.Minute)
	forged.Signature = wire.SignOrder(testEnrolToken, forged)
	hub.Queue(forged)
	good := hub.NewOrder(wire.ActionStop, time.Minute)
	hub.Queue(good)
	outcome := func(id string) string {
		out := ""
		for _, r := range hub.Results() {
			if r.OrderID == id {
				out = r.Outcome
			}
		}
		return out
	}
	waitUntil(t, hub, "the order to be carried out", func() bool { return outcome(good.ID) == wire.OutcomeDone })
	if got := outcome(forged.ID); got != wire.OutcomeRejectedSignature {
		t.Fatalf("order signed with the enrolment token: %q", got)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("release command did not run: %v", err)
	}

	// The hub says the rental token belongs to another instance.
	hub.SetEnrolment(nil)
	hub.RefuseToken(http.StatusConflict)
	n = len(hub.Heartbeats())
	waitUntil(t, hub, "an enrolment heartbeat after the 409", func() bool {
		return len(hub.Heartbeats()) > n && lastToken(hub) == testEnrolToken
	})
	if _, err := os.Stat(filepath.Join(stateDir, BindingFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("binding kept after a 409: %v", err)
	}
	cancel()
	logs := wait()
	for _, want := range []string{"logged as runpod-abc123; reporting with its own token", "another instance", "waiting for the user"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
	noTokens(t, logs)
}

// TestRun_EnrolmentRestart: a restart on the same instance reports with
// the saved rental token at once.
func TestRun_EnrolmentRestart(t *testing.T) {
	hub := hubtest.New(testRentalToken, "runpod-abc123")
	hub.EnrolToken = testEnrolToken
	dir := t.TempDir()
	if err := saveBinding(dir, Binding{Rental: "runpod-abc123", Token: testRentalToken, InstanceKey: "runpod:abc123xyz", BoundAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	_, wait := runAgent(t, ctx, hub, simIdleHost, func(c *Config) {
		c.Token = testEnrolToken
		c.InstanceEnv = runpodEnv(t)
		c.StateDir = dir
	})
	waitHeartbeats(t, hub, 1)
	cancel()
	wait()
	for i, tok := range hub.Tokens() {
		if tok != testRentalToken {
			t.Fatalf("heartbeat %d sent with the enrolment token after a restart on the bound instance", i)
		}
	}
}

// TestRun_Shutdown: the last heartbeat, when ctx ends, carries the
// shutdown report; host comes from the simulate file's host_stopping,
// and the simulate file's booted_at replaces the boot time.
func TestRun_Shutdown(t *testing.T) {
	for _, host := range []bool{true, false} {
		t.Run(map[bool]string{true: "HostStopping", false: "AgentOnly"}[host], func(t *testing.T) {
			hub := hubtest.New("tok-1", "box1")
			sim := strings.TrimSuffix(simIdleHost, "}") + `, "booted_at": "2026-12-01T10:02:00Z", "host_stopping": ` + map[bool]string{true: "true", false: "false"}[host] + `}`
			ctx, cancel := context.WithCancel(t.Context())
			_, wait := runAgent(t, ctx, hub, sim, func(c *Config) { c.InstanceEnv = runpodEnv(t) })
			waitHeartbeats(t, hub, 2)
			cancel()
			logs := wait()
			hbs := hub.Heartbeats()
			for _, hb := range hbs[:len(hbs)-1] {
				if hb.Shutdown != nil {
					t.Fatalf("shutdown report before the stop: %+v", hb.Shutdown)
				}
			}
			last := hbs[len(hbs)-1]
			if last.Shutdown == nil || last.Shutdown.Host != host || last.Shutdown.At.IsZero() || time.Since(last.Shutdown.At) > time.Minute {
				t.Fatalf("final heartbeat's shutdown %+v, want host %v\n%s", last.Shutdown, host, logs)
			}
			want := time.Date(2026, 12, 1, 10, 2, 0, 0, time.UTC)
			if last.Instance == nil || !last.Instance.BootedAt.Equal(want) || last.Instance.Platform != "runpod" {
				t.Fatalf("instance %+v, want booted_at %v from the simulate file", last.Instance, want)
			}
		})
	}
}
