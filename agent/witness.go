package agent

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Witness sees the work that leaves the GPU and the CPU quiet: a dataset
// copied from the data disk, a model downloaded, packages installed. On an
// H200 a 2 GiB O_DIRECT copy loop (GPU untouched, little CPU) read idle for
// a minute before the witness existed, and a stop then would have cost the
// user the copy. It has two signals:
//
//   - Disk I/O: the bytes read and written by this container, as counter
//     deltas between samples (the sample periods tile the heartbeat window,
//     so nothing between two samples is lost), less the agent's own. The
//     counters come from, first that works: the cgroup's own io.stat (v2)
//     or blkio.throttle.io_service_bytes (v1), one small read per sample;
//     outside a container, /proc/diskstats (the machine's own disks, one
//     read); and the sum of /proc/PID/io read_bytes and write_bytes over
//     the visible processes (inside a container, the container's; a
//     process that starts and exits between two reads is missed; read once
//     per heartbeat, see ReadDiskLevel). Inside AutoDL, RunPod and Vast.ai
//     containers /proc/diskstats is the host's, busy with other tenants: it
//     would hold a forgotten rental for ever, the very bill the agent is
//     there to stop, so there the disk signal is left out rather than read
//     from it. Where no counter can be read the disk decides nothing.
//   - Known transfer and install processes (rsync, scp, rclone, tar, pip
//     install, git clone, hf download, curl...; see transferLabel) that have
//     run for transferMinAge: a slow download or a resolver thinking moves
//     few bytes but is still work the user would lose.
//
// Network receive is not the witness's: /proc/net/dev, which the sampler
// already reads, is the container's own namespace, so --net-threshold
// already counts downloads.
//
// A Witness is safe for concurrent use.
type Witness struct {
	ProcRoot   string // default "/proc"
	CgroupRoot string // default "/sys/fs/cgroup"
	// Diskstats allows /proc/diskstats as the last source: set it only
	// outside a container (see InContainer), where it is this machine's.
	Diskstats bool
	// MinAge is how long a transfer process must have run to count;
	// zero means transferMinAge.
	MinAge time.Duration

	mu       sync.Mutex
	files    fileCache
	prev     uint64 // cumulative bytes of prevSrc at prevAt
	prevSrc  string
	prevAt   time.Time
	prevSelf uint64            // the agent's own bytes at prevAt
	perPID   map[int]uint64    // the proc source's last counter per process
	procAcc  uint64            // the proc source's running total
	procs    map[int]procEntry // the transfer scan's cache
	scanAt   time.Time         // when the scan last read every process afresh
}

// DiskIO is the disk rate of one sample period.
type DiskIO struct {
	BytesPerS float64
	Source    string // "cgroup2", "cgroup1", "proc" or "diskstats"
}

// transferMinAge is how long a transfer or install process must have run
// before it counts. A health-check curl or a `pip --version` ends within
// a second or two and should not hold a machine; a download or an install
// that ends within ten seconds is over long before an automatic stop could
// act on the quiet (the idle warning and its grace take minutes), so it
// loses nothing by not counting.
const transferMinAge = 10 * time.Second

// witnessRescan is how often the transfer scan reads every process afresh
// instead of only the new PIDs (a PID reused by a new process is then
// seen): the presence's process-scan cadence.
const witnessRescan = presenceRescan

// maxCmdline bounds what is read of one process's command line.
const maxCmdline = 4096

func (w *Witness) proc(p string) string {
	r := w.ProcRoot
	if r == "" {
		r = "/proc"
	}
	return r + "/" + p
}

func (w *Witness) cgroup(p string) string {
	r := w.CgroupRoot
	if r == "" {
		r = "/sys/fs/cgroup"
	}
	return r + "/" + p
}

// errNoDiskCounter says that no disk counter this host offers may be used.
var errNoDiskCounter = errors.New("agent: disk i/o: no counter (no cgroup io accounting, /proc/PID/io unreadable, in a container)")

// ReadDisk returns the disk rate since the previous read, less the agent's
// own I/O. The first call, and the first after the source changed, only
// sets the baseline (ok false, err nil).
func (w *Witness) ReadDisk(at time.Time) (d DiskIO, ok bool, err error) {
	return w.ReadDiskLevel(at, true)
}

