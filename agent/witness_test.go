package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

func TestTransferLabel(t *testing.T) {
	huge := make([]string, 0, 10000)
	huge = append(huge, "pip")
	for i := 0; i < 9999; i++ {
		huge = append(huge, strings.Repeat("x", 100))
	}
	for _, tc := range []struct {
		comm string
		argv []string
		want string
	}{
		{"rsync", []string{"rsync", "-a", "/data/", "/root/local/"}, "rsync"},
		{"rsync", []string{"rsync", "--server", "-logDtpre.iLsfxCIvu", ".", "/root/x"}, "rsync"}, // the receiving end of an rsync over ssh
		{"rsync", []string{"rsync", "--daemon", "--no-detach"}, ""},                              // waiting for clients
		{"rsyncd", []string{"rsyncd"}, ""},
		{"my-rsync-report", []string{"my-rsync-report", "rsync"}, ""},
		{"bash", []string{"bash", "-c", "rsync -a a b"}, ""}, // the shell; its rsync child is matched on its own
		{"tar", []string{"tar", "-xf", "data.tar"}, "tar"},
		{"zstd", []string{"zstd", "-d", "x.zst"}, "zstd"},
		{"curl", []string{"curl", "-fsS", "http://localhost:8080/health"}, "curl"},                     // an age rule keeps the short ones out
		{"pip", []string{"/usr/bin/python3", "/usr/local/bin/pip", "install", "torch"}, "pip install"}, // a #! script
		{"pip", []string{"/usr/bin/python3", "/usr/local/bin/pip", "list"}, ""},
		{"pip", []string{"/bin/sh", "/tmp/x/pip", "download", "x"}, "pip download"},
		{"pip", []string{"pip", "install", "torch"}, "pip install"},
		{"pip3", []string{"pip3", "-q", "install", "-r", "req.txt"}, "pip install"},
		{"pip", []string{"pip", "download", "torch"}, "pip download"},
		{"pip", []string{"pip", "list"}, ""},
		{"pip", []string{"pip", "--version"}, ""},
		{"python3", []string{"python3", "-m", "pip", "install", "vllm"}, "pip install"},
		{"python3.11", []string{"/usr/bin/python3.11", "-u", "-m", "pip", "install", "x"}, "pip install"},
		{"python3", []string{"python3", "-m", "pip", "freeze"}, ""},
		{"python3", []string{"python3", "train.py", "-m", "pip", "install"}, ""}, // -m after the script is the script's
		{"python3", []string{"python3", "-m", "http.server"}, ""},
		{"uv", []string{"uv", "pip", "install", "torch"}, "uv pip install"},
		{"uv", []string{"uv", "--project", "/x", "sync"}, "uv sync"},
		{"uv", []string{"uv", "run", "train.py"}, ""},
		{"conda", []string{"conda", "install", "-y", "pytorch"}, "conda install"},
		{"conda", []string{"conda", "-n", "install", "list"}, ""}, // "install" is the value of -n
		{"conda", []string{"conda", "env", "create", "-f", "env.yml"}, "conda env create"},
		{"conda", []string{"conda", "activate", "base"}, ""},
		{"git", []string{"git", "clone", "https://huggingface.co/x"}, "git clone"},
		{"git", []string{"git", "-C", "/repo", "pull"}, "git pull"},
		{"git", []string{"git", "-C", "clone", "status"}, ""},
		{"git", []string{"git", "lfs", "pull"}, "git lfs"},
		{"git", []string{"git", "status"}, ""},
		{"git-lfs", []string{"git-lfs", "filter-process"}, "git-lfs"},
		{"huggingface-cli", []string{"/usr/bin/python3", "/usr/local/bin/huggingface-cli", "download", "x"}, "hf download"},
		{"conda", []string{"/opt/conda/bin/python", "/opt/conda/bin/conda", "install", "-y", "x"}, "conda install"},
		{"huggingface-cli", []string{"huggingface-cli", "download", "meta-llama/x"}, "hf download"},
		{"hf", []string{"hf", "download", "Qwen/Qwen3"}, "hf download"},
		{"hf", []string{"hf", "auth", "login"}, ""},
		{"modelscope", []string{"modelscope", "download", "--model", "x"}, "modelscope download"},
		{"apt-get", []string{"apt-get", "install", "-y", "git"}, "apt install"},
		{"apt-get", []string{"apt-get", "update"}, ""},
		{"wget", nil, "wget"},
		{"aria2c", []string{"aria2c", "-x16", "url"}, "aria2c"},
		{"pip", huge, ""},
		{"pip", []string{"pip\xff", "install\xfe", "x"}, ""},
		{"pip", []string{"pip\xff", "install", "\xfe\xfd"}, "pip install"},
		{"\xff\xfersync", []string{"rsync"}, ""},
		{"", []string{"rsync", "-a"}, ""},
		{"python3", []string{"python3", "-m"}, ""},
	} {
		if got := transferLabel(tc.comm, tc.argv); got != tc.want {
			t.Errorf("transferLabel(%q, %.80q) = %q, want %q", tc.comm, tc.argv, got, tc.want)
		}
	}
}

