package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpuledger/gpuledger/agent"
	"github.com/gpuledger/gpuledger/perf"
)

// skipOf returns the Why of the first Skip of what, "" if none.
func skipOf(skips []perf.Skip, what string) string {
	for _, s := range skips {
		if s.What == what {
			return s.Why
		}
	}
	return ""
}

// TestHost_Cgroups: the usable cores and memory are the container's
// (the cgroup quota and limit), read from the agent's own fixtures.
func TestHost_Cgroups(t *testing.T) {
	for _, c := range []struct {
		cgroup string
		cores  float64
		memMiB uint64
	}{
		{"cgroup2", 4, 32 << 10},                                // cpu.max 400000/100000, memory.max 32 GiB
		{"cgroup1", float64(runtime.NumCPU()), 263855480 >> 10}, // no quota, a limit above the machine's memory
	} {
		o := Options{FactsOnly: true, Host: agent.HostReader{ProcRoot: "../testdata/proc", CgroupRoot: "../testdata/" + c.cgroup}}
		h, skips := measureHost(t.Context(), o, time.Now().Add(time.Second))
		if h.CPUCores != c.cores || h.MemoryMiB != c.memMiB {
			t.Errorf("%s: cores %v memory %d MiB, want %v and %d", c.cgroup, h.CPUCores, h.MemoryMiB, c.cores, c.memMiB)
		}
		if h.DiskWriteMBps != 0 || !strings.Contains(skipOf(skips, "disk_write_mbps"), "facts only") {
			t.Errorf("%s: facts only ran the disk test: %+v %+v", c.cgroup, h, skips)
		}
	}
	o := Options{FactsOnly: true, Host: agent.HostReader{ProcRoot: t.TempDir(), CgroupRoot: t.TempDir()}}
	h, skips := measureHost(t.Context(), o, time.Now().Add(time.Second))
	if h.MemoryMiB != 0 || skipOf(skips, "memory_mib") == "" {
		t.Errorf("no meminfo: memory %d, skips %+v: want a skip", h.MemoryMiB, skips)
	}
}

func TestCPUModel(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "cpuinfo"), []byte("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654   96-Core Processor\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: other\n"), 0o600)
	if got := cpuModel(dir); got != "AMD EPYC 9654 96-Core Processor" {
		t.Errorf("cpuModel = %q", got)
	}
	os.WriteFile(filepath.Join(dir, "cpuinfo"), []byte("processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd40\n"), 0o600)
	if got := cpuModel(dir); got != "" {
		t.Errorf("ARM cpuinfo without a model name: %q", got)
	}
	if got := cpuModel(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("no cpuinfo: %q", got)
	}
}

// smallDisk keeps the disk tests to a few MiB.
var smallDisk = diskOptions{size: 8 << 20, chunk: 1 << 20}

// assertEmpty fails when the test left a file in dir.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("the disk test left %v in %s", ents[0].Name(), dir)
	}
}

// TestDisk_Real: the real test in a temporary directory measures both
// speeds and leaves nothing behind (O_DIRECT or, where the directory is
// on tmpfs, the fallback: either way a figure).
func TestDisk_Real(t *testing.T) {
	dir := t.TempDir()
	w, r, skips := diskTest(t.Context(), dir, time.Now().Add(5*time.Second), smallDisk)
	if w <= 0 || r <= 0 {
		t.Fatalf("write %v read %v MB/s, skips %+v", w, r, skips)
	}
	for _, s := range skips {
		if s.What != "disk_direct" {
			t.Errorf("unexpected skip %+v", s)
		}
	}
	assertEmpty(t, dir)
}

// recordingOpen wraps os.OpenFile: it refuses O_DIRECT with EINVAL
// (after creating the file, as some kernels do) when refuseDirect, and
// records the mode of every file it made.
type recordingOpen struct {
	refuseDirect bool
	mu           sync.Mutex
	modes        []os.FileMode
	flags        []int
}

func (o *recordingOpen) open(name string, flag int, perm os.FileMode) (*os.File, error) {
	o.mu.Lock()
	o.flags = append(o.flags, flag)
	o.mu.Unlock()
	if o.refuseDirect && flag&syscall.O_DIRECT != 0 {
		f, err := os.OpenFile(name, flag&^syscall.O_DIRECT, perm)
		if err == nil {
			f.Close()
		}
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EINVAL}
	}
	f, err := os.OpenFile(name, flag, perm)
	if err == nil {
		if fi, err := f.Stat(); err == nil {
			o.mu.Lock()
			o.modes = append(o.modes, fi.Mode().Perm())
			o.mu.Unlock()
		}
	}
	return f, err
}