// ReadDiskLevel is ReadDisk for a sample that is the heartbeat's full
// read (full) or not. The /proc/PID/io source reads a file per process
// (a median of 7.4 ms with 107 processes on the loaded 2-core build VM,
// against 45 µs for /proc/diskstats and 3 µs for the cgroup's CPU file,
// BenchmarkWitness_ReadDisk): it is read at full reads only, once per
// heartbeat, and its rate is over the heartbeat's period; other samples
// have no disk reading (ok false, err nil).
func (w *Witness) ReadDiskLevel(at time.Time, full bool) (d DiskIO, ok bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.prevSrc == "proc" && !w.prevAt.IsZero() && !full {
		return DiskIO{Source: "proc"}, false, nil
	}
	total, src, err := w.readCounter()
	if err != nil {
		w.prevAt = time.Time{}
		return DiskIO{}, false, err
	}
	self := w.selfBytes()
	defer func() { w.prev, w.prevSrc, w.prevAt, w.prevSelf = total, src, at, self }()
	if w.prevAt.IsZero() || src != w.prevSrc {
		return DiskIO{Source: src}, false, nil
	}
	dt := at.Sub(w.prevAt).Seconds()
	if dt <= 0 || total < w.prev {
		return DiskIO{Source: src}, false, errors.New("agent: disk i/o: counter went backwards")
	}
	moved := total - w.prev
	if own := self - min(self, w.prevSelf); src != "proc" {
		moved -= min(moved, own) // the proc source leaves the agent out itself
	}
	return DiskIO{BytesPerS: float64(moved) / dt, Source: src}, true, nil
}

// readCounter returns the cumulative bytes read and written, and from where.
func (w *Witness) readCounter() (uint64, string, error) {
	var n uint64
	err := w.files.read(w.cgroup("io.stat"), func(b []byte) (err error) {
		n, err = parseIOStat(b)
		return err
	})
	if err == nil {
		return n, "cgroup2", nil
	}
	for _, p := range cgroup1BlkioPaths {
		var devs int
		err := w.files.read(w.cgroup(p), func(b []byte) (err error) {
			n, devs, err = parseBlkio(b)
			return err
		})
		// A v1 file that names no device is not accounting (the root
		// cgroup on some kernels reads "Total 0" under any load).
		if err == nil && devs > 0 {
			return n, "cgroup1", nil
		}
	}
	if w.Diskstats {
		err := w.files.read(w.proc("diskstats"), func(b []byte) (err error) {
			n, err = parseDiskstats(b)
			return err
		})
		if err == nil {
			return n, "diskstats", nil
		}
	}
	if n, ok := w.readProcIO(); ok {
		return n, "proc", nil
	}
	return 0, "", errNoDiskCounter
}

var cgroup1BlkioPaths = []string{
	"blkio/blkio.throttle.io_service_bytes_recursive",
	"blkio/blkio.throttle.io_service_bytes",
	"blkio.throttle.io_service_bytes_recursive",
}

// readProcIO adds to a running total what every visible process but the
// agent read and wrote since the last call (a process new since then
// counts whole: it started in between). It fails when no other process's
// counters can be read (the agent runs as another user).
func (w *Witness) readProcIO() (uint64, bool) {
	ents, err := os.ReadDir(w.proc(""))
	if err != nil {
		return 0, false
	}
	self := os.Getpid()
	seen := make(map[int]uint64, len(w.perPID))
	others, readable := 0, 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 || pid == self {
			continue
		}
		if others++; others > maxPresenceProcs {
			break
		}
		b, err := os.ReadFile(w.proc(e.Name() + "/io"))
		if err != nil {
			continue
		}
		v, ok := parseProcIO(b)
		if !ok {
			continue
		}
		readable++
		seen[pid] = v
		if last, ok := w.perPID[pid]; ok {
			if v >= last {
				w.procAcc += v - last
			}
		} else if w.perPID != nil {
			w.procAcc += v
		}
	}
	if readable == 0 && others > 0 {
		w.perPID = nil
		return 0, false
	}
	w.perPID = seen
	return w.procAcc, true
}

// selfBytes is what the agent itself has read and written.
func (w *Witness) selfBytes() uint64 {
	b, err := os.ReadFile(w.proc("self/io"))
	if err != nil {
		return 0
	}
	v, _ := parseProcIO(b)
	return v
}

// parseIOStat sums rbytes and wbytes over the devices of a cgroup v2
// io.stat ("8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0").
func parseIOStat(b []byte) (uint64, error) {
	var sum uint64
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		_, rest := nextField(line) // MAJ:MIN
		for {
			var f []byte
			if f, rest = nextField(rest); f == nil {
				break
			}
			k, v, ok := bytes.Cut(f, []byte("="))
			if !ok || (string(k) != "rbytes" && string(k) != "wbytes") {
				continue
			}
			n, ok := atou(v)
			if !ok {
				return 0, fmt.Errorf("agent: io.stat %s: bad number %q", k, v)
			}
			sum += n
		}
	}
	return sum, nil
}

