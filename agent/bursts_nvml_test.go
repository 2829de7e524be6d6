//go:build cgo && linux

package agent

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// nvmlSamplePeriod and nvmlHistory are what NVML keeps on the H200: a
// utilisation sample about every 200 ms, about 14 s of them.
const (
	nvmlSamplePeriod = 200 * time.Millisecond
	nvmlHistory      = 14 * time.Second
)

// burstGPU is a GPU holding a CUDA context whose work follows a schedule
// of bursts on the clock (synctest's fake one), read through go-nvml's mock
// as NVML reports it: a utilisation sample every 200 ms holding the busy
// share of its period (plus a background level), the last 14 s of them
// kept, and an instantaneous rate over the last 200 ms.
type burstGPU struct {
	t0            time.Time
	period, burst time.Duration // a burst of length burst every period; period 0: none
	phase         time.Duration // the first burst starts at t0+phase
	floor         func(k int) uint32
	empty         bool // no context: the driver's idle reason, memory at its floor

	histReads []time.Time // when GetSamples was called
}

// busyIn returns how much of [a, b) the GPU spent in bursts.
func (g *burstGPU) busyIn(a, b time.Time) time.Duration {
	if g.period <= 0 || !b.After(a) {
		return 0
	}
	var d time.Duration
	first := int(a.Sub(g.t0.Add(g.phase)) / g.period)
	for k := max(first-1, 0); ; k++ {
		s := g.t0.Add(g.phase + time.Duration(k)*g.period)
		if !s.Before(b) {
			break
		}
		e := s.Add(g.burst)
		lo, hi := s, e
		if a.After(lo) {
			lo = a
		}
		if b.Before(hi) {
			hi = b
		}
		if hi.After(lo) {
			d += hi.Sub(lo)
		}
	}
	return d
}

// value is utilisation sample k (covering [t0+k*200ms, t0+(k+1)*200ms)).
func (g *burstGPU) value(k int) uint32 {
	a := g.t0.Add(time.Duration(k) * nvmlSamplePeriod)
	v := uint32((100*g.busyIn(a, a.Add(nvmlSamplePeriod)) + nvmlSamplePeriod/2) / nvmlSamplePeriod)
	if g.floor != nil {
		v += g.floor(k)
	}
	return min(v, 100)
}

func (g *burstGPU) samples(since uint64) ([]nvml.Sample, nvml.Return) {
	now := time.Now()
	var out []nvml.Sample
	for k := 0; ; k++ {
		end := g.t0.Add(time.Duration(k+1) * nvmlSamplePeriod)
		if end.After(now) {
			break
		}
		ts := uint64(end.UnixMicro())
		if now.Sub(end) > nvmlHistory || ts <= since {
			continue
		}
		var b [8]byte
		binary.LittleEndian.PutUint32(b[:], g.value(k))
		out = append(out, nvml.Sample{TimeStamp: ts, SampleValue: b})
	}
	if len(out) == 0 {
		return nil, nvml.ERROR_NOT_FOUND
	}
	return out, nvml.SUCCESS
}

func (g *burstGPU) install(d *dgxa100.Device) {
	fakeGPU(d, 0, 0)
	mem := uint64(20 << 10) // a 20 GiB tensor held from before the agent started
	reasons := uint64(ReasonSWPowerCap)
	if g.empty {
		mem, reasons = 615, ReasonGPUIdle
	}
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		return nvml.Memory{Total: 140 << 30, Used: mem << 20}, nvml.SUCCESS
	}
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return reasons, nvml.SUCCESS }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		now := time.Now()
		busy := g.busyIn(now.Add(-nvmlSamplePeriod), now)
		return nvml.Utilization{Gpu: uint32(100 * busy / nvmlSamplePeriod)}, nvml.SUCCESS
	}
	d.GetSamplesFunc = func(_ nvml.SamplingType, since uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
		g.histReads = append(g.histReads, time.Now())
		s, r := g.samples(since)
		return nvml.VALUE_TYPE_UNSIGNED_INT, s, r
	}
}

// pinnedHost holds CPU and network at quiet levels, so that only the GPU
// decides, whatever this machine's real /proc says.
type pinnedHost struct{ GPUSource }

func (pinnedHost) HostOverride() *SimHost {
	return &SimHost{CPUPercent: ptr(1.0), NetBytesPerS: ptr(0.0)}
}

// loopResult is what runLoop saw.
type loopResult struct {
	maxIdle    time.Duration // the longest idle time the agent could have reported
	heartbeats []wire.HeartbeatRequest
	samples    int
	busy       int
}