// TestDisk_DirectRefused: a filesystem that refuses O_DIRECT gets the
// fallback (fsync'd writes, reads after dropping the cache), says so,
// and the file (0600) is removed, the one the refusal left included.
func TestDisk_DirectRefused(t *testing.T) {
	dir := t.TempDir()
	rec := &recordingOpen{refuseDirect: true}
	o := smallDisk
	o.open = rec.open
	w, r, skips := diskTest(t.Context(), dir, time.Now().Add(5*time.Second), o)
	if w <= 0 || r <= 0 {
		t.Fatalf("write %v read %v, skips %+v", w, r, skips)
	}
	if why := skipOf(skips, "disk_direct"); !strings.Contains(why, "refused O_DIRECT") {
		t.Errorf("the fallback is not said: %+v", skips)
	}
	if len(rec.flags) != 2 || rec.flags[0]&syscall.O_DIRECT == 0 || rec.flags[1]&syscall.O_DIRECT != 0 {
		t.Errorf("opens %v: want O_DIRECT then without", rec.flags)
	}
	if len(rec.modes) != 1 || rec.modes[0] != 0o600 {
		t.Errorf("file modes %v, want 0600", rec.modes)
	}
	assertEmpty(t, dir)

	// Without the refusal (O_DIRECT, or the real fallback on tmpfs) the
	// file is 0600 too.
	rec = &recordingOpen{}
	o.open = rec.open
	w, _, skips = diskTest(t.Context(), dir, time.Now().Add(5*time.Second), o)
	if w <= 0 || len(rec.modes) != 1 || rec.modes[0] != 0o600 {
		t.Errorf("write %v, file modes %v, skips %+v: want a figure and one 0600 file", w, rec.modes, skips)
	}
	assertEmpty(t, dir)
}

// TestDisk_Faults: a read-only, missing, nearly full or full directory,
// or no time left, is a Skip of both figures with the reason, and
// leaves nothing behind.
func TestDisk_Faults(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name     string
		dir      string
		o        diskOptions
		deadline time.Duration
		want     string
	}{
		{"read-only", dir, diskOptions{open: func(string, int, os.FileMode) (*os.File, error) {
			return nil, &os.PathError{Op: "open", Err: syscall.EROFS}
		}}, 5 * time.Second, "read-only"},
		{"missing", filepath.Join(dir, "nope"), diskOptions{}, 5 * time.Second, "cannot test the disk"},
		{"nearly full", dir, diskOptions{free: func(string) (uint64, error) { return 3 << 20, nil }}, 5 * time.Second, "only 3 MiB free"},
		{"full while writing", dir, diskOptions{size: 8 << 20, chunk: 1 << 20, open: func(string, int, os.FileMode) (*os.File, error) {
			return os.OpenFile("/dev/full", os.O_WRONLY, 0)
		}}, 5 * time.Second, "is full"},
		{"no time", dir, smallDisk, 0, "no time left"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "full while writing" {
				if _, err := os.Stat("/dev/full"); err != nil {
					t.Skip("no /dev/full on this machine: the ENOSPC path needs it")
				}
			}
			w, r, skips := diskTest(t.Context(), c.dir, time.Now().Add(c.deadline), c.o)
			if w != 0 || r != 0 {
				t.Errorf("figures %v %v, want none", w, r)
			}
			ws, rs := skipOf(skips, "disk_write_mbps"), skipOf(skips, "disk_read_mbps")
			if !strings.Contains(ws, c.want) || !strings.Contains(rs, c.want) {
				t.Errorf("skips %+v, want both saying %q", skips, c.want)
			}
		})
	}
	assertEmpty(t, dir)
}

