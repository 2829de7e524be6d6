package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/perf"
)

func benchReport(id string) wire.BenchReport {
	return wire.BenchReport{Version: wire.Version, ID: id, AgentVersion: "1.2.3", BootID: "boot1", SentAt: t0,
		Bench: perf.Bench{StartedAt: t0, WallSeconds: 1.1, GPUSeconds: 0.7, Source: "cuda", DriverVersion: "580.159.04",
			GPUs: []perf.GPU{{Index: 0, Name: "NVIDIA GeForce RTX 4090", BF16TFLOPS: 152, FP32TFLOPS: 80, MemGBps: 950,
				PCIeGen: 4, PCIeGenMax: 4, PCIeWidth: 16, PCIeWidthMax: 16, PowerLimitW: 450, PowerDefaultW: 450}},
			Host: perf.Host{CPUCores: 16, DiskWriteMBps: 1800}}}
}

func (e *env) bench(token string, rep wire.BenchReport) (int, wire.BenchResponse) {
	e.t.Helper()
	b, _ := json.Marshal(rep)
	code, body := e.post(wire.PathBench, token, b)
	var resp wire.BenchResponse
	if code == http.StatusOK {
		if err := json.Unmarshal(body, &resp); err != nil {
			e.t.Fatalf("response %s: %v", body, err)
		}
	}
	return code, resp
}

func (e *env) benches() []ledger.BenchRecord {
	e.t.Helper()
	bs, err := e.db.Benches(context.Background(), 1, e.rid)
	if err != nil {
		e.t.Fatal(err)
	}
	return bs
}

func (r *recorder) benchEvents() []ledger.BenchReported {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ledger.BenchReported(nil), r.benches...)
}

func (r *recorder) workEvents() []ledger.WorkStarted {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ledger.WorkStarted(nil), r.works...)
}

// TestBench_StoredOnce: a bench is stored with the token's rental and
// its GPU's model filled from its name; the same report again (a retry
// after a lost answer) is answered 200, not stored twice and told once.
func TestBench_StoredOnce(t *testing.T) {
	e := newEnv(t, hub.Config{})
	code, resp := e.bench(e.token, benchReport("r1"))
	if code != http.StatusOK || !resp.Stored || resp.Rental != "box1" || len(resp.Bounded) != 0 {
		t.Fatalf("bench = %d %+v", code, resp)
	}
	code, resp = e.bench(e.token, benchReport("r1"))
	if code != http.StatusOK || resp.Stored {
		t.Fatalf("bench again = %d %+v; want 200, not stored", code, resp)
	}
	bs := e.benches()
	if len(bs) != 1 || bs[0].ReportID != "r1" || !bs[0].At.Equal(t0) || bs[0].Bench.GPUs[0].Model != "RTX 4090" ||
		bs[0].Bench.GPUs[0].BF16TFLOPS != 152 {
		t.Fatalf("stored %+v", bs)
	}
	ev := e.rec.benchEvents()
	if len(ev) != 1 || ev[0].Rental.Name != "box1" || ev[0].Bench.ID != bs[0].ID {
		t.Fatalf("BenchReported = %+v, want one for box1", ev)
	}
}