func TestSplitArgv_Bounded(t *testing.T) {
	b := []byte(strings.Repeat("a\x00", 100))
	if got := splitArgv(b); len(got) != 16 {
		t.Errorf("%d arguments, want at most 16", len(got))
	}
	if got := splitArgv([]byte("rsync\x00-a\x00\x00")); len(got) != 2 || got[1] != "-a" {
		t.Errorf("splitArgv = %q", got)
	}
	if got := splitArgv(nil); got != nil {
		t.Errorf("splitArgv(nil) = %q", got)
	}
}

func TestParseDiskCounters(t *testing.T) {
	n, err := parseIOStat([]byte("8:0 rbytes=1000 wbytes=24 rios=3 wios=4 dbytes=99 dios=1\n259:0 rbytes=1 wbytes=1 rios=1 wios=1 dbytes=0 dios=0\n"))
	if err != nil || n != 1026 {
		t.Errorf("io.stat: %d, %v; want 1026 (discards left out)", n, err)
	}
	if n, err := parseIOStat(nil); err != nil || n != 0 {
		t.Errorf("empty io.stat: %d, %v; want 0, nil (no I/O yet)", n, err)
	}
	if _, err := parseIOStat([]byte("8:0 rbytes=x wbytes=1\n")); err == nil {
		t.Error("io.stat with a bad number: no error")
	}
	n, devs, err := parseBlkio([]byte("8:0 Read 4096\n8:0 Write 8192\n8:0 Sync 1\n8:0 Async 2\n8:0 Total 12288\n8:16 Read 1\nTotal 12289\n"))
	if err != nil || n != 12289 || devs != 2 {
		t.Errorf("blkio: %d bytes %d devices, %v; want 12289, 2", n, devs, err)
	}
	if _, devs, err := parseBlkio([]byte("Total 0\n")); err != nil || devs != 0 {
		t.Errorf("blkio of a cgroup that accounts nothing: %d devices, %v; want 0", devs, err)
	}
	if v, ok := parseProcIO([]byte("rchar: 1\nwchar: 2\nsyscr: 1\nsyscw: 1\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n")); !ok || v != 12288 {
		t.Errorf("proc io: %d %v", v, ok)
	}
	if _, ok := parseProcIO([]byte("rchar: 1\n")); ok {
		t.Error("proc io without read_bytes: ok")
	}
	ds := "   8       0 sda 10 0 100 0 20 0 200 0 0 0 0\n   8       1 sda1 10 0 100 0 20 0 200 0 0 0 0\n 259 0 nvme0n1 1 0 4 0 1 0 4 0 0 0 0\n 259 1 nvme0n1p1 1 0 4 0 1 0 4 0 0 0 0\n 253 0 dm-0 5 0 50 0 5 0 50 0 0 0 0\n 7 0 loop0 1 0 8 0 0 0 0 0 0 0 0\n"
	if n, err := parseDiskstats([]byte(ds)); err != nil || n != (300+8)*512 {
		t.Errorf("diskstats: %d, %v; want %d", n, err, (300+8)*512)
	}
}

func TestParseProcStatStart(t *testing.T) {
	line := "4242 (a) (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 100 18446744073709551615\n"
	comm, start, ok := parseProcStatStart([]byte(line))
	if !ok || comm != "a) (b) c" || start != 98765 {
		t.Errorf("got %q %d %v", comm, start, ok)
	}
	if _, _, ok := parseProcStatStart([]byte("12 (x) S 1 2")); ok {
		t.Error("short stat: ok")
	}
}

// fakeWitnessProc writes a /proc with uptime, self/io and the given
// processes: pid -> comm, argv, start (seconds after boot).
type fakeProcess struct {
	comm  string
	argv  []string
	start float64
	io    uint64 // read_bytes+write_bytes, -1 (no file) when zero and noIO
	noIO  bool
}