// TestDownload: the download test against a local server: a figure for
// a body, bounded by the byte limit and the deadline; a 404, a redirect
// to file://, a non-http URL and a server that never answers are Skips
// that say why; the URL is reported without its password or query.
func TestDownload(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	mux := http.NewServeMux()
	mux.HandleFunc("/4mb", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 4<<20)) })
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 64<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 1000))
		w.(http.Flusher).Flush()
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/silent", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/tofile", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/to4mb", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/4mb", http.StatusFound) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	for _, c := range []struct {
		name, url string
		max       int64
		wait      time.Duration
		figure    bool
		shown     string
		want      string // in the Skip
	}{
		{"body", "http://user:pw@" + host + "/4mb?token=s3cret", 0, 5 * time.Second, true, srv.URL + "/4mb", ""},
		{"redirect", srv.URL + "/to4mb", 0, 5 * time.Second, true, srv.URL + "/to4mb", ""},
		{"huge, bounded in bytes", srv.URL + "/huge", 1 << 20, 10 * time.Second, true, srv.URL + "/huge", ""},
		{"slow, bounded in time", srv.URL + "/slow", 0, 2 * time.Second, true, srv.URL + "/slow", ""},
		{"silent", srv.URL + "/silent", 0, time.Second, false, srv.URL + "/silent", "deadline"},
		{"404", srv.URL + "/nope", 0, 5 * time.Second, false, srv.URL + "/nope", "404"},
		{"redirect to file", srv.URL + "/tofile", 0, 5 * time.Second, false, srv.URL + "/tofile", "file: URL"},
		{"file URL", "file:///etc/passwd", 0, 5 * time.Second, false, "", "http:// or https://"},
		{"no host", "https:///x", 0, 5 * time.Second, false, "", "http:// or https://"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			shown, mbps, skip := download(t.Context(), c.url, time.Now().Add(c.wait), downloadOptions{max: c.max})
			if el := time.Since(start); el > c.wait+3*time.Second {
				t.Errorf("took %s with %s to go", el, c.wait)
			}
			if shown != c.shown {
				t.Errorf("shown %q, want %q", shown, c.shown)
			}
			if c.figure != (mbps > 0) || c.figure != (skip == nil) {
				t.Fatalf("mbps %v skip %+v, want a figure: %v", mbps, skip, c.figure)
			}
			if skip != nil && (!strings.Contains(skip.Why, c.want) || skip.What != "download_mbps" || skip.GPU != -1) {
				t.Errorf("skip %+v, want %q", skip, c.want)
			}
			if skip != nil && (strings.Contains(skip.Why, "s3cret") || strings.Contains(skip.Why, "pw@")) {
				t.Errorf("the skip tells a secret: %q", skip.Why)
			}
		})
	}
}

// TestHost_DownloadAfterDisk: with a download URL the host reports both,
// the URL as shown.
func TestHost_DownloadAfterDisk(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 1<<20))
	}))
	defer srv.Close()
	dir := t.TempDir()
	o := Options{Dir: dir, DownloadURL: srv.URL + "/f?k=v", disk: smallDisk,
		Host: agent.HostReader{ProcRoot: "../testdata/proc", CgroupRoot: "../testdata/cgroup2"}}
	h, skips := measureHost(t.Context(), o, time.Now().Add(5*time.Second))
	if h.DiskWriteMBps <= 0 || h.DownloadMBps <= 0 || h.DownloadURL != srv.URL+"/f" || h.DiskPath != dir {
		t.Fatalf("host %+v skips %+v", h, skips)
	}
	assertEmpty(t, dir)
}

func ExampleMeasured() {
	fmt.Println(Measured(perf.Bench{}), Measured(perf.Bench{Host: perf.Host{CPUCores: 2}}),
		Measured(perf.Bench{GPUs: []perf.GPU{{Name: "NVIDIA H200"}}}))
	// Output: false true true
}

// TestDisk_Size: the test writes at most a quarter of the free space,
// and none at all when that is under 16 MiB.
func TestDisk_Size(t *testing.T) {
	dir, keep := t.TempDir(), filepath.Join(t.TempDir(), "kept")
	o := diskOptions{chunk: 1 << 20, free: func(string) (uint64, error) { return 40 << 20, nil },
		// The test's file goes to keep, which the test does not remove,
		// so its size can be read after.
		open: func(_ string, flag int, perm os.FileMode) (*os.File, error) { return os.OpenFile(keep, flag, perm) }}
	w, r, skips := diskTest(t.Context(), dir, time.Now().Add(5*time.Second), o)
	if w != 0 || r != 0 || !strings.Contains(skipOf(skips, "disk_write_mbps"), "only 40 MiB free") {
		t.Errorf("40 MiB free (10 to write, under 16): %v %v %+v", w, r, skips)
	}
	if _, err := os.Stat(keep); err == nil {
		t.Error("a file was written with too little free space")
	}
	o.free = func(string) (uint64, error) { return 80 << 20, nil }
	w, r, skips = diskTest(t.Context(), dir, time.Now().Add(5*time.Second), o)
	if w <= 0 || r <= 0 {
		t.Fatalf("80 MiB free: %v %v %+v", w, r, skips)
	}
	if fi, err := os.Stat(keep); err != nil {
		t.Error(err)
	} else if fi.Size() != 20<<20 {
		t.Errorf("80 MiB free: wrote %d bytes, want a quarter, 20 MiB", fi.Size())
	}
}

// slowFlush models a disk of rate bytes a second behind the page cache:
// a flush takes as long as writing what was added since the last one.
type slowFlush struct {
	rate    float64
	mu      sync.Mutex
	flushed int64
}