// TestBench_Refusals: what is not a rental's bench is refused with a
// clear answer, stores nothing and tells nobody.
func TestBench_Refusals(t *testing.T) {
	e := newEnv(t, hub.Config{})
	good, _ := json.Marshal(benchReport("r1"))
	noID := benchReport("")
	noIDBody, _ := json.Marshal(noID)
	badSource := benchReport("r2")
	badSource.Bench.Source = "guess"
	badSourceBody, _ := json.Marshal(badSource)
	oldVersion := benchReport("r3")
	oldVersion.Version = "v0"
	oldVersionBody, _ := json.Marshal(oldVersion)
	huge := benchReport("r4")
	huge.Bench.Host.CPUModel = strings.Repeat("x", wire.MaxBenchBodyBytes)
	hugeBody, _ := json.Marshal(huge)
	for _, c := range []struct {
		name  string
		token string
		body  []byte
		code  int
		says  string
	}{
		{"UnknownToken", "nope", good, http.StatusUnauthorized, "unknown agent token"},
		{"NoToken", "", good, http.StatusUnauthorized, "unknown agent token"},
		{"EnrolmentToken", wire.EnrolTokenPrefix + strings.Repeat("A", 43), good, http.StatusConflict, "rental's token"},
		{"Garbage", e.token, []byte("not json"), http.StatusBadRequest, "malformed JSON"},
		{"Heartbeat", e.token, []byte(`{"version":"` + wire.Version + `","verdict":"busy"}`), http.StatusBadRequest, "needs an id"},
		{"NoID", e.token, noIDBody, http.StatusBadRequest, "needs an id"},
		{"BadSource", e.token, badSourceBody, http.StatusBadRequest, "must be cuda, simulate or none"},
		{"OldVersion", e.token, oldVersionBody, http.StatusBadRequest, "unsupported protocol version"},
		{"Huge", e.token, hugeBody, http.StatusRequestEntityTooLarge, "body over"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := e.post(wire.PathBench, c.token, c.body)
			if code != c.code || !strings.Contains(string(body), c.says) {
				t.Fatalf("answer %d %s, want %d saying %q", code, body, c.code, c.says)
			}
			var msg map[string]string
			if err := json.Unmarshal(body, &msg); err != nil || msg["error"] == "" {
				t.Fatalf("answer %s is not a JSON error", body)
			}
		})
	}
	if bs := e.benches(); len(bs) != 0 {
		t.Fatalf("refused benches stored: %+v", bs)
	}
	if ev := e.rec.benchEvents(); len(ev) != 0 {
		t.Fatalf("refused benches told: %+v", ev)
	}
}

// TestBench_RevokedToken: a revoked token's bench is 401 and stored
// nowhere.
func TestBench_RevokedToken(t *testing.T) {
	e := newEnv(t, hub.Config{})
	old := e.token
	if _, err := e.hub.Tokens().Issue(context.Background(), 1, "box1"); err != nil {
		t.Fatal(err)
	}
	if code, _ := e.bench(old, benchReport("r1")); code != http.StatusUnauthorized {
		t.Fatalf("bench with a revoked token = %d, want 401", code)
	}
	if bs := e.benches(); len(bs) != 0 {
		t.Fatalf("stored %+v", bs)
	}
}

// TestBench_FloodBound: a token holder sending bench after bench stores
// four; the next is 429 with a Retry-After and stores nothing; a retry
// of one stored is still 200; only the first is told.
func TestBench_FloodBound(t *testing.T) {
	e := newEnv(t, hub.Config{})
	for _, id := range []string{"a", "b", "c", "d"} {
		if code, resp := e.bench(e.token, benchReport(id)); code != http.StatusOK || !resp.Stored {
			t.Fatalf("bench %s = %d %+v", id, code, resp)
		}
	}
	b, _ := json.Marshal(benchReport("e"))
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+wire.PathBench, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("fifth bench = %d (Retry-After %q), want 429 with a Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if code, resp := e.bench(e.token, benchReport("b")); code != http.StatusOK || resp.Stored {
		t.Fatalf("retry of a stored bench = %d %+v, want 200 not stored", code, resp)
	}
	if bs := e.benches(); len(bs) != 4 {
		t.Fatalf("%d benches stored, want 4", len(bs))
	}
	if ev := e.rec.benchEvents(); len(ev) != 1 || ev[0].Bench.ReportID != "a" {
		t.Fatalf("BenchReported = %+v, want the first only", ev)
	}
}

// TestBench_BoundedNamed: an absurd figure is kept as not measured and
// named in the answer and the stored record; the rest is kept.
func TestBench_BoundedNamed(t *testing.T) {
	e := newEnv(t, hub.Config{})
	rep := benchReport("r1")
	rep.Bench.GPUs[0].BF16TFLOPS = 1e9
	rep.Bench.GPUs[0].Name = "NVIDIA GeForce RTX 4090\x1b[31m\u202e"
	code, resp := e.bench(e.token, rep)
	if code != http.StatusOK || len(resp.Bounded) == 0 {
		t.Fatalf("bench = %d %+v, want the absurd figure named", code, resp)
	}
	bs := e.benches()
	if len(bs) != 1 || bs[0].Bench.GPUs[0].BF16TFLOPS != 0 || bs[0].Bench.GPUs[0].MemGBps != 950 || len(bs[0].Bounded) == 0 {
		t.Fatalf("stored %+v", bs)
	}
	if name := bs[0].Bench.GPUs[0].Name; strings.ContainsAny(name, "\x1b\u202e") {
		t.Fatalf("stored name %q keeps unprintable characters", name)
	}
}