func writeFakeProc(t *testing.T, root string, uptime float64, selfIO uint64, ps map[int]fakeProcess) {
	t.Helper()
	os.RemoveAll(root)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(root+"/self", 0o755))
	must(os.WriteFile(root+"/uptime", fmt.Appendf(nil, "%.2f 1000.00\n", uptime), 0o644))
	must(os.WriteFile(root+"/self/io", fmt.Appendf(nil, "read_bytes: 0\nwrite_bytes: %d\n", selfIO), 0o644))
	for pid, p := range ps {
		d := root + "/" + strconv.Itoa(pid)
		must(os.MkdirAll(d, 0o755))
		must(os.WriteFile(d+"/stat", fmt.Appendf(nil, "%d (%s) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 1000 100\n", pid, p.comm, int64(p.start*userHZ)), 0o644))
		must(os.WriteFile(d+"/cmdline", []byte(strings.Join(p.argv, "\x00")+"\x00"), 0o644))
		if !p.noIO {
			must(os.WriteFile(d+"/io", fmt.Appendf(nil, "rchar: 0\nread_bytes: 0\nwrite_bytes: %d\n", p.io), 0o644))
		}
	}
}

func TestWitness_Transfers(t *testing.T) {
	root := t.TempDir() + "/proc"
	ps := map[int]fakeProcess{
		10: {comm: "bash", argv: []string{"bash"}, start: 1},
		11: {comm: "rsync", argv: []string{"rsync", "-a", "/data/", "/local/"}, start: 95}, // 5 s old at uptime 100
		12: {comm: "pip", argv: []string{"pip", "list"}, start: 1},
		13: {comm: "rsync", argv: []string{"rsync", "--daemon"}, start: 1},
		14: {comm: "python3", argv: []string{"python3", "-m", "pip", "install", "torch"}, start: 50},
	}
	writeFakeProc(t, root, 100, 0, ps)
	w := &Witness{ProcRoot: root}
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	got, err := w.Transfers(now)
	if err != nil || strings.Join(got, ",") != "pip install" {
		t.Fatalf("at 100 s: %q, %v; want only pip install (the rsync is 5 s old, the daemon waits)", got, err)
	}
	// Ten seconds on, the rsync counts; the pip install ended.
	delete(ps, 14)
	writeFakeProc(t, root, 110, 0, ps)
	got, err = w.Transfers(now.Add(10 * time.Second))
	if err != nil || strings.Join(got, ",") != "rsync" {
		t.Fatalf("at 110 s: %q, %v; want rsync", got, err)
	}
	// The scan does not read again a process it knows (its cmdline is
	// cached): a changed command line is seen at the next full rescan.
	ps[10] = fakeProcess{comm: "bash", argv: []string{"bash"}, start: 1}
	ps[13] = fakeProcess{comm: "tar", argv: []string{"tar", "xf", "a.tar"}, start: 1} // PID 13 reused
	writeFakeProc(t, root, 120, 0, ps)
	if got, _ := w.Transfers(now.Add(20 * time.Second)); strings.Join(got, ",") != "rsync" {
		t.Errorf("before the rescan: %q, want rsync (PID 13 still cached)", got)
	}
	if got, _ := w.Transfers(now.Add(witnessRescan + 20*time.Second)); strings.Join(got, ",") != "rsync,tar" {
		t.Errorf("after the rescan: %q, want rsync,tar", got)
	}
	if _, err := (&Witness{ProcRoot: t.TempDir() + "/none"}).Transfers(now); err == nil {
		t.Error("no /proc: no error")
	}
}