func (s *slowFlush) flush(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	s.mu.Lock()
	n := fi.Size() - s.flushed
	s.flushed = fi.Size()
	s.mu.Unlock()
	time.Sleep(time.Duration(float64(n) / s.rate * float64(time.Second)))
	return nil
}

// TestDisk_FallbackBounded: where O_DIRECT is refused, the writes are
// flushed chunk by chunk, so on a slow disk (8 MB/s) the test stops
// writing at its deadline instead of waiting for one flush of all the
// page cache took (64 MiB there: 8 s), and removes its file.
func TestDisk_FallbackBounded(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the disk test runs on Linux only")
	}
	dir := t.TempDir()
	slow := &slowFlush{rate: 8e6}
	o := diskOptions{size: 64 << 20, chunk: 1 << 20, open: (&recordingOpen{refuseDirect: true}).open, flush: slow.flush,
		free: func(string) (uint64, error) { return 1 << 40, nil }}
	start := time.Now()
	w, r, skips := diskTest(t.Context(), dir, start.Add(2*time.Second), o)
	el := time.Since(start)
	if el > 3*time.Second {
		t.Errorf("took %s with a deadline of 2 s: the write phase is not bounded", el)
	}
	if w <= 0 || w > 20 || r <= 0 {
		t.Errorf("write %.1f MB/s (the disk does 8), read %.1f, skips %+v", w, r, skips)
	}
	if slow.flushed <= 0 || slow.flushed >= 64<<20 {
		t.Errorf("flushed %d bytes: want some, and not all 64 MiB within 1 s at 8 MB/s", slow.flushed)
	}
	assertEmpty(t, dir)
}

// TestDisk_RemovesStale: the disk test removes the files a killed bench
// left (its own name, a regular file of this user, over a minute old)
// and nothing else: not a running bench's, another user's, a link, a
// directory, or a name that is not quite its own.
func TestDisk_RemovesStale(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the disk test runs on Linux only")
	}
	dir, elsewhere := t.TempDir(), t.TempDir()
	old := time.Now().Add(-2 * time.Minute)
	mk := func(name string, mtime time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := mk(".gpuledger-bench-0123456789abcdef", old)
	keep := []string{
		mk(".gpuledger-bench-fedcba9876543210", time.Now()), // a running bench's
		mk(".gpuledger-bench-0123456789ABCDEF", old),
		mk(".gpuledger-bench-notes", old),
		mk(".gpuledger-bench-0123456789abcdef0", old),
		mk("data.bin", old),
	}
	target := filepath.Join(elsewhere, "target")
	os.WriteFile(target, []byte("x"), 0o600)
	os.Chtimes(target, old, old)
	link := filepath.Join(dir, ".gpuledger-bench-1111111111111111")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	tv := []unix.Timeval{unix.NsecToTimeval(old.UnixNano()), unix.NsecToTimeval(old.UnixNano())}
	if err := unix.Lutimes(link, tv); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, ".gpuledger-bench-2222222222222222")
	os.Mkdir(sub, 0o700)
	os.Chtimes(sub, old, old)
	keep = append(keep, link, target, sub)
	if os.Getuid() == 0 {
		// Root can make a file of another user's; others cannot, and
		// the check is the same uid comparison.
		theirs := mk(".gpuledger-bench-3333333333333333", old)
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(theirs, old, old)
		keep = append(keep, theirs)
	}

	w, _, skips := diskTest(t.Context(), dir, time.Now().Add(5*time.Second), smallDisk)
	if w <= 0 {
		t.Fatalf("no figure: %+v", skips)
	}
	if _, err := os.Lstat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale test file is left (%v)", err)
	}
	for _, p := range keep {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed (%v)", filepath.Base(p), err)
		}
	}
}

// TestDisk_TermRemovesFile: a bench given SIGTERM mid-test (the daemon's
// watchdog or stop) removes its file before it exits. The child is this
// test binary, running the disk test on a slow disk under a context
// that SIGTERM ends, as gpuledger-agent's main does.
func TestDisk_TermRemovesFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the disk test runs on Linux only")
	}
	if dir := os.Getenv("GPULEDGER_TEST_DISK_CHILD"); dir != "" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		slow := &slowFlush{rate: 8e6}
		diskTest(ctx, dir, time.Now().Add(time.Minute), diskOptions{size: 64 << 20, chunk: 1 << 20,
			open: (&recordingOpen{refuseDirect: true}).open, flush: slow.flush})
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDisk_TermRemovesFile$")
	cmd.Env = append(os.Environ(), "GPULEDGER_TEST_DISK_CHILD="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ents, _ := os.ReadDir(dir)
		if len(ents) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child made no test file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the child did not exit 10 s after SIGTERM")
	}
	assertEmpty(t, dir)
}
