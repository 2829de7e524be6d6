package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

var t0 = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

// recorder is the hub's Events: it records what is published, when it is
// (the hub publishes before it answers the request that made the event).
type recorder struct {
	mu     sync.Mutex
	events []string
	boots  []ledger.Boot // HostBooted's, in order
	shuts  []time.Time   // HostShutdown's times, in order
	// BenchReported's and WorkStarted's, in order, kept apart from
	// events so the tests of other events see none of them.
	benches []ledger.BenchReported
	works   []ledger.WorkStarted
}

func (r *recorder) Publish(_ context.Context, ev ledger.AgentEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s string
	switch e := ev.(type) {
	case ledger.JobFinished:
		s = "job:" + e.Rental.Name
	case ledger.GPUMismatched:
		s = "mismatch:" + e.Rental.Name
	case ledger.ReportedAfterRelease:
		s = "after-release:" + e.Rental.Name
	case ledger.OrderUpdated:
		s = "order:" + string(e.Order.State) + ":" + string(e.Order.Outcome)
	case ledger.InstanceAnnounced:
		s = "announced:" + e.Instance.Key
	case ledger.InstanceReturned:
		s = "returned:" + e.Instance.Key + ":" + e.Rental.Name
	case ledger.HostShutdown:
		r.shuts = append(r.shuts, e.At)
		s = fmt.Sprintf("shutdown:%s:%v", e.Rental.Name, e.Host)
	case ledger.HostBooted:
		r.boots = append(r.boots, e.Boot)
		s = fmt.Sprintf("booted:%s:%v", e.Rental.Name, !e.Boot.ShutdownAt.IsZero())
	case ledger.BenchReported:
		r.benches = append(r.benches, e)
		return nil
	case ledger.WorkStarted:
		r.works = append(r.works, e)
		return nil
	default:
		return fmt.Errorf("recorder: unknown event %T", ev)
	}
	r.events = append(r.events, s)
	return nil
}
func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

type env struct {
	t     *testing.T
	db    *sqlite.DB
	clk   *testkit.Clock
	hub   *hub.Hub
	srv   *httptest.Server
	rec   *recorder
	rid   int64
	token string
}

