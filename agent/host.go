package agent

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// HostReader reads the host's CPU, memory and network counters. Each reader
// succeeds or fails on its own. Reading (files under ProcRoot and
// CgroupRoot) is split from parsing (the parse* functions), which are tested
// on fixtures. A HostReader is safe for concurrent use: it holds no state.
type HostReader struct {
	ProcRoot   string // default "/proc"
	CgroupRoot string // default "/sys/fs/cgroup"
	DiskPath   string // default "/"
}

func (h HostReader) proc(p string) string {
	r := h.ProcRoot
	if r == "" {
		r = "/proc"
	}
	return filepath.Join(r, p)
}

func (h HostReader) cgroup(p string) string {
	r := h.CgroupRoot
	if r == "" {
		r = "/sys/fs/cgroup"
	}
	return filepath.Join(r, p)
}

// CPUUsage is cumulative CPU time used, in seconds, and where it was read.
type CPUUsage struct {
	Seconds float64
	Source  string // "cgroup2", "cgroup1" or "proc"
}

// ReadCPU returns the CPU time used so far by this container (its cgroup)
// or, where no cgroup accounting is visible, by the whole host. Inside a
// rented container /proc/stat shows the host's CPUs, busy with other
// tenants, so the cgroup comes first.
func (h HostReader) ReadCPU() (CPUUsage, error) {
	var errs []error
	if b, err := os.ReadFile(h.cgroup("cpu.stat")); err == nil {
		if us, err := parseCgroup2CPUStat(b); err == nil {
			return CPUUsage{Seconds: float64(us) / 1e6, Source: "cgroup2"}, nil
		} else {
			errs = append(errs, err)
		}
	}
	for _, p := range []string{"cpuacct/cpuacct.usage", "cpu,cpuacct/cpuacct.usage", "cpuacct.usage"} {
		b, err := os.ReadFile(h.cgroup(p))
		if err != nil {
			continue
		}
		ns, err := parseUint(b)
		if err != nil {
			errs = append(errs, fmt.Errorf("agent: parse %s: %w", p, err))
			continue
		}
		return CPUUsage{Seconds: float64(ns) / 1e9, Source: "cgroup1"}, nil
	}
	f, err := os.Open(h.proc("stat"))
	if err != nil {
		return CPUUsage{}, errors.Join(append(errs, fmt.Errorf("agent: read cpu: %w", err))...)
	}
	defer f.Close()
	jiffies, err := parseProcStat(f)
	if err != nil {
		return CPUUsage{}, errors.Join(append(errs, err)...)
	}
	return CPUUsage{Seconds: float64(jiffies) / userHZ, Source: "proc"}, nil
}

// userHZ is USER_HZ, the unit of /proc/stat; 100 on every Linux ABI we run on.
const userHZ = 100

// parseProcStat returns the busy jiffies of the aggregate "cpu" line of
// /proc/stat: all fields but idle and iowait. guest and guest_nice are
// already counted in user and nice, so they are excluded.
func parseProcStat(r io.Reader) (uint64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "cpu" {
			continue
		}
		if len(fields) < 5 {
			return 0, fmt.Errorf("agent: /proc/stat cpu line has %d fields", len(fields))
		}
		var busy uint64
		for i, f := range fields[1:] {
			if i >= 8 { // guest, guest_nice
				break
			}
			v, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("agent: /proc/stat field %d: %w", i+1, err)
			}
			if i == 3 || i == 4 { // idle, iowait
				continue
			}
			busy += v
		}
		return busy, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("agent: read /proc/stat: %w", err)
	}
	return 0, errors.New("agent: /proc/stat has no cpu line")
}

// parseCgroup2CPUStat returns usage_usec from a cgroup v2 cpu.stat file.
func parseCgroup2CPUStat(b []byte) (uint64, error) {
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && k == "usage_usec" {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("agent: cpu.stat usage_usec: %w", err)
			}
			return n, nil
		}
	}
	return 0, errors.New("agent: cpu.stat has no usage_usec")
}

// CPUCores returns the cores this container may use: the cgroup CPU quota
// when one is set, else the number of CPUs the runtime sees.
func (h HostReader) CPUCores() float64 {
	if b, err := os.ReadFile(h.cgroup("cpu.max")); err == nil {
		if c, ok := parseCgroup2CPUMax(b); ok {
			return c
		}
	}
	q, err1 := os.ReadFile(h.cgroup("cpu/cpu.cfs_quota_us"))
	p, err2 := os.ReadFile(h.cgroup("cpu/cpu.cfs_period_us"))
	if err1 == nil && err2 == nil {
		qi, err1 := strconv.ParseInt(strings.TrimSpace(string(q)), 10, 64)
		pi, err2 := strconv.ParseInt(strings.TrimSpace(string(p)), 10, 64)
		if err1 == nil && err2 == nil && qi > 0 && pi > 0 {
			return float64(qi) / float64(pi)
		}
	}
	return float64(runtime.NumCPU())
}

