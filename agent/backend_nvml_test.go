//go:build cgo && linux

package agent

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

// fakeGPU sets the readings the agent uses on a dgxa100 mock device.
func fakeGPU(d *dgxa100.Device, util uint32, memUsedMiB uint64) {
	d.MemoryInfo.Used = memUsedMiB << 20
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		return nvml.Utilization{Gpu: util}, nvml.SUCCESS
	}
	d.GetSamplesFunc = func(nvml.SamplingType, uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
		return 0, nil, nvml.ERROR_NOT_SUPPORTED
	}
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 61000, nvml.SUCCESS }
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 33, nvml.SUCCESS }
	d.GetClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 345, nvml.SUCCESS }
	d.GetMaxClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 1980, nvml.SUCCESS }
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return ReasonGPUIdle, nvml.SUCCESS }
	d.GetCurrentClocksThrottleReasonsFunc = d.GetCurrentClocksEventReasonsFunc
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
}

func newMock(n int) (*dgxa100.Server, []*dgxa100.Device) {
	s := dgxa100.New()
	s.DeviceGetCountFunc = func() (int, nvml.Return) { return n, nvml.SUCCESS }
	var ds []*dgxa100.Device
	for i := range n {
		d := s.Devices[i].(*dgxa100.Device)
		fakeGPU(d, 0, 0)
		ds = append(ds, d)
	}
	return s, ds
}

func utilSamples(ts0 uint64, vals ...uint32) []nvml.Sample {
	var out []nvml.Sample
	for i, v := range vals {
		var b [8]byte
		binary.LittleEndian.PutUint32(b[:], v)
		out = append(out, nvml.Sample{TimeStamp: ts0 + uint64(i)*200000, SampleValue: b})
	}
	return out
}

