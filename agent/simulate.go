package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/perf"
)

// SimFile is the --simulate file (DESIGN.md section 2), re-read at every
// sample so a demo or test can change it while the agent runs.
type SimFile struct {
	GPUs []SimGPU `json:"gpus"`
	Host *SimHost `json:"host"`
	// Driver and CUDA are optional extras for demos.
	Driver string `json:"driver_version"`
	CUDA   string `json:"cuda_driver_version"`
	// BootedAt, when set, is the instance's boot time in heartbeats
	// (InstanceFacts.BootedAt), in place of the one read from /proc.
	BootedAt *time.Time `json:"booted_at"`
	// HostStopping says the operating system is going down: the
	// shutdown report of the last heartbeat says host true.
	HostStopping bool `json:"host_stopping"`
	// Bench is what "gpuledger-agent bench --simulate FILE" returns (its
	// Source set to "simulate", StartedAt to now), so tests and demos
	// get a receipt without a GPU. Nil: that bench measures nothing.
	Bench *perf.Bench `json:"bench"`
}

// SimGPU is one simulated GPU. A missing utilization makes that GPU unknown,
// as a failed NVML read would.
type SimGPU struct {
	Name           string      `json:"name"`
	UUID           string      `json:"uuid"`
	MemoryTotalMiB uint64      `json:"memory_total_mib"`
	MemoryUsedMiB  *uint64     `json:"memory_used_mib"`
	Utilization    *float64    `json:"utilization"`
	PowerW         *float64    `json:"power_w"`
	TemperatureC   *float64    `json:"temperature_c"`
	SMClockMHz     *uint32     `json:"sm_clock_mhz"`
	SMClockMaxMHz  uint32      `json:"sm_clock_max_mhz"`
	ClockReasons   uint64      `json:"clock_event_reasons"`
	Processes      []wire.Proc `json:"processes"`
}

// SimHost replaces the real host readings when present.
type SimHost struct {
	CPUPercent   *float64 `json:"cpu_percent"`
	NetBytesPerS *float64 `json:"net_bytes_per_s"`
	// DiskBytesPerS is the disk rate (bytes read+written a second).
	DiskBytesPerS *float64 `json:"disk_bytes_per_s"`
	// Processes are the processes the witness looks at for transfers and
	// installs. With a host object, what it leaves out is none: the
	// machine's own disk and processes are not read.
	Processes []SimProc `json:"processes"`
}

// SimProc is one simulated process: its name (/proc/PID/comm), command
// line, and how long it has run in seconds.
type SimProc struct {
	Comm string   `json:"comm"`
	Argv []string `json:"argv"`
	AgeS float64  `json:"age_s"`
}

// procInfos returns the simulated processes as the matcher takes them.
func (h *SimHost) procInfos() []ProcInfo {
	out := make([]ProcInfo, 0, len(h.Processes))
	for _, p := range h.Processes {
		out = append(out, ProcInfo{Comm: p.Comm, Argv: p.Argv, Age: time.Duration(p.AgeS * float64(time.Second))})
	}
	return out
}

// maxSimFile bounds what is read from a simulate file.
const maxSimFile = 1 << 20

// ParseSimFile decodes a simulate file. Unknown fields are errors, so a
// typo does not silently read as "no value".
func ParseSimFile(b []byte) (SimFile, error) {
	var f SimFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return SimFile{}, fmt.Errorf("agent: simulate file: %w", err)
	}
	if dec.More() {
		return SimFile{}, errors.New("agent: simulate file: trailing data")
	}
	if f.Host != nil && len(f.Host.Processes) > maxPresenceProcs {
		return SimFile{}, fmt.Errorf("agent: simulate file: %d processes, at most %d", len(f.Host.Processes), maxPresenceProcs)
	}
	if len(f.GPUs) > wire.MaxGPUs {
		return SimFile{}, fmt.Errorf("agent: simulate file: %d gpus, at most %d", len(f.GPUs), wire.MaxGPUs)
	}
	return f, nil
}

// SimulateSource is a GPUSource reading a SimFile from Path at every Read.
// The file is parsed again only when its size, modification time or inode
// changed since the last read (a stat costs far less than decoding JSON);
// write it by renaming a new file into place, as editors and tests do. A
// missing or malformed file fails the read (verdict unknown) and is
// looked at again at the next sample. It is safe for concurrent use (the
// sampler reads it, the reporter its facts).
type SimulateSource struct {
	Path string

	mu   sync.Mutex
	last *SimHost

	stamp  simStamp // of the file behind file/err
	file   SimFile
	err    error
	loaded bool
}

