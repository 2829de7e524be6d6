package scheduler_test

import (
	"context"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/ledger"
)

// An agent token alone never moves money or data through a platform's
// API: these run the real hub's HTTP handler, the scheduler and the sync
// against RunPod's fake, on a real SQLite file.

// elsewhere makes RunPod list box1's pod at 198.51.100.7 (the test's
// heartbeats come from the loopback) and syncs it, so the address the
// platform lists is stored.
func (p *platEnv) elsewhere() {
	p.t.Helper()
	p.listAt("198.51.100.7")
}

// listAt makes RunPod list box1's pod at addr, and syncs.
func (p *platEnv) listAt(addr string) {
	p.t.Helper()
	pod := runpodfake.NewPod(podID, "box1", "RUNNING", "0.79", "A100", 1, t0)
	pod["publicIp"] = addr
	p.rp.SetPods(pod)
	if err := p.sync.SyncNow(context.Background(), 1, "runpod"); err != nil {
		p.t.Fatal(err)
	}
}

func (p *platEnv) terminates() int { return p.rp.Calls("DELETE /v1/pods/" + podID) }

// idleFor runs box1 idle under pol: one long idle heartbeat past the
// warning, then one a minute for n minutes, the scheduler ticking after
// each, actions waited for.
func (p *platEnv) idleFor(pol ledger.AutoPolicy, n int) {
	p.t.Helper()
	if _, err := p.db.SetAutoPolicy(context.Background(), 1, "box1", pol); err != nil {
		p.t.Fatal(err)
	}
	p.beat(wire.VerdictIdle, 31*time.Minute, nil)
	p.tick()
	for range n {
		p.clk.Add(time.Minute)
		p.beat(wire.VerdictIdle, 0, nil)
		p.tick()
		p.s.WaitActions()
		if p.terminates() > 0 {
			return // the token is revoked with the release
		}
	}
}

// TestAttack_StolenTokenPlatform is the outside reproduction: box1 was
// synced from RunPod and set to /autorelease box1 release after 1m; a
// stranger holding only its agent token runs the agent in simulate mode
// on another machine (no release command, no instance ID, a GPU RunPod
// does not list for it). The server must not terminate the pod through
// RunPod's API, nor stop it: the reports contradict RunPod's list.
func TestAttack_StolenTokenPlatform(t *testing.T) {
	for _, action := range []ledger.AutoAction{ledger.AutoRelease, ledger.AutoStop} {
		t.Run(string(action), func(t *testing.T) {
			p := newPlatEnv(t, "runpod")
			p.clk.Add(time.Hour)
			p.elsewhere()
			p.withAgent()
			p.gpu, p.instance, p.noCmd = "NVIDIA GeForce RTX 4090", nil, true
			p.idleFor(ledger.AutoPolicy{Action: action, After: time.Minute}, 30)
			if n, m := p.terminates(), p.stops(); n != 0 || m != 0 {
				t.Fatalf("RunPod got %d terminates and %d stops from a stranger's idle reports, want none", n, m)
			}
			if r, _ := p.db.RentalByID(context.Background(), p.rid); r.State() != ledger.Running {
				t.Fatalf("box1 is %s in the ledger, want running", r.State())
			}
		})
	}
}

// TestAttack_ForwardedForUntrusted: an agent that claims the pod's ID and
// GPU and sets X-Forwarded-For to the pod's address, from a peer that is
// no trusted proxy (none is configured), is not taken to report from the
// pod: nothing is terminated.
func TestAttack_ForwardedForUntrusted(t *testing.T) {
	p := newPlatEnv(t, "runpod")
	p.clk.Add(time.Hour)
	p.elsewhere()
	p.withAgent()
	p.xff = "198.51.100.7"
	p.idleFor(ledger.AutoPolicy{Action: ledger.AutoRelease, After: time.Minute}, 30)
	if n := p.terminates(); n != 0 {
		t.Fatalf("RunPod got %d terminates on a forged X-Forwarded-For, want none", n)
	}
}

// TestAutoAction_Corroborated: the genuine agent (the pod's ID, its GPU,
// from the address RunPod lists) still gets the automatic terminate,
// once.
func TestAutoAction_Corroborated(t *testing.T) {
	p := newPlatEnv(t, "runpod")
	p.clk.Add(time.Hour)
	p.withAgent()
	p.idleFor(ledger.AutoPolicy{Action: ledger.AutoRelease, After: time.Minute}, 10)
	if n := p.terminates(); n != 1 {
		t.Fatalf("%d terminates through RunPod's API for a corroborated idle agent, want 1", n)
	}
	if r, _ := p.db.RentalByID(context.Background(), p.rid); r.State() != ledger.Released {
		t.Fatalf("box1 is %s in the ledger, want released", r.State())
	}
}

// TestAutoAction_Uncorroborated: an agent whose reports contradict
// nothing but do not name the instance (no instance ID). A stop policy
// on RunPod (which keeps the disk) still stops; a release policy
// terminates nothing and the idle card asks, saying why.
func TestAutoAction_Uncorroborated(t *testing.T) {
	t.Run("StopPolicyStops", func(t *testing.T) {
		p := newPlatEnv(t, "runpod")
		p.clk.Add(time.Hour)
		p.withAgent()
		p.instance = nil
		p.idleFor(ledger.AutoPolicy{Action: ledger.AutoStop, After: time.Minute}, 10)
		if n, m := p.terminates(), p.stops(); n != 0 || m != 1 {
			t.Fatalf("%d terminates and %d stops, want 0 and 1", n, m)
		}
	})
	t.Run("ReleasePolicyAsks", func(t *testing.T) {
		p := newPlatEnv(t, "runpod")
		p.clk.Add(time.Hour)
		p.withAgent()
		p.instance = nil
		p.idleFor(ledger.AutoPolicy{Action: ledger.AutoRelease, After: time.Minute}, 30)
		if n, m := p.terminates(), p.stops(); n != 0 || m != 0 {
			t.Fatalf("%d terminates and %d stops, want none", n, m)
		}
		asked := 0
		for _, m := range p.chat.Sent() {
			if strings.Contains(html.UnescapeString(m.Text), "Not done automatically: the agent reporting for box1 has not shown it runs on RunPod's instance "+podID+" (no instance ID in its reports)") {
				asked++
			}
		}
		if asked != 1 {
			t.Fatalf("the idle card asked %d times saying why, want once; sent:\n%s", asked, sentTexts(p.env))
		}
	})
}

// sentTexts is everything sent, for failure messages.
func sentTexts(e *env) string {
	var b strings.Builder
	for _, m := range e.chat.Sent() {
		b.WriteString("---\n" + m.Text + "\n")
	}
	return b.String()
}

// TestAttack_StaleInstanceKey: on AutoDL, which lists no address, the
// genuine agent named the instance; then someone with the token reports
// idle with the right GPU but no instance ID. The earlier report's ID is
// not lent to the later one: nothing is released through the API.
func TestAttack_StaleInstanceKey(t *testing.T) {
	p := newPlatEnv(t, "autodl")
	p.clk.Add(time.Hour)
	p.withAgent()
	p.beat(wire.VerdictBusy, 0, nil)
	p.tick()
	p.instance = nil
	p.idleFor(ledger.AutoPolicy{Action: ledger.AutoRelease, After: time.Minute}, 20)
	if n, m := p.ad.CallsTo("/api/v1/dev/instance/pro/release"), p.ad.CallsTo("/api/v1/dev/instance/pro/power_off"); n != 0 || m != 0 {
		t.Fatalf("AutoDL got %d releases and %d power-offs, want none", n, m)
	}
}