func TestNVMLSource_Facts(t *testing.T) {
	lib, _ := newMock(2)
	src, err := NewNVMLSource(context.Background(), lib, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f, err := src.Facts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if f.DriverVersion != "550.54.15" || f.CUDADriverVersion != "12.4" || len(f.GPUs) != 2 {
		t.Fatalf("%+v", f)
	}
	g := f.GPUs[1]
	if g.Name != "Mock NVIDIA A100-SXM4-40GB" || !strings.HasPrefix(g.UUID, "GPU-") || g.MemoryTotalMiB != 40960 || g.SMClockMaxMHz != 1980 {
		t.Fatalf("%+v", g)
	}
}

func TestNVMLSource_Read(t *testing.T) {
	ctx := context.Background()
	t.Run("Samples", func(t *testing.T) {
		lib, ds := newMock(1)
		var since []uint64
		ds[0].GetSamplesFunc = func(st nvml.SamplingType, last uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
			since = append(since, last)
			if st != nvml.GPU_UTILIZATION_SAMPLES {
				t.Errorf("sampling type %v", st)
			}
			if last >= 1000000 {
				return 0, nil, nvml.ERROR_NOT_FOUND
			}
			return nvml.VALUE_TYPE_UNSIGNED_INT, utilSamples(200000, 0, 100, 100, 0), nvml.SUCCESS
		}
		src, _ := NewNVMLSource(ctx, lib, time.Second)
		gs, err := src.Read(ctx, ReadConfirm)
		if err != nil {
			t.Fatal(err)
		}
		g := gs[0]
		if !g.UtilOK || g.UtilSource != "samples" || g.UtilMean != 50 || g.UtilMax != 100 || g.UtilSamples != 4 {
			t.Fatalf("%+v", g)
		}
		if !g.PowerOK || g.PowerW != 61 || g.TempC != 33 || g.SMClockMHz != 345 || g.ClockReasons != ReasonGPUIdle {
			t.Fatalf("%+v", g)
		}
		// The next read asks only for newer samples and, finding none,
		// falls back to the instantaneous rate.
		gs, _ = src.Read(ctx, ReadConfirm)
		if since[1] != 200000+3*200000 || gs[0].UtilSource != "rates" || !gs[0].UtilOK {
			t.Fatalf("since %v, %+v", since, gs[0])
		}
	})
	t.Run("ImplausibleRate", func(t *testing.T) {
		lib, ds := newMock(2)
		fakeGPU(ds[1], 4294967295, 0)
		src, _ := NewNVMLSource(ctx, lib, time.Second)
		gs, err := src.Read(ctx, ReadConfirm)
		if err != nil || !gs[0].UtilOK || gs[1].UtilOK || !strings.Contains(gs[1].Err, "implausible") {
			t.Fatalf("%+v %v", gs, err)
		}
		sm := &Sample{GPUs: gs, CPUOK: true, NetOK: true}
		if v, _ := Decide(sm, DefaultThresholds); v != "unknown" {
			t.Fatalf("verdict %s", v)
		}
	})
	t.Run("ImplausibleSample", func(t *testing.T) {
		lib, ds := newMock(1)
		ds[0].GetSamplesFunc = func(nvml.SamplingType, uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
			return nvml.VALUE_TYPE_UNSIGNED_INT, utilSamples(1, 3, 0xFFFFFFFF), nvml.SUCCESS
		}
		src, _ := NewNVMLSource(ctx, lib, time.Second)
		gs, _ := src.Read(ctx, ReadConfirm)
		if gs[0].UtilOK {
			t.Fatalf("implausible sample accepted (rates must not paper over it): %+v", gs[0])
		}
	})
	t.Run("MemoryAboveTotal", func(t *testing.T) {
		lib, ds := newMock(1)
		ds[0].MemoryInfo.Used = ds[0].MemoryInfo.Total * 2
		src, _ := NewNVMLSource(ctx, lib, time.Second)
		gs, _ := src.Read(ctx, ReadConfirm)
		if gs[0].UtilOK || gs[0].MemOK {
			t.Fatalf("%+v", gs[0])
		}
	})
	t.Run("GPUIsLost", func(t *testing.T) {
		lib, ds := newMock(2)
		src, _ := NewNVMLSource(ctx, lib, time.Second)
		ds[0].GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_GPU_IS_LOST }
		gs, err := src.Read(ctx, ReadConfirm)
		if err != nil || gs[0].UtilOK || gs[0].Err != "gpu is lost" || !gs[1].UtilOK {
			t.Fatalf("%+v %v", gs, err)
		}
	})
	t.Run("ReinitAfterAllFail", func(t *testing.T) {
		lib, ds := newMock(1)
		var inits atomic.Int32
		lib.InitFunc = func() nvml.Return { inits.Add(1); return nvml.SUCCESS }
		src, _ := NewNVMLSource(ctx, lib, time.Second)
		ds[0].GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_UNKNOWN }
		for range 4 {
			src.Read(ctx, ReadConfirm)
		}
		if inits.Load() != 2 {
			t.Fatalf("inits %d, want a re-init after 3 failed reads", inits.Load())
		}
	})
	t.Run("OldDriverSymbols", func(t *testing.T) {
		lib, ds := newMock(1)
		lib.LookupSymbolFunc = func(s string) error {
			if s == "nvmlDeviceGetSamples" || s == "nvmlDeviceGetCurrentClocksEventReasons" {
				return errors.New("undefined symbol")
			}
			return nil
		}
		ds[0].GetSamplesFunc = func(nvml.SamplingType, uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
			panic("missing symbol called")
		}
		ds[0].GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { panic("missing symbol called") }
		ds[0].GetCurrentClocksThrottleReasonsFunc = func() (uint64, nvml.Return) { return ReasonHWSlowdown, nvml.SUCCESS }
		src, _ := NewNVMLSource(ctx, lib, time.Second)
		gs, err := src.Read(ctx, ReadConfirm)
		if err != nil || !gs[0].UtilOK || gs[0].ClockReasons != ReasonHWSlowdown {
			t.Fatalf("%+v %v", gs, err)
		}
	})
	t.Run("PanicRecovered", func(t *testing.T) {
		lib, ds := newMock(1)
		ds[0].GetPowerUsageFunc = nil // the mock panics on an unset func
		src, _ := NewNVMLSource(ctx, lib, time.Second)
		if _, err := src.Read(ctx, ReadConfirm); err == nil || !strings.Contains(err.Error(), "panicked") {
			t.Fatal(err)
		}
	})
}

