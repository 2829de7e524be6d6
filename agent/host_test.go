package agent

import (
	"runtime"
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
			got, err := parseProcStat(strings.NewReader(tt.in))
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
	got, err := parseNetDev(strings.NewReader(in))
	if err != nil || got.RxBytes != 400 || got.TxBytes != 600 {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := parseNetDev(strings.NewReader("eth0: 1 2 3\n")); err == nil {
		t.Fatal("short line accepted")
	}
	if _, err := parseNetDev(strings.NewReader("eth0: x 1 0 0 0 0 0 0 y 1 0 0 0 0 0 0\n")); err == nil {
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