func newEnv(t *testing.T, cfg hub.Config) *env {
	t.Helper()
	ctx := context.Background()
	db := testkit.DB(t)
	clk := testkit.NewClock(t0)
	db.Now = clk.Now
	if _, err := db.EnsureUser(ctx, ledger.User{ID: 1, TZ: "Asia/Shanghai"}); err != nil {
		t.Fatal(err)
	}
	r, err := db.CreateRental(ctx, ledger.Action{UserID: 1, At: t0}, ledger.Rental{
		Name: "box1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond,
		Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: db, clk: clk, rec: &recorder{}, rid: r.ID}
	e.start(cfg)
	tok, err := e.hub.Tokens().Issue(ctx, 1, "box1")
	if err != nil {
		t.Fatal(err)
	}
	e.token = tok
	return e
}

func (e *env) start(cfg hub.Config) {
	cfg.Store, cfg.Now = e.db, e.clk.Now
	if cfg.Events == nil {
		cfg.Events = e.rec
	}
	h, err := hub.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := h.Load(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.hub = h
	if e.srv != nil {
		e.srv.Close()
	}
	e.srv = httptest.NewServer(h.Handler())
	e.t.Cleanup(e.srv.Close)
}

func (e *env) post(path, token string, body []byte) (int, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

var seq uint64

func hb(verdict wire.Verdict, idleSeconds int64) wire.HeartbeatRequest {
	seq++
	h := wire.HeartbeatRequest{Version: wire.Version, Seq: seq, BootID: "boot1", Verdict: verdict,
		WindowStart: t0, WindowEnd: t0.Add(30 * time.Second), Samples: 6,
		Host:       wire.HostFacts{GPUSource: "simulate", GPUs: []wire.GPUFact{{Name: "NVIDIA GeForce RTX 4090", UUID: "GPU-1"}}},
		CanRelease: true}
	u := 90.0
	switch verdict {
	case wire.VerdictBusy:
		h.BusySamples = 6
	case wire.VerdictIdle:
		h.IdleSamples, u = 6, 0
		h.IdleSeconds = idleSeconds
	default:
		h.UnknownSamples = 6
	}
	h.GPUs = []wire.GPUSummary{{Index: 0, UUID: "GPU-1", Samples: 6, UtilMean: &u, UtilMax: &u}}
	return h
}

func (e *env) beat(token string, h wire.HeartbeatRequest) (int, wire.HeartbeatResponse) {
	e.t.Helper()
	b, _ := json.Marshal(h)
	code, body := e.post(wire.PathHeartbeat, token, b)
	var resp wire.HeartbeatResponse
	if code == http.StatusOK {
		if err := json.Unmarshal(body, &resp); err != nil {
			e.t.Fatalf("response %s: %v", body, err)
		}
	}
	return code, resp
}

func (e *env) result(token string, r wire.OrderResult) int {
	e.t.Helper()
	b, _ := json.Marshal(r)
	code, _ := e.post(wire.PathOrderResult(r.OrderID), token, b)
	return code
}

func (e *env) rental() *ledger.Rental {
	e.t.Helper()
	r, err := e.db.RentalByID(context.Background(), e.rid)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func TestHeartbeat_OK(t *testing.T) {
	e := newEnv(t, hub.Config{})
	code, resp := e.beat(e.token, hb(wire.VerdictBusy, 0))
	if code != http.StatusOK || resp.Rental != "box1" {
		t.Fatalf("heartbeat = %d %+v", code, resp)
	}
	if err := e.hub.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	states, err := e.db.AgentStates(context.Background())
	if err != nil || len(states) != 1 || states[0].Verdict != ledger.VerdictBusy || !states[0].LastSeen.Equal(t0) {
		t.Fatalf("states = %+v, %v", states, err)
	}
	beats, _ := e.db.Beats(context.Background(), e.rid, t0, t0.Add(time.Hour))
	if len(beats) != 1 || beats[0].BusyS != 30 || beats[0].UtilMean != 900 {
		t.Fatalf("beats = %+v", beats)
	}
}

func TestHeartbeat_Refused(t *testing.T) {
	e := newEnv(t, hub.Config{})
	good, _ := json.Marshal(hb(wire.VerdictIdle, 600))
	big := append([]byte(`{"version":"v1","reasons":["`), bytes.Repeat([]byte("x"), wire.MaxBodyBytes)...)
	big = append(big, `"]}`...)
	badVerdict, _ := json.Marshal(func() wire.HeartbeatRequest { h := hb(wire.VerdictBusy, 0); h.Verdict = "asleep"; return h }())
	crowd, _ := json.Marshal(func() wire.HeartbeatRequest {
		h := hb(wire.VerdictIdle, 600)
		h.Sessions = make([]wire.Session, wire.MaxSessions+1)
		return h
	}())
	tests := []struct {
		name  string
		token string
		body  []byte
		want  int
	}{
		{"ErrNoToken", "", good, http.StatusUnauthorized},
		{"ErrUnknownToken", "forged-token", good, http.StatusUnauthorized},
		{"ErrTooLarge", e.token, big, http.StatusRequestEntityTooLarge},
		{"ErrMalformed", e.token, []byte(`{"version":`), http.StatusBadRequest},
		{"ErrBadVerdict", e.token, badVerdict, http.StatusBadRequest},
		{"ErrTooManySessions", e.token, crowd, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, _ := e.post(wire.PathHeartbeat, tt.token, tt.body); code != tt.want {
				t.Fatalf("status = %d, want %d", code, tt.want)
			}
			e.hub.Flush(context.Background())
			if _, seen := e.hub.AgentState(e.rid); seen {
				t.Fatal("a refused heartbeat changed the agent's state")
			}
			if st, _ := e.db.AgentStates(context.Background()); len(st) != 0 {
				t.Fatal("a refused heartbeat was stored")
			}
			if r := e.rental(); len(r.Idle) != 0 {
				t.Fatal("a refused heartbeat opened an idle interval")
			}
		})
	}
	t.Run("ErrRevokedByReissue", func(t *testing.T) {
		old := e.token
		if _, err := e.hub.Tokens().Issue(context.Background(), 1, "box1"); err != nil {
			t.Fatal(err)
		}
		if code, _ := e.post(wire.PathHeartbeat, old, good); code != http.StatusUnauthorized {
			t.Fatalf("old token: status %d, want 401", code)
		}
	})
}

func TestHeartbeat_RateLimitPerToken(t *testing.T) {
	e := newEnv(t, hub.Config{RateBurst: 5, RateEvery: time.Second})
	ctx := context.Background()
	_, err := e.db.CreateRental(ctx, ledger.Action{UserID: 1, At: t0}, ledger.Rental{
		Name: "box2", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}}})
	if err != nil {
		t.Fatal(err)
	}
	tok2, _ := e.hub.Tokens().Issue(ctx, 1, "box2")
	var limited int
	for range 20 {
		if code, _ := e.beat(e.token, hb(wire.VerdictBusy, 0)); code == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited != 15 {
		t.Fatalf("%d of 20 flooded heartbeats limited, want 15", limited)
	}
	if code, _ := e.beat(tok2, hb(wire.VerdictBusy, 0)); code != http.StatusOK {
		t.Fatalf("another agent during the flood: %d, want 200", code)
	}
	e.clk.Add(2 * time.Second)
	if code, _ := e.beat(e.token, hb(wire.VerdictBusy, 0)); code != http.StatusOK {
		t.Fatalf("after refill: %d", code)
	}
}

func TestHeartbeat_IdleIntervals(t *testing.T) {
	e := newEnv(t, hub.Config{})
	e.clk.Add(time.Hour)
	e.beat(e.token, window(hb(wire.VerdictBusy, 0), e.clk.Now().Add(-30*time.Second), e.clk.Now()))
	// Idle for 50 minutes, a heartbeat every 30 s covering the time since
	// the last.
	for range 100 {
		e.clk.Add(30 * time.Second)
		e.beat(e.token, window(hb(wire.VerdictIdle, 0), e.clk.Now().Add(-30*time.Second), e.clk.Now()))
	}
	st, _ := e.hub.AgentState(e.rid)
	if want := t0.Add(60 * time.Minute); !st.IdleSince.Equal(want) || st.IdleFor(e.clk.Now()) != 50*time.Minute {
		t.Fatalf("idle since %s (for %s), want %s", st.IdleSince, st.IdleFor(e.clk.Now()), want)
	}
	e.clk.Add(30 * time.Second)
	e.beat(e.token, window(hb(wire.VerdictBusy, 0), e.clk.Now().Add(-30*time.Second), e.clk.Now()))
	r := e.rental()
	if len(r.Idle) != 1 || !r.Idle[0].From.Equal(t0.Add(60*time.Minute)) || !r.Idle[0].To.Equal(t0.Add(110*time.Minute)) {
		t.Fatalf("idle intervals = %+v", r.Idle)
	}
	// The engine turns it into idle cost.
	s := ledger.StatementAsOf(&ledger.Book{User: ledger.User{ID: 1}, Rentals: []*ledger.Rental{r}}, e.clk.Now())
	if s.Rentals[0].IdleSeconds != 3000 {
		t.Fatalf("engine idle seconds = %d, want 3000", s.Rentals[0].IdleSeconds)
	}
}

// window places h's window at [from, to] on the server's clock, sent at to.
func window(h wire.HeartbeatRequest, from, to time.Time) wire.HeartbeatRequest {
	h.WindowStart, h.WindowEnd, h.SentAt = from, to, to
	return h
}

func TestHeartbeat_AgentClockJump(t *testing.T) {
	e := newEnv(t, hub.Config{})
	e.clk.Add(time.Hour)
	e.beat(e.token, hb(wire.VerdictBusy, 0))
	e.clk.Add(time.Minute)
	h := hb(wire.VerdictIdle, 0)
	// The agent's wall clock jumped a year: its window means nothing.
	h.WindowStart, h.WindowEnd = t0.Add(-365*24*time.Hour), t0.Add(365*24*time.Hour)
	e.beat(e.token, h)
	st, _ := e.hub.AgentState(e.rid)
	if !st.IdleSince.Equal(t0.Add(time.Hour)) {
		t.Fatalf("idle since %s, want the previous busy report %s", st.IdleSince, t0.Add(time.Hour))
	}
	e.hub.Flush(context.Background())
	beats, _ := e.db.Beats(context.Background(), e.rid, t0, t0.Add(2*time.Hour))
	if last := beats[len(beats)-1]; last.IdleS > 60 {
		t.Fatalf("idle seconds of one beat = %d, want at most the 60 s since the last", last.IdleS)
	}
}

func TestHeartbeat_Duplicate(t *testing.T) {
	e := newEnv(t, hub.Config{})
	h := hb(wire.VerdictBusy, 0)
	e.beat(e.token, h)
	e.clk.Add(time.Minute)
	e.beat(e.token, h) // the same heartbeat again
	st, _ := e.hub.AgentState(e.rid)
	if !st.LastSeen.Equal(t0) {
		t.Fatalf("a replayed heartbeat moved LastSeen to %s", st.LastSeen)
	}
}

func TestOrders_ReleaseFlow(t *testing.T) {
	e := newEnv(t, hub.Config{})
	ctx := context.Background()
	if _, err := e.hub.IssueOrder(ctx, e.rid, wire.ActionRelease, ledger.OriginButton); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("order before any heartbeat: %v, want ENOTFOUND", err)
	}
	e.beat(e.token, hb(wire.VerdictIdle, 3600))
	o, err := e.hub.IssueOrder(ctx, e.rid, wire.ActionRelease, ledger.OriginButton)
	if err != nil {
		t.Fatal(err)
	}
	// Two presses of Release make one order.
	if _, err := e.hub.IssueOrder(ctx, e.rid, wire.ActionRelease, ledger.OriginButton); ledger.ErrorCode(err) != ledger.ECONFLICT {
		t.Fatalf("second order: %v, want ECONFLICT", err)
	}
	e.clk.Add(30 * time.Second)
	_, resp := e.beat(e.token, hb(wire.VerdictIdle, 3630))
	if len(resp.Orders) != 1 || resp.Orders[0].ID != o.ID {
		t.Fatalf("orders in response = %+v", resp.Orders)
	}
	// The agent, holding the token, accepts the signature.
	if err := wire.VerifyOrder(e.token, resp.Orders[0], e.clk.Now(), &wire.MemoryNonceStore{}); err != nil {
		t.Fatalf("agent rejects the order: %v", err)
	}
	// An unknown token cannot report on it, nor can a token of another
	// rental: to that agent the order does not exist.
	if code := e.result("forged", wire.OrderResult{OrderID: o.ID, Outcome: wire.OutcomeDone}); code != http.StatusUnauthorized {
		t.Fatalf("forged result: %d", code)
	}
	if _, err := e.db.CreateRental(context.Background(), ledger.Action{UserID: 1, At: t0}, ledger.Rental{
		Name: "box2", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}}}); err != nil {
		t.Fatal(err)
	}
	tok2, err := e.hub.Tokens().Issue(context.Background(), 1, "box2")
	if err != nil {
		t.Fatal(err)
	}
	if code := e.result(tok2, wire.OrderResult{OrderID: o.ID, Outcome: wire.OutcomeDone}); code != http.StatusNotFound {
		t.Fatalf("another rental's token: %d, want 404", code)
	}
	if code := e.result(e.token, wire.OrderResult{OrderID: o.ID, Outcome: "exploded"}); code != http.StatusBadRequest {
		t.Fatalf("unknown outcome: %d", code)
	}
	if code := e.result(e.token, wire.OrderResult{OrderID: o.ID, Outcome: wire.OutcomeReleaseStarted}); code != http.StatusNoContent {
		t.Fatalf("release_started: %d", code)
	}
	e.clk.Add(10 * time.Second)
	doneAt := e.clk.Now()
	if code := e.result(e.token, wire.OrderResult{OrderID: o.ID, Outcome: wire.OutcomeDone}); code != http.StatusNoContent {
		t.Fatalf("done: %d", code)
	}
	r := e.rental()
	if at, ok := r.ReleasedAt(); !ok || !at.Equal(doneAt) {
		t.Fatalf("released %v %v, want at %s", at, ok, doneAt)
	}
	// A retried result changes nothing.
	e.result(e.token, wire.OrderResult{OrderID: o.ID, Outcome: wire.OutcomeDone})
	if n := len(e.rental().Events); n != 2 {
		t.Fatalf("events after a retried result: %d, want 2", n)
	}
	// The release revoked the token.
	e.clk.Add(10 * time.Minute)
	if code, _ := e.beat(e.token, hb(wire.VerdictIdle, 0)); code != http.StatusUnauthorized {
		t.Fatalf("heartbeat after release: %d, want 401", code)
	}
	got := strings.Join(e.rec.list(), ",")
	for _, want := range []string{"order:started:release_started", "order:done:done", "after-release:box1"} {
		if !strings.Contains(got, want) {
			t.Errorf("listener heard %s; missing %s", got, want)
		}
	}
}

