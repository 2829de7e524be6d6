package connsync_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/autodl"
	"github.com/gpuledger/gpuledger/connector/autodl/autodlfake"
	"github.com/gpuledger/gpuledger/connector/lambda"
	"github.com/gpuledger/gpuledger/connector/lambda/lambdafake"
	"github.com/gpuledger/gpuledger/connector/runpod"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/connector/vast"
	"github.com/gpuledger/gpuledger/connector/vast/vastfake"
	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/connsync"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

const (
	actRunPodKey = "rpa_TESTKEY0123456789"
	actLambdaKey = "secret_lambda_TESTKEY42"
	actAutoDLKey = "autodl-TESTTOKEN-77"
	actVastKey   = "vastTESTKEY0123456789abcdef"
)

// actEnv is one user with RunPod and Lambda connected to the fakes, a
// real store and an injected clock that the syncer's waits advance.
type actEnv struct {
	t     *testing.T
	db    *sqlite.DB
	clk   *testkit.Clock
	rp    *runpodfake.Server
	lf    *lambdafake.Server
	ad    *autodlfake.Server
	vf    *vastfake.Server
	s     *connsync.Syncer
	v     *vault.Vault
	start time.Time
	// slept are the waits the syncer asked for; onSleep runs after each
	// (the platform changing between two reads).
	slept   []time.Duration
	onSleep func()
}

func newActEnv(t *testing.T, confirm time.Duration) *actEnv {
	t.Helper()
	ctx := context.Background()
	e := &actEnv{t: t, db: testkit.DB(t), clk: testkit.NewClock(time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC))}
	e.db.Now = e.clk.Now
	e.start = e.clk.Now().Add(-2 * time.Hour)
	if _, err := e.db.EnsureUser(ctx, ledger.User{ID: 1, Lang: "en", TZ: "UTC", Settings: ledger.DefaultSettings(), CreatedAt: e.start.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	e.rp = runpodfake.New(actRunPodKey)
	t.Cleanup(e.rp.Close)
	e.lf = lambdafake.New(actLambdaKey)
	t.Cleanup(e.lf.Close)
	e.ad = autodlfake.New(actAutoDLKey)
	t.Cleanup(e.ad.Close)
	e.vf = vastfake.New(actVastKey)
	t.Cleanup(e.vf.Close)
	var err error
	e.v, err = vault.Open(strings.Repeat("5a", 32), "")
	if err != nil {
		t.Fatal(err)
	}
	factory := func(platform, key string) (connector.Client, error) {
		switch platform {
		case "runpod":
			return runpod.New(runpod.Config{APIKey: key, BaseURL: e.rp.RESTURL(), GraphQLURL: e.rp.GraphQLURL()})
		case "lambda":
			return lambda.New(lambda.Config{Key: key, BaseURL: e.lf.URL})
		case "vast":
			return vast.New(vast.Config{APIKey: key, BaseURL: e.vf.Base(), PageGap: time.Millisecond})
		case "autodl":
			return autodl.New(autodl.Config{Token: key, Base: e.ad.URL})
		}
		return nil, errors.New("no fake for " + platform)
	}
	e.s, err = connsync.New(connsync.Config{Store: e.db, Vault: e.v, Platforms: platforms, Clients: factory, Buttons: testButtons(),
		Now: e.clk.Now, ConfirmWithin: confirm, Sleep: func(ctx context.Context, d time.Duration) error {
			e.slept = append(e.slept, d)
			e.clk.Add(d)
			if e.onSleep != nil {
				e.onSleep()
			}
			return ctx.Err()
		}})
	if err != nil {
		t.Fatal(err)
	}
	e.connect("runpod", actRunPodKey)
	e.connect("lambda", actLambdaKey)
	return e
}

func (e *actEnv) connect(platform, key string) {
	e.t.Helper()
	sealed, err := e.v.Seal([]byte(key), vault.ConnectorAD(1, platform))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.db.SaveConnector(context.Background(), ledger.Connector{UserID: 1, Platform: platform, KeyEnc: sealed, Hint: vault.Hint(key), CheckedAt: e.clk.Now()}); err != nil {
		e.t.Fatal(err)
	}
}

// synced logs the rental the sync would have created for a running
// instance id on platform, priced per hour.
func (e *actEnv) synced(platform, id, name, price string, cur ledger.Currency) *ledger.Rental {
	e.t.Helper()
	in := ledger.PlatformInstance{UserID: 1, Platform: platform, PlatformID: id, Status: ledger.PlatformAsked,
		Name: name, GPU: "A100", GPUCount: 1, Price: ledger.MustDecimal(price), PriceOK: true, Currency: cur,
		State: string(connector.Running), StateAt: e.start, FirstSeen: e.start, LastSeen: e.clk.Now()}
	r := ledger.Rental{Name: name, Platform: platform, GPU: "A100", GPUCount: 1, Mode: ledger.PerSecond, Priced: true,
		Price: ledger.Price{Amount: ledger.MustDecimal(price), Unit: ledger.UnitHour}, Currency: cur,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: e.start}}}
	got, _, err := e.db.AddSyncedRental(context.Background(), ledger.Action{UserID: 1, At: e.start}, in, r)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// pod lists a running pod on the RunPod fake and logs its rental.