// runLoop drives a Sampler over g the way Run does (a ReadFull sample after
// each heartbeat, ReadFast otherwise, a heartbeat every interval carrying
// idle_since only when its verdict is idle) for total, on synctest's clock.
// jitter, when set, gives each sample's offset from its tick.
func runLoop(t *testing.T, g *burstGPU, sample, interval, total time.Duration, jitter func() time.Duration) loopResult {
	t.Helper()
	ctx := context.Background()
	lib, ds := newMock(1)
	g.t0 = time.Now()
	g.install(ds[0])
	src, err := NewNVMLSource(ctx, lib, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := &Sampler{GPU: pinnedHost{src}, Thresholds: DefaultThresholds}
	var w Window
	var res loopResult
	idleAt := func() {
		if _, d, ok := s.Idle(); ok && d > res.maxIdle {
			res.maxIdle = d
		}
	}
	wantFull := true
	nextBeat := g.t0.Add(interval)
	for i := 0; ; i++ {
		tick := g.t0.Add(time.Duration(i) * sample)
		at := tick
		if jitter != nil && i > 0 {
			at = at.Add(jitter())
		}
		// Heartbeats due before this sample, then the sample.
		for !nextBeat.After(at) {
			time.Sleep(time.Until(nextBeat))
			idleAt()
			hb := wire.HeartbeatRequest{}
			win := w.Cut()
			win.fill(&hb)
			if since, d, ok := s.Idle(); ok && hb.Verdict == wire.VerdictIdle {
				hb.IdleSince, hb.IdleSeconds = &since, int64(d/time.Second)
			}
			res.heartbeats = append(res.heartbeats, hb)
			wantFull = true
			nextBeat = nextBeat.Add(interval)
		}
		if at.Sub(g.t0) > total {
			return res
		}
		time.Sleep(time.Until(at))
		idleAt() // just before the sample: the most the streak can claim
		level := ReadFast
		if wantFull {
			level, wantFull = ReadFull, false
		}
		sm := s.SampleLevel(ctx, level)
		w.Add(sm)
		res.samples++
		if sm.Verdict == wire.VerdictBusy {
			res.busy++
		}
	}
}

// A burst that the utilisation history holds makes the sample busy even
// when the window's mean is far below the threshold: a window is busy when
// any sample in it is above the threshold.
func TestNVMLSource_AnySampleAboveThresholdIsBusy(t *testing.T) {
	zeros := func(n int) []uint32 { return make([]uint32, n) }
	with := func(v []uint32, at int, x uint32) []uint32 { v[at] = x; return v }
	tests := []struct {
		name string
		hist []uint32 // 50 samples: 10 s at 5 Hz
		want wire.Verdict
	}{
		{"OneBurstSample", with(zeros(50), 3, 60), wire.VerdictBusy},
		{"CUDAInitOnce", with(zeros(50), 0, 99), wire.VerdictBusy},
		{"JustAboveThreshold", with(zeros(50), 49, 6), wire.VerdictBusy},
		{"AtThresholdIsIdle", with(zeros(50), 10, 5), wire.VerdictIdle},
		{"AllZero", zeros(50), wire.VerdictIdle},
		{"ZeroToOne", func() []uint32 {
			v := zeros(50)
			for i := range v {
				v[i] = uint32(i % 2)
			}
			return v
		}(), wire.VerdictIdle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			lib, ds := newMock(1)
			// A context is held (no idle reason), the instant reading is 0.
			ds[0].GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return ReasonSWPowerCap, nvml.SUCCESS }
			ds[0].GetSamplesFunc = func(_ nvml.SamplingType, since uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
				if since > 0 {
					return 0, nil, nvml.ERROR_NOT_FOUND
				}
				return nvml.VALUE_TYPE_UNSIGNED_INT, utilSamples(1000000, tt.hist...), nvml.SUCCESS
			}
			src, err := NewNVMLSource(ctx, lib, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			s := &Sampler{GPU: pinnedHost{src}, Thresholds: DefaultThresholds}
			sm := s.SampleLevel(ctx, ReadFast)
			g := sm.GPUs[0]
			if g.UtilSource != "samples" || g.UtilSamples != 50 {
				t.Fatalf("history not read: %+v", g)
			}
			if sm.Verdict != tt.want {
				t.Fatalf("verdict %s (%v) for util mean %.1f%% max %.0f%%, want %s", sm.Verdict, sm.Reasons, g.UtilMean, g.UtilMax, tt.want)
			}
			if tt.want == wire.VerdictBusy && !strings.Contains(strings.Join(sm.Reasons, ";"), fmt.Sprintf("max %.0f%%", g.UtilMax)) {
				t.Fatalf("reasons %v do not name the max", sm.Reasons)
			}
		})
	}
}

