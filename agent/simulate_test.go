package agent

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/agent/wire"
)

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSimulateSource(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, "sim.json")
	s := &SimulateSource{Path: p}

	t.Run("ErrMissing", func(t *testing.T) {
		if _, err := s.Read(ctx, ReadFast); err == nil {
			t.Fatal("missing file read")
		}
	})
	t.Run("Busy", func(t *testing.T) {
		copyFile(t, "testdata/sim/busy.json", p)
		gs, err := s.Read(ctx, ReadFast)
		if err != nil || len(gs) != 1 || !gs[0].UtilOK || gs[0].UtilMean != 97 || gs[0].MemoryUsedMiB != 18000 || !gs[0].PowerOK {
			t.Fatalf("%+v %v", gs, err)
		}
		if h := s.HostOverride(); h == nil || *h.CPUPercent != 1 {
			t.Fatal("host override not read")
		}
		f, err := s.Facts(ctx)
		if err != nil || f.GPUs[0].Name != "NVIDIA GeForce RTX 4090" || f.GPUs[0].MemoryTotalMiB != 24564 {
			t.Fatal(f, err)
		}
	})
	t.Run("Implausible", func(t *testing.T) {
		copyFile(t, "testdata/sim/implausible.json", p)
		gs, err := s.Read(ctx, ReadFast)
		if err != nil || gs[0].UtilOK || !strings.Contains(gs[0].Err, "implausible") {
			t.Fatalf("%+v %v", gs, err)
		}
	})
	for _, bad := range []string{"typo.json", "truncated.json"} {
		t.Run("Err/"+bad, func(t *testing.T) {
			copyFile(t, "testdata/sim/"+bad, p)
			if _, err := s.Read(ctx, ReadFast); err == nil {
				t.Fatal("malformed file accepted")
			}
			if s.HostOverride() != nil {
				t.Fatal("stale host override kept")
			}
		})
	}
	t.Run("ErrHuge", func(t *testing.T) {
		if err := os.WriteFile(p, []byte(strings.Repeat(" ", maxSimFile+10)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Read(ctx, ReadFast); err == nil {
			t.Fatal("huge file accepted")
		}
	})
}

func TestSampler_Simulate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, "sim.json")
	copyFile(t, "testdata/sim/idle.json", p)
	s := &Sampler{GPU: &SimulateSource{Path: p}, Host: HostReader{ProcRoot: "testdata/proc", CgroupRoot: "testdata/cgroup2"}, Thresholds: DefaultThresholds}
	// The first sample has no network baseline in the real counters, but
	// the simulate host object supplies both CPU and network.
	if sm := s.Sample(ctx); sm.Verdict != wire.VerdictIdle {
		t.Fatalf("idle file: %s %v", sm.Verdict, sm.Reasons)
	}
	if _, _, ok := s.Idle(); !ok {
		t.Fatal("not idle")
	}
	copyFile(t, "testdata/sim/busy.json", p)
	if sm := s.Sample(ctx); sm.Verdict != wire.VerdictBusy {
		t.Fatalf("busy file: %s %v", sm.Verdict, sm.Reasons)
	}
	os.Remove(p)
	if sm := s.Sample(ctx); sm.Verdict != wire.VerdictUnknown {
		t.Fatalf("missing file: %s %v", sm.Verdict, sm.Reasons)
	}
}

func TestSampler_WatchAndRealHost(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	log := filepath.Join(dir, "train.log")
	os.WriteFile(log, []byte("step 1\n"), 0o644)
	s := &Sampler{GPU: NoGPU(ErrNoNVML), Watch: []string{log, filepath.Join(dir, "missing")}, Thresholds: DefaultThresholds}
	sm := s.Sample(ctx)
	if sm.Verdict != wire.VerdictUnknown {
		t.Fatalf("no gpu must be unknown, got %s", sm.Verdict)
	}
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("step 2\n")
	f.Close()
	sm = s.Sample(ctx)
	if sm.Verdict != wire.VerdictBusy || !sm.Watches[0].Growing || sm.Watches[0].Grew != 7 || sm.Watches[1].Exists {
		t.Fatalf("%s %+v", sm.Verdict, sm.Watches)
	}
	if !sm.CPUOK || !sm.MemOK || !sm.DiskOK {
		t.Fatalf("real host readings failed: %+v", sm)
	}
	sm = s.Sample(ctx)
	if sm.Watches[0].Growing {
		t.Fatal("still growing")
	}
}

func TestSimulateSource_RewrittenInPlace(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "sim.json")
	s := &SimulateSource{Path: p}
	for _, util := range []string{"3", "97", "50.5"} {
		// In place (not renamed): the size or times change, so the
		// file is parsed again.
		if err := os.WriteFile(p, []byte(`{"gpus": [{"name": "x", "utilization": `+util+`}]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		gs, err := s.Read(ctx, ReadFast)
		if err != nil || len(gs) != 1 || strconv.FormatFloat(gs[0].UtilMean, 'f', -1, 64) != util {
			t.Fatalf("%+v %v, want utilisation %s", gs, err, util)
		}
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(ctx, ReadFast); err == nil {
		t.Fatal("read of a removed file succeeded from the cache")
	}
}
