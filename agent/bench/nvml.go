//go:build cgo && linux

package bench

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpuledger/gpuledger/perf"
)

// openFacts initialises NVML in this process (the bench's own; the
// daemon's stays as it was) and reads its GPUs.
func openFacts() (factReader, error) {
	f, err := newNVMLFacts(nvml.New())
	if err != nil {
		return nil, err // not a nil *nvmlFacts in a non-nil interface
	}
	return f, nil
}

// nvmlFacts is a factReader over go-nvml: the real library or its mock.
// Every call is guarded: a mock without the function, or a driver that
// answers nonsense, leaves that fact unknown instead of ending the bench.
type nvmlFacts struct {
	lib  nvml.Interface
	devs []nvml.Device // nil entries: a handle NVML would not give
	has  nvmlSymbols
}

// nvmlSymbols records which optional NVML functions the loaded library
// has: go-nvml resolves symbols lazily and a call to a missing one aborts
// the process, so newer ones are looked up first (as the agent does).
type nvmlSymbols struct {
	eventReasons, throttleReasons, remappedRows, processes, migMode, cudaVersion, memoryV2 bool
}

func newNVMLFacts(lib nvml.Interface) (*nvmlFacts, error) {
	var ret nvml.Return = nvml.ERROR_UNKNOWN
	guard(func() { ret = lib.Init() })
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("bench: nvml init: %s", nvmlErrString(ret))
	}
	f := &nvmlFacts{lib: lib}
	f.has = nvmlSymbols{
		eventReasons:    f.lookup("nvmlDeviceGetCurrentClocksEventReasons"),
		throttleReasons: f.lookup("nvmlDeviceGetCurrentClocksThrottleReasons"),
		remappedRows:    f.lookup("nvmlDeviceGetRemappedRows"),
		processes:       f.lookup("nvmlDeviceGetComputeRunningProcesses"),
		migMode:         f.lookup("nvmlDeviceGetMigMode"),
		cudaVersion:     f.lookup("nvmlSystemGetCudaDriverVersion"),
		memoryV2:        f.lookup("nvmlDeviceGetMemoryInfo_v2"),
	}
	n := 0
	guard(func() {
		if c, r := lib.DeviceGetCount(); r == nvml.SUCCESS && c > 0 {
			n = min(c, 4*MaxDevices)
		}
	})
	for i := range n {
		var d nvml.Device
		guard(func() {
			if h, r := lib.DeviceGetHandleByIndex(i); r == nvml.SUCCESS {
				d = h
			}
		})
		f.devs = append(f.devs, d)
	}
	return f, nil
}

// guard runs fn, turning a panic (a mock's missing function) into nothing.
func guard(fn func()) {
	defer func() { _ = recover() }()
	fn()
}

func nvmlErrString(r nvml.Return) (s string) {
	s = fmt.Sprintf("NVML error %d", int32(r))
	guard(func() { s = nvml.ErrorString(r) })
	return s
}

func (f *nvmlFacts) lookup(sym string) (ok bool) {
	ok = true // a mock without Extensions has every symbol
	guard(func() {
		if ext := f.lib.Extensions(); ext != nil {
			ok = ext.LookupSymbol(sym) == nil
		}
	})
	return ok
}

func (f *nvmlFacts) Versions() (drv, cuda string) {
	guard(func() {
		if v, r := f.lib.SystemGetDriverVersion(); r == nvml.SUCCESS {
			drv = v
		}
	})
	if f.has.cudaVersion {
		guard(func() {
			if v, r := f.lib.SystemGetCudaDriverVersion(); r == nvml.SUCCESS && v > 0 {
				cuda = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
			}
		})
	}
	return drv, cuda
}

func (f *nvmlFacts) Count() int { return len(f.devs) }

func (f *nvmlFacts) Close() { guard(func() { _ = f.lib.Shutdown() }) }

// Plausibility bounds: a driver's answer outside them is not a fact.
const (
	maxClockMHz   = 10000
	maxPowerW     = 5000
	maxTempC      = 200
	maxPCIeGen    = 16
	maxPCIeWidth  = 64
	maxUtilPct    = 100
	maxCountValue = 1 << 30
)

func (f *nvmlFacts) dev(i int) nvml.Device {
	if i < 0 || i >= len(f.devs) {
		return nil
	}
	return f.devs[i]
}