// TestBench_AllAbsurdStored: a forged bench of 16 GPUs with every figure
// absurd (and 64 skips on GPUs that cannot be) is stored, answered 200,
// with the names of what was bounded capped: the first 64, then "…+N"
// for the rest, within what the store keeps with a bench.
func TestBench_AllAbsurdStored(t *testing.T) {
	e := newEnv(t, hub.Config{})
	rep := benchReport("r1")
	rep.Bench.WallSeconds, rep.Bench.GPUSeconds = -1, 1e300
	rep.Bench.GPUs = nil
	for i := range perf.MaxGPUs {
		rep.Bench.GPUs = append(rep.Bench.GPUs, perf.GPU{Index: -1 - i, Name: "NVIDIA GeForce RTX 4090",
			FP32TFLOPS: 1e300, BF16TFLOPS: 1e300, FP16TFLOPS: -1, MemGBps: 1e300, H2DGBps: 5e-324, D2HGBps: 1e9,
			MemoryTotalMiB: 1 << 40, MemoryUsedMiB: 1 << 41, UtilPercent: 101, OtherProcs: -1, PCIeGen: 99, PCIeGenMax: 99,
			PCIeWidth: -1, PCIeWidthMax: 999, PowerLimitW: 1e9, PowerDefaultW: -1, SMClockMaxMHz: -1, SMClockBenchMHz: 1e9,
			ECCUncorrected: 1 << 40, RetiredPages: -1, TemperatureC: 9999})
	}
	rep.Bench.Host = perf.Host{CPUCores: 1e9, MemoryMiB: 1 << 62, DiskWriteMBps: -1, DiskReadMBps: 1e300, DownloadMBps: 1e-9}
	for i := range perf.MaxSkips {
		rep.Bench.Skipped = append(rep.Bench.Skipped, perf.Skip{What: "bf16_tflops", GPU: -2 - i, Why: "forged"})
	}
	rep.Bench.Torch = &perf.TorchRun{BF16TFLOPS: 1e300}
	_, all := perf.Bound(rep.Bench)
	if len(all) < 400 {
		t.Fatalf("perf.Bound named %d figures; the forgery is meant to have hundreds", len(all))
	}
	code, resp := e.bench(e.token, rep)
	if code != http.StatusOK || !resp.Stored {
		t.Fatalf("bench = %d %+v, want 200 and stored", code, resp)
	}
	want := append(slices.Clone(all[:64]), "…+"+strconv.Itoa(len(all)-64))
	if !slices.Equal(resp.Bounded, want) {
		t.Fatalf("answered bounded (%d) %v\nwant (%d) %v", len(resp.Bounded), resp.Bounded, len(want), want)
	}
	bs := e.benches()
	if len(bs) != 1 || !slices.Equal(bs[0].Bounded, want) {
		t.Fatalf("stored %d benches, bounded %v", len(bs), bs)
	}
	if g := bs[0].Bench.GPUs[15]; g.BF16TFLOPS != 0 || g.H2DGBps != 0 || g.Index != 15 || g.TemperatureC != 0 {
		t.Fatalf("GPU 15 stored as %+v", g)
	}
}