// parseBlkio sums the Read and Write lines of a cgroup v1
// blkio.throttle.io_service_bytes ("8:0 Read 4096"), and counts the
// devices named.
func parseBlkio(b []byte) (sum uint64, devs int, err error) {
	seen := map[string]bool{}
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		dev, rest := nextField(line)
		op, rest := nextField(rest)
		v, _ := nextField(rest)
		if v == nil || (string(op) != "Read" && string(op) != "Write") {
			continue // "Total N", the Sync/Async/Discard lines
		}
		n, ok := atou(v)
		if !ok {
			return 0, 0, fmt.Errorf("agent: blkio %s: bad number %q", op, v)
		}
		sum += n
		if !seen[string(dev)] {
			seen[string(dev)] = true
			devs++
		}
	}
	return sum, devs, nil
}

// parseProcIO returns read_bytes + write_bytes of a /proc/PID/io file.
func parseProcIO(b []byte) (uint64, bool) {
	var sum uint64
	have := 0
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok || (string(k) != "read_bytes" && string(k) != "write_bytes") {
			continue
		}
		f, _ := nextField(v)
		n, ok := atou(f)
		if !ok {
			return 0, false
		}
		sum += n
		have++
	}
	return sum, have == 2
}

// parseDiskstats sums the sectors read and written (512 bytes each) over
// the whole disks of /proc/diskstats; partitions, device-mapper, loop and
// RAM devices are left out, as their I/O is already counted on a disk.
func parseDiskstats(b []byte) (uint64, error) {
	var sum uint64
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		var f [10][]byte
		n := fieldsInto(f[:], line)
		if n == 0 {
			continue
		}
		if n < 10 {
			return 0, errors.New("agent: /proc/diskstats: short line")
		}
		if !wholeDisk(string(f[2])) {
			continue
		}
		r, ok1 := atou(f[5])
		w, ok2 := atou(f[9])
		if !ok1 || !ok2 {
			return 0, fmt.Errorf("agent: /proc/diskstats %s: bad counters", f[2])
		}
		sum += (r + w) * 512
	}
	return sum, nil
}

// wholeDisk reports whether a block device name is a whole disk: sda,
// vdb, xvda, hdc, nvme0n1 (not sda1, nvme0n1p2, dm-0, loop0, ram0, md0).
func wholeDisk(name string) bool {
	letters := func(s string) bool {
		return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz") == ""
	}
	for _, p := range []string{"sd", "vd", "xvd", "hd"} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			return letters(rest)
		}
	}
	if rest, ok := strings.CutPrefix(name, "nvme"); ok {
		ctrl, ns, ok := strings.Cut(rest, "n")
		return ok && digits(ctrl) && digits(ns)
	}
	return false
}

func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// procEntry is what the transfer scan knows of one process.
type procEntry struct {
	label string  // transferLabel's answer; "" for none
	start float64 // seconds after boot the process started
}

// ProcInfo is one process as the transfer matcher sees it: its name
// (/proc/PID/comm), its command line and how long it has run.
type ProcInfo struct {
	Comm string
	Argv []string
	Age  time.Duration
}

// Transfers returns the transfer and install processes that have run for
// transferMinAge, as labels ("rsync", "pip install"), each once, sorted.
// It reads /proc/PID/stat (name and start time) of processes it has not
// seen before and the command line of candidates only, and everything
// afresh every witnessRescan; now is the caller's clock (for the rescan
// only: ages come from the kernel's clock).
func (w *Witness) Transfers(now time.Time) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, err := os.ReadFile(w.proc("uptime"))
	if err != nil {
		return nil, fmt.Errorf("agent: transfers: %w", err)
	}
	f, _ := nextField(b)
	up, err := strconv.ParseFloat(string(f), 64)
	if err != nil {
		return nil, fmt.Errorf("agent: transfers: /proc/uptime: %w", err)
	}
	ents, err := os.ReadDir(w.proc(""))
	if err != nil {
		return nil, fmt.Errorf("agent: transfers: %w", err)
	}
	if w.scanAt.IsZero() || now.Sub(w.scanAt) >= witnessRescan || now.Before(w.scanAt) {
		w.procs, w.scanAt = nil, now
	}
	minAge := w.MinAge
	if minAge <= 0 {
		minAge = transferMinAge
	}
	next := make(map[int]procEntry, len(w.procs))
	var out []string
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if n++; n > maxPresenceProcs {
			break
		}
		pe, ok := w.procs[pid]
		if !ok {
			if pe, ok = w.readProc(e.Name()); !ok {
				continue // gone meanwhile
			}
		}
		next[pid] = pe
		if pe.label != "" && time.Duration((up-pe.start)*float64(time.Second)) >= minAge && !slices.Contains(out, pe.label) {
			out = append(out, pe.label)
		}
	}
	w.procs = next
	slices.Sort(out)
	return out, nil
}

