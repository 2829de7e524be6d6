package agent

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// Sample is everything read at one instant, with its verdict.
type Sample struct {
	At     time.Time // from Now: carries the monotonic reading
	GPUs   []GPUReading
	GPUErr string // the GPU source failed as a whole

	CPUOK      bool
	CPUPercent float64 // percent of one core since the previous sample
	CPUSource  string
	CPUErr     string

	NetOK        bool
	Net          NetCounters // cumulative
	NetDelta     NetCounters // since the previous sample
	NetBytesPerS float64
	NetErr       string

	HostRead bool // memory and disk were read (level ReadFull or above)
	MemOK    bool
	Mem      Memory
	DiskOK   bool
	Disk     Disk
	HostErrs []string // memory and disk errors (they decide nothing)

	// DiskIO is the disk rate since the previous sample (DiskIOOK: it
	// could be read, see Witness); Transfers the transfer and install
	// processes running (read at level ReadFull and above).
	DiskIOOK  bool
	DiskIO    DiskIO
	DiskIOErr string
	Transfers []string
	// Work is what the witness saw the host working at, set by Decide:
	// "rsync running", "disk 180 MB/s".
	Work []string

	Watches []WatchReading
	Job     *wire.JobState

	// Sessions are the people connected (read with Presence at level
	// ReadFull and above, when SessionsRead); SessionsErr says why they
	// could not be read.
	SessionsRead bool
	Sessions     []wire.Session
	SessionsErr  string

	Verdict wire.Verdict
	// IdleSince is the wall-clock start of the idle streak this sample
	// belongs to and IdleFor its length at At (monotonic); both zero
	// unless the verdict is idle. They travel with the sample so that a
	// heartbeat's idle time comes from the same samples as its verdict.
	IdleSince time.Time
	IdleFor   time.Duration
	Reasons   []string
	// Notes are Reasons as codes and values (wire.Note), for an order's
	// result; none with an idle verdict.
	Notes []wire.Note
}

// WatchReading is one watched path at one sample.
type WatchReading struct {
	Path      string
	Exists    bool
	SizeBytes int64
	ModTime   time.Time
	Grew      int64 // bytes since the previous sample
	Growing   bool  // size or modification time advanced
	Err       string
}

// Sampler takes samples: GPU, host, watched files and the wrapped job, each
// read on its own so that one failing does not stop the others. Sample is
// safe for concurrent use (calls are serialised), so the order executor can
// take a fresh sample while the sampling loop runs.
type Sampler struct {
	GPU        GPUSource
	Host       HostReader
	Watch      []string
	Job        *Job      // nil when no job is wrapped
	Presence   *Presence // nil: who is connected is not looked at
	Witness    *Witness  // nil: disk I/O and transfer processes are not looked at
	Thresholds Thresholds
	Now        func() time.Time // default time.Now
	Log        *slog.Logger

	mu           sync.Mutex
	prevCPU      CPUUsage
	prevCPUAt    time.Time
	prevNet      NetCounters
	prevNetAt    time.Time
	prevWatch    map[string]WatchReading
	tracker      IdleTracker
	lastErr      map[string]string // last logged error per signal, to log changes only
	lastSessions int               // people connected at the last presence read, to log changes only
	last         *Sample
	transfers    []string // at the last full read: every sample until the next carries them
}

func (s *Sampler) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Sampler) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Sample reads everything once, with every utilisation sample NVML still
// holds (ReadConfirm), decides the verdict and updates the idle streak. It
// is the sample taken before a release.
func (s *Sampler) Sample(ctx context.Context) *Sample {
	return s.SampleLevel(ctx, ReadConfirm)
}