// simStamp identifies one version of the simulate file.
type simStamp struct {
	size  int64
	mtime time.Time
	sys   any // *syscall.Stat_t on Unix: inode and ctime
}

func (a simStamp) same(b simStamp) bool {
	if a.size != b.size || !a.mtime.Equal(b.mtime) {
		return false
	}
	return sameSys(a.sys, b.sys)
}

func (s *SimulateSource) load() (SimFile, error) {
	fi, err := os.Stat(s.Path)
	if err != nil {
		s.loaded = false
		return SimFile{}, fmt.Errorf("agent: simulate: %w", err)
	}
	st := simStamp{size: fi.Size(), mtime: fi.ModTime(), sys: fi.Sys()}
	if s.loaded && s.stamp.same(st) {
		return s.file, s.err
	}
	s.file, s.err = s.readFile()
	s.stamp, s.loaded = st, true
	return s.file, s.err
}

func (s *SimulateSource) readFile() (SimFile, error) { return ReadSimFile(s.Path) }

// ReadSimFile reads and decodes the simulate file at path (at most
// 1 MiB).
func ReadSimFile(path string) (SimFile, error) {
	fh, err := os.Open(path)
	if err != nil {
		return SimFile{}, fmt.Errorf("agent: simulate: %w", err)
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxSimFile+1))
	if err != nil {
		return SimFile{}, fmt.Errorf("agent: simulate: %w", err)
	}
	if len(b) > maxSimFile {
		return SimFile{}, fmt.Errorf("agent: simulate: %s is over %d bytes", path, maxSimFile)
	}
	return ParseSimFile(b)
}

// SimInstance is what a simulate file says about the instance.
type SimInstance struct {
	BootedAt     time.Time // zero: not given
	HostStopping bool
}

// Instance reads the file's booted_at and host_stopping.
func (s *SimulateSource) Instance() (SimInstance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.load()
	if err != nil {
		return SimInstance{}, err
	}
	out := SimInstance{HostStopping: f.HostStopping}
	if f.BootedAt != nil {
		out.BootedAt = f.BootedAt.UTC()
	}
	return out, nil
}

// Facts implements GPUSource.
func (s *SimulateSource) Facts(context.Context) (GPUFacts, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.load()
	if err != nil {
		return GPUFacts{Source: "simulate"}, err
	}
	facts := GPUFacts{Source: "simulate", DriverVersion: f.Driver, CUDADriverVersion: f.CUDA}
	for i, g := range f.GPUs {
		facts.GPUs = append(facts.GPUs, wire.GPUFact{Index: i, Name: g.Name, UUID: g.UUID,
			MemoryTotalMiB: g.MemoryTotalMiB, SMClockMaxMHz: g.SMClockMaxMHz})
	}
	return facts, nil
}

// Read implements GPUSource. Every level reads everything the file holds.
func (s *SimulateSource) Read(context.Context, ReadLevel) ([]GPUReading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.load()
	if err != nil {
		s.last = nil
		return nil, err
	}
	s.last = f.Host
	out := make([]GPUReading, 0, len(f.GPUs))
	for i, g := range f.GPUs {
		r := GPUReading{Index: i, UUID: g.UUID, Name: g.Name, MemoryTotalMiB: g.MemoryTotalMiB, UtilSource: "simulate"}
		if g.Utilization != nil {
			r.UtilOK, r.UtilMean, r.UtilMax = true, *g.Utilization, *g.Utilization
		} else {
			r.Err = "simulate: no utilization"
		}
		if g.MemoryUsedMiB != nil {
			r.MemOK, r.MemoryUsedMiB = true, *g.MemoryUsedMiB
		}
		if g.PowerW != nil {
			r.PowerOK, r.PowerW = true, *g.PowerW
		}
		if g.TemperatureC != nil && *g.TemperatureC >= 0 {
			r.TempOK, r.TempC = true, uint32(*g.TemperatureC)
		}
		if g.SMClockMHz != nil {
			r.ClockOK, r.SMClockMHz, r.SMClockMaxMHz = true, *g.SMClockMHz, g.SMClockMaxMHz
		}
		r.ReasonsOK, r.ClockReasons = true, g.ClockReasons
		r.ProcsOK, r.Procs = true, g.Processes
		r.validate()
		out = append(out, r)
	}
	return out, nil
}

// HostOverride implements HostOverride: the host object of the last
// successfully read file.
func (s *SimulateSource) HostOverride() *SimHost {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Close implements GPUSource.
func (s *SimulateSource) Close() error { return nil }
