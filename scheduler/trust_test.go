package scheduler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/events"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
	"github.com/gpuledger/gpuledger/view"
)

// restart builds the hub and the scheduler again on the same database,
// as a restarted server would (what they kept in memory is gone).
func (p *platEnv) restart() {
	p.t.Helper()
	bus := events.New(events.Config{})
	h, err := hub.New(hub.Config{Store: p.db, Now: p.clk.Now, Events: bus})
	if err != nil {
		p.t.Fatal(err)
	}
	if err := h.Load(context.Background()); err != nil {
		p.t.Fatal(err)
	}
	btn := testButtons()
	s, err := scheduler.New(scheduler.Config{Events: bus, Store: p.db, Hub: h, Enrolment: h.Enrolment(), Sender: p.chat, Buttons: btn,
		Now: p.clk.Now, Tick: 30 * time.Second, NoChart: true, Platforms: p.sync})
	if err != nil {
		p.t.Fatal(err)
	}
	p.s.WaitActions()
	p.hub, p.s, p.btn = h, s, btn
	p.srv.Close()
	p.srv = httptest.NewServer(h.Handler())
	p.t.Cleanup(p.srv.Close)
	p.rebindAgents(h)
}

// rebindAgents points the syncer's view of the agents at h.
func (p *platEnv) rebindAgents(h *hub.Hub) { p.agents.set(h) }

