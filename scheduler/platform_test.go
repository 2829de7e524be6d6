package scheduler_test

import (
	"context"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/autodl"
	"github.com/gpuledger/gpuledger/connector/autodl/autodlfake"
	"github.com/gpuledger/gpuledger/connector/lambda"
	"github.com/gpuledger/gpuledger/connector/lambda/lambdafake"
	"github.com/gpuledger/gpuledger/connector/runpod"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/connsync"
	"github.com/gpuledger/gpuledger/events"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

const (
	podID    = "pod-abc123"
	lambdaID = "0920582c7ff041399e34823a0be62549"
	autodlID = "pro-7f3c2a1b9e"
)

// platEnv is env with box1 synced from a connected platform (RunPod or
// Lambda, on their fakes) and a real Syncer as the scheduler's Platforms.
type platEnv struct {
	*env
	rp   *runpodfake.Server
	lf   *lambdafake.Server
	ad   *autodlfake.Server
	sync *connsync.Syncer
	// agents is the syncer's view of the hub's agents.
	agents *lateAgents

	mu      sync.Mutex
	onSleep func() // runs after each of the syncer's waits, which advance the clock
	// onSleepCtx, if set, runs instead with the wait's context.
	onSleepCtx func(ctx context.Context)
}

func (p *platEnv) setOnSleep(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onSleep = f
}

func newPlatEnv(t *testing.T, platform string) *platEnv {
	t.Helper()
	return newPlatEnvHub(t, platform, nil)
}

// newPlatEnvHub is newPlatEnv with the hub's config changed by hubCfg.
func newPlatEnvHub(t *testing.T, platform string, hubCfg func(*hub.Config)) *platEnv {
	t.Helper()
	ctx := context.Background()
	db := testkit.DB(t)
	clk := testkit.NewClock(t0)
	db.Now = clk.Now
	st := ledger.DefaultSettings()
	st.IdleWarn = 30 * time.Minute
	if _, err := db.EnsureUser(ctx, ledger.User{ID: 1, Lang: "en", TZ: "Asia/Shanghai", Settings: st, CreatedAt: t0.Add(-72 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	p := &platEnv{rp: runpodfake.New("rpa_SCHEDKEY0001"), lf: lambdafake.New("secret_SCHEDKEY0002"), ad: autodlfake.New("autodl-SCHEDKEY0003")}
	t.Cleanup(p.rp.Close)
	t.Cleanup(p.lf.Close)
	t.Cleanup(p.ad.Close)
	v, err := vault.Open(strings.Repeat("c3", 32), "")
	if err != nil {
		t.Fatal(err)
	}
	key, id, price, cur := p.rp.Key, podID, "0.79", ledger.USD
	switch platform {
	case "lambda":
		key, id, price = p.lf.Key, lambdaID, "1.29"
		p.lf.SetInstances(lambdafake.Instance{ID: id, Name: "box1", Status: "active", TypeName: "gpu_1x_a100",
			Description: "1x A100 (40 GB SXM4)", GPUDescription: "A100 (40 GB SXM4)", Price: 129, GPUs: 1, IP: "127.0.0.1"})
	case "autodl":
		key, id, price, cur = p.ad.Token, autodlID, "1.88", ledger.CNY
		p.ad.SetInstances(autodlfake.Instance{UUID: id, Name: "box1", Status: "running", GPUSpec: "a100-p", GPUAlias: "A100",
			GPUCount: 1, StartedAt: t0, StatusAt: t0, PaygPrice: 1880})
	default:
		pod := runpodfake.NewPod(id, "box1", "RUNNING", price, "A100", 1, t0)
		pod["publicIp"] = "127.0.0.1" // where the test's heartbeats come from
		p.rp.SetPods(pod)
	}
	sealed, err := v.Seal([]byte(key), vault.ConnectorAD(1, platform))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveConnector(ctx, ledger.Connector{UserID: 1, Platform: platform, KeyEnc: sealed, Hint: vault.Hint(key), CheckedAt: t0}); err != nil {
		t.Fatal(err)
	}
	in := ledger.PlatformInstance{UserID: 1, Platform: platform, PlatformID: id, Status: ledger.PlatformAsked, Name: "box1",
		GPU: "A100", GPUCount: 1, Price: ledger.MustDecimal(price), PriceOK: true, Currency: cur,
		State: string(connector.Running), StateAt: t0, FirstSeen: t0, LastSeen: t0}
	if platform != "autodl" {
		in.Address = netip.MustParseAddr("127.0.0.1")
	}
	r, _, err := db.AddSyncedRental(ctx, ledger.Action{UserID: 1, At: t0}, in, ledger.Rental{Name: "box1", Platform: platform,
		GPU: "A100", GPUCount: 1, Mode: ledger.PerSecond, Priced: true, Currency: cur,
		Price:  ledger.Price{Amount: ledger.MustDecimal(price), Unit: ledger.UnitHour},
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}}})
	if err != nil {
		t.Fatal(err)
	}
	agents := &lateAgents{}
	p.agents = agents
	p.sync, err = connsync.New(connsync.Config{Store: db, Vault: v, Platforms: connector.Registry{runpod.Spec, lambda.Spec, autodl.Spec}, Buttons: testButtons(), Now: clk.Now, Agents: agents,
		Clients: func(platform, key string) (connector.Client, error) {
			switch platform {
			case "lambda":
				return lambda.New(lambda.Config{Key: key, BaseURL: p.lf.URL})
			case "autodl":
				return autodl.New(autodl.Config{Token: key, Base: p.ad.URL})
			}
			return runpod.New(runpod.Config{APIKey: key, BaseURL: p.rp.RESTURL(), GraphQLURL: p.rp.GraphQLURL()})
		},
		Sleep: func(ctx context.Context, d time.Duration) error {
			clk.Add(d)
			p.mu.Lock()
			f, fc := p.onSleep, p.onSleepCtx
			p.mu.Unlock()
			if fc != nil {
				fc(ctx)
			} else if f != nil {
				f()
			}
			return ctx.Err()
		}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: db, clk: clk, chat: &testkit.Sender{}, btn: testButtons(), rid: r.ID}
	t.Cleanup(func() { checkDecisions(t, db, r.ID) })
	bus := events.New(events.Config{})
	hc := hub.Config{Store: db, Now: clk.Now, Events: bus}
	if hubCfg != nil {
		hubCfg(&hc)
	}
	e.hub, err = hub.New(hc)
	if err != nil {
		t.Fatal(err)
	}
	e.s, err = scheduler.New(scheduler.Config{Events: bus, Store: db, Hub: e.hub, Enrolment: e.hub.Enrolment(), Sender: e.chat, Buttons: e.btn,
		Now: clk.Now, Tick: 30 * time.Second, NoChart: true, Platforms: p.sync})
	if err != nil {
		t.Fatal(err)
	}
	agents.set(e.hub)
	e.srv = httptest.NewServer(e.hub.Handler())
	t.Cleanup(e.srv.Close)
	// The agent box1 has is the instance's own: it reports the pod's ID
	// and GPU, from the address the platform lists (the test's loopback).
	e.gpu, e.instance = "NVIDIA A100-SXM4-40GB", &wire.InstanceFacts{Platform: platform, ID: id}
	p.env = e
	return p
}

// lateAgents is the hub for the syncer, which is built before it.
type lateAgents struct {
	mu sync.Mutex
	h  *hub.Hub
}

func (a *lateAgents) set(h *hub.Hub) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.h = h
}

func (a *lateAgents) AgentState(rentalID int64) (ledger.AgentState, bool) {
	a.mu.Lock()
	h := a.h
	a.mu.Unlock()
	if h == nil {
		return ledger.AgentState{}, false
	}
	return h.AgentState(rentalID)
}

// withAgent gives box1 an agent token, as `gpuledger agent` would have.
func (p *platEnv) withAgent() {
	p.t.Helper()
	var err error
	p.token, err = p.hub.Tokens().Issue(context.Background(), 1, "box1")
	if err != nil {
		p.t.Fatal(err)
	}
}

// stopAt makes RunPod's list say the pod stopped at `at`, from the
// syncer's first wait on (the platform took the stop).
func (p *platEnv) stopAt(at time.Time) {
	p.setOnSleep(func() {
		pods := p.rp.Pods()
		if len(pods) == 1 && pods[0]["desiredStatus"] == "EXITED" {
			pods[0]["lastStatusChange"] = "Exited by User: " + runpodfake.JSDate(at)
			p.rp.SetPods(pods[0])
		}
	})
}

func (p *platEnv) stops() int { return p.rp.Calls("POST /v1/pods/" + podID + "/stop") }

// settle waits for the actions in flight and returns the last message.
func (p *platEnv) settle() chat0 {
	p.t.Helper()
	p.s.WaitActions()
	all := p.chat.Sent()
	if len(all) == 0 {
		p.t.Fatal("nothing was sent")
	}
	return chat0{all[len(all)-1].Text, all[len(all)-1].EditMessageID}
}

type chat0 struct {
	text string
	edit int
}

func TestRelease_API(t *testing.T) {
	ctx := context.Background()
	t.Run("StopsWithoutAgent", func(t *testing.T) {
		p := newPlatEnv(t, "runpod")
		p.clk.Add(2 * time.Hour)
		stoppedAt := p.clk.Now().Add(time.Second)
		p.stopAt(stoppedAt)
		toast := p.pressAs(1, "", scheduler.ActRelease, itoa(p.rid), 0)
		if toast != "Stopping on RunPod…" {
			t.Fatalf("toast %q, want the press answered at once", toast)
		}
		last := p.settle()
		if p.stops() != 1 {
			t.Fatalf("%d stop calls, want 1", p.stops())
		}
		r, _ := p.db.RentalByID(ctx, p.rid)
		if r.State() != ledger.Stopped || !r.LastEventAt().Equal(stoppedAt) {
			t.Fatalf("ledger: %s at %s; want stopped at RunPod's %s", r.State(), r.LastEventAt(), stoppedAt)
		}
		if want := "Stopped <b>box1</b> on RunPod at 12:00. Its disk is kept and still bills storage: /release box1 terminates it there."; !strings.Contains(last.text, want) || last.edit == 0 {
			t.Fatalf("card %+v; want an edit saying %q", last, want)
		}
		// A second tap on a stopped pod sends nothing.
		if toast := p.pressAs(1, "", scheduler.ActRelease, itoa(p.rid), 0); !strings.Contains(toast, "already stopped on RunPod") {
			t.Fatalf("second tap: %q", toast)
		}
		if p.settle(); p.stops() != 1 {
			t.Fatalf("%d stop calls after a second tap, want 1", p.stops())
		}
	})
	t.Run("NotConfirmed", func(t *testing.T) {
		p := newPlatEnv(t, "runpod")
		p.clk.Add(2 * time.Hour)
		running := runpodfake.NewPod(podID, "box1", "RUNNING", "0.79", "A100", 1, t0)
		p.setOnSleep(func() { p.rp.SetPods(running) })
		began := p.clk.Now()
		p.pressAs(1, "", scheduler.ActRelease, itoa(p.rid), 0)
		last := p.settle()
		if !strings.Contains(last.text, "release not confirmed: RunPod still lists it RUNNING after 3m") {
			t.Fatalf("card %q; want release not confirmed after the 3 min bound", last.text)
		}
		if took := p.clk.Now().Sub(began); took > 3*time.Minute {
			t.Fatalf("confirming took %s, over the bound", took)
		}
		if r, _ := p.db.RentalByID(ctx, p.rid); r.State() != ledger.Running {
			t.Fatal("a stop not confirmed changed the ledger")
		}
	})
	t.Run("TwoPressesOneAction", func(t *testing.T) {
		p := newPlatEnv(t, "runpod")
		p.clk.Add(2 * time.Hour)
		var during string
		p.setOnSleep(func() {
			if during == "" {
				during = p.pressAs(1, "", scheduler.ActRelease, itoa(p.rid), 0)
			}
		})
		key := "tg:update:same"
		p.pressAs(1, key, scheduler.ActRelease, itoa(p.rid), 0)
		p.pressAs(1, key, scheduler.ActRelease, itoa(p.rid), 0) // redelivered
		p.settle()
		if p.stops() != 1 {
			t.Fatalf("%d stop calls, want 1", p.stops())
		}
		if !strings.Contains(during, "already acting on RunPod") {
			t.Fatalf("a press while it ran: %q", during)
		}
	})
	t.Run("BusyAgentRefused", func(t *testing.T) {
		p := newPlatEnv(t, "runpod")
		p.withAgent()
		p.clk.Add(2 * time.Hour)
		p.beat(wire.VerdictBusy, 0, nil)
		toast := p.pressAs(1, "", scheduler.ActRelease, itoa(p.rid), 0)
		p.s.WaitActions()
		if p.stops() != 0 || !strings.Contains(toast, "busy") {
			t.Fatalf("toast %q, %d stops; want a busy machine refused", toast, p.stops())
		}
	})
	t.Run("AutoDLStops", func(t *testing.T) {
		// Release now on a synced AutoDL rental without an agent: one
		// power_off through AutoDL's API, the platform re-read until it
		// lists the instance shut down, the ledger stopped after the tap.
		p := newPlatEnv(t, "autodl")
		p.clk.Add(2 * time.Hour)
		tapped := p.clk.Now()
		if toast := p.pressAs(1, "", scheduler.ActRelease, itoa(p.rid), 0); toast != "Stopping on AutoDL…" {
			t.Fatalf("toast %q, want the press answered at once", toast)
		}
		last := p.settle()
		if n := p.ad.CallsTo("/api/v1/dev/instance/pro/power_off"); n != 1 {
			t.Fatalf("%d power_off calls, want 1", n)
		}
		if st := p.ad.Status(autodlID); st != "shutdown" {
			t.Fatalf("AutoDL lists the instance %q, want shutdown", st)
		}
		if n := p.ad.CallsTo("/api/v1/dev/instance/pro/release"); n != 0 {
			t.Fatalf("%d release calls: Release now must stop, not release, where the platform can stop", n)
		}
		r, _ := p.db.RentalByID(ctx, p.rid)
		if r.State() != ledger.Stopped || r.LastEventAt().Before(tapped) {
			t.Fatalf("ledger: %s at %s; want stopped at or after the tap (%s)", r.State(), r.LastEventAt(), tapped)
		}
		if !strings.Contains(last.text, "Stopped <b>box1</b> on AutoDL") || last.edit == 0 {
			t.Fatalf("card %+v; want an edit saying it stopped on AutoDL", last)
		}
	})
	t.Run("LambdaTerminates", func(t *testing.T) {
		p := newPlatEnv(t, "lambda")
		p.clk.Add(2 * time.Hour)
		if toast := p.pressAs(1, "", scheduler.ActRelease, itoa(p.rid), 0); toast != "Terminating on Lambda…" {
			t.Fatalf("toast %q", toast)
		}
		last := p.settle()
		r, _ := p.db.RentalByID(ctx, p.rid)
		if r.State() != ledger.Released || !strings.Contains(last.text, "Terminated <b>box1</b> on Lambda") {
			t.Fatalf("ledger %s, card %q; want terminated and released", r.State(), last.text)
		}
		terminated := false
		for _, rq := range p.lf.Requests() {
			terminated = terminated || strings.Contains(rq.Path, "terminate")
		}
		if !terminated {
			t.Fatal("no terminate call reached Lambda")
		}
	})
}

func TestAutoAction_API(t *testing.T) {
	ctx := context.Background()
	// idle runs box1 idle past its warning and grace: the automatic stop
	// goes through the platform, not an agent order.
	idle := func(t *testing.T, p *platEnv, pol ledger.AutoPolicy, busyAfterWarning bool) {
		t.Helper()
		if _, err := p.db.SetAutoPolicy(ctx, 1, "box1", pol); err != nil {
			t.Fatal(err)
		}
		p.clk.Add(time.Hour)
		p.beat(wire.VerdictIdle, 31*time.Minute, nil)
		p.tick()
		for range 12 {
			p.clk.Add(15 * time.Minute)
			if busyAfterWarning {
				p.beat(wire.VerdictBusy, 0, nil)
			} else {
				p.beat(wire.VerdictIdle, 0, nil)
			}
			p.tick()
			p.s.WaitActions()
			if p.stops() > 0 {
				return
			}
		}
	}
	t.Run("Stops", func(t *testing.T) {
		p := newPlatEnv(t, "runpod")
		p.withAgent()
		idle(t, p, ledger.AutoPolicy{Action: ledger.AutoStop, After: 30 * time.Minute}, false)
		if p.stops() != 1 {
			t.Fatalf("%d stops through the API, want 1", p.stops())
		}
		if _, ok := p.hub.OpenOrder(p.rid); ok {
			t.Fatal("an agent order was issued besides")
		}
		if r, _ := p.db.RentalByID(ctx, p.rid); r.State() != ledger.Stopped {
			t.Fatalf("ledger says %s", r.State())
		}
	})
	t.Run("NotConfirmedNotRepeated", func(t *testing.T) {
		p := newPlatEnv(t, "runpod")
		p.withAgent()
		running := runpodfake.NewPod(podID, "box1", "RUNNING", "0.79", "A100", 1, t0)
		p.setOnSleep(func() { p.rp.SetPods(running) })
		idle(t, p, ledger.AutoPolicy{Action: ledger.AutoStop, After: 30 * time.Minute}, false)
		for range 6 {
			p.clk.Add(time.Minute)
			p.beat(wire.VerdictIdle, 0, nil)
			p.tick()
			p.s.WaitActions()
		}
		if p.stops() != 1 {
			t.Fatalf("%d automatic stops after one was not confirmed, want 1", p.stops())
		}
	})
	t.Run("BusyAgentNothing", func(t *testing.T) {
		p := newPlatEnv(t, "runpod")
		p.withAgent()
		idle(t, p, ledger.AutoPolicy{Action: ledger.AutoStop, After: 30 * time.Minute}, true)
		if p.stops() != 0 {
			t.Fatalf("%d stops of a busy machine", p.stops())
		}
	})
	t.Run("LambdaStopPolicyTellsOnce", func(t *testing.T) {
		p := newPlatEnv(t, "lambda")
		p.withAgent()
		idle(t, p, ledger.AutoPolicy{Action: ledger.AutoStop, After: 30 * time.Minute}, false)
		told := 0
		for _, m := range p.chat.Sent() {
			if strings.Contains(m.Text, "Lambda can only terminate instances") {
				told++
			}
		}
		for _, rq := range p.lf.Requests() {
			if strings.Contains(rq.Path, "terminate") {
				t.Fatal("a stop policy terminated on Lambda")
			}
		}
		if _, ok := p.hub.OpenOrder(p.rid); told != 1 || ok {
			t.Fatalf("told %d times (want 1), agent order %v (want none)", told, ok)
		}
	})
}

func TestSilentAlert_PStop(t *testing.T) {
	ctx := context.Background()
	p := newPlatEnv(t, "runpod")
	p.withAgent()
	p.clk.Add(time.Hour)
	p.beat(wire.VerdictBusy, 0, nil)
	p.clk.Add(15 * time.Minute)
	p.tick()
	var msgs []chat.Outgoing
	for _, m := range p.chat.NewMessages() {
		if len(m.Buttons) > 0 { // the alert (a GPU mismatch line comes too: the fake agent has a 4090)
			msgs = append(msgs, m)
		}
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "silent") && !strings.Contains(msgs[0].Text, "no heartbeat") {
		t.Fatalf("messages %+v, want the silent alert", msgs)
	}
	action, payload := buttonData(t, msgs[0], "Stop on RunPod")
	if action != scheduler.ActPStop {
		t.Fatalf("button action %q", action)
	}
	p.stopAt(p.clk.Now())
	if toast := p.pressAs(1, "", action, payload, p.msgID(msgs[0])); toast != "Stopping on RunPod…" {
		t.Fatalf("toast %q", toast)
	}
	last := p.settle()
	if r, _ := p.db.RentalByID(ctx, p.rid); r.State() != ledger.Stopped || p.stops() != 1 {
		t.Fatalf("ledger %s, %d stops; want the silent rental stopped", r.State(), p.stops())
	}
	if last.edit != p.msgID(msgs[0]) || !strings.Contains(last.text, "Stopped <b>box1</b> on RunPod") {
		t.Fatalf("outcome %+v; want the alert edited", last)
	}
}

func TestPTerm(t *testing.T) {
	ctx := context.Background()
	p := newPlatEnv(t, "runpod")
	p.clk.Add(time.Hour)
	// Another user's press on this rental does nothing.
	if _, err := p.db.EnsureUser(ctx, ledger.User{ID: 2, Lang: "en", TZ: "UTC", Settings: ledger.DefaultSettings(), CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	p.pressAs(2, "", scheduler.ActPTerm, itoa(p.rid), 77)
	if p.s.WaitActions(); len(p.rp.Pods()) != 1 || len(p.chat.Sent()) != 0 {
		t.Fatalf("another user's press acted: pods %d, sent %d", len(p.rp.Pods()), len(p.chat.Sent()))
	}
	// The bot's /release card: message 77, not a scheduler card.
	if toast := p.pressAs(1, "", scheduler.ActPTerm, itoa(p.rid), 77); toast != "Terminating on RunPod…" {
		t.Fatalf("toast %q", toast)
	}
	last := p.settle()
	if r, _ := p.db.RentalByID(ctx, p.rid); r.State() != ledger.Released {
		t.Fatalf("ledger says %s, want released", r.State())
	}
	if last.edit != 77 || !strings.Contains(last.text, "Terminated <b>box1</b> on RunPod") {
		t.Fatalf("outcome %+v; want message 77 edited", last)
	}
	if len(p.rp.Pods()) != 0 {
		t.Fatal("the pod is still on RunPod")
	}
}

func TestSummary_Platforms(t *testing.T) {
	ctx := context.Background()
	p := newPlatEnv(t, "runpod")
	// 22:01 in Shanghai: the summary is as of 22:00, box1 12h at $0.79/h.
	p.clk.Add(12*time.Hour + time.Minute)
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	p.rp.SetBilling(map[string]any{"podId": podID, "time": day.Format(time.RFC3339), "amount": "12.00", "timeBilledMs": (12 * time.Hour).Milliseconds()})
	if _, err := p.db.RecordPlatformBalance(ctx, ledger.BalanceRecord{UserID: 1, Platform: "runpod", Amount: ledger.MustDecimal("50"), Currency: ledger.USD, At: p.clk.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := p.s.Summaries(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := p.chat.NewMessages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want the summary", len(msgs))
	}
	for _, want := range []string{"RunPod: ledger $9.48, platform $12.00, drift +$2.52", "(from RunPod's API, 22:00)"} {
		if !strings.Contains(msgs[0].Text, want) {
			t.Errorf("summary lacks %q:\n%s", want, msgs[0].Text)
		}
	}
}

func TestRun_ShutdownEndsActions(t *testing.T) {
	p := newPlatEnv(t, "runpod")
	p.clk.Add(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	p.mu.Lock()
	p.onSleepCtx = func(actx context.Context) {
		cancel() // the server stops while RunPod is being re-read
		<-actx.Done()
	}
	p.mu.Unlock()
	started := make(chan struct{})
	go func() {
		close(started)
		done <- p.s.Run(ctx, nil) // the Config's Sender
	}()
	<-started
	p.pressAs(1, "", scheduler.ActRelease, itoa(p.rid), 0)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Run returned: the action was waited for, and said what happened.
	all := p.chat.Sent()
	if last := all[len(all)-1].Text; !strings.Contains(last, "the server stopped while acting on RunPod") {
		t.Fatalf("last message %q", last)
	}
}
