package agent

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name, in string
		want     uint64
		wantErr  bool
	}{
		{"OK", "cpu  10 1 5 100 7 2 3 4 9 9\ncpu0 1 1 1 1 1 1 1 1\n", 10 + 1 + 5 + 2 + 3 + 4, false},
		{"OldKernel", "cpu 10 1 5 100\n", 16, false},
		{"ErrNoCPU", "intr 1\n", 0, true},
		{"ErrShort", "cpu 1 2\n", 0, true},
		{"ErrGarbage", "cpu 1 x 3 4 5\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tt.in))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("got %d, %v; want %d, err %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseNetDev(t *testing.T) {
	in := "Inter-| Receive | Transmit\n face |bytes packets|bytes\n" +
		"    lo: 500 1 0 0 0 0 0 0 500 1 0 0 0 0 0 0\n" +
		"  eth0: 100 1 0 0 0 0 0 0 200 1 0 0 0 0 0 0\n" +
		"eth1:300 1 0 0 0 0 0 0 400 1 0 0 0 0 0 0\n"
	got, err := parseNetDev([]byte(in))
	if err != nil || got.RxBytes != 400 || got.TxBytes != 600 {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := parseNetDev([]byte("eth0: 1 2 3\n")); err == nil {
		t.Fatal("short line accepted")
	}
	if _, err := parseNetDev([]byte("eth0: x 1 0 0 0 0 0 0 y 1 0 0 0 0 0 0\n")); err == nil {
		t.Fatal("garbage accepted")
	}
}

func TestParseMeminfo(t *testing.T) {
	tot, av, err := parseMeminfo([]byte("MemTotal: 1000 kB\nMemFree: 1 kB\nMemAvailable: 250 kB\n"))
	if err != nil || tot != 1000*1024 || av != 250*1024 {
		t.Fatalf("%d %d %v", tot, av, err)
	}
	if _, _, err := parseMeminfo([]byte("MemTotal: 1000 kB\n")); err == nil {
		t.Fatal("missing MemAvailable accepted")
	}
}

func TestParseCgroup(t *testing.T) {
	if us, err := parseCgroup2CPUStat([]byte("usage_usec 42\nuser_usec 1\n")); err != nil || us != 42 {
		t.Fatal(us, err)
	}
	if _, err := parseCgroup2CPUStat([]byte("user_usec 1\n")); err == nil {
		t.Fatal("missing usage_usec accepted")
	}
	for in, want := range map[string]float64{"max 100000\n": 0, "200000 100000\n": 2, "150000 100000": 1.5, "junk": 0} {
		got, ok := parseCgroup2CPUMax([]byte(in))
		if got != want || ok != (want > 0) {
			t.Errorf("%q: %v %v", in, got, ok)
		}
	}
}

func TestHostReader_Fixtures(t *testing.T) {
	t.Run("cgroup2", func(t *testing.T) {
		h := HostReader{ProcRoot: "testdata/proc", CgroupRoot: "testdata/cgroup2"}
		u, err := h.ReadCPU()
		if err != nil || u.Source != "cgroup2" || u.Seconds != 123.456789 {
			t.Fatalf("cpu %+v %v", u, err)
		}
		if c := h.CPUCores(); c != 4 {
			t.Fatalf("cores %v", c)
		}
		m, err := h.ReadMemory()
		if err != nil || m.Source != "cgroup2" || m.TotalBytes != 32<<30 || m.UsedBytes != 1<<30 {
			t.Fatalf("mem %+v %v", m, err)
		}
		n, err := h.ReadNet()
		if err != nil || n.RxBytes != 123456789+1000 || n.TxBytes != 98765432+2000 {
			t.Fatalf("net %+v %v", n, err)
		}
	})
	t.Run("cgroup1", func(t *testing.T) {
		h := HostReader{ProcRoot: "testdata/proc", CgroupRoot: "testdata/cgroup1"}
		u, err := h.ReadCPU()
		if err != nil || u.Source != "cgroup1" || u.Seconds != 987.654321 {
			t.Fatalf("cpu %+v %v", u, err)
		}
		if c := h.CPUCores(); c != float64(runtime.NumCPU()) {
			t.Fatalf("cores %v (no quota set)", c)
		}
		m, err := h.ReadMemory()
		if err != nil || m.Source != "proc" || m.TotalBytes != 263855480*1024 {
			t.Fatalf("mem %+v %v (unlimited cgroup must fall back)", m, err)
		}
	})
	t.Run("proc", func(t *testing.T) {
		h := HostReader{ProcRoot: "testdata/proc", CgroupRoot: "testdata/nonexistent"}
		u, err := h.ReadCPU()
		want := float64(14380+20+6545+0+215+30) / 100
		if err != nil || u.Source != "proc" || u.Seconds != want {
			t.Fatalf("cpu %+v %v want %v", u, err, want)
		}
	})
	t.Run("ErrMissing", func(t *testing.T) {
		h := HostReader{ProcRoot: "testdata/nonexistent", CgroupRoot: "testdata/nonexistent", DiskPath: "testdata/nonexistent"}
		if _, err := h.ReadCPU(); err == nil {
			t.Error("cpu")
		}
		if _, err := h.ReadNet(); err == nil {
			t.Error("net")
		}
		if _, err := h.ReadMemory(); err == nil {
			t.Error("mem")
		}
		if _, err := h.ReadDisk(); err == nil {
			t.Error("disk")
		}
	})
	t.Run("RealHost", func(t *testing.T) {
		var h HostReader
		if runtime.GOOS != "linux" {
			t.Skip("linux only")
		}
		if _, err := h.ReadCPU(); err != nil {
			t.Error(err)
		}
		if d, err := h.ReadDisk(); err != nil || d.TotalBytes == 0 {
			t.Error(d, err)
		}
	})
}

func TestClockReasons(t *testing.T) {
	if got := TroubleReasons(ReasonSWPowerCap | ReasonGPUIdle); got != 0 {
		t.Fatalf("power cap or idle flagged: %x", got)
	}
	if got := TroubleReasons(ReasonHWSlowdown | ReasonSWPowerCap); got != ReasonHWSlowdown {
		t.Fatalf("%x", got)
	}
	names := ClockReasonNames(0x4 | 0x40 | 0x10000)
	if strings.Join(names, ",") != "sw_power_cap,hw_thermal_slowdown,0x10000" {
		t.Fatal(names)
	}
}

func TestHostReader_Cached(t *testing.T) {
	for _, root := range []string{"testdata/cgroup1", "testdata/cgroup2", "testdata/nonexistent"} {
		t.Run(root, func(t *testing.T) {
			plain := HostReader{ProcRoot: "testdata/proc", CgroupRoot: root}
			cached := plain.Cached()
			defer cached.Close()
			for range 2 { // the second read goes through the open files
				u1, err1 := plain.ReadCPU()
				u2, err2 := cached.ReadCPU()
				if u1 != u2 || (err1 == nil) != (err2 == nil) {
					t.Fatalf("cpu %+v %v, cached %+v %v", u1, err1, u2, err2)
				}
				m1, err1 := plain.ReadMemory()
				m2, err2 := cached.ReadMemory()
				if m1 != m2 || (err1 == nil) != (err2 == nil) {
					t.Fatalf("mem %+v %v, cached %+v %v", m1, err1, m2, err2)
				}
				n1, err1 := plain.ReadNet()
				n2, err2 := cached.ReadNet()
				if n1 != n2 || (err1 == nil) != (err2 == nil) {
					t.Fatalf("net %+v %v, cached %+v %v", n1, err1, n2, err2)
				}
			}
		})
	}
	t.Run("RewrittenInPlace", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "cpu.stat")
		h := HostReader{CgroupRoot: dir}.Cached()
		defer h.Close()
		for _, us := range []string{"5", "123456789012"} { // shorter, then longer
			if err := os.WriteFile(p, []byte("usage_usec "+us+"\nuser_usec 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			u, err := h.ReadCPU()
			want, _ := strconv.ParseFloat(us, 64)
			if err != nil || u.Seconds != want/1e6 {
				t.Fatalf("%+v %v, want %v s", u, err, want/1e6)
			}
		}
	})
	t.Run("LargeFile", func(t *testing.T) {
		dir := t.TempDir()
		big := strings.Repeat("nr_periods 0\n", 1000) + "usage_usec 42\n" // over the first 4 KiB buffer
		if err := os.WriteFile(filepath.Join(dir, "cpu.stat"), []byte(big), 0o644); err != nil {
			t.Fatal(err)
		}
		h := HostReader{CgroupRoot: dir}.Cached()
		defer h.Close()
		if u, err := h.ReadCPU(); err != nil || u.Seconds != 42e-6 {
			t.Fatalf("%+v %v", u, err)
		}
	})
	t.Run("ErrMissing", func(t *testing.T) {
		h := HostReader{ProcRoot: "testdata/nonexistent", CgroupRoot: "testdata/nonexistent"}.Cached()
		defer h.Close()
		for range 2 { // the second time from the cache of missing files
			if _, err := h.ReadNet(); !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
		}
	})
}

func TestParse_NoAllocs(t *testing.T) {
	stat, _ := os.ReadFile("testdata/proc/stat")
	dev, _ := os.ReadFile("testdata/proc/net/dev")
	mem, _ := os.ReadFile("testdata/proc/meminfo")
	cg, _ := os.ReadFile("testdata/cgroup2/cpu.stat")
	if n := testing.AllocsPerRun(100, func() {
		parseProcStat(stat)
		parseNetDev(dev)
		parseMeminfo(mem)
		parseCgroup2CPUStat(cg)
	}); n != 0 {
		t.Fatalf("%v allocations per parse of the sampled files; want 0", n)
	}
}

func BenchmarkHostReader(b *testing.B) {
	for _, tt := range []struct {
		name string
		h    HostReader
	}{{"Open", HostReader{}}, {"Cached", HostReader{}.Cached()}} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tt.h.ReadCPU()
				tt.h.ReadNet()
			}
		})
	}
}
