package perf

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestBound_KeepsAnHonestBench(t *testing.T) {
	e := true
	g := healthy4090()
	g.ECC = &e
	h := healthyH200()
	h.Index = 1
	b := Bench{
		StartedAt: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), WallSeconds: 1.2, GPUSeconds: 0.9,
		Source: "cuda", DriverVersion: "580.159.04", CUDADriver: "13.0", GPUs: []GPU{g, h},
		Host:    Host{CPUCores: 16, CPUModel: "AMD EPYC 7763 64-Core Processor", MemoryMiB: 64000, DiskPath: "/root", DiskWriteMBps: 1800, DiskReadMBps: 2500},
		Skipped: []Skip{{What: "download_mbps", GPU: -1, Why: "no download URL set"}},
		Torch:   &TorchRun{Version: "2.11", BF16TFLOPS: 160},
	}
	got, changed := Bound(b)
	if len(changed) != 0 {
		t.Fatalf("changed %v", changed)
	}
	if !reflect.DeepEqual(got, b) {
		t.Fatalf("bounded\n%+v\nwant\n%+v", got, b)
	}
}

func TestBound_Absurd(t *testing.T) {
	g := healthy4090()
	g.BF16TFLOPS = 900 // a 4090 cannot: 1.25 x its 165.2 datasheet
	g.FP16TFLOPS = math.NaN()
	g.FP32TFLOPS = -1
	g.MemGBps = math.Inf(1)
	g.H2DGBps = 200 // PCIe 4.0 x16 carries 31.5
	g.UtilPercent = 250
	g.PCIeWidth = 1000
	g.MemoryUsedMiB = g.MemoryTotalMiB + 1
	g.TemperatureC = -40
	g.Index = -3
	unknown := GPU{Index: 1, Name: "Forged 9000", BF16TFLOPS: 9000, FP32TFLOPS: 1001, MemGBps: 60000}
	b := Bench{
		Source: "mine", WallSeconds: 1e12, GPUSeconds: -1,
		GPUs: []GPU{g, unknown},
		Host: Host{CPUCores: 1e6, DiskWriteMBps: 1e9, DiskReadMBps: math.NaN(), DownloadMBps: -3},
	}
	got, changed := Bound(b)
	want := []string{
		"wall_s", "gpu_s", "source",
		"gpus[0].index", "gpus[0].fp32_tflops", "gpus[0].bf16_tflops", "gpus[0].fp16_tflops", "gpus[0].mem_gbps", "gpus[0].h2d_gbps",
		"gpus[0].memory_used_mib", "gpus[0].util_percent", "gpus[0].pcie_width", "gpus[0].temperature_c",
		"gpus[1].fp32_tflops", "gpus[1].mem_gbps",
		"host.cpu_cores", "host.disk_write_mbps", "host.disk_read_mbps", "host.download_mbps",
	}
	if !slices.Equal(changed, want) {
		t.Fatalf("changed\n%v\nwant\n%v", changed, want)
	}
	g0 := got.GPUs[0]
	if g0.BF16TFLOPS != 0 || g0.FP16TFLOPS != 0 || g0.FP32TFLOPS != 0 || g0.MemGBps != 0 || g0.H2DGBps != 0 || g0.UtilPercent != 0 || g0.PCIeWidth != 0 || g0.Index != 0 {
		t.Errorf("gpu 0 %+v", g0)
	}
	if g0.D2HGBps != 26.2 || g0.PCIeWidthMax != 16 {
		t.Errorf("gpu 0 lost an honest figure: %+v", g0)
	}
	// An unknown card is held to the fixed ceilings only: 9000 TFLOPS is
	// absurd for any card there is, yet under the ceiling of what one
	// could be; it stays, marked as the agent's claim by the hub.
	if got.GPUs[1].BF16TFLOPS != 9000 || got.GPUs[1].FP32TFLOPS != 0 {
		t.Errorf("gpu 1 %+v", got.GPUs[1])
	}
	if got.Source != "" || got.WallSeconds != 0 || got.Host.CPUCores != 0 {
		t.Errorf("bench %+v", got)
	}
	// The caller's bench is not changed.
	if b.GPUs[0].BF16TFLOPS != 900 {
		t.Error("Bound changed its argument's GPUs")
	}
}

// TestBound_Tiny: a positive figure too small to be a measurement
// (5e-324, the least float64, or 1e-9 TFLOPS) is zeroed and named, as an
// absurd one is: a price divided by it would be hundreds of digits long.
// A figure at the floor and an honest slow disk stay.
func TestBound_Tiny(t *testing.T) {
	for _, tiny := range []float64{5e-324, 1e-9, 0.0099} {
		g := healthyH200()
		g.BF16TFLOPS, g.FP16TFLOPS, g.FP32TFLOPS = tiny, tiny, tiny
		g.MemGBps, g.H2DGBps, g.D2HGBps = tiny, tiny, tiny
		b := Bench{Source: "cuda", GPUs: []GPU{g},
			Host:  Host{CPUCores: tiny, DiskWriteMBps: tiny, DiskReadMBps: tiny, DownloadMBps: tiny},
			Torch: &TorchRun{BF16TFLOPS: tiny}}
		got, changed := Bound(b)
		want := []string{
			"gpus[0].fp32_tflops", "gpus[0].bf16_tflops", "gpus[0].fp16_tflops", "gpus[0].mem_gbps", "gpus[0].h2d_gbps", "gpus[0].d2h_gbps",
			"host.cpu_cores", "host.disk_write_mbps", "host.disk_read_mbps", "host.download_mbps", "torch.bf16_tflops",
		}
		if !slices.Equal(changed, want) {
			t.Fatalf("%g: changed\n%v\nwant\n%v", tiny, changed, want)
		}
		g0, h := got.GPUs[0], got.Host
		for _, v := range []float64{g0.BF16TFLOPS, g0.FP16TFLOPS, g0.FP32TFLOPS, g0.MemGBps, g0.H2DGBps, g0.D2HGBps,
			h.CPUCores, h.DiskWriteMBps, h.DiskReadMBps, h.DownloadMBps, got.Torch.BF16TFLOPS} {
			if v != 0 {
				t.Fatalf("%g: kept %g in %+v", tiny, v, got)
			}
		}
		if TensorTFLOPS(got) != 0 {
			t.Fatalf("%g: tensor %g", tiny, TensorTFLOPS(got))
		}
	}
	// At the floor it is a (slow) measurement.
	b := Bench{Source: "cuda", Host: Host{CPUCores: 1, DiskWriteMBps: floorFigure, DownloadMBps: 0.5}}
	if got, changed := Bound(b); len(changed) != 0 || got.Host != b.Host {
		t.Fatalf("changed %v: %+v", changed, got.Host)
	}
}