func TestNVMLSource_Errors(t *testing.T) {
	ctx := context.Background()
	t.Run("ErrNoNVML", func(t *testing.T) {
		lib, _ := newMock(1)
		lib.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
		if _, err := NewNVMLSource(ctx, lib, time.Second); !errors.Is(err, ErrNoNVML) {
			t.Fatal(err)
		}
	})
	t.Run("NoGPUs", func(t *testing.T) {
		lib, _ := newMock(0)
		src, err := NewNVMLSource(ctx, lib, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.Read(ctx, ReadConfirm); err == nil {
			t.Fatal("read with no gpus succeeded")
		}
	})
	t.Run("ErrHung", func(t *testing.T) {
		lib, ds := newMock(1)
		// Start under a generous watchdog (a loaded machine can take more
		// than 20 ms to start the mock), then tighten it for the hang.
		src, err := NewNVMLSource(ctx, lib, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		src.wd.timeout = 20 * time.Millisecond
		release := make(chan struct{})
		ds[0].GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			<-release
			return nvml.Utilization{}, nvml.SUCCESS
		}
		if _, err := src.Read(ctx, ReadConfirm); !errors.Is(err, ErrHung) {
			t.Fatal(err)
		}
		if _, err := src.Read(ctx, ReadConfirm); !errors.Is(err, ErrHung) {
			t.Fatal("second read started while the first hangs:", err)
		}
		close(release)
		for range 100 {
			if _, err := src.Read(ctx, ReadConfirm); err == nil {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatal("reads did not recover after the hang ended")
	})
}

func TestOpenNVML_NoLibrary(t *testing.T) {
	// This machine may or may not have a driver; either way OpenNVML must
	// return promptly and never panic.
	src, err := OpenNVML(context.Background(), 5*time.Second)
	if err != nil {
		t.Logf("no nvml here: %v", err)
		return
	}
	defer src.Close()
	f, err := src.Facts(context.Background())
	t.Logf("nvml: %+v %v", f, err)
}

func BenchmarkNVMLSource_Read(b *testing.B) {
	lib, _ := newMock(8)
	src, _ := NewNVMLSource(context.Background(), lib, time.Second)
	for b.Loop() {
		src.Read(context.Background(), ReadFull)
	}
}

func TestNVMLSource_ReadLevels(t *testing.T) {
	ctx := context.Background()
	lib, ds := newMock(1)
	var samples, mem, procs, calls int
	ds[0].GetSamplesFunc = func(nvml.SamplingType, uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
		samples++
		calls++
		// Fresh samples at every call, as NVML gives after time passes.
		return nvml.VALUE_TYPE_UNSIGNED_INT, utilSamples(uint64(calls)*1000000, 40, 60), nvml.SUCCESS
	}
	// A process holds a context: the GPU is not idle as the driver sees it.
	ds[0].GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return ReasonSWPowerCap, nvml.SUCCESS }
	memInfo := ds[0].GetMemoryInfoFunc
	ds[0].GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { mem++; return memInfo() }
	ds[0].GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		procs++
		return []nvml.ProcessInfo{{Pid: 7, UsedGpuMemory: 1 << 30}}, nvml.SUCCESS
	}
	src, err := NewNVMLSource(ctx, lib, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                   string
		level                  ReadLevel
		utilSamples            bool
		wantSource             string
		wantSamples, wantProcs int
		wantProcsOK            bool
	}{
		// The mock's current rate is 0: a quiet instant on a GPU that may
		// hold a context, so the first fast read looks at the history (and
		// finds the 40/60 burst); the next ones, moments later, do not.
		{"FastQuietReadsHistory", ReadFast, false, "samples", 1, 0, false},
		{"FastQuietAgain", ReadFast, false, "rates", 0, 0, false},
		{"Full", ReadFull, false, "rates", 0, 1, true},
		{"Confirm", ReadConfirm, false, "samples", 1, 1, true},
		{"FastWithUtilSamples", ReadFast, true, "samples", 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples, mem, procs = 0, 0, 0
			src.SetUtilSamples(tt.utilSamples)
			gs, err := src.Read(ctx, tt.level)
			if err != nil {
				t.Fatal(err)
			}
			g := gs[0]
			if samples != tt.wantSamples || mem != 1 || procs != tt.wantProcs {
				t.Fatalf("calls: samples %d mem %d procs %d; want %d 1 %d", samples, mem, procs, tt.wantSamples, tt.wantProcs)
			}
			if !g.UtilOK || g.UtilSource != tt.wantSource || !g.MemOK || g.ProcsOK != tt.wantProcsOK ||
				!g.ReasonsOK || !g.PowerOK {
				t.Fatalf("%+v", g)
			}
			if g.ProcsOK && (len(g.Procs) != 1 || g.Procs[0].PID != 7) {
				t.Fatalf("procs %+v", g.Procs)
			}
			if g.MemoryTotalMiB == 0 {
				t.Fatal("memory total lost on a fast read")
			}
		})
	}
}