// Static implements factReader.
func (f *nvmlFacts) Static(i int, g *perf.GPU) {
	d := f.dev(i)
	if d == nil {
		return
	}
	guard(func() {
		if s, r := d.GetName(); r == nvml.SUCCESS {
			g.Name = s
			g.Model = perf.DisplayName(s)
		}
	})
	guard(func() {
		if s, r := d.GetUUID(); r == nvml.SUCCESS {
			g.UUID = s
		}
	})
	// The v2 query leaves out what the driver reserves (615 MiB of an
	// idle H200 on driver 580), which v1 counts as used: only v2's used
	// is memory some process holds.
	memOK := false
	if f.has.memoryV2 {
		guard(func() {
			if m, r := d.GetMemoryInfo_v2(); r == nvml.SUCCESS && m.Total > 0 && m.Used <= m.Total {
				g.MemoryTotalMiB, g.MemoryUsedMiB, memOK = m.Total>>20, m.Used>>20, true
			}
		})
	}
	if !memOK {
		guard(func() {
			if m, r := d.GetMemoryInfo(); r == nvml.SUCCESS && m.Used <= m.Total {
				g.MemoryTotalMiB, g.MemoryUsedMiB = m.Total>>20, m.Used>>20
			}
		})
	}
	guard(func() {
		if u, r := d.GetUtilizationRates(); r == nvml.SUCCESS && u.Gpu <= maxUtilPct {
			g.UtilPercent = float64(u.Gpu)
		}
	})
	if f.has.processes {
		guard(func() {
			// Inside a container the list may be empty whatever runs:
			// a count, never proof of an idle GPU.
			if ps, r := d.GetComputeRunningProcesses(); r == nvml.SUCCESS && len(ps) < maxCountValue {
				g.OtherProcs = len(ps)
			}
		})
	}
	guard(func() {
		if v, r := d.GetCurrPcieLinkGeneration(); r == nvml.SUCCESS && v > 0 && v <= maxPCIeGen {
			g.PCIeGen = v
		}
	})
	guard(func() {
		if v, r := d.GetMaxPcieLinkGeneration(); r == nvml.SUCCESS && v > 0 && v <= maxPCIeGen {
			g.PCIeGenMax = v
		}
	})
	guard(func() {
		if v, r := d.GetCurrPcieLinkWidth(); r == nvml.SUCCESS && v > 0 && v <= maxPCIeWidth {
			g.PCIeWidth = v
		}
	})
	guard(func() {
		if v, r := d.GetMaxPcieLinkWidth(); r == nvml.SUCCESS && v > 0 && v <= maxPCIeWidth {
			g.PCIeWidthMax = v
		}
	})
	guard(func() {
		if v, r := d.GetEnforcedPowerLimit(); r == nvml.SUCCESS && v > 0 && v <= maxPowerW*1000 {
			g.PowerLimitW = float64(v) / 1000
		}
	})
	guard(func() {
		if v, r := d.GetPowerManagementDefaultLimit(); r == nvml.SUCCESS && v > 0 && v <= maxPowerW*1000 {
			g.PowerDefaultW = float64(v) / 1000
		}
	})
	guard(func() {
		if v, r := d.GetMaxClockInfo(nvml.CLOCK_SM); r == nvml.SUCCESS && v > 0 && v <= maxClockMHz {
			g.SMClockMaxMHz = int(v)
		}
	})
	guard(func() {
		if cur, _, r := d.GetEccMode(); r == nvml.SUCCESS {
			on := cur == nvml.FEATURE_ENABLED
			g.ECC = &on
		}
	})
	if g.ECC != nil && *g.ECC {
		guard(func() {
			if v, r := d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC); r == nvml.SUCCESS && v < maxCountValue {
				g.ECCUncorrected = v
			}
		})
	}
	g.RetiredPages = f.retired(d)
	guard(func() {
		if v, r := d.GetTemperature(nvml.TEMPERATURE_GPU); r == nvml.SUCCESS && v <= maxTempC {
			g.TemperatureC = int(v)
		}
	})
	if f.has.migMode {
		guard(func() {
			if cur, _, r := d.GetMigMode(); r == nvml.SUCCESS && cur == nvml.DEVICE_MIG_ENABLE {
				g.MIG = true
			}
		})
	}
}

// retired counts a card's lost memory: retired pages (both causes) on
// cards before Ampere, rows remapped for uncorrectable errors on later
// ones (plus one when a remapping failed).
func (f *nvmlFacts) retired(d nvml.Device) int {
	n, ok := 0, false
	for _, cause := range []nvml.PageRetirementCause{nvml.PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR} {
		guard(func() {
			if ps, r := d.GetRetiredPages(cause); r == nvml.SUCCESS && len(ps) < maxCountValue {
				n += len(ps)
				ok = true
			}
		})
	}
	if ok || !f.has.remappedRows {
		return n
	}
	guard(func() {
		if _, unc, _, failed, r := d.GetRemappedRows(); r == nvml.SUCCESS && unc >= 0 && unc < maxCountValue {
			n = unc
			if failed {
				n++
			}
		}
	})
	return n
}

// Sample implements factReader.
func (f *nvmlFacts) Sample(i int) nvSample {
	var s nvSample
	d := f.dev(i)
	if d == nil {
		return s
	}
	guard(func() {
		if v, r := d.GetClockInfo(nvml.CLOCK_SM); r == nvml.SUCCESS && v <= maxClockMHz {
			s.SMClockMHz = int(v)
		}
	})
	switch {
	case f.has.eventReasons:
		guard(func() {
			if v, r := d.GetCurrentClocksEventReasons(); r == nvml.SUCCESS {
				s.Reasons = v
			}
		})
	case f.has.throttleReasons:
		guard(func() {
			if v, r := d.GetCurrentClocksThrottleReasons(); r == nvml.SUCCESS {
				s.Reasons = v
			}
		})
	}
	guard(func() {
		if v, r := d.GetTemperature(nvml.TEMPERATURE_GPU); r == nvml.SUCCESS && v <= maxTempC {
			s.TempC = int(v)
		}
	})
	guard(func() {
		if v, r := d.GetCurrPcieLinkGeneration(); r == nvml.SUCCESS && v > 0 && v <= maxPCIeGen {
			s.PCIeGen = v
		}
	})
	guard(func() {
		if v, r := d.GetCurrPcieLinkWidth(); r == nvml.SUCCESS && v > 0 && v <= maxPCIeWidth {
			s.PCIeWidth = v
		}
	})
	return s
}