// readProc reads one process's name, start time and, for a candidate,
// its command line.
func (w *Witness) readProc(pid string) (procEntry, bool) {
	b, err := os.ReadFile(w.proc(pid + "/stat"))
	if err != nil {
		return procEntry{}, false
	}
	comm, start, ok := parseProcStatStart(b)
	if !ok {
		return procEntry{}, false
	}
	pe := procEntry{start: float64(start) / userHZ}
	if !transferCandidate(comm) {
		return pe, true
	}
	f, err := os.Open(w.proc(pid + "/cmdline"))
	if err != nil {
		return pe, true
	}
	buf := make([]byte, maxCmdline)
	m, _ := f.Read(buf)
	f.Close()
	pe.label = transferLabel(comm, splitArgv(buf[:m]))
	return pe, true
}

// parseProcStatStart returns the name (comm) and start time (clock ticks
// after boot, field 22) of a /proc/PID/stat line. The name is in
// parentheses and may hold spaces and parentheses itself: the last ')'
// ends it.
func parseProcStatStart(b []byte) (comm string, start uint64, ok bool) {
	i := bytes.IndexByte(b, '(')
	j := bytes.LastIndexByte(b, ')')
	if i < 0 || j < i {
		return "", 0, false
	}
	comm = string(b[i+1 : j])
	rest := b[j+1:]
	// Fields 3 (state) to 22 (starttime): the 20th after the name.
	var f []byte
	for k := 0; k < 20; k++ {
		if f, rest = nextField(rest); f == nil {
			return "", 0, false
		}
	}
	start, ok = atou(f)
	return comm, start, ok
}

// splitArgv splits a NUL-separated command line into at most 16 arguments.
func splitArgv(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	parts := bytes.SplitN(b, []byte{0}, 17)
	out := make([]string, 0, min(len(parts), 16))
	for _, p := range parts[:min(len(parts), 16)] {
		out = append(out, string(p))
	}
	return out
}

// transferComms are the programs that are a transfer or an unpacking
// whatever their arguments.
var transferComms = map[string]bool{
	"rsync": true, "scp": true, "s5cmd": true, "rclone": true, "ossutil": true, "ossutil64": true,
	"coscmd": true, "tar": true, "unzip": true, "zstd": true, "pzstd": true, "pigz": true, "7z": true, "7za": true,
	"wget": true, "curl": true, "aria2c": true, "git-lfs": true, "azcopy": true,
}

// valueOpts are the options, before a subcommand, that take a value
// (git -C DIR, conda -n NAME, uv --project DIR).
var valueOpts = map[string]bool{"-C": true, "-c": true, "-n": true, "--name": true, "-p": true, "--prefix": true,
	"--project": true, "--directory": true}

// transferCandidate reports whether a process name may be a transfer or
// an install, so that its command line is worth reading.
func transferCandidate(comm string) bool {
	if transferComms[comm] {
		return true
	}
	switch comm {
	case "git", "uv", "conda", "mamba", "micromamba", "huggingface-cli", "hf", "modelscope", "apt", "apt-get", "dpkg":
		return true
	}
	return strings.HasPrefix(comm, "pip") || strings.HasPrefix(comm, "python")
}