func TestOrders_Refused(t *testing.T) {
	e := newEnv(t, hub.Config{})
	ctx := context.Background()
	e.beat(e.token, hb(wire.VerdictIdle, 3600))
	o, _ := e.hub.IssueOrder(ctx, e.rid, wire.ActionStop, ledger.OriginAuto)
	if code := e.result(e.token, wire.OrderResult{OrderID: o.ID, Outcome: wire.OutcomeRefusedBusy}); code != http.StatusNoContent {
		t.Fatalf("refused: %d", code)
	}
	if r := e.rental(); r.State() != ledger.Running {
		t.Fatalf("a refused order changed the rental: %s", r.State())
	}
	got, _ := e.db.Order(ctx, o.ID)
	if got.State != ledger.OrderRefused {
		t.Fatalf("order state %s", got.State)
	}
	// A new order may be issued after a refusal.
	if _, err := e.hub.IssueOrder(ctx, e.rid, wire.ActionStop, ledger.OriginAuto); err != nil {
		t.Fatal(err)
	}
}

func TestOrders_ServerRestart(t *testing.T) {
	e := newEnv(t, hub.Config{})
	ctx := context.Background()
	e.beat(e.token, hb(wire.VerdictIdle, 3600))
	e.hub.Flush(ctx)
	o, _ := e.hub.IssueOrder(ctx, e.rid, wire.ActionRelease, ledger.OriginButton)
	// The server restarts: a new hub on the same database.
	e.start(hub.Config{})
	if st, seen := e.hub.AgentState(e.rid); !seen || st.Verdict != ledger.VerdictIdle {
		t.Fatalf("restarted hub lost the agent state: %+v", st)
	}
	e.clk.Add(30 * time.Second)
	_, resp := e.beat(e.token, hb(wire.VerdictIdle, 3630))
	if len(resp.Orders) != 1 || resp.Orders[0].ID != o.ID {
		t.Fatalf("order lost across a restart: %+v", resp.Orders)
	}
	// Expired orders are given up and the user told.
	e.clk.Add(time.Hour)
	if err := e.hub.ExpireOrders(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := e.db.Order(ctx, o.ID)
	if got.State != ledger.OrderExpired {
		t.Fatalf("order state %s, want expired", got.State)
	}
}

func TestOrders_AgentRestartMidRelease(t *testing.T) {
	e := newEnv(t, hub.Config{})
	ctx := context.Background()
	e.beat(e.token, hb(wire.VerdictIdle, 3600))
	o, _ := e.hub.IssueOrder(ctx, e.rid, wire.ActionRelease, ledger.OriginButton)
	e.result(e.token, wire.OrderResult{OrderID: o.ID, Outcome: wire.OutcomeReleaseStarted})
	e.clk.Add(time.Minute)
	h := hb(wire.VerdictIdle, 10)
	h.BootID, h.Seq = "boot2", 1
	_, resp := e.beat(e.token, h)
	if len(resp.Orders) != 0 {
		t.Fatalf("a started order was handed out again after the agent restarted: %+v", resp.Orders)
	}
	got, _ := e.db.Order(ctx, o.ID)
	if got.State != ledger.OrderFailed || got.Outcome != "agent_restarted" {
		t.Fatalf("order = %s %s", got.State, got.Outcome)
	}
	if e.rental().State() != ledger.Running {
		t.Fatal("an unconfirmed release was recorded")
	}
	if !strings.Contains(strings.Join(e.rec.list(), ","), "order:failed:agent_restarted") {
		t.Fatalf("user not told: %v", e.rec.list())
	}
}

func TestHeartbeat_JobAndMismatch(t *testing.T) {
	e := newEnv(t, hub.Config{})
	code0 := 0
	end := t0.Add(3 * time.Hour)
	for range 3 {
		h := hb(wire.VerdictIdle, 60)
		h.Host.GPUs = []wire.GPUFact{{Name: "NVIDIA GeForce RTX 3090"}}
		h.Job = &wire.JobState{Command: "python train.py", Exited: true, ExitCode: &code0, StartedAt: t0, EndedAt: &end, DurationSeconds: 3 * 3600}
		e.beat(e.token, h)
		e.clk.Add(30 * time.Second)
	}
	got := e.rec.list()
	if strings.Join(got, ",") != "job:box1,mismatch:box1" {
		t.Fatalf("listener heard %v; want one job and one mismatch", got)
	}
}

func TestMetricsAndHealth(t *testing.T) {
	e := newEnv(t, hub.Config{})
	e.beat(e.token, hb(wire.VerdictBusy, 0))
	e.beat("nope", hb(wire.VerdictBusy, 0))
	for path, want := range map[string]string{
		"/healthz": "ok",
		"/metrics": `gpuledger_hub_heartbeats_total{result="ok"} 1`,
	} {
		res, err := http.Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q:\n%s", path, want, b)
		}
	}
}

