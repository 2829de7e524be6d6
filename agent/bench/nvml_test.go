//go:build cgo && linux

package bench

import (
	"errors"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/gpuledger/gpuledger/perf"
)

// h200Facts makes a dgxa100 mock device answer as a healthy H200 did.
func h200Facts(d *dgxa100.Device) {
	d.Name = "NVIDIA H200"
	d.MemoryInfo = nvml.Memory{Total: 143771 << 20, Used: 512 << 20}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 3}, nvml.SUCCESS }
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 1 << 30}}, nvml.SUCCESS
	}
	d.GetCurrPcieLinkGenerationFunc = func() (int, nvml.Return) { return 1, nvml.SUCCESS } // trained down at idle
	d.GetMaxPcieLinkGenerationFunc = func() (int, nvml.Return) { return 5, nvml.SUCCESS }
	d.GetCurrPcieLinkWidthFunc = func() (int, nvml.Return) { return 16, nvml.SUCCESS }
	d.GetMaxPcieLinkWidthFunc = func() (int, nvml.Return) { return 16, nvml.SUCCESS }
	d.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 500000, nvml.SUCCESS } // capped
	d.GetPowerManagementDefaultLimitFunc = func() (uint32, nvml.Return) { return 700000, nvml.SUCCESS }
	d.GetMaxClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 1980, nvml.SUCCESS }
	d.GetClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 1755, nvml.SUCCESS }
	d.GetEccModeFunc = func() (nvml.EnableState, nvml.EnableState, nvml.Return) {
		return nvml.FEATURE_ENABLED, nvml.FEATURE_ENABLED, nvml.SUCCESS
	}
	d.GetTotalEccErrorsFunc = func(typ nvml.MemoryErrorType, c nvml.EccCounterType) (uint64, nvml.Return) {
		if typ != nvml.MEMORY_ERROR_TYPE_UNCORRECTED || c != nvml.VOLATILE_ECC {
			return 99, nvml.SUCCESS
		}
		return 2, nvml.SUCCESS
	}
	d.GetRetiredPagesFunc = func(nvml.PageRetirementCause) ([]uint64, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
	d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 7, 3, false, true, nvml.SUCCESS }
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 34, nvml.SUCCESS }
	d.GetMigModeFunc = func() (int, int, nvml.Return) { return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_DISABLE, nvml.SUCCESS }
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return 0x4, nvml.SUCCESS }
}

func TestNVMLFacts_Static(t *testing.T) {
	srv := dgxa100.New()
	h200Facts(srv.Devices[0].(*dgxa100.Device))
	f, err := newNVMLFacts(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if drv, cuda := f.Versions(); drv != "550.54.15" || cuda != "12.4" {
		t.Errorf("versions %q %q", drv, cuda)
	}
	if f.Count() != 8 {
		t.Errorf("count %d", f.Count())
	}
	var g perf.GPU
	g.Index = 0
	f.Static(0, &g)
	want := perf.GPU{
		Index: 0, Name: "NVIDIA H200", Model: "H200", UUID: srv.Devices[0].(*dgxa100.Device).UUID,
		MemoryTotalMiB: 143771, MemoryUsedMiB: 512, UtilPercent: 3, OtherProcs: 1,
		PCIeGen: 1, PCIeGenMax: 5, PCIeWidth: 16, PCIeWidthMax: 16, PowerLimitW: 500, PowerDefaultW: 700,
		SMClockMaxMHz: 1980, ECCUncorrected: 2, RetiredPages: 4, TemperatureC: 34,
	}
	if g.ECC == nil || !*g.ECC {
		t.Errorf("ECC %v", g.ECC)
	}
	g.ECC = nil
	if g != want {
		t.Errorf("Static:\n got %+v\nwant %+v", g, want)
	}
	s := f.Sample(0)
	if s != (nvSample{SMClockMHz: 1755, Reasons: 0x4, TempC: 34, PCIeGen: 1, PCIeWidth: 16}) {
		t.Errorf("Sample %+v", s)
	}
}

// A device whose functions the mock lacks (they panic) or that answers
// errors or nonsense leaves facts unknown, never ends the bench.
func TestNVMLFacts_Unanswered(t *testing.T) {
	srv := dgxa100.New()
	d := srv.Devices[1].(*dgxa100.Device)
	d.GetMaxClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 4000000000, nvml.SUCCESS }
	d.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetCurrPcieLinkGenerationFunc = func() (int, nvml.Return) { return -1, nvml.SUCCESS }
	f, err := newNVMLFacts(srv)
	if err != nil {
		t.Fatal(err)
	}
	var g perf.GPU
	f.Static(1, &g)
	f.Static(42, &g) // no such device
	_ = f.Sample(1)
	_ = f.Sample(-1)
	if g.Name != "Mock NVIDIA A100-SXM4-40GB" || g.SMClockMaxMHz != 0 || g.PowerLimitW != 0 || g.PCIeGen != 0 || g.ECC != nil {
		t.Errorf("Static %+v", g)
	}
}

// Optional functions an old driver lacks are not called: go-nvml would
// abort the process on a missing symbol.
func TestNVMLFacts_OldDriver(t *testing.T) {
	srv := dgxa100.New()
	h200Facts(srv.Devices[0].(*dgxa100.Device))
	d := srv.Devices[0].(*dgxa100.Device)
	throttle := false
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { panic("called a symbol the driver lacks") }
	d.GetCurrentClocksThrottleReasonsFunc = func() (uint64, nvml.Return) { throttle = true; return 0x8, nvml.SUCCESS }
	d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { panic("called a symbol the driver lacks") }
	srv.LookupSymbolFunc = func(sym string) error {
		switch sym {
		case "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetRemappedRows":
			return errors.New("missing")
		}
		return nil
	}
	f, err := newNVMLFacts(srv)
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Sample(0); !throttle || s.Reasons != 0x8 {
		t.Errorf("reasons %#x from the older function: %v", s.Reasons, throttle)
	}
	var g perf.GPU
	f.Static(0, &g)
	if g.RetiredPages != 0 {
		t.Errorf("retired %d", g.RetiredPages)
	}
}

// Memory in use leaves out what the driver reserves where NVML can say.
func TestNVMLFacts_MemoryV2(t *testing.T) {
	srv := dgxa100.New()
	d := srv.Devices[0].(*dgxa100.Device)
	h200Facts(d)
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
		return nvml.Memory_v2{Total: 143771 << 20, Reserved: 612 << 20, Used: 3 << 20}, nvml.SUCCESS
	}
	f, err := newNVMLFacts(srv)
	if err != nil {
		t.Fatal(err)
	}
	var g perf.GPU
	f.Static(0, &g)
	if g.MemoryUsedMiB != 3 || g.MemoryTotalMiB != 143771 {
		t.Errorf("memory %d of %d MiB", g.MemoryUsedMiB, g.MemoryTotalMiB)
	}
}

func TestNVMLFacts_InitFails(t *testing.T) {
	srv := dgxa100.New()
	srv.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	if f, err := newNVMLFacts(srv); err == nil || f != nil {
		t.Errorf("got %v, %v", f, err)
	}
}