// SampleLevel is Sample reading the GPUs at level. Below ReadFull it skips
// what decides nothing and is only reported (GPU memory, clock-event
// reasons, processes, host memory, disk): the sampling loop reads those
// once per heartbeat.
func (s *Sampler) SampleLevel(ctx context.Context, level ReadLevel) *Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	sm := &Sample{At: s.now()}

	if s.GPU == nil {
		sm.GPUErr = "no gpu source"
	} else if gs, err := s.GPU.Read(ctx, level); err != nil {
		sm.GPUErr = err.Error()
	} else {
		sm.GPUs = gs
	}
	var override *SimHost
	if ho, ok := s.GPU.(HostOverride); ok && sm.GPUErr == "" {
		override = ho.HostOverride()
	}
	s.readCPU(sm, override)
	s.readNet(sm, override)
	s.readWitness(sm, override, level)
	if level >= ReadFull {
		sm.HostRead = true
		if m, err := s.Host.ReadMemory(); err == nil {
			sm.MemOK, sm.Mem = true, m
		} else {
			sm.HostErrs = append(sm.HostErrs, err.Error())
		}
		if d, err := s.Host.ReadDisk(); err == nil {
			sm.DiskOK, sm.Disk = true, d
		} else {
			sm.HostErrs = append(sm.HostErrs, err.Error())
		}
		if s.Presence != nil {
			sm.SessionsRead = true
			read := s.Presence.Read
			if level >= ReadConfirm {
				read = s.Presence.ReadFresh // before a release: nothing cached
			}
			if ss, err := read(); err == nil {
				sm.Sessions = ss
			} else {
				sm.SessionsErr = err.Error()
			}
		}
	}
	s.readWatches(sm)
	if s.Job != nil {
		st := s.Job.State()
		sm.Job = &st
	}
	sm.Verdict, sm.Reasons = Decide(sm, s.Thresholds)
	s.tracker.Observe(sm.Verdict, sm.At)
	if since, ok := s.tracker.Since(); ok {
		sm.IdleSince, sm.IdleFor = since, s.tracker.IdleFor(sm.At)
	}
	s.logChanges(sm)
	s.last = sm
	return sm
}

// Idle returns the start of the current idle streak (wall clock), how long
// it has lasted on the monotonic clock, and whether the host is idle now.
func (s *Sampler) Idle() (since time.Time, dur time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	since, ok = s.tracker.Since()
	return since, s.tracker.IdleFor(s.now()), ok
}

// Last returns the most recent sample, or nil.
func (s *Sampler) Last() *Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func (s *Sampler) readCPU(sm *Sample, o *SimHost) {
	if o != nil && o.CPUPercent != nil {
		sm.CPUOK, sm.CPUPercent, sm.CPUSource = true, *o.CPUPercent, "simulate"
		return
	}
	u, err := s.Host.ReadCPU()
	if err != nil {
		sm.CPUErr = err.Error()
		s.prevCPUAt = time.Time{}
		return
	}
	sm.CPUSource = u.Source
	if !s.prevCPUAt.IsZero() && s.prevCPU.Source == u.Source {
		dt := sm.At.Sub(s.prevCPUAt).Seconds()
		du := u.Seconds - s.prevCPU.Seconds
		if dt > 0 && du >= 0 {
			sm.CPUOK, sm.CPUPercent = true, du/dt*100
		} else {
			sm.CPUErr = "counter went backwards"
		}
	}
	s.prevCPU, s.prevCPUAt = u, sm.At
}

func (s *Sampler) readNet(sm *Sample, o *SimHost) {
	if o != nil && o.NetBytesPerS != nil {
		sm.NetOK, sm.NetBytesPerS = true, *o.NetBytesPerS
		if c, err := s.Host.ReadNet(); err == nil {
			sm.Net = c // keep real totals for the traffic meter
		}
		return
	}
	c, err := s.Host.ReadNet()
	if err != nil {
		sm.NetErr = err.Error()
		s.prevNetAt = time.Time{}
		return
	}
	sm.Net = c
	if !s.prevNetAt.IsZero() {
		dt := sm.At.Sub(s.prevNetAt).Seconds()
		if c.RxBytes >= s.prevNet.RxBytes && c.TxBytes >= s.prevNet.TxBytes && dt > 0 {
			sm.NetDelta = NetCounters{RxBytes: c.RxBytes - s.prevNet.RxBytes, TxBytes: c.TxBytes - s.prevNet.TxBytes}
			sm.NetOK, sm.NetBytesPerS = true, float64(sm.NetDelta.RxBytes+sm.NetDelta.TxBytes)/dt
		} else {
			sm.NetErr = "counters reset"
		}
	}
	s.prevNet, s.prevNetAt = c, sm.At
}