// Periodic work on a GPU that holds a context (an inference server, a
// notebook) must never be called idle for longer than the quiet gap
// between its bursts: the reported idle time stays under the longest gap
// plus one sample (plus NVML's own 200 ms sample period, which decides
// which read first holds a burst), over ten minutes at the defaults.
func TestSampler_PeriodicBurstsNeverIdleLong(t *testing.T) {
	const sample, interval, total = 5 * time.Second, 30 * time.Second, 10 * time.Minute
	tests := []struct {
		period, burst time.Duration
	}{
		{8 * time.Second, 200 * time.Millisecond},  // measured on the H200: called idle
		{15 * time.Second, 300 * time.Millisecond}, // likewise
		{5 * time.Second, 50 * time.Millisecond},
		{15 * time.Second, 200 * time.Millisecond},
		{30 * time.Second, time.Second},
		{30 * time.Second, 50 * time.Millisecond},
		{12 * time.Second, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		for _, phase := range []time.Duration{100 * time.Millisecond, 1300 * time.Millisecond, 2900 * time.Millisecond, 4950 * time.Millisecond} {
			t.Run(fmt.Sprintf("%v/%v/phase%v", tt.burst, tt.period, phase), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					g := &burstGPU{period: tt.period, burst: tt.burst, phase: phase}
					res := runLoop(t, g, sample, interval, total, nil)
					bound := tt.period - tt.burst + sample + nvmlSamplePeriod
					if res.maxIdle > bound {
						t.Fatalf("idle for %v with a burst every %v (bound %v); %d of %d samples busy", res.maxIdle, tt.period, bound, res.busy, res.samples)
					}
					for i, hb := range res.heartbeats {
						if time.Duration(hb.IdleSeconds)*time.Second > bound {
							t.Fatalf("heartbeat %d reports %d s idle (bound %v)", i, hb.IdleSeconds, bound)
						}
						if (hb.BusySamples == 0 || hb.Verdict != wire.VerdictBusy) && tt.period <= interval/2 {
							t.Fatalf("heartbeat %d: %s, %d busy samples in a %v window with a burst every %v", i, hb.Verdict, hb.BusySamples, interval, tt.period)
						}
					}
				})
			})
		}
	}
}

// An empty GPU, and one holding a context with nothing running (0-1 % on
// the H200, once at allocation), read idle from the first heartbeat on,
// with the idle time growing all along.
func TestSampler_IdleLoadsStayIdle(t *testing.T) {
	const sample, interval, total = 5 * time.Second, 30 * time.Second, 5 * time.Minute
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name string
		g    *burstGPU
	}{
		{"EmptyGPU", &burstGPU{empty: true}},
		{"ContextAllZero", &burstGPU{}},
		{"ContextZeroToOne", &burstGPU{floor: func(int) uint32 { return uint32(rng.IntN(2)) }}},
		{"ContextOneAtAllocation", &burstGPU{floor: func(k int) uint32 {
			if k == 7 {
				return 1
			}
			return 0
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				res := runLoop(t, tt.g, sample, interval, total, nil)
				if res.busy > 0 {
					t.Fatalf("%d of %d samples busy", res.busy, res.samples)
				}
				if len(res.heartbeats) < int(total/interval) {
					t.Fatalf("%d heartbeats", len(res.heartbeats))
				}
				for i, hb := range res.heartbeats {
					want := int64((time.Duration(i+1) * interval) / time.Second)
					if hb.Verdict != wire.VerdictIdle || hb.IdleSeconds != want {
						t.Fatalf("heartbeat %d: %s, idle %d s, want idle %d s (%v)", i, hb.Verdict, hb.IdleSeconds, want, hb.Reasons)
					}
				}
				if tt.g.empty && len(tt.g.histReads) > 0 {
					t.Fatalf("an empty GPU's history read %d times", len(tt.g.histReads))
				}
			})
		})
	}
}

// The history of a GPU that may hold a context is read often enough that
// no part of it falls out of NVML's 14 s before it is read: reads are at
// most 11 s apart whatever the sample interval up to that, and a sample
// tick a little early does not push a read to the sample after. At the
// default 5 s, it is read at every other sample, not at every one.
func TestNVMLSource_HistoryHasNoGaps(t *testing.T) {
	tests := []struct {
		sample time.Duration
		jitter time.Duration // each sample up to this much early or late
	}{
		{5 * time.Second, 0},
		{5 * time.Second, 20 * time.Millisecond},
		{3 * time.Second, 20 * time.Millisecond},
		{7 * time.Second, 0},
		{8 * time.Second, 20 * time.Millisecond},
		{time.Second, 5 * time.Millisecond},
		{11 * time.Second, 20 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v±%v", tt.sample, tt.jitter), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, 4))
				var jitter func() time.Duration
				if tt.jitter > 0 {
					jitter = func() time.Duration { return time.Duration(rng.Int64N(int64(2*tt.jitter))) - tt.jitter }
				}
				g := &burstGPU{}
				res := runLoop(t, g, tt.sample, 30*time.Second, 10*time.Minute, jitter)
				var longest time.Duration
				for i := 1; i < len(g.histReads); i++ {
					longest = max(longest, g.histReads[i].Sub(g.histReads[i-1]))
				}
				if longest > 11*time.Second+2*tt.jitter || longest >= nvmlHistory {
					t.Fatalf("history reads up to %v apart at %v samples: NVML keeps %v", longest, tt.sample, nvmlHistory)
				}
				if tt.sample == 5*time.Second && len(g.histReads) > res.samples/2+1 {
					t.Fatalf("%d history reads in %d samples: more than every other sample", len(g.histReads), res.samples)
				}
			})
		})
	}
}

