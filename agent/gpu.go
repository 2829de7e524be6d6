package agent

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// GPUFacts are what a GPU source knows about the GPUs that does not change
// from sample to sample.
type GPUFacts struct {
	Source            string // "nvml", "simulate" or "none"
	DriverVersion     string
	CUDADriverVersion string
	GPUs              []wire.GPUFact
}

// GPUReading is one GPU at one sample. UtilOK is false when utilisation
// could not be read or was implausible; then the GPU's state is unknown.
// The other *OK flags say which optional readings are valid.
type GPUReading struct {
	Index          int
	UUID           string
	Name           string
	MemoryTotalMiB uint64

	UtilOK      bool
	UtilMean    float64 // percent over the period since the previous reading
	UtilMax     float64 // the highest reading in that period: what decides
	UtilSamples int     // NVML samples behind UtilMean (0: an instantaneous read)
	UtilSource  string  // "samples", "rates" or "simulate"

	MemOK         bool
	MemoryUsedMiB uint64

	PowerOK bool
	PowerW  float64
	TempOK  bool
	TempC   uint32

	ClockOK       bool
	SMClockMHz    uint32
	SMClockMaxMHz uint32

	ReasonsOK    bool
	ClockReasons uint64

	ProcsOK bool // Procs was read (a ReadFull or ReadConfirm read)
	Procs   []wire.Proc
	Err     string // why UtilOK or MemOK is false, or a note on dropped readings
}

// ReadLevel says how much a GPU read covers. Most samples need only what
// decides the verdict; what is only reported is read once per heartbeat.
type ReadLevel int

const (
	// ReadFast reads utilisation (NVML's current rate, or every sample
	// since the last read when the source is set to, or when a quiet GPU
	// may hold a CUDA context), memory in use, clock-event reasons, power,
	// temperature and SM clock: on an H200 0.3-0.5 µs each, memory 4.4 µs.
	ReadFast ReadLevel = iota
	// ReadFull adds the process list (a few µs more per GPU on an H200):
	// once per heartbeat.
	ReadFull
	// ReadConfirm is ReadFull with every utilisation sample NVML still
	// holds since the last one seen (about 14 s of history; about 2.3 ms
	// of CPU per GPU on an H200): for check and before a release.
	ReadConfirm
)

// GPUSource reads GPUs. Implementations: the NVML backend (cgo builds on
// Linux), the simulate file, and noGPU. Read returns one reading per GPU in
// Facts order, covering at least what level asks for; a GPU whose reading
// failed has UtilOK false and Err set.
// An error from Read means no GPU could be read at all. Implementations
// need not be safe for concurrent use: the Sampler serialises calls.
type GPUSource interface {
	Facts(ctx context.Context) (GPUFacts, error)
	Read(ctx context.Context, level ReadLevel) ([]GPUReading, error)
	Close() error
}

// HostOverride is implemented by sources that replace host readings (the
// simulate file's "host" object). A nil result means use the real host.
type HostOverride interface {
	HostOverride() *SimHost
}

// ErrNoNVML reports that NVML cannot be used: built without cgo, the
// library is missing, or the driver is not loaded.
var ErrNoNVML = errors.New("agent: nvml unavailable")

// noGPU is the source used when no GPU can be read at all. Every read fails,
// so the verdict is unknown, never idle.
type noGPU struct{ err error }

func (n noGPU) Facts(context.Context) (GPUFacts, error) { return GPUFacts{Source: "none"}, n.err }
func (n noGPU) Read(context.Context, ReadLevel) ([]GPUReading, error) {
	return nil, n.err
}
func (noGPU) Close() error { return nil }

// NoGPU returns a source that reports err on every read.
func NoGPU(err error) GPUSource { return noGPU{err: err} }

// Plausibility limits. NVML returns 0xFFFFFFFF (and friends) for "not
// available" on some boards and drivers; such values must never be read as
// a real 4294967295% utilisation.
const (
	maxPlausibleUtil  = 100
	maxPlausiblePower = 5000 // W; one GPU board
	maxPlausibleTemp  = 150  // °C
	maxPlausibleClock = 10000
)