func TestBound_Clips(t *testing.T) {
	long := strings.Repeat("名", 100) // 300 bytes
	var gpus []GPU
	for i := range MaxGPUs + 3 {
		gpus = append(gpus, GPU{Index: i, Name: "NVIDIA A40"})
	}
	gpus[0].Name = "NVIDIA\nA40\u202e" + long
	var skips []Skip
	for i := range MaxSkips + 1 {
		skips = append(skips, Skip{What: "bf16_tflops", GPU: i % 3, Why: "driver too old"})
	}
	skips[1].Why = long + long
	skips[2].GPU = -7
	b := Bench{Source: "cuda", GPUs: gpus, Skipped: skips, DriverVersion: "\xff\xfe580", Host: Host{DownloadURL: "https://x/" + long}}
	got, changed := Bound(b)
	if len(got.GPUs) != MaxGPUs || len(got.Skipped) != MaxSkips {
		t.Fatalf("%d GPUs, %d skips", len(got.GPUs), len(got.Skipped))
	}
	for _, c := range []string{"gpus", "skipped", "driver_version", "gpus[0].name", "skipped[1].why", "skipped[2].gpu", "host.download_url"} {
		if !slices.Contains(changed, c) {
			t.Errorf("changed %v lacks %s", changed, c)
		}
	}
	n := got.GPUs[0].Name
	if len(n) > MaxNameBytes || !utf8.ValidString(n) || strings.ContainsAny(n, "\n\u202e") || !strings.HasPrefix(n, "NVIDIAA40名") {
		t.Errorf("name %q", n)
	}
	if w := got.Skipped[1].Why; len(w) > MaxWhyBytes || !utf8.ValidString(w) || len(w) < MaxWhyBytes-3 {
		t.Errorf("why %d bytes", len(w))
	}
	if got.DriverVersion != "580" || got.Skipped[2].GPU != -1 {
		t.Errorf("driver %q, skip gpu %d", got.DriverVersion, got.Skipped[2].GPU)
	}
}

// FuzzBound: whatever JSON an agent sends that decodes as a bench, Bound
// never panics, is deterministic, keeps every figure finite, non-negative
// and under its ceiling and every string within its bound, and is a
// fixed point (bounding twice changes nothing more).
func FuzzBound(f *testing.F) {
	seed, _ := json.Marshal(Bench{Source: "cuda", GPUs: []GPU{healthy4090()}, Host: Host{CPUCores: 8}, Skipped: []Skip{{What: "x", GPU: -1, Why: "y"}}, Torch: &TorchRun{BF16TFLOPS: 1}})
	f.Add(seed)
	f.Add([]byte(`{"gpus":[{"name":"NVIDIA H200","bf16_tflops":1e308,"mem_gbps":-1,"index":-5,"pcie_gen":99}],"wall_s":-0}`))
	f.Add([]byte(`{"source":"\u202e","gpus":[],"skipped":[{"gpu":-99,"why":"\u0000"}],"host":{"cpu_model":"\ud800"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var b Bench
		if json.Unmarshal(data, &b) != nil {
			return
		}
		got, _ := Bound(b)
		again, _ := Bound(b)
		if !reflect.DeepEqual(got, again) {
			t.Fatal("not deterministic")
		}
		fixed, changed := Bound(got)
		if len(changed) != 0 || !reflect.DeepEqual(fixed, got) {
			t.Fatalf("bounding twice changed %v", changed)
		}
		if len(got.GPUs) > MaxGPUs || len(got.Skipped) > MaxSkips {
			t.Fatal("too many GPUs or skips")
		}
		for _, g := range got.GPUs {
			for _, v := range []float64{g.FP32TFLOPS, g.BF16TFLOPS, g.FP16TFLOPS, g.MemGBps, g.H2DGBps, g.D2HGBps, g.UtilPercent, g.PowerLimitW} {
				if math.IsNaN(v) || v < 0 || v > ceilTensorTFLOPS*5 {
					t.Fatalf("figure %v", v)
				}
			}
			if len(g.Name) > MaxNameBytes || !utf8.ValidString(g.Name) {
				t.Fatalf("name %q", g.Name)
			}
		}
		for _, s := range got.Skipped {
			if len(s.Why) > MaxWhyBytes || !utf8.ValidString(s.Why) || s.GPU < -1 {
				t.Fatalf("skip %+v", s)
			}
		}
		// What the hub keeps can be assessed and shown.
		a := Assess(got)
		for _, w := range a.Warnings {
			_ = w.String()
		}
		_ = TensorTFLOPS(got)
	})
}
