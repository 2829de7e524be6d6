//go:build cgo && linux

package agent

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// NVMLAvailable reports whether this build can use NVML (cgo on Linux).
const NVMLAvailable = true

// OpenNVML loads libnvidia-ml (dlopen, at run time: the binary does not
// link it) and returns a source over it. It fails with ErrNoNVML when the
// library is missing or the driver not loaded, and never blocks longer than
// timeout.
func OpenNVML(ctx context.Context, timeout time.Duration) (GPUSource, error) {
	return NewNVMLSource(ctx, nvml.New(), timeout)
}

// NVMLSource is a GPUSource over an nvml.Interface (the real library, or
// go-nvml's mock in tests). Every Read runs under a watchdog.
type NVMLSource struct {
	lib nvml.Interface
	wd  watchdog

	facts   GPUFacts
	devs    []nvml.Device
	lastTS  []uint64 // per device: timestamp (µs) of the last utilisation sample seen
	noSampl []bool   // per device: nvmlDeviceGetSamples unsupported
	has     symbols
	failRun int // consecutive reads in which every GPU failed

	// utilSamples: read every utilisation sample since the last at every
	// read, not only for ReadConfirm. Gap-free, but nvmlDeviceGetSamples
	// costs about 2.3 ms of CPU per GPU on an H200 (the driver asks the
	// GPU's firmware), 1000 times a GetUtilizationRates.
	utilSamples bool
	// lastHist: per device, when utilisation history was last read. A
	// fast read that sees a quiet GPU which may hold a CUDA context reads
	// the history too when waiting for the next sample would leave more
	// than histMaxGap since the last read: NVML keeps about 14 s of it, so
	// every burst between samples is still there when it is read.
	lastHist []time.Time
	// prevRead and step: when the last read below ReadConfirm (the
	// sampling loop's) began, and the time between the last two, which
	// predicts when the next one comes.
	prevRead time.Time
	step     time.Duration
	// memFloor: per device, the least memory in use seen (MiB), the level
	// of a GPU that no process holds; math.MaxUint64 until first read.
	memFloor []uint64
	// procs: per device, whether the last process list (read once per
	// heartbeat) showed any compute process. Inside containers the list
	// is often empty whatever runs, so only a non-empty one counts.
	procs []bool
}

// histMaxGap is the longest time between two reads of the utilisation
// history of a quiet GPU that may hold a CUDA context. NVML keeps about
// 14 s of it on the H200; the margin covers a sample that comes late. At
// the default 5 s samples the history is read at every other sample (10 s
// apart): 2.3 ms of CPU per GPU every 10 s, and no sample NVML took is
// lost. Sample intervals of 7-11 s read it at every sample; above about
// 14 s the history cannot cover the gap between samples.
const histMaxGap = 11 * time.Second

// contextMiB is how far above its floor a GPU's memory in use may be
// while no CUDA context exists: a context reserves hundreds of MiB, and
// the driver's own use wanders by a few.
const contextMiB = 64

// quietUtil is the instantaneous utilisation (percent) under which a fast
// read double-checks the history: at or above it the GPU is busy anyway.
const quietUtil = 5

// symbols records which optional NVML functions the loaded library has.
type symbols struct {
	samples, eventReasons, throttleReasons, cudaVersion, processes bool
}

// SetUtilSamples makes every read (not only ReadConfirm) use every
// utilisation sample NVML holds since the previous read: gap-free, at
// about 2.3 ms of CPU per GPU per read on an H200.
func (s *NVMLSource) SetUtilSamples(on bool) { s.utilSamples = on }