// TestBench_Wanted: the hub asks a rental's agent for its bench until it
// holds one, and never when the user turned receipts off (told through
// UserChanged, at once).
func TestBench_Wanted(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, hub.Config{})
	if _, resp := e.beat(e.token, hb(wire.VerdictIdle, 0)); !resp.BenchWanted {
		t.Fatal("first heartbeat: bench not wanted")
	}
	if _, resp := e.beat(e.token, hb(wire.VerdictIdle, 0)); !resp.BenchWanted {
		t.Fatal("second heartbeat: bench not wanted")
	}
	if code, _ := e.bench(e.token, benchReport("r1")); code != http.StatusOK {
		t.Fatalf("bench = %d", code)
	}
	if _, resp := e.beat(e.token, hb(wire.VerdictIdle, 0)); resp.BenchWanted {
		t.Fatal("bench still wanted after one was stored")
	}
	// A restarted hub reads it from the store.
	e.start(hub.Config{})
	if _, resp := e.beat(e.token, hb(wire.VerdictIdle, 0)); resp.BenchWanted {
		t.Fatal("a restarted hub asks again for a bench the store holds")
	}

	off := newEnv(t, hub.Config{})
	if _, resp := off.beat(off.token, hb(wire.VerdictIdle, 0)); !resp.BenchWanted {
		t.Fatal("bench not wanted before receipts were turned off")
	}
	u, err := off.db.User(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	u.Settings.BenchOff = true
	if _, err := off.db.UpdateUser(ctx, ledger.Action{UserID: 1}, u); err != nil {
		t.Fatal(err)
	}
	off.hub.UserChanged(1)
	if _, resp := off.beat(off.token, hb(wire.VerdictIdle, 0)); resp.BenchWanted {
		t.Fatal("bench wanted with receipts off")
	}
	// A bench sent anyway is stored but not told.
	if code, resp := off.bench(off.token, benchReport("r1")); code != http.StatusOK || !resp.Stored {
		t.Fatalf("bench with receipts off = %d %+v", code, resp)
	}
	if ev := off.rec.benchEvents(); len(ev) != 0 {
		t.Fatalf("BenchReported with receipts off: %+v", ev)
	}
}

// userReadHook is the hub's store with a hook run once, after the next
// read of a user returns from the store and before the hub uses it.
type userReadHook struct {
	hub.Store
	mu    sync.Mutex
	after func()
}

func (s *userReadHook) User(ctx context.Context, id int64) (ledger.User, error) {
	u, err := s.Store.User(ctx, id)
	s.mu.Lock()
	f := s.after
	s.after = nil
	s.mu.Unlock()
	if f != nil {
		f()
	}
	return u, err
}

// TestBench_OffDuringRead: receipts turned off (and UserChanged told)
// while the hub is reading the user's settings from the store is obeyed
// by the next heartbeat: the read the change overtook is not cached for
// benchOffTTL.
func TestBench_OffDuringRead(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, hub.Config{})
	st := &userReadHook{Store: e.db}
	h, err := hub.New(hub.Config{Store: st, Now: e.clk.Now, Events: e.rec})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Load(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.Handler())
	t.Cleanup(srv.Close)
	e.hub, e.srv = h, srv
	turnedOff := false
	st.after = func() {
		u, err := e.db.User(ctx, 1)
		if err != nil {
			t.Error(err)
			return
		}
		u.Settings.BenchOff = true
		if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: 1}, u); err != nil {
			t.Error(err)
			return
		}
		h.UserChanged(1)
		turnedOff = true
	}
	// This heartbeat's read saw receipts on: it may ask once.
	if code, _ := e.beat(e.token, hb(wire.VerdictIdle, 0)); code != http.StatusOK || !turnedOff {
		t.Fatalf("heartbeat = %d, hook run %v", code, turnedOff)
	}
	e.clk.Add(30 * time.Second)
	if _, resp := e.beat(e.token, hb(wire.VerdictIdle, 0)); resp.BenchWanted {
		t.Fatal("bench wanted after receipts were turned off: the read the change overtook was cached")
	}
}