// transferLabel says what a process is doing when it is a known transfer
// or install ("rsync", "pip install", "git clone", "hf download"), or ""
// when it is not one. comm is /proc/PID/comm (the kernel's name: the
// script's for a #! script, cut to 15 bytes); argv its command line.
// Matching is on exact names and subcommands, never on substrings, so a
// "my-rsync-report" or a `pip list` is nothing, and an rsync daemon
// (`rsync --daemon`, waiting for clients) is not a transfer.
func transferLabel(comm string, argv []string) string {
	if transferComms[comm] {
		if comm == "rsync" && slices.Contains(argv, "--daemon") {
			return ""
		}
		return comm
	}
	// sub returns the first argument that is not an option, and those
	// after it.
	sub := func(args []string) (string, []string) {
		for i := 0; i < len(args); i++ {
			switch a := args[i]; {
			case valueOpts[a]:
				i++ // an option that takes a value: skip the value too
			case strings.HasPrefix(a, "-"):
			default:
				return a, args[i+1:]
			}
		}
		return "", nil
	}
	args := argsAfter(comm, argv)
	pipLabel := func(args []string) string {
		switch s, _ := sub(args); s {
		case "install", "download", "wheel":
			return "pip " + s
		}
		return ""
	}
	switch {
	case strings.HasPrefix(comm, "pip"):
		return pipLabel(args)
	case strings.HasPrefix(comm, "python"):
		// python -m pip install ...; python -m huggingface_hub.cli download.
		// The interpreter's options end at the module, a script or -c.
		for i, a := range args {
			if a == "-c" || !strings.HasPrefix(a, "-") {
				return ""
			}
			if a != "-m" || i+1 >= len(args) {
				continue
			}
			switch args[i+1] {
			case "pip":
				return pipLabel(args[i+2:])
			case "huggingface_hub.commands.huggingface_cli", "huggingface_hub.cli.hf":
				if s, _ := sub(args[i+2:]); s == "download" || s == "upload" {
					return "hf " + s
				}
			}
			return ""
		}
	case comm == "uv":
		s, rest := sub(args)
		switch s {
		case "sync", "add":
			return "uv " + s
		case "pip", "tool", "python":
			if t, _ := sub(rest); t == "install" || t == "sync" {
				return "uv " + s + " " + t
			}
		}
	case comm == "conda" || comm == "mamba" || comm == "micromamba":
		s, rest := sub(args)
		switch s {
		case "install", "create", "update", "upgrade":
			return comm + " " + s
		case "env":
			if t, _ := sub(rest); t == "create" || t == "update" {
				return comm + " env " + t
			}
		}
	case comm == "git":
		switch s, _ := sub(args); s {
		case "clone", "fetch", "pull", "lfs":
			return "git " + s
		}
	case comm == "huggingface-cli" || comm == "hf" || comm == "modelscope":
		name := comm
		if name == "huggingface-cli" {
			name = "hf"
		}
		if s, _ := sub(args); s == "download" || s == "upload" {
			return name + " " + s
		}
	case comm == "apt" || comm == "apt-get":
		switch s, _ := sub(args); s {
		case "install", "upgrade", "dist-upgrade", "full-upgrade":
			return "apt " + s
		}
	case comm == "dpkg":
		if slices.Contains(args, "-i") || slices.Contains(args, "--install") || slices.Contains(args, "--unpack") {
			return "dpkg install"
		}
	}
	return ""
}

// argsAfter returns the arguments after the program named comm. A #!
// script (pip, huggingface-cli, conda, hf are Python scripts) runs as
// "/usr/bin/python3 /usr/local/bin/pip install x": its name is the
// kernel's comm, and its own arguments follow its path. comm is cut to 15
// bytes, so a longer name only has to start with it.
func argsAfter(comm string, argv []string) []string {
	for i, a := range argv[:min(len(argv), 3)] {
		base := a[strings.LastIndexByte(a, '/')+1:]
		if base == comm || (len(comm) == 15 && strings.HasPrefix(base, comm)) {
			return argv[i+1:]
		}
	}
	if len(argv) > 0 {
		return argv[1:]
	}
	return nil
}

// MatchTransfers returns the labels of the processes in ps that count as
// transfers or installs (run for transferMinAge), each once, sorted: the
// simulate file's processes go through it.
func MatchTransfers(ps []ProcInfo) []string {
	var out []string
	for _, p := range ps {
		if l := transferLabel(p.Comm, p.Argv); l != "" && p.Age >= transferMinAge && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// Close closes the files the witness keeps open.
func (w *Witness) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return HostReader{files: &w.files}.Close()
}

// InContainer reports whether the agent runs inside a container (where
// /proc/diskstats is the host's): /.dockerenv, /run/.containerenv, a
// container runtime in /proc/1/cgroup or container= in PID 1's
// environment, as agent/platform tells.
func InContainer() bool {
	for _, p := range []string{"/.dockerenv", "/run/.containerenv"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	cg, _ := os.ReadFile("/proc/1/cgroup")
	for _, s := range []string{"docker", "kubepods", "containerd", "lxc", "libpod", "crio"} {
		if bytes.Contains(cg, []byte(s)) {
			return true
		}
	}
	env, _ := os.ReadFile("/proc/1/environ")
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.HasPrefix(kv, []byte("container=")) {
			return true
		}
	}
	return false
}