// NewNVMLSource initialises lib and enumerates its GPUs.
func NewNVMLSource(ctx context.Context, lib nvml.Interface, timeout time.Duration) (*NVMLSource, error) {
	s := &NVMLSource{lib: lib, wd: watchdog{timeout: timeout}}
	err := s.wd.do(ctx, s.init)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func nvmlErr(what string, r nvml.Return) error {
	return fmt.Errorf("agent: nvml %s: %s", what, nvml.ErrorString(r))
}

func (s *NVMLSource) init() error {
	if r := s.lib.Init(); r != nvml.SUCCESS {
		switch r {
		case nvml.ERROR_LIBRARY_NOT_FOUND:
			return fmt.Errorf("%w: libnvidia-ml.so.1 not found (no NVIDIA driver here, or a container started without GPU access)", ErrNoNVML)
		case nvml.ERROR_DRIVER_NOT_LOADED, nvml.ERROR_NO_PERMISSION:
			return fmt.Errorf("%w: %w", ErrNoNVML, nvmlErr("init", r))
		}
		return nvmlErr("init", r)
	}
	s.has = symbols{
		samples:         s.lookup("nvmlDeviceGetSamples"),
		eventReasons:    s.lookup("nvmlDeviceGetCurrentClocksEventReasons"),
		throttleReasons: s.lookup("nvmlDeviceGetCurrentClocksThrottleReasons"),
		cudaVersion:     s.lookup("nvmlSystemGetCudaDriverVersion"),
		processes:       s.lookup("nvmlDeviceGetComputeRunningProcesses"),
	}
	f := GPUFacts{Source: "nvml"}
	if v, r := s.lib.SystemGetDriverVersion(); r == nvml.SUCCESS {
		f.DriverVersion = v
	}
	if s.has.cudaVersion {
		if v, r := s.lib.SystemGetCudaDriverVersion(); r == nvml.SUCCESS && v > 0 {
			f.CUDADriverVersion = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
		}
	}
	n, r := s.lib.DeviceGetCount()
	if r != nvml.SUCCESS {
		_ = s.lib.Shutdown()
		return nvmlErr("device count", r)
	}
	if n > wire.MaxGPUs {
		n = wire.MaxGPUs
	}
	s.devs, s.lastTS, s.noSampl, s.lastHist, s.memFloor, s.procs = nil, nil, nil, nil, nil, nil
	for i := range n {
		d, r := s.lib.DeviceGetHandleByIndex(i)
		fact := wire.GPUFact{Index: i}
		if r != nvml.SUCCESS {
			d = nil
		} else {
			fact.Name, _ = d.GetName()
			fact.UUID, _ = d.GetUUID()
			if m, r := d.GetMemoryInfo(); r == nvml.SUCCESS {
				fact.MemoryTotalMiB = m.Total >> 20
			}
			if c, r := d.GetMaxClockInfo(nvml.CLOCK_SM); r == nvml.SUCCESS && c < maxPlausibleClock {
				fact.SMClockMaxMHz = c
			}
		}
		s.devs = append(s.devs, d)
		s.lastTS = append(s.lastTS, 0)
		s.lastHist = append(s.lastHist, time.Time{})
		s.noSampl = append(s.noSampl, false)
		s.memFloor = append(s.memFloor, math.MaxUint64)
		s.procs = append(s.procs, false)
		f.GPUs = append(f.GPUs, fact)
	}
	s.facts = f
	return nil
}

// lookup reports whether the loaded library exports sym. Old drivers lack
// some; go-nvml resolves symbols lazily and a call to a missing one aborts
// the process, so each optional one is looked up first. Mocks without an
// Extensions implementation are taken to have every symbol.
func (s *NVMLSource) lookup(sym string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = true
		}
	}()
	ext := s.lib.Extensions()
	if ext == nil {
		return true
	}
	return ext.LookupSymbol(sym) == nil
}

// Facts implements GPUSource.
func (s *NVMLSource) Facts(context.Context) (GPUFacts, error) {
	if len(s.facts.GPUs) == 0 {
		return s.facts, errors.New("agent: nvml sees no gpus")
	}
	return s.facts, nil
}