// TestBench_ReleasedRental: a bench that arrives for a released rental
// (its token still cached) is stored as history and told to nobody, and
// no agent of it is asked for one.
func TestBench_ReleasedRental(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, hub.Config{TokenTTL: time.Hour})
	if code, _ := e.beat(e.token, hb(wire.VerdictIdle, 0)); code != http.StatusOK {
		t.Fatal(code)
	}
	if _, err := e.db.AppendEvent(ctx, ledger.Action{UserID: 1, At: t0}, "box1", ledger.Event{Kind: ledger.EventRelease, At: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(time.Minute) // past the hub's cache of the rental
	code, resp := e.bench(e.token, benchReport("r1"))
	if code != http.StatusOK || !resp.Stored {
		t.Skipf("the released rental's token is refused (%d) before the bench is read: nothing to check here", code)
	}
	if bs := e.benches(); len(bs) != 1 {
		t.Fatalf("stored %+v", bs)
	}
	if ev := e.rec.benchEvents(); len(ev) != 0 {
		t.Fatalf("BenchReported for a released rental: %+v", ev)
	}
}

// jobBeat is a heartbeat saying the wrapped job exited.
func jobBeat(label string, started time.Time, code int) wire.HeartbeatRequest {
	h := hb(wire.VerdictIdle, 0)
	end := started.Add(20 * time.Minute)
	h.Job = &wire.JobState{Command: "python train.py", Label: label, Exited: true, StartedAt: started,
		EndedAt: &end, ExitCode: &code, DurationSeconds: 1200}
	return h
}

// TestHeartbeat_JobRunStored: a wrapped job that exited is stored as the
// rental's run once, with its label, across resent heartbeats and a
// restarted hub; an invalid label is dropped, the run kept.
func TestHeartbeat_JobRunStored(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, hub.Config{})
	started := t0.Add(-30 * time.Minute)
	for range 3 {
		if code, _ := e.beat(e.token, jobBeat("yolo-epoch", started, 0)); code != http.StatusOK {
			t.Fatal(code)
		}
		e.clk.Add(30 * time.Second)
	}
	e.start(hub.Config{})
	if code, _ := e.beat(e.token, jobBeat("yolo-epoch", started, 0)); code != http.StatusOK {
		t.Fatal(code)
	}
	runs, err := e.db.JobRuns(ctx, 1, "")
	if err != nil || len(runs) != 1 {
		t.Fatalf("JobRuns = %+v, %v; want one", runs, err)
	}
	r := runs[0]
	if r.Label != "yolo-epoch" || r.Source != ledger.JobFromAgent || !r.StartedAt.Equal(started) || r.Duration() != 20*time.Minute ||
		r.ExitCode != 0 || r.Command != "python train.py" || r.RentalID != e.rid {
		t.Fatalf("run %+v", r)
	}

	e.clk.Add(30 * time.Second)
	second := t0.Add(time.Hour)
	if code, _ := e.beat(e.token, jobBeat("bad label!", second, 3)); code != http.StatusOK {
		t.Fatal(code)
	}
	runs, _ = e.db.JobRuns(ctx, 1, "")
	if len(runs) != 2 || runs[1].Label != "" || runs[1].ExitCode != 3 || runs[1].Succeeded() {
		t.Fatalf("runs after an invalid label = %+v", runs)
	}
}

// busyBeat is a heartbeat of a window in which busy of its 6 samples
// were busy, at util percent.
func busyBeat(busy int, util float64) wire.HeartbeatRequest {
	h := hb(wire.VerdictBusy, 0)
	h.BusySamples, h.IdleSamples = busy, 6-busy
	h.GPUs[0].UtilMean, h.GPUs[0].UtilMax = &util, &util
	return h
}

// TestHeartbeat_FirstWork: the rental's first sustained GPU work is two
// consecutive busy windows (60 s); it is stored and told once, at the
// streak's start. A bench's seconds, busy CPUs at low GPU utilisation,
// or one busy window between idle ones are not it.
func TestHeartbeat_FirstWork(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, hub.Config{})
	for _, h := range []wire.HeartbeatRequest{
		busyBeat(2, 95), // a bench: 10 s of the window
		busyBeat(6, 20), // busy by CPU, the GPU barely used
		busyBeat(6, 95), // one busy window…
		busyBeat(0, 0),  // …then idle
		busyBeat(6, 20),
	} {
		e.beat(e.token, h)
		e.clk.Add(30 * time.Second)
	}
	if fw, _ := e.db.FirstWorks(ctx, 1); len(fw) != 0 || len(e.rec.workEvents()) != 0 {
		t.Fatalf("first work after no sustained work: %v %+v", fw, e.rec.workEvents())
	}
	streak := e.clk.Now().Add(-30 * time.Second)
	for range 4 {
		e.beat(e.token, busyBeat(6, 95))
		e.clk.Add(30 * time.Second)
	}
	fw, err := e.db.FirstWorks(ctx, 1)
	if err != nil || !fw[e.rid].Equal(streak) {
		t.Fatalf("FirstWorks = %v, %v; want %v", fw, err, streak)
	}
	if ev := e.rec.workEvents(); len(ev) != 1 || !ev[0].At.Equal(streak) || ev[0].Rental.Name != "box1" {
		t.Fatalf("WorkStarted = %+v, want one at %v", ev, streak)
	}
	// A restarted hub does not tell it again.
	e.start(hub.Config{})
	for range 3 {
		e.beat(e.token, busyBeat(6, 95))
		e.clk.Add(30 * time.Second)
	}
	if ev := e.rec.workEvents(); len(ev) != 1 {
		t.Fatalf("WorkStarted after a restart = %+v, want the first only", ev)
	}
}