func TestWitness_ReadDiskSources(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	t.Run("cgroup2", func(t *testing.T) {
		cg, proc := t.TempDir(), t.TempDir()
		writeFakeProc(t, proc, 100, 1000, nil)
		os.WriteFile(cg+"/io.stat", []byte("8:0 rbytes=0 wbytes=0 rios=0 wios=0 dbytes=0 dios=0\n"), 0o644)
		w := &Witness{ProcRoot: proc, CgroupRoot: cg}
		if _, ok, err := w.ReadDisk(t0); ok || err != nil {
			t.Fatalf("first read: ok %v err %v; want a baseline only", ok, err)
		}
		// 100 MB in 5 s, of which the agent wrote 10 MB itself.
		os.WriteFile(cg+"/io.stat", []byte("8:0 rbytes=50000000 wbytes=50000000 rios=0 wios=0 dbytes=0 dios=0\n"), 0o644)
		writeFakeProc(t, proc, 105, 1000+10e6, nil)
		d, ok, err := w.ReadDisk(t0.Add(5 * time.Second))
		if !ok || err != nil || d.Source != "cgroup2" || d.BytesPerS != 18e6 {
			t.Errorf("got %+v ok %v err %v; want 18 MB/s from cgroup2 (the agent's own 10 MB left out)", d, ok, err)
		}
		os.WriteFile(cg+"/io.stat", []byte("8:0 rbytes=1 wbytes=0 rios=0 wios=0 dbytes=0 dios=0\n"), 0o644)
		if _, ok, err := w.ReadDisk(t0.Add(10 * time.Second)); ok || err == nil {
			t.Errorf("counter went backwards: ok %v err %v; want an error", ok, err)
		}
	})
	t.Run("Cgroup1WithoutDevicesFallsToProc", func(t *testing.T) {
		cg, proc := t.TempDir(), t.TempDir()
		os.MkdirAll(cg+"/blkio", 0o755)
		os.WriteFile(cg+"/blkio/blkio.throttle.io_service_bytes_recursive", []byte("Total 0\n"), 0o644)
		ps := map[int]fakeProcess{10: {comm: "dd", io: 1 << 30}, 11: {comm: "bash", io: 0}}
		writeFakeProc(t, proc, 100, 0, ps)
		w := &Witness{ProcRoot: proc, CgroupRoot: cg}
		w.ReadDisk(t0)
		ps[10] = fakeProcess{comm: "dd", io: 1<<30 + 50e6}
		ps[12] = fakeProcess{comm: "cp", io: 50e6} // new since the last read: counts whole
		delete(ps, 11)
		writeFakeProc(t, proc, 105, 0, ps)
		// A sample that is not the heartbeat's full read skips the
		// costly per-process read; the next full read covers its period.
		if d, ok, err := w.ReadDiskLevel(t0.Add(2*time.Second), false); ok || err != nil {
			t.Errorf("a fast sample: %+v ok %v err %v; want no reading", d, ok, err)
		}
		d, ok, err := w.ReadDisk(t0.Add(5 * time.Second))
		if !ok || err != nil || d.Source != "proc" || d.BytesPerS != 20e6 {
			t.Errorf("got %+v ok %v err %v; want 20 MB/s from proc", d, ok, err)
		}
	})
	t.Run("DiskstatsOnlyOutsideContainers", func(t *testing.T) {
		cg, proc := t.TempDir(), t.TempDir()
		ps := map[int]fakeProcess{10: {comm: "bash", noIO: true}} // another user's: unreadable
		writeFakeProc(t, proc, 100, 0, ps)
		os.WriteFile(proc+"/diskstats", []byte(" 8 0 sda 1 0 0 0 1 0 0 0 0 0 0\n"), 0o644)
		w := &Witness{ProcRoot: proc, CgroupRoot: cg}
		if _, _, err := w.ReadDisk(t0); err == nil {
			t.Error("in a container with no counter: no error")
		}
		w = &Witness{ProcRoot: proc, CgroupRoot: cg, Diskstats: true}
		w.ReadDisk(t0)
		os.WriteFile(proc+"/diskstats", []byte(" 8 0 sda 1 0 100000 0 1 0 100000 0 0 0 0\n"), 0o644)
		d, ok, err := w.ReadDisk(t0.Add(time.Second))
		if !ok || err != nil || d.Source != "diskstats" || d.BytesPerS != 200000*512 {
			t.Errorf("got %+v ok %v err %v", d, ok, err)
		}
	})
}