func (e *actEnv) pod(id, name string) *ledger.Rental {
	e.rp.SetPods(runpodfake.NewPod(id, name, "RUNNING", "0.79", "A100", 1, e.start))
	return e.synced("runpod", id, name, "0.79", ledger.USD)
}

func TestSyncer_Act_Stop(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		e := newActEnv(t, 3*time.Minute)
		r := e.pod("pod-abc123", "train")
		if p, canStop, ok := e.s.CanAct(ctx, r); !ok || !canStop || p != "runpod" {
			t.Fatalf("CanAct = %q, %v, %v; want runpod, true, true", p, canStop, ok)
		}
		// RunPod says when the stop happened: a second after our call.
		stoppedAt := e.clk.Now().Add(time.Second)
		e.onSleep = func() {
			p := e.rp.Pods()[0]
			p["lastStatusChange"] = "Exited by User: " + runpodfake.JSDate(stoppedAt)
			e.rp.SetPods(p)
		}
		res, err := e.s.Act(ctx, r, false)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Confirmed || res.Approximate || !res.At.Equal(stoppedAt) || res.Action != "stop" {
			t.Fatalf("result %+v: want confirmed at the platform's %s", res, stoppedAt)
		}
		if n := e.rp.Calls("POST /v1/pods/pod-abc123/stop"); n != 1 {
			t.Errorf("%d stop calls, want 1", n)
		}
		got, _ := e.db.RentalByID(ctx, r.ID)
		if got.State() != ledger.Stopped || !got.LastEventAt().Equal(stoppedAt) {
			t.Fatalf("ledger: %s at %s; want stopped at %s", got.State(), got.LastEventAt(), stoppedAt)
		}
		ins, _ := e.db.PlatformInstances(ctx, 1, "runpod")
		if ins[0].State != "stopped" || !ins[0].StateAt.Equal(stoppedAt) {
			t.Fatalf("instance state %q at %s: the sync would apply the stop again", ins[0].State, ins[0].StateAt)
		}
		// Stopped is still live (the disk bills): it can be terminated.
		if _, ok := e.s.Live(ctx, got); !ok {
			t.Error("a stopped pod is not live")
		}
	})
	t.Run("NotConfirmed", func(t *testing.T) {
		e := newActEnv(t, 3*time.Minute)
		r := e.pod("pod-abc123", "train")
		// The pod keeps running whatever the stop call said.
		running := runpodfake.NewPod("pod-abc123", "train", "RUNNING", "0.79", "A100", 1, e.start)
		e.onSleep = func() { e.rp.SetPods(running) }
		t0 := e.clk.Now()
		res, err := e.s.Act(ctx, r, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.Confirmed || res.RawState != "RUNNING" || res.State != "running" {
			t.Fatalf("result %+v: want not confirmed, RUNNING", res)
		}
		if took := e.clk.Now().Sub(t0); took > 3*time.Minute {
			t.Errorf("confirming took %s, over the 3 min bound", took)
		}
		if reads := e.rp.Calls("GET /v1/pods"); reads > 10 || reads < 3 {
			t.Errorf("%d reads, want a few and at most 10", reads)
		}
		for i := 1; i < len(e.slept); i++ {
			if e.slept[i] < e.slept[i-1] && i < len(e.slept)-1 {
				t.Errorf("gaps %v: not growing", e.slept)
			}
		}
		got, _ := e.db.RentalByID(ctx, r.ID)
		if got.State() != ledger.Running {
			t.Fatalf("ledger says %s; a stop not confirmed changes nothing", got.State())
		}
	})
	t.Run("RateLimited", func(t *testing.T) {
		e := newActEnv(t, 3*time.Minute)
		r := e.pod("pod-abc123", "train")
		n := 0
		e.onSleep = func() {
			n++
			if n == 1 {
				e.rp.SetFault(runpodfake.Status(429, "application/json", `{"error":"too many"}`, "Retry-After", "20"))
			} else {
				e.rp.SetFault(nil)
			}
		}
		res, err := e.s.Act(ctx, r, false)
		if err != nil || !res.Confirmed {
			t.Fatalf("Act = %+v, %v; want confirmed after the rate limit", res, err)
		}
		if len(e.slept) < 2 || e.slept[1] < 20*time.Second {
			t.Fatalf("waits %v: want the second at least the platform's 20s", e.slept)
		}
	})
	t.Run("ErrNotLive", func(t *testing.T) {
		e := newActEnv(t, 3*time.Minute)
		r := e.pod("pod-abc123", "train")
		if err := e.db.DeleteConnector(ctx, 1, "runpod"); err != nil {
			t.Fatal(err)
		}
		if _, ok := e.s.Live(ctx, r); ok {
			t.Fatal("Live without a connector")
		}
		if _, err := e.s.Act(ctx, r, false); !errors.Is(err, connsync.ErrNotLive) {
			t.Fatalf("Act = %v, want ErrNotLive", err)
		}
		if n := e.rp.Calls("POST /v1/pods/pod-abc123/stop"); n != 0 {
			t.Errorf("%d stop calls without a connector", n)
		}
	})
	t.Run("ErrCallFailed", func(t *testing.T) {
		e := newActEnv(t, 3*time.Minute)
		r := e.pod("pod-abc123", "train")
		e.rp.SetFault(runpodfake.Status(500, "text/html", "<html>oops</html>"))
		_, err := e.s.Act(ctx, r, false)
		if !errors.Is(err, connector.ErrUnavailable) || strings.Contains(err.Error(), actRunPodKey) {
			t.Fatalf("Act = %v; want ErrUnavailable, without the key", err)
		}
		got, _ := e.db.RentalByID(ctx, r.ID)
		if got.State() != ledger.Running {
			t.Fatal("a failed call changed the ledger")
		}
	})
}