// TestHeartbeat_NoteBudget: what one token can make the bot say is
// bounded: a job is told once whatever end times are claimed for it, job
// cards come at most every 10 minutes, GPU notes once per distinct
// mismatch, everything within a budget per hour, and dropping is logged
// once per hour.
func TestHeartbeat_NoteBudget(t *testing.T) {
	var logs syncBuf
	e := newEnv(t, hub.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	code0 := 0
	job := func(start time.Time, end time.Time) *wire.JobState {
		return &wire.JobState{Command: "python train.py", Exited: true, ExitCode: &code0, StartedAt: start, EndedAt: &end, DurationSeconds: end.Sub(start).Seconds()}
	}
	count := func(prefix string) int {
		n := 0
		for _, ev := range e.rec.list() {
			if strings.HasPrefix(ev, prefix) {
				n++
			}
		}
		return n
	}
	t.Run("SameJobOtherEnds", func(t *testing.T) {
		for i := range 30 {
			h := hb(wire.VerdictIdle, 60)
			h.Job = job(t0, t0.Add(time.Hour+time.Duration(i)*time.Second))
			e.beat(e.token, h)
			e.clk.Add(15 * time.Minute) // past the 10-minute spacing every time
		}
		if n := count("job:"); n != 1 {
			t.Fatalf("one job with 30 claimed ends told %d times", n)
		}
	})
	t.Run("Flood", func(t *testing.T) {
		before := len(e.rec.list())
		// Two hours at one forged heartbeat a second: new jobs, new
		// agent starts, new GPUs every time.
		for i := range 7200 {
			h := hb(wire.VerdictBusy, 0)
			h.BootID = "boot-" + strconv.Itoa(i)
			h.Seq = 1
			h.Host.GPUs = []wire.GPUFact{{Name: "NVIDIA GeForce GTX " + strconv.Itoa(1000+i)}}
			start := e.clk.Now().Add(-time.Duration(i+2) * time.Minute)
			h.Job = job(start, e.clk.Now())
			if code, _ := e.beat(e.token, h); code != http.StatusOK {
				t.Fatalf("heartbeat %d: %d", i, code)
			}
			e.clk.Add(time.Second)
		}
		told := len(e.rec.list()) - before
		if told > 2*6 || count("job:") < 2 {
			t.Fatalf("7200 forged heartbeats made %d messages (%v)", told, e.rec.list()[before:])
		}
		if n := strings.Count(logs.String(), "over the limit"); n < 1 || n > 3 {
			t.Fatalf("dropping logged %d times in two hours:\n%s", n, logs.String())
		}
	})
}

// TestHeartbeat_SignedPolicy: the hub signs every answer's policy with the
// token's key, for the token's rental, fresh; and logs once what an agent
// says about refusing it.
func TestHeartbeat_SignedPolicy(t *testing.T) {
	var logs syncBuf
	e := newEnv(t, hub.Config{UtilThreshold: 3, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	if err := e.db.SetLeaseEnd(ctx, ledger.LeaseEnd{RentalID: e.rid, EndsAt: t0.Add(4 * time.Hour), ReleaseAtEnd: true}); err != nil {
		t.Fatal(err)
	}
	var last time.Time
	for i := range 3 {
		h := hb(wire.VerdictBusy, 0)
		h.PolicyRefused = "server policy refused, keeping local settings: wire: policy has expired"
		_, resp := e.beat(e.token, h)
		p := resp.Policy
		if err := wire.VerifyPolicy(e.token, p, e.clk.Now()); err != nil {
			t.Fatalf("policy %+v: %v", p, err)
		}
		if p.Rental != "box1" || p.UtilThreshold != 3 || p.LeaseUntil == nil || !p.LeaseUntil.Equal(t0.Add(4*time.Hour)) {
			t.Fatalf("policy %+v", p)
		}
		if i > 0 && !p.IssuedAt.After(last) {
			t.Fatalf("issued_at %s not after the previous %s", p.IssuedAt, last)
		}
		last = p.IssuedAt
		e.clk.Add(30 * time.Second)
	}
	if n := strings.Count(logs.String(), "refused the server's policy"); n != 1 {
		t.Fatalf("refusal logged %d times:\n%s", n, logs.String())
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestHeartbeat_Sessions: the people a heartbeat reports become the
// agent's state (clipped, unknown kinds left out), stored at the flush,
// and the next heartbeat without them clears them.
func TestHeartbeat_Sessions(t *testing.T) {
	e := newEnv(t, hub.Config{})
	since := t0.Add(-time.Hour)
	h := hb(wire.VerdictIdle, 600)
	h.Sessions = []wire.Session{
		{Kind: wire.SessionSSH, Client: "1.2.3.4", User: strings.Repeat("u", 100), Since: &since},
		{Kind: "telepathy", Client: "5.6.7.8"},
		{Kind: wire.SessionJupyter, Client: strings.Repeat("9", 300)},
	}
	if code, _ := e.beat(e.token, h); code != http.StatusOK {
		t.Fatalf("heartbeat = %d", code)
	}
	st, _ := e.hub.AgentState(e.rid)
	if len(st.Sessions) != 2 || st.Sessions[0].Kind != ledger.SessionSSH || !st.Sessions[0].Since.Equal(since) ||
		len(st.Sessions[0].User) > 32+len("…") || len(st.Sessions[1].Client) > 64+len("…") {
		t.Fatalf("sessions = %+v", st.Sessions)
	}
	if err := e.hub.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	states, _ := e.db.AgentStates(context.Background())
	if len(states) != 1 || len(states[0].Sessions) != 2 || states[0].Sessions[0].Client != "1.2.3.4" {
		t.Fatalf("stored = %+v", states)
	}
	e.clk.Add(30 * time.Second)
	e.beat(e.token, hb(wire.VerdictIdle, 630))
	if st, _ := e.hub.AgentState(e.rid); len(st.Sessions) != 0 {
		t.Fatalf("sessions not cleared: %+v", st.Sessions)
	}
}