// The re-sample before a release reads the history: a burst in it refuses
// the release even though the window's mean is under the threshold.
func TestExecutor_ReleaseRefusedOnBurstInHistory(t *testing.T) {
	ctx := context.Background()
	lib, ds := newMock(1)
	ds[0].GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return ReasonSWPowerCap, nvml.SUCCESS }
	hist := make([]uint32, 70)
	hist[40] = 46
	ds[0].GetSamplesFunc = func(_ nvml.SamplingType, since uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
		return nvml.VALUE_TYPE_UNSIGNED_INT, utilSamples(1000000, hist...), nvml.SUCCESS
	}
	src, err := NewNVMLSource(ctx, lib, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "released")
	var results []wire.OrderResult
	e := &Executor{
		Sampler:    &Sampler{GPU: pinnedHost{src}, Thresholds: DefaultThresholds},
		ReleaseCmd: "touch " + marker,
		Report:     func(_ context.Context, r wire.OrderResult) error { results = append(results, r); return nil },
	}
	if out := e.Release(ctx, "o1", wire.ActionRelease); out != wire.OutcomeRefusedBusy {
		t.Fatalf("outcome %s, want %s (%+v)", out, wire.OutcomeRefusedBusy, results)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the release command ran on a GPU with a burst in its history")
	}
	if len(results) != 1 || !strings.Contains(results[0].Message, "max 46%") {
		t.Fatalf("results %+v", results)
	}
}

// check warns about work seen in the history at start by the same rule as
// the verdict: a neighbour's periodic inference has a mean of 1-2 %.
func TestCheck_WarnsOnBurstInHistory(t *testing.T) {
	tests := []struct {
		name string
		hist []uint32
		want bool
	}{
		{"Burst", append(make([]uint32, 40), 60, 0, 0, 0, 0, 0, 0, 0, 0, 0), true},
		{"Quiet", append(make([]uint32, 40), 1, 0, 1, 0, 0, 0, 0, 0, 0, 0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			lib, ds := newMock(1)
			ds[0].GetSamplesFunc = func(nvml.SamplingType, uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
				return nvml.VALUE_TYPE_UNSIGNED_INT, utilSamples(1000000, tt.hist...), nvml.SUCCESS
			}
			src, err := NewNVMLSource(ctx, lib, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			host := HostReader{ProcRoot: "testdata/proc", CgroupRoot: "testdata/cgroup2"}
			r, err := Check(ctx, CheckConfig{GPU: src, Host: host, DiskPath: "/", MinDiskFreeBytes: 1})
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Contains(strings.Join(r.Warnings, "\n"), "up to 60%")
			if got != tt.want {
				t.Fatalf("warnings %q; want a busy-at-start warning: %v", r.Warnings, tt.want)
			}
		})
	}
}

// Before a release the history is read, and the instant rate too: work
// that started in the last few hundred ms, which no history sample holds
// yet, still makes the sample busy.
func TestNVMLSource_ConfirmCountsInstantRate(t *testing.T) {
	ctx := context.Background()
	lib, ds := newMock(1)
	fakeGPU(ds[0], 90, 0)
	ds[0].GetSamplesFunc = func(nvml.SamplingType, uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
		return nvml.VALUE_TYPE_UNSIGNED_INT, utilSamples(1000000, make([]uint32, 70)...), nvml.SUCCESS
	}
	src, err := NewNVMLSource(ctx, lib, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := &Sampler{GPU: pinnedHost{src}, Thresholds: DefaultThresholds}
	sm := s.SampleLevel(ctx, ReadConfirm)
	if g := sm.GPUs[0]; sm.Verdict != wire.VerdictBusy || g.UtilMax != 90 || g.UtilMean != 0 || g.UtilSamples != 70 {
		t.Fatalf("verdict %s (%v), reading %+v", sm.Verdict, sm.Reasons, g)
	}
}