// A quiet GPU that no process can be using (the driver's idle reason, no
// memory above the floor, no process listed) is not worth 2.3 ms of
// history; one that may hold a context is.
func TestNVMLSource_HistoryOnlyWhenAContextMayExist(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		reasons []uint64 // per read
		memMiB  []uint64 // per read
		procs   bool     // a Full read first lists a process
		want    []int    // history reads per read
	}{
		{"EmptyGPU", []uint64{ReasonGPUIdle, ReasonGPUIdle}, []uint64{615, 620}, false, []int{0, 0}},
		{"ContextHeldNotIdle", []uint64{0}, []uint64{615}, false, []int{1}},
		{"IdleReasonButMemoryRose", []uint64{ReasonGPUIdle, ReasonGPUIdle}, []uint64{615, 615 + contextMiB + 1}, false, []int{0, 1}},
		{"IdleReasonButProcessListed", []uint64{ReasonGPUIdle}, []uint64{615}, true, []int{1}},
		{"ReasonsUnreadable", nil, []uint64{615}, false, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib, ds := newMock(1)
			var hist, read int
			ds[0].GetSamplesFunc = func(nvml.SamplingType, uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
				hist++
				return nvml.VALUE_TYPE_UNSIGNED_INT, utilSamples(uint64(hist)*1000000, 0, 0), nvml.SUCCESS
			}
			ds[0].GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) {
				if tt.reasons == nil {
					return 0, nvml.ERROR_UNKNOWN
				}
				return tt.reasons[min(read, len(tt.reasons)-1)], nvml.SUCCESS
			}
			ds[0].GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
				return nvml.Memory{Total: 80 << 30, Used: tt.memMiB[min(read, len(tt.memMiB)-1)] << 20}, nvml.SUCCESS
			}
			if tt.procs {
				ds[0].GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
					return []nvml.ProcessInfo{{Pid: 9, UsedGpuMemory: 1 << 30}}, nvml.SUCCESS
				}
			}
			src, err := NewNVMLSource(ctx, lib, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if tt.procs {
				src.Read(ctx, ReadFull)
			}
			for i, want := range tt.want {
				read = i
				hist = 0
				src.lastHist[0] = time.Time{} // past histMaxGap
				if _, err := src.Read(ctx, ReadFast); err != nil {
					t.Fatal(err)
				}
				if hist != want {
					t.Fatalf("read %d: %d history reads, want %d", i, hist, want)
				}
			}
		})
	}
}