// TestBench_AbsurdMovesNoMoney: a bench is the agent's claim and moves
// nothing: after a bench of a billion TFLOPS, and a heartbeat after it,
// the user's book, the statement of what the rental cost and its orders
// are what they were, and the agent is given no order.
func TestBench_AbsurdMovesNoMoney(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, hub.Config{})
	e.clk.Add(2 * time.Hour)
	e.beat(e.token, hb(wire.VerdictIdle, 600))
	state := func() (string, string, int) {
		b, err := e.db.Book(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		st := ledger.StatementAsOf(b, e.clk.Now())
		orders, err := e.db.OpenOrders(ctx, e.rid)
		if err != nil {
			t.Fatal(err)
		}
		bj, _ := json.Marshal(b)
		sj, _ := json.Marshal(st)
		return string(bj), string(sj), len(orders)
	}
	book, statement, orders := state()
	if !strings.Contains(book, "box1") || !strings.Contains(statement, "CNY") {
		t.Fatalf("the book or statement compared is empty: %s %s", book, statement)
	}
	rep := benchReport("absurd")
	rep.Bench.GPUs[0].BF16TFLOPS, rep.Bench.GPUs[0].FP16TFLOPS, rep.Bench.GPUs[0].FP32TFLOPS = 1e9, 1e9, 1e9
	rep.Bench.GPUs[0].PowerLimitW, rep.Bench.GPUs[0].PowerDefaultW = 1, 1e6
	if code, resp := e.bench(e.token, rep); code != http.StatusOK || len(resp.Bounded) == 0 {
		t.Fatalf("absurd bench = %d %+v", code, resp)
	}
	_, resp := e.beat(e.token, hb(wire.VerdictIdle, 630))
	if len(resp.Orders) != 0 {
		t.Fatalf("the agent was given orders after a bench: %+v", resp.Orders)
	}
	b2, s2, o2 := state()
	if b2 != book || s2 != statement || o2 != orders {
		t.Fatalf("a bench moved money or orders:\nbook %v\nstatement %v\norders %d → %d", b2 == book, s2 == statement, orders, o2)
	}
}

// TestHeartbeat_JobRunFlood: a token holder forging a new finished job
// at every heartbeat stores at most 12 runs an hour, not one a heartbeat.
func TestHeartbeat_JobRunFlood(t *testing.T) {
	e := newEnv(t, hub.Config{RateBurst: 5000})
	for i := range 300 {
		h := jobBeat("flood", e.clk.Now().Add(-time.Duration(i+30)*time.Minute), 0)
		if code, _ := e.beat(e.token, h); code != http.StatusOK {
			t.Fatalf("heartbeat %d: %d", i, code)
		}
		e.clk.Add(time.Second)
	}
	runs, err := e.db.JobRuns(context.Background(), 1, "")
	if err != nil || len(runs) != 12 {
		t.Fatalf("%d runs stored from 300 forged jobs in 5 minutes (%v), want 12", len(runs), err)
	}
}

// TestBench_NeverOnEnrolment: an enrolment heartbeat's answer never asks
// for a bench, even the one handing over the rental's token; the first
// heartbeat with that token does.
func TestBench_NeverOnEnrolment(t *testing.T) {
	e := newEnrolEnv(t)
	e.clk.Add(time.Hour)
	boot := e.clk.Now().Add(-5 * time.Minute)
	_, r := e.adopted(boot)
	e.clk.Add(10 * time.Second)
	code, resp, msg := e.send(e.enrol, e.facts("abc123", boot))
	if code != http.StatusOK || resp.Enrolment == nil || resp.Enrolment.Token == "" || resp.BenchWanted {
		t.Fatalf("hand-over answer = %d %q %+v, want the token and no bench asked", code, msg, resp)
	}
	code, resp, msg = e.send(resp.Enrolment.Token, e.facts("abc123", boot))
	if code != http.StatusOK || resp.Rental != r.Name || !resp.BenchWanted {
		t.Fatalf("the rental's first heartbeat = %d %q %+v, want a bench asked", code, msg, resp)
	}
}
