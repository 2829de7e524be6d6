package agent

import (
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/internal/clip"
)

// Window accumulates the samples between two heartbeats. It is safe for
// concurrent use: the sampling loop adds, the reporter cuts.
type Window struct {
	mu sync.Mutex
	w  window
}

type window struct {
	start, end          time.Time
	n, busy, idle, unkn int
	gpus                map[int]*gpuAgg
	cpuSum, cpuMax      float64
	cpuN                int
	cpuSrc              string
	netRx, netTx        uint64
	netMax              float64
	netHave             bool
	diskMax             float64
	diskHave            bool
	work                []string // of the window's last sample that saw some
	netTotals           NetCounters
	mem                 *Memory
	disk                *Disk
	hostErrs            []string
	watch               map[string]*wire.WatchState
	watchOrder          []string
	sessionsRead        bool
	sessions            []wire.Session
	sessionsErr         string
	last                *Sample
	lastBusy            *Sample
}

type gpuAgg struct {
	s        wire.GPUSummary
	utilSum  float64
	powerSum float64
	powerN   int
}

// Add adds a sample to the current window.
func (w *Window) Add(s *Sample) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.w.add(s)
}

// Cut returns the current window and starts a new one.
func (w *Window) Cut() window {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.w
	w.w = window{}
	return out
}

func (w *window) add(s *Sample) {
	if w.n == 0 {
		w.start = s.At
	}
	w.end = s.At
	w.n++
	switch s.Verdict {
	case wire.VerdictBusy:
		w.busy++
		w.lastBusy = s
	case wire.VerdictIdle:
		w.idle++
	default:
		w.unkn++
	}
	if w.gpus == nil {
		w.gpus = map[int]*gpuAgg{}
	}
	for _, g := range s.GPUs {
		a := w.gpus[g.Index]
		if a == nil {
			a = &gpuAgg{s: wire.GPUSummary{Index: g.Index}}
			w.gpus[g.Index] = a
		}
		a.s.UUID = clip.Bytes(g.UUID, 64, "")
		if !g.UtilOK {
			a.s.FailedSamples++
		} else {
			a.s.Samples++
			a.utilSum += g.UtilMean
			if a.s.UtilMax == nil || g.UtilMax > *a.s.UtilMax {
				a.s.UtilMax = ptr(g.UtilMax)
			}
		}
		if g.Err != "" {
			a.s.LastError = clip.Bytes(g.Err, 128, "")
		}
		if g.MemOK {
			a.s.MemoryUsedMiB = ptr(g.MemoryUsedMiB)
			if a.s.MemoryMaxMiB == nil || g.MemoryUsedMiB > *a.s.MemoryMaxMiB {
				a.s.MemoryMaxMiB = ptr(g.MemoryUsedMiB)
			}
		}
		if g.PowerOK {
			a.powerSum += g.PowerW
			a.powerN++
			if a.s.PowerMaxW == nil || g.PowerW > *a.s.PowerMaxW {
				a.s.PowerMaxW = ptr(g.PowerW)
			}
		}
		if g.TempOK && (a.s.TemperatureC == nil || g.TempC > *a.s.TemperatureC) {
			a.s.TemperatureC = ptr(g.TempC)
		}
		if g.ClockOK {
			a.s.SMClockMHz = ptr(g.SMClockMHz)
		}
		if g.ReasonsOK {
			a.s.ClockReasons |= g.ClockReasons
		}
		if g.ProcsOK {
			a.s.Processes = g.Procs
			if len(a.s.Processes) > wire.MaxProcesses {
				a.s.Processes = a.s.Processes[:wire.MaxProcesses]
			}
		}
	}
	if s.CPUOK {
		w.cpuSum += s.CPUPercent
		w.cpuN++
		w.cpuMax = max(w.cpuMax, s.CPUPercent)
	}
	if s.CPUSource != "" {
		w.cpuSrc = s.CPUSource
	}
	if s.NetOK {
		w.netRx += s.NetDelta.RxBytes
		w.netTx += s.NetDelta.TxBytes
		w.netMax = max(w.netMax, s.NetBytesPerS)
		w.netHave = true
	}
	if len(s.Work) > 0 {
		w.work = s.Work
	}
	if s.DiskIOOK {
		w.diskMax = max(w.diskMax, s.DiskIO.BytesPerS)
		w.diskHave = true
	}
	if s.Net != (NetCounters{}) {
		w.netTotals = s.Net
	}
	if s.MemOK {
		m := s.Mem
		w.mem = &m
	}
	if s.DiskOK {
		d := s.Disk
		w.disk = &d
	}
	if s.HostRead {
		w.hostErrs = s.HostErrs
	}
	if s.SessionsRead {
		w.sessionsRead, w.sessions, w.sessionsErr = true, s.Sessions, s.SessionsErr
	}
	if w.watch == nil {
		w.watch = map[string]*wire.WatchState{}
	}
	for _, r := range s.Watches {
		ws := w.watch[r.Path]
		if ws == nil {
			if len(w.watchOrder) >= wire.MaxWatches {
				continue
			}
			ws = &wire.WatchState{Path: clip.Bytes(r.Path, wire.MaxStrLen, "")}
			w.watch[r.Path] = ws
			w.watchOrder = append(w.watchOrder, r.Path)
		}
		ws.Exists, ws.SizeBytes, ws.Error = r.Exists, r.SizeBytes, clip.Bytes(r.Err, 128, "")
		if r.Grew > 0 {
			ws.GrewBytes += r.Grew
		}
		if r.Exists {
			mt := r.ModTime
			ws.ModTime = &mt
		}
	}
	w.last = s
}

