package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HostReader reads the host's CPU, memory and network counters. Each reader
// succeeds or fails on its own. Reading (files under ProcRoot and
// CgroupRoot) is split from parsing (the parse* functions), which are tested
// on fixtures. A HostReader is safe for concurrent use. The zero value opens
// each file at every read; one from Cached keeps the files open and re-reads
// them in place, which is what the sampling loop uses.
type HostReader struct {
	ProcRoot   string // default "/proc"
	CgroupRoot string // default "/sys/fs/cgroup"
	DiskPath   string // default "/"

	files *fileCache // nil: open and close at every read
}

// Cached returns a copy of h that keeps the files it reads open and reads
// them again from offset 0 (pread) into a reused buffer: opening and closing
// a /proc file costs several times more than reading it.
func (h HostReader) Cached() HostReader {
	h.files = &fileCache{}
	return h
}

// readFile returns the contents of path. With a cache the returned slice is
// only valid until the next read and must not be kept; fn is called with it
// under the cache's lock.
func (h HostReader) readFile(path string, fn func([]byte) error) error {
	if h.files == nil {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return fn(b)
	}
	return h.files.read(path, fn)
}

// fileCache keeps small kernel-generated files (/proc, cgroupfs) open. A
// file that is missing is not looked for again for a minute, so a cgroup v1
// host does not pay for failed opens of v2 paths at every sample.
type fileCache struct {
	mu      sync.Mutex
	open    map[string]*os.File
	missing map[string]time.Time // path -> when to look again
	buf     []byte
}

const fileCacheRetry = time.Minute

func (c *fileCache) read(path string, fn func([]byte) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.open[path]
	if f == nil {
		now := time.Now()
		if t, ok := c.missing[path]; ok && now.Before(t) {
			return &os.PathError{Op: "open", Path: path, Err: os.ErrNotExist}
		}
		var err error
		f, err = os.Open(path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				if c.missing == nil {
					c.missing = map[string]time.Time{}
				}
				c.missing[path] = now.Add(fileCacheRetry)
			}
			return err
		}
		delete(c.missing, path)
		if c.open == nil {
			c.open = map[string]*os.File{}
		}
		c.open[path] = f
	}
	if c.buf == nil {
		c.buf = make([]byte, 4096)
	}
	for {
		n, err := f.ReadAt(c.buf, 0)
		if err != nil && err != io.EOF {
			// The file went away (a cgroup removed) or cannot be
			// re-read in place: open it afresh next time.
			f.Close()
			delete(c.open, path)
			return err
		}
		if n < len(c.buf) {
			return fn(c.buf[:n])
		}
		if len(c.buf) >= 1<<20 {
			return fmt.Errorf("agent: %s is over 1 MiB", path)
		}
		c.buf = make([]byte, 2*len(c.buf))
	}
}

// Close closes the files a cached reader holds open.
func (h HostReader) Close() error {
	if h.files == nil {
		return nil
	}
	h.files.mu.Lock()
	defer h.files.mu.Unlock()
	for p, f := range h.files.open {
		f.Close()
		delete(h.files.open, p)
	}
	return nil
}

func (h HostReader) proc(p string) string {
	r := h.ProcRoot
	if r == "" {
		r = "/proc"
	}
	return r + "/" + p
}

func (h HostReader) cgroup(p string) string {
	r := h.CgroupRoot
	if r == "" {
		r = "/sys/fs/cgroup"
	}
	return r + "/" + p
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
	var u CPUUsage
	err := h.readFile(h.cgroup("cpu.stat"), func(b []byte) error {
		us, err := parseCgroup2CPUStat(b)
		u = CPUUsage{Seconds: float64(us) / 1e6, Source: "cgroup2"}
		return err
	})
	if err == nil {
		return u, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	for _, p := range cgroup1CPUPaths {
		err := h.readFile(h.cgroup(p), func(b []byte) error {
			ns, err := parseUint(b)
			if err != nil {
				return fmt.Errorf("agent: parse %s: %w", p, err)
			}
			u = CPUUsage{Seconds: float64(ns) / 1e9, Source: "cgroup1"}
			return nil
		})
		if err == nil {
			return u, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	err = h.readFile(h.proc("stat"), func(b []byte) error {
		jiffies, err := parseProcStat(b)
		u = CPUUsage{Seconds: float64(jiffies) / userHZ, Source: "proc"}
		return err
	})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("agent: read cpu: %w", err)
		}
		return CPUUsage{}, errors.Join(append(errs, err)...)
	}
	return u, nil
}

var cgroup1CPUPaths = []string{"cpuacct/cpuacct.usage", "cpu,cpuacct/cpuacct.usage", "cpuacct.usage"}

// userHZ is USER_HZ, the unit of /proc/stat; 100 on every Linux ABI we run on.
const userHZ = 100

// parseProcStat returns the busy jiffies of the aggregate "cpu" line of
// /proc/stat: all fields but idle and iowait. guest and guest_nice are
// already counted in user and nice, so they are excluded.
func parseProcStat(b []byte) (uint64, error) {
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		f0, rest := nextField(line)
		if string(f0) != "cpu" {
			continue
		}
		var busy uint64
		n := 0
		for i := 0; i < 8; i++ { // guest, guest_nice excluded
			var f []byte
			if f, rest = nextField(rest); f == nil {
				break
			}
			v, ok := atou(f)
			if !ok {
				return 0, fmt.Errorf("agent: /proc/stat field %d: bad number %q", i+1, f)
			}
			n++
			if i == 3 || i == 4 { // idle, iowait
				continue
			}
			busy += v
		}
		if n < 4 {
			return 0, fmt.Errorf("agent: /proc/stat cpu line has %d fields", n+1)
		}
		return busy, nil
	}
	return 0, errors.New("agent: /proc/stat has no cpu line")
}

