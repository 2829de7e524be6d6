package agent

import (
	"fmt"
	"strconv"
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
	var busy, unknown []wire.Note
	var work []wire.Note
	s.Work = s.Work[:0]
	if len(s.Transfers) > 0 {
		work = append(work, note(wire.NoteTransfers, strings.Join(s.Transfers, ", ")))
	}
	if s.DiskIOOK && th.DiskBytesPerS > 0 && s.DiskIO.BytesPerS > th.DiskBytesPerS {
		work = append(work, note(wire.NoteDisk, fmt.Sprintf("%.0f", s.DiskIO.BytesPerS/1e6)))
	}
	for _, n := range work {
		s.Work = append(s.Work, NoteText(n))
	}
	for _, g := range s.GPUs {
		if g.UtilOK && th.UtilPercent > 0 && g.UtilMax > th.UtilPercent {
			if g.UtilSamples > 0 {
				busy = append(busy, note(wire.NoteGPUUtilMean, strconv.Itoa(g.Index), fmt.Sprintf("%.0f", g.UtilMax), fmt.Sprintf("%.0f", g.UtilMean), strconv.Itoa(g.UtilSamples)))
			} else {
				busy = append(busy, note(wire.NoteGPUUtil, strconv.Itoa(g.Index), fmt.Sprintf("%.0f", g.UtilMax)))
			}
		}
	}
	if s.Job != nil && s.Job.Running {
		busy = append(busy, note(wire.NoteJob, strconv.Itoa(s.Job.PID)))
	}
	for _, w := range s.Watches {
		if w.Growing {
			busy = append(busy, note(wire.NoteWatchGrew, w.Path))
		}
	}
	if s.CPUOK && th.CPUPercent > 0 && s.CPUPercent > th.CPUPercent {
		busy = append(busy, note(wire.NoteCPU, fmt.Sprintf("%.0f", s.CPUPercent)))
	}
	if s.NetOK && th.NetBytesPerS > 0 && s.NetBytesPerS > th.NetBytesPerS {
		busy = append(busy, note(wire.NoteNet, fmt.Sprintf("%.0f", s.NetBytesPerS/1024)))
	}
	busy = append(busy, work...)
	if len(busy) > 0 {
		s.Notes = busy
		return wire.VerdictBusy, noteTexts(busy)
	}

	if s.GPUErr != "" {
		unknown = append(unknown, note(wire.NoteGPUError, s.GPUErr))
	} else if len(s.GPUs) == 0 {
		unknown = append(unknown, note(wire.NoteNoGPUs))
	}
	for _, g := range s.GPUs {
		if !g.UtilOK {
			why := g.Err
			if why == "" {
				why = "no utilisation reading"
			}
			unknown = append(unknown, note(wire.NoteGPUNoReading, strconv.Itoa(g.Index), why))
		}
	}
	if !s.CPUOK && th.CPUPercent > 0 {
		unknown = append(unknown, note(wire.NoteCPUNoReading, orDefault(s.CPUErr, "no reading yet")))
	}
	if !s.NetOK && th.NetBytesPerS > 0 {
		unknown = append(unknown, note(wire.NoteNetNoReading, orDefault(s.NetErr, "no reading yet")))
	}
	if len(unknown) > 0 {
		s.Notes = unknown
		return wire.VerdictUnknown, noteTexts(unknown)
	}
	s.Notes = nil
	return wire.VerdictIdle, []string{"all signals below thresholds"}
}

// note is a reason as a code and its values (wire.Note).
func note(code string, args ...string) wire.Note { return wire.Note{Code: code, Args: args} }

// noteFormats are the agent's English for each note code: its log, its
// heartbeat's reasons and an order result's message, and what a server
// too old to read notes shows.
var noteFormats = map[string]string{
	wire.NoteGPUUtil:      "gpu%s util %s%%",
	wire.NoteGPUUtilMean:  "gpu%s util max %s%% (mean %s%% of %s samples)",
	wire.NoteJob:          "job running (pid %s)",
	wire.NoteWatchGrew:    "watch %s grew",
	wire.NoteCPU:          "cpu %s%%",
	wire.NoteNet:          "net %s KiB/s",
	wire.NoteTransfers:    "%s running",
	wire.NoteDisk:         "disk %s MB/s",
	wire.NoteGPUError:     "gpu: %s",
	wire.NoteNoGPUs:       "no gpus seen",
	wire.NoteGPUNoReading: "gpu%s: %s",
	wire.NoteCPUNoReading: "cpu: %s",
	wire.NoteNetNoReading: "net: %s",
	wire.NoteNoCommand:    "no --release-cmd on this host: the agent only reports",
	wire.NoteJobPID:       "wrapped job pid %s is running",
	wire.NoteConnected:    "%s connected:",
	wire.NoteSession:      "%s %s from %s",
	wire.NoteSessionFrom:  "%s from %s",
}

// NoteText is n in the agent's English.
func NoteText(n wire.Note) string {
	f, ok := noteFormats[n.Code]
	if !ok {
		return strings.Join(append([]string{n.Code}, n.Args...), " ")
	}
	args := make([]any, len(n.Args))
	for i, a := range n.Args {
		args[i] = a
	}
	return fmt.Sprintf(f, args...)
}

// noteTexts is NoteText of each note.
func noteTexts(ns []wire.Note) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = NoteText(n)
	}
	return out
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
