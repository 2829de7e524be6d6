package agent

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// Thresholds decide when a sample counts as busy. A value above its
// threshold is busy; a threshold of zero or less disables that signal.
type Thresholds struct {
	UtilPercent  float64 // GPU utilisation, percent; default 5
	CPUPercent   float64 // CPU, percent of one core (200 = two cores); default 50
	NetBytesPerS float64 // network, bytes per second in+out; default 1 MiB/s
	// DiskBytesPerS is disk I/O, bytes per second read+written by this
	// container over a sample period; default DefaultDiskBytesPerS.
	DiskBytesPerS float64
}

// DefaultDiskBytesPerS is the disk rate above which a sample is busy: 20
// MB/s. A quiet instance moves far less (logs, a notebook's autosave, the
// page cache's writeback of them: well under 1 MB/s), while any copy worth
// keeping a machine for moves more: the H200's local NVMe copied at
// gigabytes a second, a network volume or a cloud bucket at 100 MB/s and
// up, and a download slow enough to stay under it is seen by the network
// threshold (1 MiB/s) and the transfer processes.
const DefaultDiskBytesPerS = 20e6

// DefaultThresholds are the thresholds of DESIGN.md section 7.
var DefaultThresholds = Thresholds{UtilPercent: 5, CPUPercent: 50, NetBytesPerS: 1 << 20, DiskBytesPerS: DefaultDiskBytesPerS}

// Decide returns the verdict for one sample and the reasons behind it.
// It also sets s.Work: the witness's reasons (a transfer or install
// running, disk I/O above its threshold), which the heartbeat carries on
// their own.
//
// Busy: any GPU with a utilisation reading above the threshold in the
// sample's period (UtilMax: the highest NVML history sample since the last
// look, or the instantaneous rate), the wrapped job alive, a watched file
// growing, or CPU or network above their thresholds. The highest reading
// decides, not the mean: a window is idle only if every sample in it is
// below the threshold. A process that runs 200 ms of work every 8 s has a
// window mean of 1-2 % but a max of 46-98 %, and it is working. One sample
// of a CUDA context's start (99 % once) therefore makes its sample busy
// too: a sample too many, never a release too many. A busy signal that was positively observed wins over
// failed readings, since busy and unknown both forbid a release.
// Unknown: otherwise, if any deciding reading (a GPU's utilisation, CPU,
// network) failed or was implausible, or no GPU was seen at all. Disk
// I/O decides only where it can be read (see Witness): a host without a
// counter keeps the verdict it had before the witness.
// Idle: everything was read and nothing was above its threshold.
// GPU process lists decide nothing.
func Decide(s *Sample, th Thresholds) (wire.Verdict, []string) {
	var busy, unknown []string
	s.Work = s.Work[:0]
	if len(s.Transfers) > 0 {
		s.Work = append(s.Work, strings.Join(s.Transfers, ", ")+" running")
	}
	if s.DiskIOOK && th.DiskBytesPerS > 0 && s.DiskIO.BytesPerS > th.DiskBytesPerS {
		s.Work = append(s.Work, fmt.Sprintf("disk %.0f MB/s", s.DiskIO.BytesPerS/1e6))
	}
	for _, g := range s.GPUs {
		if g.UtilOK && th.UtilPercent > 0 && g.UtilMax > th.UtilPercent {
			if g.UtilSamples > 0 {
				busy = append(busy, fmt.Sprintf("gpu%d util max %.0f%% (mean %.0f%% of %d samples)", g.Index, g.UtilMax, g.UtilMean, g.UtilSamples))
			} else {
				busy = append(busy, fmt.Sprintf("gpu%d util %.0f%%", g.Index, g.UtilMax))
			}
		}
	}
	if s.Job != nil && s.Job.Running {
		busy = append(busy, fmt.Sprintf("job running (pid %d)", s.Job.PID))
	}
	for _, w := range s.Watches {
		if w.Growing {
			busy = append(busy, fmt.Sprintf("watch %s grew", w.Path))
		}
	}
	if s.CPUOK && th.CPUPercent > 0 && s.CPUPercent > th.CPUPercent {
		busy = append(busy, fmt.Sprintf("cpu %.0f%%", s.CPUPercent))
	}
	if s.NetOK && th.NetBytesPerS > 0 && s.NetBytesPerS > th.NetBytesPerS {
		busy = append(busy, fmt.Sprintf("net %.0f KiB/s", s.NetBytesPerS/1024))
	}
	busy = append(busy, s.Work...)
	if len(busy) > 0 {
		return wire.VerdictBusy, busy
	}

	if s.GPUErr != "" {
		unknown = append(unknown, "gpu: "+s.GPUErr)
	} else if len(s.GPUs) == 0 {
		unknown = append(unknown, "no gpus seen")
	}
	for _, g := range s.GPUs {
		if !g.UtilOK {
			why := g.Err
			if why == "" {
				why = "no utilisation reading"
			}
			unknown = append(unknown, fmt.Sprintf("gpu%d: %s", g.Index, why))
		}
	}
	if !s.CPUOK && th.CPUPercent > 0 {
		unknown = append(unknown, "cpu: "+orDefault(s.CPUErr, "no reading yet"))
	}
	if !s.NetOK && th.NetBytesPerS > 0 {
		unknown = append(unknown, "net: "+orDefault(s.NetErr, "no reading yet"))
	}
	if len(unknown) > 0 {
		return wire.VerdictUnknown, unknown
	}
	return wire.VerdictIdle, []string{"all signals below thresholds"}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// IdleTracker follows the current idle streak. Times must come from
// time.Now (they carry the monotonic clock reading, so a wall-clock jump
// does not change the measured idle time). Not safe for concurrent use.
type IdleTracker struct {
	since time.Time // zero when not idle
	wall  time.Time // wall clock at the start of the streak, for reports
}

// Observe records the verdict of a sample taken at at. Busy and unknown
// both end an idle streak: unknown is never idle.
func (t *IdleTracker) Observe(v wire.Verdict, at time.Time) {
	if v != wire.VerdictIdle {
		t.since = time.Time{}
		return
	}
	if t.since.IsZero() {
		t.since = at
		t.wall = at.Round(0)
	}
}

// Since returns the start of the current idle streak (wall clock, for
// reporting) and whether there is one.
func (t *IdleTracker) Since() (time.Time, bool) {
	return t.wall, !t.since.IsZero()
}

// IdleFor returns how long the host has been idle at now, measured on the
// monotonic clock when both times carry it; zero when not idle.
func (t *IdleTracker) IdleFor(now time.Time) time.Duration {
	if t.since.IsZero() {
		return 0
	}
	d := now.Sub(t.since)
	if d < 0 {
		return 0
	}
	return d
}