// parseCgroup2CPUStat returns usage_usec from a cgroup v2 cpu.stat file.
func parseCgroup2CPUStat(b []byte) (uint64, error) {
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		k, rest := nextField(line)
		if string(k) != "usage_usec" {
			continue
		}
		v, _ := nextField(rest)
		n, ok := atou(v)
		if !ok {
			return 0, fmt.Errorf("agent: cpu.stat usage_usec: bad number %q", v)
		}
		return n, nil
	}
	return 0, errors.New("agent: cpu.stat has no usage_usec")
}

// nextLine splits b at its first newline.
func nextLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// nextField returns the first space-separated field of b (nil if none)
// and what follows it.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	if i == len(b) {
		return nil, nil
	}
	j := i
	for j < len(b) && b[j] != ' ' && b[j] != '\t' {
		j++
	}
	return b[i:j], b[j:]
}

// fieldsInto fills f with the leading space-separated fields of line,
// without allocating, and returns how many it found (at most len(f)).
func fieldsInto(f [][]byte, line []byte) int {
	n := 0
	for n < len(f) {
		if f[n], line = nextField(line); f[n] == nil {
			break
		}
		n++
	}
	return n
}

// atou parses a decimal uint64 without allocating.
func atou(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
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
	var total, avail uint64
	err := h.readFile(h.proc("meminfo"), func(b []byte) (err error) {
		total, avail, err = parseMeminfo(b)
		return err
	})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Memory{}, fmt.Errorf("agent: read meminfo: %w", err)
		}
		return Memory{}, err
	}
	m := Memory{TotalBytes: total, UsedBytes: total - min(avail, total), Source: "proc"}
	for _, c := range [][3]string{
		{"memory.max", "memory.current", "cgroup2"},
		{"memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes", "cgroup1"},
	} {
		var limit, used uint64
		var err1, err2 error
		if err := h.readFile(h.cgroup(c[0]), func(b []byte) error { limit, err1 = parseUint(b); return nil }); err != nil {
			continue
		}
		if err := h.readFile(h.cgroup(c[1]), func(b []byte) error { used, err2 = parseUint(b); return nil }); err != nil {
			continue
		}
		// "max" fails to parse: no limit.
		if err1 == nil && err2 == nil && limit > 0 && limit < total {
			return Memory{TotalBytes: limit, UsedBytes: min(used, limit), Source: c[2]}, nil
		}
	}
	return m, nil
}

// parseMeminfo returns MemTotal and MemAvailable in bytes.
func parseMeminfo(b []byte) (total, avail uint64, err error) {
	var haveT, haveA bool
	for len(b) > 0 && !(haveT && haveA) {
		var line []byte
		line, b = nextLine(b)
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *uint64
		switch string(k) {
		case "MemTotal":
			dst, haveT = &total, true
		case "MemAvailable":
			dst, haveA = &avail, true
		default:
			continue
		}
		num, rest := nextField(v)
		n, ok := atou(num)
		if !ok {
			return 0, 0, fmt.Errorf("agent: meminfo %s: bad number %q", k, num)
		}
		if unit, _ := nextField(rest); string(unit) == "kB" {
			n *= 1024
		}
		*dst = n
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
	var c NetCounters
	err := h.readFile(h.proc("net/dev"), func(b []byte) (err error) {
		c, err = parseNetDev(b)
		return err
	})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return NetCounters{}, fmt.Errorf("agent: read net: %w", err)
		}
		return NetCounters{}, err
	}
	return c, nil
}

// parseNetDev sums receive and transmit bytes over the interfaces of a
// /proc/net/dev file, skipping lo.
func parseNetDev(b []byte) (NetCounters, error) {
	var c NetCounters
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue // the two header lines
		}
		name = bytes.TrimSpace(name)
		var f [16][]byte
		n := fieldsInto(f[:], rest)
		if n < 16 {
			return NetCounters{}, fmt.Errorf("agent: /proc/net/dev %s: %d fields", name, n)
		}
		if string(name) == "lo" {
			continue
		}
		rx, ok1 := atou(f[0])
		tx, ok2 := atou(f[8])
		if !ok1 || !ok2 {
			return NetCounters{}, fmt.Errorf("agent: /proc/net/dev %s: bad counters", name)
		}
		c.RxBytes += rx
		c.TxBytes += tx
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

// parseUint parses a file holding one decimal number and a newline.
func parseUint(b []byte) (uint64, error) {
	b = bytes.TrimSpace(b)
	n, ok := atou(b)
	if !ok {
		return 0, fmt.Errorf("agent: bad number %q", b)
	}
	return n, nil
}