// readWitness reads the disk rate at every sample (a counter delta: the
// sample periods tile the window) and the transfer processes at level
// ReadFull and above, once per heartbeat, as the presence looks. A
// simulate file's host object describes the whole host: what it does not
// give (disk_bytes_per_s, processes) is none, not this machine's, so a
// simulated idle host stays idle on a busy build machine.
func (s *Sampler) readWitness(sm *Sample, o *SimHost, level ReadLevel) {
	if o != nil {
		sm.DiskIOOK, sm.DiskIO = true, DiskIO{Source: "simulate"}
		if o.DiskBytesPerS != nil {
			sm.DiskIO.BytesPerS = *o.DiskBytesPerS
		}
		if level >= ReadFull {
			s.transfers = MatchTransfers(o.procInfos())
		}
		sm.Transfers = s.transfers
		return
	}
	if s.Witness == nil {
		return
	}
	d, ok, err := s.Witness.ReadDiskLevel(sm.At, level >= ReadFull)
	sm.DiskIOOK, sm.DiskIO = ok, d
	if err != nil {
		sm.DiskIOErr = err.Error()
	}
	if level >= ReadFull {
		t, err := s.Witness.Transfers(sm.At)
		if err != nil {
			sm.DiskIOErr = cmpOr(sm.DiskIOErr, err.Error())
		}
		s.transfers = t
	}
	// A transfer seen at the heartbeat's full read runs on through the
	// samples after it: each says so, so that the heartbeat's work does
	// not depend on which busy sample decided it.
	sm.Transfers = s.transfers
}

// maxDirEntries bounds the work of watching a directory.
const maxDirEntries = 1000

func (s *Sampler) readWatches(sm *Sample) {
	if len(s.Watch) == 0 {
		return
	}
	if s.prevWatch == nil {
		s.prevWatch = map[string]WatchReading{}
	}
	for _, p := range s.Watch {
		w := readWatch(p)
		if prev, ok := s.prevWatch[p]; ok && prev.Exists && w.Exists {
			w.Grew = w.SizeBytes - prev.SizeBytes
			w.Growing = w.Grew > 0 || w.ModTime.After(prev.ModTime)
		}
		s.prevWatch[p] = w
		sm.Watches = append(sm.Watches, w)
	}
}

// readWatch stats a file, or for a directory sums the sizes of the regular
// files directly inside it and takes the newest modification time.
func readWatch(p string) WatchReading {
	w := WatchReading{Path: p}
	fi, err := os.Stat(p)
	if err != nil {
		if !os.IsNotExist(err) {
			w.Err = err.Error()
		}
		return w
	}
	w.Exists, w.SizeBytes, w.ModTime = true, fi.Size(), fi.ModTime()
	if !fi.IsDir() {
		return w
	}
	f, err := os.Open(p)
	if err != nil {
		w.Err = err.Error()
		return w
	}
	defer f.Close()
	ents, _ := f.ReadDir(maxDirEntries)
	w.SizeBytes = 0
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		w.SizeBytes += info.Size()
		if info.ModTime().After(w.ModTime) {
			w.ModTime = info.ModTime()
		}
	}
	return w
}

// gpuKeys are the logChanges keys of the first GPUs, made once.
var gpuKeys = func() (k [wire.MaxGPUs]string) {
	for i := range k {
		k[i] = "gpu" + strconv.Itoa(i)
	}
	return k
}()

func gpuKey(i int) string {
	if i >= 0 && i < len(gpuKeys) {
		return gpuKeys[i]
	}
	return "gpu" + strconv.Itoa(i)
}

// logChanges logs a failing signal when its error first appears or changes,
// and when it recovers, so a broken GPU does not flood the log.
func (s *Sampler) logChanges(sm *Sample) {
	if s.lastErr == nil {
		s.lastErr = map[string]string{}
	}
	check := func(key, err string) {
		prev := s.lastErr[key]
		switch {
		case err == prev:
			return
		case err != "":
			s.log().Warn("reading failed", "signal", key, "err", err)
		default:
			s.log().Info("reading recovered", "signal", key)
		}
		s.lastErr[key] = err
	}
	check("gpu", sm.GPUErr)
	for _, g := range sm.GPUs {
		e := g.Err
		if g.UtilOK && e != "" {
			e = "" // partial: optional readings only
		}
		check(gpuKey(g.Index), e)
	}
	check("cpu", sm.CPUErr)
	check("net", sm.NetErr)
	check("disk i/o", sm.DiskIOErr)
	if sm.SessionsRead {
		check("sessions", sm.SessionsErr)
		if n := len(sm.Sessions); n != s.lastSessions {
			// The count only: addresses go to the server, not the log.
			s.log().Debug("people connected", "count", n)
			s.lastSessions = n
		}
	}
}