func TestDecide_Witness(t *testing.T) {
	base := func() *Sample {
		return &Sample{GPUs: []GPUReading{{UtilOK: true}}, CPUOK: true, NetOK: true}
	}
	s := base()
	s.DiskIOOK, s.DiskIO = true, DiskIO{BytesPerS: 180e6}
	if v, why := Decide(s, DefaultThresholds); v != wire.VerdictBusy || !strings.Contains(strings.Join(why, ";"), "disk 180 MB/s") || strings.Join(s.Work, ";") != "disk 180 MB/s" {
		t.Errorf("a copy at 180 MB/s: %s %q work %q", v, why, s.Work)
	}
	s = base()
	s.DiskIOOK, s.DiskIO = true, DiskIO{BytesPerS: 1e6}
	if v, _ := Decide(s, DefaultThresholds); v != wire.VerdictIdle {
		t.Errorf("1 MB/s of logs: %s, want idle", v)
	}
	s = base()
	s.Transfers = []string{"pip install", "rsync"}
	if v, why := Decide(s, DefaultThresholds); v != wire.VerdictBusy || why[0] != "pip install, rsync running" {
		t.Errorf("transfers: %s %q", v, why)
	}
	s = base()
	s.DiskIOErr = "no counter"
	if v, _ := Decide(s, DefaultThresholds); v != wire.VerdictIdle {
		t.Errorf("no disk counter: %s, want idle (the disk decides only where it can be read)", v)
	}
	s = base()
	s.DiskIOOK, s.DiskIO = true, DiskIO{BytesPerS: 180e6}
	th := DefaultThresholds
	th.DiskBytesPerS = 0
	if v, _ := Decide(s, th); v != wire.VerdictIdle {
		t.Errorf("disk threshold 0 (off): %s, want idle", v)
	}
}