// validate marks implausible readings. Utilisation or memory out of range
// make the GPU unknown; implausible power, temperature or clocks are dropped
// with a note, since they decide nothing.
func (g *GPUReading) validate() {
	var notes []string
	if g.UtilOK && (badFloat(g.UtilMean) || badFloat(g.UtilMax) || g.UtilMean < 0 || g.UtilMean > maxPlausibleUtil || g.UtilMax > maxPlausibleUtil) {
		notes = append(notes, fmt.Sprintf("implausible utilisation %.0f%%", g.UtilMax))
		g.UtilOK = false
	}
	if g.MemOK && g.MemoryTotalMiB > 0 && g.MemoryUsedMiB > g.MemoryTotalMiB {
		notes = append(notes, fmt.Sprintf("implausible memory used %d MiB of %d", g.MemoryUsedMiB, g.MemoryTotalMiB))
		g.MemOK = false
		g.UtilOK = false
	}
	if g.PowerOK && (badFloat(g.PowerW) || g.PowerW < 0 || g.PowerW > maxPlausiblePower) {
		notes = append(notes, "implausible power dropped")
		g.PowerOK = false
	}
	if g.TempOK && g.TempC > maxPlausibleTemp {
		notes = append(notes, "implausible temperature dropped")
		g.TempOK = false
	}
	if g.ClockOK && (g.SMClockMHz > maxPlausibleClock || g.SMClockMaxMHz > maxPlausibleClock) {
		notes = append(notes, "implausible clock dropped")
		g.ClockOK = false
	}
	if len(notes) > 0 {
		s := joinNotes(notes)
		if g.Err != "" {
			s = g.Err + "; " + s
		}
		g.Err = s
	}
}

func badFloat(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }

// Clock-event reason bits (NVML nvmlClocksEventReason*), copied here so that
// builds without NVML can name them.
const (
	ReasonGPUIdle         = 0x1
	ReasonAppClocks       = 0x2
	ReasonSWPowerCap      = 0x4
	ReasonHWSlowdown      = 0x8
	ReasonSyncBoost       = 0x10
	ReasonSWThermal       = 0x20
	ReasonHWThermal       = 0x40
	ReasonHWPowerBrake    = 0x80
	ReasonDisplayClocks   = 0x100
	troubleReasonsMask    = ReasonHWSlowdown | ReasonSWThermal | ReasonHWThermal | ReasonHWPowerBrake
	knownClockReasonsMask = 0x1ff
)

var reasonNames = []struct {
	bit  uint64
	name string
}{
	{ReasonGPUIdle, "gpu_idle"},
	{ReasonAppClocks, "applications_clocks_setting"},
	{ReasonSWPowerCap, "sw_power_cap"},
	{ReasonHWSlowdown, "hw_slowdown"},
	{ReasonSyncBoost, "sync_boost"},
	{ReasonSWThermal, "sw_thermal_slowdown"},
	{ReasonHWThermal, "hw_thermal_slowdown"},
	{ReasonHWPowerBrake, "hw_power_brake_slowdown"},
	{ReasonDisplayClocks, "display_clock_setting"},
}

// ClockReasonNames names the set bits of an NVML clock-event reason mask.
func ClockReasonNames(mask uint64) []string {
	var out []string
	for _, r := range reasonNames {
		if mask&r.bit != 0 {
			out = append(out, r.name)
		}
	}
	if rest := mask &^ knownClockReasonsMask; rest != 0 {
		out = append(out, fmt.Sprintf("0x%x", rest))
	}
	return out
}

// TroubleReasons returns the bits of mask that mean real trouble: hardware
// slowdown, hardware or software thermal slowdown, hardware power brake. A
// software power cap under load and "GPU idle" are normal and not returned.
func TroubleReasons(mask uint64) uint64 { return mask & troubleReasonsMask }

func joinNotes(s []string) string {
	out := ""
	for i, n := range s {
		if i > 0 {
			out += "; "
		}
		out += n
	}
	return out
}