// parseCgroup2CPUMax parses cgroup v2 cpu.max ("max 100000" or "200000 100000").
func parseCgroup2CPUMax(b []byte) (float64, bool) {
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "max" {
		return 0, false
	}
	q, err1 := strconv.ParseFloat(f[0], 64)
	p, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, false
	}
	return q / p, true
}

// Memory is the host's (or container's) memory in bytes.
type Memory struct {
	TotalBytes uint64
	UsedBytes  uint64
	Source     string // "proc" or "cgroup2"/"cgroup1" when a container limit applies
}

// ReadMemory returns total and used memory: the container's limit and usage
// when a cgroup limit below the machine's memory is set, else /proc/meminfo.
func (h HostReader) ReadMemory() (Memory, error) {
	b, err := os.ReadFile(h.proc("meminfo"))
	if err != nil {
		return Memory{}, fmt.Errorf("agent: read meminfo: %w", err)
	}
	total, avail, err := parseMeminfo(b)
	if err != nil {
		return Memory{}, err
	}
	m := Memory{TotalBytes: total, UsedBytes: total - min(avail, total), Source: "proc"}
	for _, c := range [][3]string{
		{"memory.max", "memory.current", "cgroup2"},
		{"memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes", "cgroup1"},
	} {
		lb, err1 := os.ReadFile(h.cgroup(c[0]))
		ub, err2 := os.ReadFile(h.cgroup(c[1]))
		if err1 != nil || err2 != nil {
			continue
		}
		limit, err1 := parseUint(lb) // "max" fails: no limit
		used, err2 := parseUint(ub)
		if err1 == nil && err2 == nil && limit > 0 && limit < total {
			return Memory{TotalBytes: limit, UsedBytes: min(used, limit), Source: c[2]}, nil
		}
	}
	return m, nil
}

// parseMeminfo returns MemTotal and MemAvailable in bytes.
func parseMeminfo(b []byte) (total, avail uint64, err error) {
	var haveT, haveA bool
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, perr := strconv.ParseUint(f[0], 10, 64)
		if perr != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		switch k {
		case "MemTotal":
			total, haveT = n, true
		case "MemAvailable":
			avail, haveA = n, true
		}
	}
	if !haveT || !haveA {
		return 0, 0, errors.New("agent: meminfo lacks MemTotal or MemAvailable")
	}
	return total, avail, nil
}

// NetCounters are cumulative bytes over all interfaces but loopback.
type NetCounters struct {
	RxBytes, TxBytes uint64
}

// ReadNet reads /proc/net/dev (of this network namespace: inside a
// container, the container's interfaces).
func (h HostReader) ReadNet() (NetCounters, error) {
	f, err := os.Open(h.proc("net/dev"))
	if err != nil {
		return NetCounters{}, fmt.Errorf("agent: read net: %w", err)
	}
	defer f.Close()
	return parseNetDev(f)
}

// parseNetDev sums receive and transmit bytes over the interfaces of a
// /proc/net/dev file, skipping lo.
func parseNetDev(r io.Reader) (NetCounters, error) {
	var c NetCounters
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue // the two header lines
		}
		name = strings.TrimSpace(name)
		f := strings.Fields(rest)
		if len(f) < 16 {
			return NetCounters{}, fmt.Errorf("agent: /proc/net/dev %s: %d fields", name, len(f))
		}
		if name == "lo" {
			continue
		}
		rx, err1 := strconv.ParseUint(f[0], 10, 64)
		tx, err2 := strconv.ParseUint(f[8], 10, 64)
		if err1 != nil || err2 != nil {
			return NetCounters{}, fmt.Errorf("agent: /proc/net/dev %s: bad counters", name)
		}
		c.RxBytes += rx
		c.TxBytes += tx
		n++
	}
	if err := sc.Err(); err != nil {
		return NetCounters{}, fmt.Errorf("agent: read /proc/net/dev: %w", err)
	}
	return c, nil
}

// Disk is the space of the filesystem holding a path, in bytes.
type Disk struct {
	Path                  string
	TotalBytes, FreeBytes uint64 // free: available to unprivileged users
}

// ReadDisk returns the space of the filesystem holding DiskPath.
func (h HostReader) ReadDisk() (Disk, error) {
	p := h.DiskPath
	if p == "" {
		p = "/"
	}
	return statDisk(p)
}

func parseUint(b []byte) (uint64, error) {
	return strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
}
