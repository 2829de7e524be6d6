package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// CheckConfig configures Check.
type CheckConfig struct {
	Simulate    string
	NVMLTimeout time.Duration
	// GPU, when set, is read instead of opening the simulate file or
	// NVML; Check does not close it.
	GPU      GPUSource
	DiskPath string
	Host     HostReader // zero value reads the real host
	// NoisyMemMiB is the GPU memory in use at start above which a GPU is
	// reported as used by someone else; default 1024.
	NoisyMemMiB uint64
	// MinDiskFreeBytes warns below this much free disk; default 10 GiB.
	MinDiskFreeBytes uint64
}

// CheckReport is what `gpuledger-agent check` found.
type CheckReport struct {
	Facts    GPUFacts
	GPUs     []GPUReading
	GPUErr   string
	CPUCores float64
	Mem      *Memory
	Disk     *Disk
	Warnings []string
}

// ErrNothingRead is returned by Check when no GPU could be read: the one
// case in which `check` exits non-zero.
var ErrNothingRead = errors.New("agent: check could not read any GPU")

// Check reads the GPUs and the host once and lists what a person should
// know about a fresh rental: the GPU model and memory (to compare with the
// advertisement), driver and CUDA versions, memory or processes already on
// the GPUs (a noisy neighbour), clock-event reasons that mean trouble, CPU,
// RAM and disk. Warnings never make it fail; only reading no GPU at all
// does (ErrNothingRead, with the report still filled in).
func Check(ctx context.Context, cfg CheckConfig) (*CheckReport, error) {
	if cfg.NoisyMemMiB == 0 {
		cfg.NoisyMemMiB = 1024
	}
	if cfg.MinDiskFreeBytes == 0 {
		cfg.MinDiskFreeBytes = 10 << 30
	}
	h := cfg.Host
	if cfg.DiskPath != "" {
		h.DiskPath = cfg.DiskPath
	}
	r := &CheckReport{CPUCores: h.CPUCores()}
	warn := func(f string, a ...any) { r.Warnings = append(r.Warnings, fmt.Sprintf(f, a...)) }

	src, err := cfg.GPU, error(nil)
	if src == nil {
		src, err = OpenGPU(ctx, cfg.Simulate, cfg.NVMLTimeout)
		if err == nil {
			defer src.Close()
		}
	}
	if err == nil {
		r.Facts, err = src.Facts(ctx)
	}
	if err == nil {
		r.GPUs, err = src.Read(ctx, ReadConfirm)
	}
	if err != nil {
		r.GPUErr = err.Error()
		warn("cannot read the GPUs: %v", err)
	}
	if r.Facts.Source == "nvml" && r.Facts.CUDADriverVersion == "" {
		warn("CUDA driver version unknown (old driver?)")
	}
	for _, g := range r.GPUs {
		name := fmt.Sprintf("GPU %d", g.Index)
		if !g.UtilOK {
			warn("%s: utilisation unreadable (%s): the agent will report unknown, never idle", name, orDefault(g.Err, "no reading"))
		} else if g.UtilMax > DefaultThresholds.UtilPercent {
			// The verdict's rule: any sample of NVML's recent history
			// (about 14 s) above the threshold, not the mean. A
			// neighbour's inference server answering now and then reads
			// a mean of 1-2 %, and the agent would call this GPU busy;
			// a person should hear that before the agent says so. The
			// price is a warning after a CUDA start seconds earlier
			// (99 % once), which the mean in the message shows for what
			// it is.
			warn("%s: work seen at start (utilisation up to %.0f%%%s): someone else may be using it, and the agent counts it busy", name, g.UtilMax, historySpan(g))
		}
		if g.MemOK && g.MemoryUsedMiB > cfg.NoisyMemMiB {
			warn("%s: %s of GPU memory already in use at start: another process or tenant holds it", name, mib(g.MemoryUsedMiB))
		}
		if len(g.Procs) > 0 {
			var ps []string
			for _, p := range g.Procs {
				ps = append(ps, fmt.Sprintf("pid %d (%s)", p.PID, mib(p.UsedMemoryMiB)))
			}
			warn("%s: compute processes already running: %s", name, strings.Join(ps, ", "))
		}
		if g.ReasonsOK {
			if bad := TroubleReasons(g.ClockReasons); bad != 0 {
				warn("%s: clocks held back by %s: cooling or power delivery trouble; ask the provider for another host", name, strings.Join(ClockReasonNames(bad), ", "))
			}
		}
	}
	if r.GPUErr == "" && len(r.GPUs) == 0 {
		warn("no GPUs seen")
	}
	if m, err := h.ReadMemory(); err == nil {
		r.Mem = &m
	} else {
		warn("cannot read memory: %v", err)
	}
	if d, err := h.ReadDisk(); err == nil {
		r.Disk = &d
		if d.FreeBytes < cfg.MinDiskFreeBytes {
			warn("only %s free on %s", gib(d.FreeBytes), d.Path)
		}
	} else {
		warn("cannot read disk: %v", err)
	}
	readable := 0
	for _, g := range r.GPUs {
		if g.UtilOK || g.MemOK {
			readable++
		}
	}
	if readable == 0 {
		return r, ErrNothingRead
	}
	return r, nil
}

// historySpan says what a reading covers when it is NVML's history (a
// sample about every 200 ms on the H200), with the mean over it.
func historySpan(g GPUReading) string {
	if g.UtilSamples == 0 {
		return ""
	}
	return fmt.Sprintf(", mean %.0f%%, in NVML's last %d samples", g.UtilMean, g.UtilSamples)
}