func ptr[T any](v T) *T { return &v }

// fill writes the window's summaries into hb.
// idleTo extends an idle heartbeat's idle time from the window's last
// sample to now, the cut: nothing has said otherwise since that sample,
// which is at most one sample interval old.
func (w *window) idleTo(hb *wire.HeartbeatRequest, now time.Time) {
	if hb.IdleSince == nil || w.last == nil {
		return
	}
	if d := w.last.IdleFor + now.Sub(w.last.At); d > 0 {
		hb.IdleSeconds = int64(d / time.Second)
	}
}

func (w *window) fill(hb *wire.HeartbeatRequest) {
	hb.WindowStart, hb.WindowEnd = w.start.Round(0), w.end.Round(0)
	hb.Samples, hb.BusySamples, hb.IdleSamples, hb.UnknownSamples = w.n, w.busy, w.idle, w.unkn
	idx := make([]int, 0, len(w.gpus))
	for i := range w.gpus {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		a := w.gpus[i]
		if len(hb.GPUs) >= wire.MaxGPUs {
			break
		}
		s := a.s
		if s.Samples > 0 {
			s.UtilMean = ptr(a.utilSum / float64(s.Samples))
		}
		if a.powerN > 0 {
			s.PowerMeanW = ptr(a.powerSum / float64(a.powerN))
		}
		if s.ClockReasons != 0 {
			s.ClockReasonTxt = ClockReasonNames(s.ClockReasons)
		}
		hb.GPUs = append(hb.GPUs, s)
	}
	h := &hb.HostStats
	if w.cpuN > 0 {
		h.CPUPercentMean, h.CPUPercentMax = ptr(w.cpuSum/float64(w.cpuN)), ptr(w.cpuMax)
	}
	h.CPUSource = w.cpuSrc
	h.NetRxBytes, h.NetTxBytes = w.netRx, w.netTx
	h.NetRxTotal, h.NetTxTotal = w.netTotals.RxBytes, w.netTotals.TxBytes
	if w.diskHave {
		h.DiskIOBytesPerS = ptr(w.diskMax)
	}
	if w.netHave {
		h.NetBytesPerS = ptr(w.netMax)
	}
	if w.mem != nil {
		h.MemoryUsedB = ptr(w.mem.UsedBytes)
	}
	if w.disk != nil {
		h.DiskPath, h.DiskTotalBytes, h.DiskFreeBytes = w.disk.Path, w.disk.TotalBytes, w.disk.FreeBytes
	}
	for i, e := range w.hostErrs {
		if i >= 4 {
			break
		}
		h.Errors = append(h.Errors, clip.Bytes(e, wire.MaxStrLen, ""))
	}
	for _, p := range w.watchOrder {
		hb.Watches = append(hb.Watches, *w.watch[p])
	}
	if w.sessionsRead {
		hb.Sessions = w.sessions[:min(len(w.sessions), wire.MaxSessions)]
		hb.SessionsError = clip.Bytes(w.sessionsErr, wire.MaxStrLen, "")
	}
	if w.last != nil {
		// A window with any busy sample is busy (a burst early in it is
		// not hidden by quiet samples after it), with that sample's
		// reasons; otherwise the last sample's verdict stands. Idle time
		// is the idle streak's, which a busy sample ends.
		decided := w.last
		if w.lastBusy != nil {
			decided = w.lastBusy
		}
		hb.Verdict = decided.Verdict
		for i, r := range decided.Reasons {
			if i >= 8 {
				break
			}
			hb.Reasons = append(hb.Reasons, clip.Bytes(r, wire.MaxStrLen, ""))
		}
		if hb.Verdict == wire.VerdictBusy {
			// From whichever sample saw it: a per-process disk counter
			// and the transfer scan are read at the full sample only.
			hb.Work = clip.Bytes(strings.Join(w.work, "; "), wire.MaxStrLen, "…")
		}
		hb.Job = w.last.Job
		if hb.Verdict == wire.VerdictIdle && !w.last.IdleSince.IsZero() {
			// The streak as of the window's last sample: a sample taken
			// after the cut cannot leave an idle heartbeat without it.
			// idleTo extends it to the cut.
			since := w.last.IdleSince
			hb.IdleSince, hb.IdleSeconds = &since, int64(w.last.IdleFor/time.Second)
		}
	} else {
		hb.Verdict = wire.VerdictUnknown
		hb.Reasons = []string{"no samples in this window"}
	}
}