// postRaw posts one heartbeat with the verdict and returns the status.
func (p *platEnv) postRaw(v wire.Verdict) (int, string) {
	p.t.Helper()
	now := p.clk.Now()
	b, _ := json.Marshal(wire.HeartbeatRequest{Version: wire.Version, Seq: 999, BootID: "b1", Verdict: v, Samples: 1,
		WindowStart: now.Add(-30 * time.Second), WindowEnd: now, SentAt: now})
	req, _ := http.NewRequest(http.MethodPost, p.srv.URL+wire.PathHeartbeat, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+p.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// cards returns the messages that hold text (HTML unescaped).
func cards(e *env, text string) []chat.Outgoing {
	var out []chat.Outgoing
	for _, m := range e.chat.Sent() {
		if strings.Contains(html.UnescapeString(m.Text), text) && m.EditMessageID == 0 {
			out = append(out, m)
		}
	}
	return out
}

const mismatchCard = "the agent reporting for it contradicts RunPod's list"

// TestTrust_MismatchOneCard: a stranger's reports contradict RunPod's
// list at every heartbeat for an hour, across a restart: one card says
// what disagreed, and nothing acts through the API (a stop policy
// neither, though RunPod keeps the disk).
func TestTrust_MismatchOneCard(t *testing.T) {
	p := newPlatEnv(t, "runpod")
	p.clk.Add(time.Hour)
	p.elsewhere()
	p.withAgent()
	p.gpu = "NVIDIA GeForce RTX 4090"
	p.idleFor(ledger.AutoPolicy{Action: ledger.AutoStop, After: time.Minute}, 20)
	p.restart()
	for range 20 {
		p.clk.Add(time.Minute)
		p.beat(wire.VerdictIdle, 0, nil)
		p.tick()
		p.s.WaitActions()
	}
	got := cards(p.env, mismatchCard)
	if len(got) != 1 {
		t.Fatalf("%d mismatch cards, want 1; sent:\n%s", len(got), sentTexts(p.env))
	}
	text := html.UnescapeString(got[0].Text)
	for _, want := range []string{"The agent said: NVIDIA GeForce RTX 4090, address 127.0.0.1",
		"RunPod lists: A100, address 198.51.100.7"} {
		if !strings.Contains(text, want) {
			t.Errorf("the card does not say %q:\n%s", want, text)
		}
	}
	if len(got[0].Buttons) == 0 {
		t.Fatal("the card has no buttons")
	}
	if n, m := p.terminates(), p.stops(); n != 0 || m != 0 {
		t.Fatalf("%d terminates and %d stops while the mismatch stands, want none", n, m)
	}
	tr, ok, err := p.db.AgentTrust(context.Background(), p.rid)
	if err != nil || !ok || tr.State != ledger.TrustAsked {
		t.Fatalf("stored answer %+v, %v, %v; want asked", tr, ok, err)
	}
}

// TestTrust_Answers: the card's three answers.
func TestTrust_Answers(t *testing.T) {
	ctx := context.Background()
	// mismatched runs box1 idle under a release policy with its agent
	// reporting from the loopback while RunPod lists 198.51.100.7 (say,
	// a host behind NAT), until the card is sent.
	mismatched := func(t *testing.T) (*platEnv, int) {
		p := newPlatEnv(t, "runpod")
		p.clk.Add(time.Hour)
		p.elsewhere()
		p.withAgent()
		p.idleFor(ledger.AutoPolicy{Action: ledger.AutoRelease, After: time.Minute}, 3)
		got := cards(p.env, mismatchCard)
		if len(got) != 1 {
			t.Fatalf("%d mismatch cards, want 1", len(got))
		}
		tr, _, _ := p.db.AgentTrust(ctx, p.rid)
		return p, tr.MessageID
	}
	t.Run("TrustActsAndAsksAgainOnAnother", func(t *testing.T) {
		p, msg := mismatched(t)
		p.press(scheduler.ActTrust, msg)
		if tr, _, _ := p.db.AgentTrust(ctx, p.rid); tr.State != ledger.TrustTrusted {
			t.Fatalf("state %s after Trust, want trusted", tr.State)
		}
		// Another disagreement (the GPU now) asks again, and acts not.
		p.gpu = "NVIDIA GeForce RTX 4090"
		p.clk.Add(time.Minute)
		p.beat(wire.VerdictIdle, 0, nil)
		p.tick()
		p.s.WaitActions()
		if got := cards(p.env, mismatchCard); len(got) != 2 || p.terminates() != 0 {
			t.Fatalf("%d mismatch cards and %d terminates after a new disagreement, want 2 and 0", len(got), p.terminates())
		}
		tr, _, _ := p.db.AgentTrust(ctx, p.rid)
		p.press(scheduler.ActTrust, tr.MessageID)
		// Trusted again: the next idle streak's automatic release goes
		// through the API.
		p.beat(wire.VerdictBusy, 0, nil)
		p.tick()
		p.clk.Add(time.Hour)
		p.idleFor(ledger.AutoPolicy{Action: ledger.AutoRelease, After: time.Minute}, 10)
		if p.terminates() != 1 {
			t.Fatalf("%d terminates for a trusted agent, want 1; sent:\n%s", p.terminates(), sentTexts(p.env))
		}
	})
	t.Run("KeepOff", func(t *testing.T) {
		p, msg := mismatched(t)
		p.press(scheduler.ActTrustOff, msg)
		for range 10 {
			p.clk.Add(time.Minute)
			p.beat(wire.VerdictIdle, 0, nil)
			p.tick()
			p.s.WaitActions()
		}
		if tr, _, _ := p.db.AgentTrust(ctx, p.rid); tr.State != ledger.TrustOff || p.terminates() != 0 {
			t.Fatalf("state %s and %d terminates after Keep off, want off and 0", tr.State, p.terminates())
		}
		if got := cards(p.env, mismatchCard); len(got) != 1 {
			t.Fatalf("%d mismatch cards, want 1", len(got))
		}
		ds, err := p.db.Decisions(ctx, p.rid, 50)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, d := range ds {
			found = found || strings.Contains(d.Summary, "Keep automation off pressed")
		}
		if !found {
			t.Fatal("the answer is not in the decision log")
		}
	})
	t.Run("NewTokenRevokes", func(t *testing.T) {
		p, msg := mismatched(t)
		p.press(scheduler.ActTrustNew, msg)
		code, _ := p.postRaw(wire.VerdictIdle)
		if code != 401 {
			t.Fatalf("the old token's heartbeat: %d, want 401", code)
		}
		// The new agent (from /agent box1) is checked afresh: no card for
		// the old token's reports, and its own matching ones act.
		p.withAgent()
		p.listAt("127.0.0.1") // the new agent runs on the pod
		p.beat(wire.VerdictBusy, 0, nil)
		p.tick()
		p.clk.Add(time.Hour)
		p.idleFor(ledger.AutoPolicy{Action: ledger.AutoRelease, After: time.Minute}, 10)
		if got := cards(p.env, mismatchCard); len(got) != 1 || p.terminates() != 1 {
			t.Fatalf("%d mismatch cards and %d terminates with the new agent, want 1 and 1", len(got), p.terminates())
		}
	})
}

// TestTrust_TrustedProxy: behind a proxy the operator names
// (GPULEDGER_TRUSTED_PROXIES), the X-Forwarded-For address is where the
// heartbeat came from, and it corroborates the agent.
func TestTrust_TrustedProxy(t *testing.T) {
	p := newPlatEnvHub(t, "runpod", func(c *hub.Config) { c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} })
	p.clk.Add(time.Hour)
	p.elsewhere()
	p.withAgent()
	p.xff = "198.51.100.7"
	p.idleFor(ledger.AutoPolicy{Action: ledger.AutoRelease, After: time.Minute}, 10)
	if n := p.terminates(); n != 1 {
		t.Fatalf("%d terminates for the agent behind a trusted proxy, want 1; sent:\n%s", n, sentTexts(p.env))
	}
}

// TestAutoWayText: what /autorelease and /why say will happen, as the
// agent's reports change (the sync's AutoWay, worded by view.WayText).
func TestAutoWayText(t *testing.T) {
	ctx := context.Background()
	p := newPlatEnv(t, "runpod")
	p.clk.Add(time.Hour)
	p.withAgent()
	if _, err := p.db.SetAutoPolicy(ctx, 1, "box1", ledger.AutoPolicy{Action: ledger.AutoRelease, After: time.Minute}); err != nil {
		t.Fatal(err)
	}
	say := func() string {
		t.Helper()
		r, err := p.db.RentalByID(ctx, p.rid)
		if err != nil {
			t.Fatal(err)
		}
		pol, err := p.db.AutoPolicy(ctx, p.rid)
		if err != nil {
			t.Fatal(err)
		}
		return view.WayText("en", r.Name, p.sync.AutoWay(ctx, r, pol.Action), true)
	}
	if got := say(); !strings.Contains(got, "asks you first") || !strings.Contains(got, "no agent has shown it runs on RunPod's instance "+podID) {
		t.Fatalf("before any heartbeat: %q", got)
	}
	p.beat(wire.VerdictBusy, 0, nil)
	if got := say(); !strings.Contains(got, "the server terminates RunPod's instance "+podID+" through RunPod's API") {
		t.Fatalf("corroborated: %q", got)
	}
	p.instance = nil
	p.beat(wire.VerdictBusy, 0, nil)
	if got := say(); !strings.Contains(got, "asks you first") || !strings.Contains(got, "(no instance ID in its reports)") {
		t.Fatalf("no instance ID: %q", got)
	}
	if _, err := p.db.SetAutoPolicy(ctx, 1, "box1", ledger.AutoPolicy{Action: ledger.AutoStop, After: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if got := say(); !strings.Contains(got, "a stop keeps the disk, so it is done although") {
		t.Fatalf("stop, no instance ID: %q", got)
	}
}

// TestTrust_NoPolicyNoCard: with nothing automatic to turn off (notify),
// a mismatch brings no card; setting /autorelease release brings it at
// the next check.
func TestTrust_NoPolicyNoCard(t *testing.T) {
	p := newPlatEnv(t, "runpod")
	p.clk.Add(time.Hour)
	p.elsewhere()
	p.withAgent()
	p.idleFor(ledger.AutoPolicy{Action: ledger.AutoNotify}, 5)
	if got := cards(p.env, mismatchCard); len(got) != 0 {
		t.Fatalf("%d mismatch cards under notify, want none", len(got))
	}
	p.idleFor(ledger.AutoPolicy{Action: ledger.AutoRelease, After: time.Minute}, 1)
	if got := cards(p.env, mismatchCard); len(got) != 1 || p.terminates() != 0 {
		t.Fatalf("%d mismatch cards and %d terminates after release was chosen, want 1 and 0", len(got), p.terminates())
	}
}