func mib(m uint64) string {
	if m >= 1024 {
		return fmt.Sprintf("%.1f GiB", float64(m)/1024)
	}
	return fmt.Sprintf("%d MiB", m)
}

func gib(b uint64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

// Print writes the report for a person.
func (r *CheckReport) Print(w io.Writer) {
	fmt.Fprintf(w, "gpuledger-agent %s check\n", Version)
	src := orDefault(r.Facts.Source, "none")
	fmt.Fprintf(w, "GPU source: %s   driver %s   CUDA %s\n", src, orDefault(r.Facts.DriverVersion, "?"), orDefault(r.Facts.CUDADriverVersion, "?"))
	for _, g := range r.GPUs {
		fmt.Fprintf(w, "GPU %d: %s   %s   %s\n", g.Index, orDefault(g.Name, "?"), mib(g.MemoryTotalMiB), orDefault(g.UUID, "?"))
		var parts []string
		if g.UtilOK {
			parts = append(parts, fmt.Sprintf("util %.0f%% (max %.0f%%)", g.UtilMean, g.UtilMax))
		} else {
			parts = append(parts, "util ?")
		}
		if g.MemOK {
			parts = append(parts, "memory used "+mib(g.MemoryUsedMiB))
		}
		if g.PowerOK {
			parts = append(parts, fmt.Sprintf("power %.0f W", g.PowerW))
		}
		if g.TempOK {
			parts = append(parts, fmt.Sprintf("temp %d °C", g.TempC))
		}
		if g.ClockOK {
			parts = append(parts, fmt.Sprintf("SM clock %d/%d MHz", g.SMClockMHz, g.SMClockMaxMHz))
		}
		if g.ReasonsOK {
			names := ClockReasonNames(g.ClockReasons)
			if len(names) == 0 {
				names = []string{"none"}
			}
			parts = append(parts, fmt.Sprintf("clock events 0x%x (%s)", g.ClockReasons, strings.Join(names, ", ")))
		}
		fmt.Fprintf(w, "       %s\n", strings.Join(parts, "   "))
		if len(g.Procs) == 0 {
			fmt.Fprintf(w, "       processes: none visible (inside a container this is normal)\n")
		} else {
			fmt.Fprintf(w, "       processes: %d\n", len(g.Procs))
		}
	}
	host := fmt.Sprintf("Host: %.4g CPU cores", r.CPUCores)
	if r.Mem != nil {
		host += fmt.Sprintf("   RAM %s (used %s)", gib(r.Mem.TotalBytes), gib(r.Mem.UsedBytes))
	}
	if r.Disk != nil {
		host += fmt.Sprintf("   disk %s: %s free of %s", r.Disk.Path, gib(r.Disk.FreeBytes), gib(r.Disk.TotalBytes))
	}
	fmt.Fprintln(w, host)
	if len(r.Warnings) == 0 {
		fmt.Fprintln(w, "No warnings.")
		return
	}
	fmt.Fprintln(w, "Warnings:")
	for _, s := range r.Warnings {
		fmt.Fprintf(w, "  ! %s\n", s)
	}
}

// JSON returns the report as wire-style facts plus warnings, for scripts.
func (r *CheckReport) JSON() any {
	type gpu struct {
		wire.GPUFact
		UtilPercent   *float64    `json:"util_percent,omitempty"`
		MemoryUsedMiB *uint64     `json:"memory_used_mib,omitempty"`
		PowerW        *float64    `json:"power_w,omitempty"`
		TemperatureC  *uint32     `json:"temperature_c,omitempty"`
		SMClockMHz    *uint32     `json:"sm_clock_mhz,omitempty"`
		ClockReasons  *uint64     `json:"clock_event_reasons,omitempty"`
		Processes     []wire.Proc `json:"processes,omitempty"`
		Error         string      `json:"error,omitempty"`
	}
	out := struct {
		Source   string   `json:"gpu_source"`
		Driver   string   `json:"driver_version,omitempty"`
		CUDA     string   `json:"cuda_driver_version,omitempty"`
		GPUs     []gpu    `json:"gpus"`
		GPUErr   string   `json:"gpu_error,omitempty"`
		CPUCores float64  `json:"cpu_cores"`
		Mem      *Memory  `json:"memory,omitempty"`
		Disk     *Disk    `json:"disk,omitempty"`
		Warnings []string `json:"warnings"`
	}{Source: r.Facts.Source, Driver: r.Facts.DriverVersion, CUDA: r.Facts.CUDADriverVersion, GPUErr: r.GPUErr,
		CPUCores: r.CPUCores, Mem: r.Mem, Disk: r.Disk, Warnings: r.Warnings, GPUs: []gpu{}}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, g := range r.GPUs {
		j := gpu{GPUFact: wire.GPUFact{Index: g.Index, Name: g.Name, UUID: g.UUID, MemoryTotalMiB: g.MemoryTotalMiB, SMClockMaxMHz: g.SMClockMaxMHz},
			Processes: g.Procs, Error: g.Err}
		if g.UtilOK {
			j.UtilPercent = ptr(g.UtilMax)
		}
		if g.MemOK {
			j.MemoryUsedMiB = ptr(g.MemoryUsedMiB)
		}
		if g.PowerOK {
			j.PowerW = ptr(g.PowerW)
		}
		if g.TempOK {
			j.TemperatureC = ptr(g.TempC)
		}
		if g.ClockOK {
			j.SMClockMHz = ptr(g.SMClockMHz)
		}
		if g.ReasonsOK {
			j.ClockReasons = ptr(g.ClockReasons)
		}
		out.GPUs = append(out.GPUs, j)
	}
	return out
}