// TestSimulate_Witness: a simulate file describing a copy (disk rate) or
// a transfer process makes the sample busy with the reason, and the
// heartbeat carries it in work; an old-style file is unchanged.
func TestSimulate_Witness(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sim.json")
	write := func(host string) {
		f := `{"gpus":[{"name":"H200","uuid":"GPU-1","memory_total_mib":143771,"memory_used_mib":0,"utilization":0}],"host":` + host + `}`
		if err := os.WriteFile(path+".tmp", []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Rename(path+".tmp", path)
	}
	src := &SimulateSource{Path: path}
	s := &Sampler{GPU: src, Host: HostReader{ProcRoot: "testdata/proc"}, Thresholds: DefaultThresholds}
	for _, tc := range []struct {
		host, verdict, work string
	}{
		{`{"cpu_percent":1,"net_bytes_per_s":0,"disk_bytes_per_s":180000000}`, "busy", "disk 180 MB/s"},
		{`{"cpu_percent":1,"net_bytes_per_s":0,"processes":[{"comm":"rsync","argv":["rsync","-a","a","b"],"age_s":60}]}`, "busy", "rsync running"},
		{`{"cpu_percent":1,"net_bytes_per_s":0,"processes":[{"comm":"curl","argv":["curl","localhost/health"],"age_s":1}]}`, "idle", ""},
		{`{"cpu_percent":1,"net_bytes_per_s":0,"disk_bytes_per_s":0,"processes":[]}`, "idle", ""},
	} {
		write(tc.host)
		var win Window
		sm := s.SampleLevel(context.Background(), ReadFull)
		win.Add(sm)
		var hb wire.HeartbeatRequest
		cut := win.Cut()
		cut.fill(&hb)
		if string(sm.Verdict) != tc.verdict || hb.Work != tc.work {
			t.Errorf("%s: verdict %s work %q (reasons %q), want %s %q", tc.host, sm.Verdict, hb.Work, sm.Reasons, tc.verdict, tc.work)
		}
	}
	if _, err := ParseSimFile([]byte(`{"host":{"disk_bytes_per_sec":1}}`)); err == nil {
		t.Error("a misspelt field: no error")
	}
}

// TestWitness_RealProcesses runs real processes on this machine: a child
// writing a file in t.TempDir at a high rate with fsync, which the witness
// must call busy (through whichever counter this host offers), then idle
// once it ends; and a real tar blocked on a FIFO, seen as a transfer until
// it is killed.
func TestWitness_RealProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a few hundred MB")
	}
	// The witness reads a /proc of links to this test's own children (the
	// kernel's real counters for them) and no cgroup or diskstats file:
	// on a shared machine every other program's I/O would count too, and
	// whether the machine has a quiet second is luck.
	root := t.TempDir()
	link := func(pid int) {
		t.Helper()
		if err := os.Symlink(fmt.Sprintf("/proc/%d", pid), filepath.Join(root, strconv.Itoa(pid))); err != nil {
			t.Fatal(err)
		}
	}
	// unlink takes an ended child out, as the kernel takes it out of /proc.
	unlink := func(pid int) {
		t.Helper()
		if err := os.Remove(filepath.Join(root, strconv.Itoa(pid))); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"self", "uptime"} {
		if err := os.Symlink("/proc/"+n, filepath.Join(root, n)); err != nil {
			t.Fatal(err)
		}
	}
	start := func(c *exec.Cmd) {
		t.Helper()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		link(c.Process.Pid)
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	// A quiet process, so the counter stays readable once the writer ended.
	quiet := exec.Command(os.Args[0], "-test.run=TestWitnessHelperWriter")
	quiet.Env = append(os.Environ(), "GPULEDGER_WITNESS_QUIET=1")
	start(quiet)
	w := &Witness{ProcRoot: root, CgroupRoot: t.TempDir(), MinAge: time.Millisecond}
	defer w.Close()
	if _, err := os.ReadFile(filepath.Join(root, strconv.Itoa(quiet.Process.Pid), "io")); err != nil {
		t.Skipf("/proc/PID/io of a child is not readable here (%v): the kernel needs task I/O accounting", err)
	}
	// CPU and network off: the writer's fsyncs cost CPU here, and only
	// the witness may decide (the H200's O_DIRECT copy used little).
	th := DefaultThresholds
	th.CPUPercent, th.NetBytesPerS = 0, 0
	s := &Sampler{GPU: staticGPU{}, Host: HostReader{}, Thresholds: th, Witness: w}
	ctx := context.Background()
	s.SampleLevel(ctx, ReadFull) // baselines

	// The writer: this test binary, re-run as a helper. A second of its
	// writes is busy; a slow disk gets up to 8 tries in its 10 s.
	writer := exec.Command(os.Args[0], "-test.run=TestWitnessHelperWriter")
	writer.Env = append(os.Environ(), "GPULEDGER_WITNESS_WRITE="+filepath.Join(t.TempDir(), "big"))
	start(writer)
	var sm *Sample
	for i := 0; i < 8; i++ {
		time.Sleep(time.Second)
		sm = s.SampleLevel(ctx, ReadFull)
		if sm.Verdict == wire.VerdictBusy && strings.HasPrefix(strings.Join(sm.Work, ";"), "disk ") {
			break
		}
	}
	writer.Process.Kill()
	writer.Wait()
	unlink(writer.Process.Pid)
	if sm.Verdict != wire.VerdictBusy || !strings.HasPrefix(strings.Join(sm.Work, ";"), "disk ") {
		t.Errorf("while a child writes with fsync: %s %q (disk %+v ok %v err %q), want busy on disk", sm.Verdict, sm.Reasons, sm.DiskIO, sm.DiskIOOK, sm.DiskIOErr)
	}
	// Once it ended, its counters are gone and the quiet one moves nothing.
	s.SampleLevel(ctx, ReadFull)
	time.Sleep(time.Second)
	if sm := s.SampleLevel(ctx, ReadFull); !sm.DiskIOOK || sm.DiskIO.BytesPerS > DefaultDiskBytesPerS || sm.Verdict == wire.VerdictBusy {
		t.Errorf("after the writer ended: %s %q (disk %+v ok %v err %q), want idle under the threshold", sm.Verdict, sm.Reasons, sm.DiskIO, sm.DiskIOOK, sm.DiskIOErr)
	}

	tarPath, err := exec.LookPath("tar")
	if err != nil {
		t.Log("no tar here: the process half is skipped")
		return
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	tar := exec.Command(tarPath, "-xf", fifo, "-C", dir) // blocks opening the FIFO
	start(tar)
	deadline := time.Now().Add(5 * time.Second)
	for {
		sm = s.SampleLevel(ctx, ReadFull)
		if strings.Contains(strings.Join(sm.Work, ";"), "tar running") || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The samples after the heartbeat's full read say so too.
	fast := s.SampleLevel(ctx, ReadFast)
	tar.Process.Kill()
	tar.Wait()
	unlink(tar.Process.Pid)
	if sm.Verdict != wire.VerdictBusy || !strings.Contains(strings.Join(sm.Work, ";"), "tar running") {
		t.Errorf("with a real tar running: %s %q, want busy, tar running", sm.Verdict, sm.Reasons)
	}
	if !strings.Contains(strings.Join(fast.Work, ";"), "tar running") {
		t.Errorf("the sample after the full read: %q, want tar running", fast.Reasons)
	}
	if sm := s.SampleLevel(ctx, ReadFull); strings.Contains(strings.Join(sm.Work, ";"), "tar") {
		t.Errorf("after tar was killed: %q", sm.Work)
	}
}

// TestWitnessHelperWriter is the writer child of TestWitness_RealProcesses:
// 4 MiB writes, each fsynced, for up to 10 s.
func TestWitnessHelperWriter(t *testing.T) {
	if os.Getenv("GPULEDGER_WITNESS_QUIET") != "" {
		time.Sleep(time.Minute) // the quiet child: reads and writes nothing
		os.Exit(0)
	}
	path := os.Getenv("GPULEDGER_WITNESS_WRITE")
	if path == "" {
		t.Skip("a helper process")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		os.Exit(1)
	}
	buf := make([]byte, 4<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	end := time.Now().Add(10 * time.Second)
	for n := 0; time.Now().Before(end); n++ {
		if n%32 == 0 {
			f.Seek(0, 0) // stay at 128 MiB on disk
		}
		f.Write(buf)
		f.Sync()
	}
	os.Exit(0)
}

// staticGPU is a GPU source with one idle GPU.
type staticGPU struct{}

func (staticGPU) Facts(context.Context) (GPUFacts, error) { return GPUFacts{Source: "static"}, nil }
func (staticGPU) Read(context.Context, ReadLevel) ([]GPUReading, error) {
	return []GPUReading{{UtilOK: true, UtilSource: "static"}}, nil
}
func (staticGPU) Close() error { return nil }

// BenchmarkWitness_Transfers measures the heartbeat's transfer scan on
// this machine's /proc: Cached is the steady state (only new PIDs read),
// Rescan the scan that reads every process (at start and every
// witnessRescan), the baseline.
func BenchmarkWitness_Transfers(b *testing.B) {
	now := time.Now()
	b.Run("Cached", func(b *testing.B) {
		w := &Witness{}
		w.Transfers(now)
		for b.Loop() {
			if _, err := w.Transfers(now); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Rescan", func(b *testing.B) {
		w := &Witness{}
		for b.Loop() {
			w.procs = nil
			if _, err := w.Transfers(now); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWitness_ReadDisk measures one sample's disk counter read on
// this machine (its source is reported), against the sampler's CPU read.
func BenchmarkWitness_ReadDisk(b *testing.B) {
	for _, src := range []struct {
		name      string
		diskstats bool
	}{{"Diskstats", true}, {"ProcIO", false}} {
		b.Run(src.name, func(b *testing.B) {
			benchReadDisk(b, &Witness{Diskstats: src.diskstats})
		})
	}
	b.Run("CPUBaseline", func(b *testing.B) {
		h := HostReader{}.Cached()
		defer h.Close()
		for b.Loop() {
			h.ReadCPU()
		}
	})
}

// benchReadDisk measures full reads of w's disk counter (its source
// reported as a metric name).
func benchReadDisk(b *testing.B, w *Witness) {
	defer w.Close()
	if _, _, err := w.ReadDisk(time.Now()); err != nil {
		b.Skip(err)
	}
	at := time.Now()
	for b.Loop() {
		at = at.Add(time.Second)
		w.ReadDisk(at)
	}
	d, _, _ := w.ReadDisk(at.Add(time.Second))
	b.ReportMetric(0, "source_"+d.Source)
}

// TestWindow_WorkFromAnySample: the heartbeat's work comes from whichever
// sample of the window saw it: the disk rate of a per-process counter
// and the transfer scan are read at the heartbeat's full sample only, and
// a later sample busy for its CPU alone must not hide them.
func TestWindow_WorkFromAnySample(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	var win Window
	win.Add(&Sample{At: t0, Verdict: wire.VerdictBusy, Reasons: []string{"disk 500 MB/s"}, Work: []string{"disk 500 MB/s"}})
	win.Add(&Sample{At: t0.Add(5 * time.Second), Verdict: wire.VerdictBusy, Reasons: []string{"cpu 190%"}})
	var hb wire.HeartbeatRequest
	cut := win.Cut()
	cut.fill(&hb)
	if hb.Work != "disk 500 MB/s" {
		t.Errorf("work %q, want the full sample's disk 500 MB/s", hb.Work)
	}
	win.Add(&Sample{At: t0.Add(10 * time.Second), Verdict: wire.VerdictIdle, Reasons: []string{"all signals below thresholds"}})
	cut = win.Cut()
	hb = wire.HeartbeatRequest{}
	cut.fill(&hb)
	if hb.Work != "" {
		t.Errorf("an idle window's work %q, want none", hb.Work)
	}
}