// Read implements GPUSource. Every read runs on one goroutine under the
// watchdog (one hand-off per read, not per call).
func (s *NVMLSource) Read(ctx context.Context, level ReadLevel) ([]GPUReading, error) {
	var out []GPUReading
	err := s.wd.do(ctx, func() error {
		if s.failRun >= 3 {
			// Every GPU failed three reads running (a lost GPU, a
			// driver reload): start NVML afresh.
			_ = s.lib.Shutdown()
			if err := s.init(); err != nil {
				return fmt.Errorf("agent: nvml re-init: %w", err)
			}
			s.failRun = 0
		}
		out = s.read(level)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("agent: nvml sees no gpus")
	}
	return out, nil
}

func (s *NVMLSource) read(level ReadLevel) []GPUReading {
	if level < ReadConfirm {
		now := time.Now()
		if !s.prevRead.IsZero() {
			s.step = now.Sub(s.prevRead)
		}
		s.prevRead = now
	}
	out := make([]GPUReading, 0, len(s.devs))
	allFailed := true
	for i, d := range s.devs {
		f := s.facts.GPUs[i]
		g := GPUReading{Index: i, UUID: f.UUID, Name: f.Name, MemoryTotalMiB: f.MemoryTotalMiB, SMClockMaxMHz: f.SMClockMaxMHz}
		if d == nil {
			g.Err = "no handle"
			out = append(out, g)
			continue
		}
		s.readDevice(i, d, &g, level)
		g.validate()
		if g.UtilOK {
			allFailed = false
		}
		out = append(out, g)
	}
	if allFailed {
		s.failRun++
	} else {
		s.failRun = 0
	}
	return out
}

func (s *NVMLSource) readDevice(i int, d nvml.Device, g *GPUReading, level ReadLevel) {
	var errs []string
	note := func(what string, r nvml.Return) {
		if r != nvml.ERROR_NOT_SUPPORTED {
			errs = append(errs, what+": "+nvml.ErrorString(r))
		}
	}
	// Utilisation: every sample since the last one seen when asked for
	// (ReadConfirm, or SetUtilSamples), else the current rate. The
	// history's mean is reported; its max, or the current rate if higher,
	// decides.
	implausible := false
	history := func() (lost bool) {
		s.lastHist[i] = time.Now()
		rateOK, rate := g.UtilOK, g.UtilMax
		vt, samples, r := d.GetSamples(nvml.GPU_UTILIZATION_SAMPLES, s.lastTS[i])
		switch r {
		case nvml.SUCCESS:
			mean, max, n, last, ok := summariseSamples(vt, samples, s.lastTS[i])
			if n > 0 {
				if rateOK && rate > max {
					max = rate
				}
				g.UtilOK, g.UtilMean, g.UtilMax, g.UtilSamples, g.UtilSource = ok, mean, max, n, "samples"
				s.lastTS[i] = last
				if !ok {
					implausible = true
					errs = append(errs, "implausible utilisation sample")
				}
			}
		case nvml.ERROR_NOT_SUPPORTED:
			s.noSampl[i] = true
		case nvml.ERROR_NOT_FOUND:
			// No new samples since lastTS: the current rate stands.
		case nvml.ERROR_GPU_IS_LOST:
			g.Err = "gpu is lost"
			return true
		default:
			note("samples", r)
		}
		return false
	}
	canHist := s.has.samples && !s.noSampl[i]
	if canHist && (s.utilSamples || level >= ReadConfirm) {
		if history() {
			return
		}
	}
	// The current rate (0.3 µs): the reading when no history was read,
	// and counted in the max when it was (it may cover the last few
	// hundred ms that no history sample holds yet).
	if !implausible {
		u, r := d.GetUtilizationRates()
		switch {
		case r == nvml.SUCCESS && !g.UtilOK:
			g.UtilOK, g.UtilMean, g.UtilMax, g.UtilSource = true, float64(u.Gpu), float64(u.Gpu), "rates"
		case r == nvml.SUCCESS:
			if v := float64(u.Gpu); v <= maxPlausibleUtil && v > g.UtilMax {
				g.UtilMax = v
			}
		case r == nvml.ERROR_GPU_IS_LOST:
			g.Err = "gpu is lost"
			return
		case !g.UtilOK:
			errs = append(errs, "utilization: "+nvml.ErrorString(r))
		}
	}
	// Memory in use and clock-event reasons: reported, and they tell
	// whether any process can be using the GPU (4.4 µs and 0.4 µs on an
	// H200).
	if m, r := d.GetMemoryInfo(); r == nvml.SUCCESS {
		g.MemOK, g.MemoryUsedMiB = true, m.Used>>20
		if m.Total > 0 {
			g.MemoryTotalMiB = m.Total >> 20
		}
		s.memFloor[i] = min(s.memFloor[i], g.MemoryUsedMiB)
	} else {
		note("memory", r)
	}
	var reasons uint64
	r := nvml.ERROR_NOT_SUPPORTED
	switch {
	case s.has.eventReasons:
		reasons, r = d.GetCurrentClocksEventReasons()
	case s.has.throttleReasons:
		reasons, r = d.GetCurrentClocksThrottleReasons()
	}
	if r == nvml.SUCCESS {
		g.ReasonsOK, g.ClockReasons = true, reasons
	} else {
		note("clock reasons", r)
	}
	// A quiet instant is not a quiet GPU: work may have run between two
	// samples. Where a process may hold a CUDA context, look at the
	// history since the last look before the next sample would leave
	// more than histMaxGap unread (NVML drops what is older than 14 s).
	if g.UtilOK && g.UtilSource == "rates" && g.UtilMean < quietUtil && canHist && !s.noSampl[i] &&
		!s.empty(i, g) && time.Since(s.lastHist[i]) > histMaxGap-s.step {
		if history() {
			return
		}
	}
	if p, r := d.GetPowerUsage(); r == nvml.SUCCESS {
		g.PowerOK, g.PowerW = true, float64(p)/1000
	} else {
		note("power", r)
	}
	if t, r := d.GetTemperature(nvml.TEMPERATURE_GPU); r == nvml.SUCCESS {
		g.TempOK, g.TempC = true, t
	} else {
		note("temperature", r)
	}
	if c, r := d.GetClockInfo(nvml.CLOCK_SM); r == nvml.SUCCESS {
		g.ClockOK, g.SMClockMHz = true, c
	} else {
		note("sm clock", r)
	}
	if level < ReadFull {
		if len(errs) > 0 {
			g.Err = joinNotes(errs)
		}
		return
	}
	// Reported, deciding nothing: once per heartbeat.
	if s.has.processes {
		if ps, r := d.GetComputeRunningProcesses(); r == nvml.SUCCESS {
			g.ProcsOK = true
			s.procs[i] = len(ps) > 0
			for j, p := range ps {
				if j >= wire.MaxProcesses {
					break
				}
				mem := p.UsedGpuMemory
				if mem == math.MaxUint64 { // NVML_VALUE_NOT_AVAILABLE
					mem = 0
				}
				g.Procs = append(g.Procs, wire.Proc{PID: p.Pid, UsedMemoryMiB: mem >> 20})
			}
		} else {
			note("processes", r)
		}
	}
	if len(errs) > 0 {
		g.Err = joinNotes(errs)
	}
}

// empty reports whether GPU i, read into g, can hold no CUDA context, so
// that its utilisation history (about 2.3 ms of CPU on an H200, over a
// thousand times the fast read) need not be read: an empty GPU is what a
// forgotten rental looks like. Empty means the driver says the GPU is idle
// (the clock-event reason it sets when nothing has run for a while; on an
// H200 never while any process holds a context, even one running nothing),
// its memory in use is at the lowest level seen, and the last process list
// (read once per heartbeat) named no process. Work can then only have run
// between samples in a process that started and ended in the gap, which
// the host's CPU counter (gap-free) sees. A context that already held
// memory when the agent started is in the floor; on GPUs that report the
// idle reason under an idle context, its bursts between samples are then
// seen only by chance (--util-samples reads the history at every sample).
func (s *NVMLSource) empty(i int, g *GPUReading) bool {
	return g.ReasonsOK && g.ClockReasons&ReasonGPUIdle != 0 && !s.procs[i] &&
		g.MemOK && g.MemoryUsedMiB <= s.memFloor[i]+contextMiB
}

// summariseSamples returns mean and max utilisation of the samples newer
// than since, their count and the newest timestamp. ok is false if any value
// is implausible (then the whole period is unknown).
func summariseSamples(vt nvml.ValueType, samples []nvml.Sample, since uint64) (mean, max float64, n int, last uint64, ok bool) {
	ok = true
	last = since
	var sum float64
	for _, sm := range samples {
		if sm.TimeStamp <= since {
			continue
		}
		v, good := SampleValue(vt, sm.SampleValue)
		if !good || v < 0 || v > maxPlausibleUtil {
			ok = false
		}
		sum += v
		if v > max {
			max = v
		}
		n++
		if sm.TimeStamp > last {
			last = sm.TimeStamp
		}
	}
	if n > 0 {
		mean = sum / float64(n)
	}
	return mean, max, n, last, ok
}

// SampleValue decodes an nvmlValue_t union (little-endian, 8 bytes), as
// nvmlDeviceGetSamples returns it; ok is false for an unknown type or a
// NaN or infinite double.
func SampleValue(vt nvml.ValueType, b [8]byte) (float64, bool) {
	switch vt {
	case nvml.VALUE_TYPE_DOUBLE:
		f := math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
		return f, !badFloat(f)
	case nvml.VALUE_TYPE_UNSIGNED_INT:
		return float64(binary.LittleEndian.Uint32(b[:4])), true
	case nvml.VALUE_TYPE_UNSIGNED_LONG, nvml.VALUE_TYPE_UNSIGNED_LONG_LONG:
		return float64(binary.LittleEndian.Uint64(b[:])), true
	case nvml.VALUE_TYPE_SIGNED_LONG_LONG:
		return float64(int64(binary.LittleEndian.Uint64(b[:]))), true
	case nvml.VALUE_TYPE_SIGNED_INT:
		return float64(int32(binary.LittleEndian.Uint32(b[:4]))), true
	case nvml.VALUE_TYPE_UNSIGNED_SHORT:
		return float64(binary.LittleEndian.Uint16(b[:2])), true
	}
	return 0, false
}

// Close implements GPUSource. It does not wait for a hung call.
func (s *NVMLSource) Close() error {
	return s.wd.do(context.Background(), func() error {
		if r := s.lib.Shutdown(); r != nvml.SUCCESS {
			return nvmlErr("shutdown", r)
		}
		return nil
	})
}