func TestSyncer_Act_Vast(t *testing.T) {
	ctx := context.Background()
	e := newActEnv(t, 3*time.Minute)
	e.connect("vast", actVastKey)
	e.vf.SetInstances(vastfake.Instance(312))
	r := e.synced("vast", "312", "v1", "0.8021", ledger.USD)
	res, err := e.s.Act(ctx, r, false)
	if err != nil || !res.Confirmed || res.State != "stopped" {
		t.Fatalf("Act = %+v, %v; want the stop confirmed", res, err)
	}
	if got, _ := e.db.RentalByID(ctx, r.ID); got.State() != ledger.Stopped {
		t.Fatalf("ledger says %s", got.State())
	}
	t.Run("Refused", func(t *testing.T) {
		e.vf.SetInstances(vastfake.Instance(313))
		r := e.synced("vast", "313", "v2", "0.8021", ledger.USD)
		e.vf.RefuseStop(313, "instance is busy")
		_, err := e.s.Act(ctx, r, false)
		if err == nil {
			t.Fatal("a refused stop was not an error")
		}
		if got, _ := e.db.RentalByID(ctx, r.ID); got.State() != ledger.Running {
			t.Fatal("a refused stop changed the ledger")
		}
	})
}

func TestSyncer_Act_Terminate(t *testing.T) {
	ctx := context.Background()
	t.Run("Lambda", func(t *testing.T) {
		e := newActEnv(t, 3*time.Minute)
		e.lf.SetInstances(lambdafake.Instance{ID: "0920582c7ff041399e34823a0be62549", Name: "llm", Status: "active",
			TypeName: "gpu_1x_a100", Description: "1x A100 (40 GB SXM4)", GPUDescription: "A100 (40 GB SXM4)", Price: 129, GPUs: 1})
		r := e.synced("lambda", "0920582c7ff041399e34823a0be62549", "llm", "1.29", ledger.USD)
		if _, canStop, ok := e.s.CanAct(ctx, r); !ok || canStop {
			t.Fatalf("CanAct: canStop %v ok %v; want terminate only", canStop, ok)
		}
		if _, err := e.s.Act(ctx, r, false); !errors.Is(err, connector.ErrNotSupported) {
			t.Fatalf("Stop on Lambda = %v, want ErrNotSupported", err)
		}
		if reqs := e.lf.Requests(); len(reqs) != 0 {
			t.Fatalf("a refused stop sent %d requests", len(reqs))
		}
		res, err := e.s.Act(ctx, r, true)
		if err != nil || !res.Confirmed || res.State != "terminated" {
			t.Fatalf("Terminate = %+v, %v; want confirmed", res, err)
		}
		got, _ := e.db.RentalByID(ctx, r.ID)
		if got.State() != ledger.Released || !res.Approximate {
			t.Fatalf("ledger %s, approximate %v; want released at the poll (Lambda gives no time)", got.State(), res.Approximate)
		}
		if _, ok := e.s.Live(ctx, got); ok {
			t.Error("a terminated instance is still live")
		}
	})
	t.Run("StopNotFoundIsGone", func(t *testing.T) {
		e := newActEnv(t, 3*time.Minute)
		r := e.pod("pod-abc123", "train")
		e.rp.SetPods()
		res, err := e.s.Act(ctx, r, false)
		if err != nil || !res.Confirmed || res.State != "terminated" {
			t.Fatalf("Act = %+v, %v; want a stop of a pod gone from the platform confirmed terminated", res, err)
		}
		if got, _ := e.db.RentalByID(ctx, r.ID); got.State() != ledger.Released {
			t.Fatalf("ledger says %s, want released", got.State())
		}
	})
	t.Run("NotFoundIsGone", func(t *testing.T) {
		e := newActEnv(t, 3*time.Minute)
		r := e.pod("pod-abc123", "train")
		e.rp.SetPods() // deleted on the platform meanwhile
		res, err := e.s.Act(ctx, r, true)
		if err != nil || !res.Confirmed {
			t.Fatalf("Act = %+v, %v; want a pod the platform does not know confirmed gone", res, err)
		}
		if n := e.rp.Calls("GET /v1/pods"); n != 1 {
			t.Errorf("%d reads after not found, want 1", n)
		}
	})
}
