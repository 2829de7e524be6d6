package perf

import (
	"math"
	"testing"
)

// healthy4090 is an RTX 4090 as a healthy rental reads: copies at 26 GB/s
// on PCIe 4.0 x16, memory at 90 % of its datasheet.
func healthy4090() GPU {
	return GPU{
		Index: 0, Name: "NVIDIA GeForce RTX 4090", Model: "RTX 4090", ComputeCap: "8.9",
		FP32TFLOPS: 80, BF16TFLOPS: 150, FP16TFLOPS: 152, MemGBps: 910, H2DGBps: 25.5, D2HGBps: 26.2,
		MemoryTotalMiB: 24564, PCIeGen: 4, PCIeGenMax: 4, PCIeWidth: 16, PCIeWidthMax: 16,
		PowerLimitW: 450, PowerDefaultW: 450, SMClockMaxMHz: 3120, SMClockBenchMHz: 2745, ClockReasons: 0x4,
	}
}

func codes(ws []Warning) []WarnCode {
	var out []WarnCode
	for _, w := range ws {
		out = append(out, w.Code)
	}
	return out
}

func figure(t *testing.T, c GPUCheck, name string) Figure {
	t.Helper()
	for _, f := range c.Figures {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no figure %s in %+v", name, c.Figures)
	return Figure{}
}

func TestAssess_Healthy4090(t *testing.T) {
	a := Assess(Bench{Source: "cuda", GPUs: []GPU{healthy4090()}})
	if len(a.Warnings) != 0 {
		t.Fatalf("warnings on a healthy card: %v", a.Warnings)
	}
	c := a.GPUs[0]
	if c.Ref == nil || c.Ref.Model != "RTX 4090" || c.Model != "RTX 4090" {
		t.Fatalf("check %+v", c)
	}
	if len(c.Figures) != 6 {
		t.Fatalf("figures %+v, want all six", c.Figures)
	}
	// Tensor and FP32: the datasheet, no healthy figure of this bench, no
	// ratio (mma.sync is not the datasheet's instruction).
	bf := figure(t, c, "bf16_tflops")
	if bf.Datasheet != 165.2 || bf.Healthy != 0 || bf.Ratio != 0 || bf.Low {
		t.Errorf("bf16 %+v", bf)
	}
	// Memory: against the datasheet by the bench's known fraction.
	m := figure(t, c, "mem_gbps")
	if !m.Derived || m.Datasheet != 1008 || math.Abs(m.Healthy-1008*0.89) > 1e-9 || math.Abs(m.Ratio-910/(1008*0.89)) > 1e-9 || m.Low {
		t.Errorf("memory %+v", m)
	}
	h := figure(t, c, "h2d_gbps")
	if !h.Derived || math.Abs(h.Datasheet-31.5) > 0.1 || h.Low {
		t.Errorf("h2d %+v", h)
	}
}

func TestAssess_PowerCapped4090(t *testing.T) {
	g := healthy4090()
	g.PowerLimitW = 300
	g.MemGBps = 700 // 78 % of healthy: low
	a := Assess(Bench{GPUs: []GPU{g}})
	if len(a.Warnings) != 2 {
		t.Fatalf("warnings %v, want power_cap and slow_memory", a.Warnings)
	}
	// 1/3 of the power cut weighs more than 22 % of memory at 0.8.
	w := a.Warnings[0]
	if w.Code != WarnPowerCap || w.Value != 300 || w.Expected != 450 || w.GPU != 0 {
		t.Errorf("first %+v", w)
	}
	if w := a.Warnings[1]; w.Code != WarnSlowMemory || w.Value != 700 || w.Cause != "" {
		t.Errorf("second %+v (a power cap is not a cause of slow memory)", w)
	}
}

func TestAssess_NarrowLink(t *testing.T) {
	g := healthy4090()
	g.PCIeWidth = 8
	g.H2DGBps, g.D2HGBps = 12.8, 13.1
	a := Assess(Bench{GPUs: []GPU{g}})
	got := codes(a.Warnings)
	if len(got) != 2 || got[0] != WarnSlowCopy || got[1] != WarnPCIeNarrow {
		t.Fatalf("warnings %v, want slow_copy then pcie_narrow", a.Warnings)
	}
	w := a.Warnings[0]
	if w.Cause != WarnPCIeNarrow || w.Value != 12.8 {
		t.Errorf("slow copy %+v: the lower copy, caused by the narrow link", w)
	}
	if n := a.Warnings[1]; n.Value != 8 || n.Expected != 16 {
		t.Errorf("narrow %+v", n)
	}
}

func TestAssess_IdleLinkTrainedDown(t *testing.T) {
	// Links train down at idle: a gen 1 reading with full-speed copies is
	// no warning.
	g := healthy4090()
	g.PCIeGen = 1
	if a := Assess(Bench{GPUs: []GPU{g}}); len(a.Warnings) != 0 {
		t.Fatalf("warnings %v", a.Warnings)
	}
	// The same reading with slow copies is the cause.
	g.H2DGBps, g.D2HGBps = 13, 13
	a := Assess(Bench{GPUs: []GPU{g}})
	if len(a.Warnings) != 1 || a.Warnings[0].Code != WarnSlowCopy || a.Warnings[0].Cause != WarnPCIeSlow {
		t.Fatalf("warnings %v", a.Warnings)
	}
	// A slot older than the card says so on its own.
	g = healthy4090()
	g.PCIeGen, g.PCIeGenMax = 3, 3
	a = Assess(Bench{GPUs: []GPU{g}})
	if len(a.Warnings) != 1 || a.Warnings[0].Code != WarnPCIeSlow || a.Warnings[0].Value != 3 || a.Warnings[0].Expected != 4 {
		t.Fatalf("warnings %v", a.Warnings)
	}
}

func TestAssess_Neighbour(t *testing.T) {
	g := healthy4090()
	g.MemoryUsedMiB, g.OtherProcs, g.UtilPercent = 6144, 1, 63
	g.MemGBps = 500
	a := Assess(Bench{GPUs: []GPU{g}})
	got := codes(a.Warnings)
	if len(got) != 2 || got[0] != WarnNeighbour || got[1] != WarnSlowMemory {
		t.Fatalf("warnings %v", a.Warnings)
	}
	if a.Warnings[0].Value != 6144 || a.Warnings[1].Cause != WarnNeighbour {
		t.Errorf("warnings %+v", a.Warnings)
	}
	if a.Warnings[0].Expected != 1024 {
		t.Errorf("neighbour's limit %v, want 1 GiB on a 24 GiB card", a.Warnings[0].Expected)
	}
	// A fresh card's driver reservation is no neighbour: 600 MiB on a 4090,
	// 2 GiB on an H200 (2 % of 141 GiB is 2.8).
	g = healthy4090()
	g.MemoryUsedMiB = 600
	if a := Assess(Bench{GPUs: []GPU{g}}); len(a.Warnings) != 0 {
		t.Errorf("warnings %v on a fresh 4090", a.Warnings)
	}
	h := GPU{Name: "NVIDIA H200", MemoryTotalMiB: 143771, MemoryUsedMiB: 2048}
	if a := Assess(Bench{GPUs: []GPU{h}}); len(a.Warnings) != 0 {
		t.Errorf("warnings %v on a fresh H200", a.Warnings)
	}
	h.MemoryUsedMiB = 3000
	if a := Assess(Bench{GPUs: []GPU{h}}); len(a.Warnings) != 1 || a.Warnings[0].Code != WarnNeighbour || a.Warnings[0].Expected != 143771/50 {
		t.Errorf("warnings %v on an H200 with 3000 MiB in use", a.Warnings)
	}
}

func TestAssess_MIGSlice(t *testing.T) {
	g := GPU{Index: 0, Name: "NVIDIA A100-SXM4-80GB", Model: "A100-SXM4-80GB", MIG: true, BF16TFLOPS: 40, MemGBps: 200, H2DGBps: 3}
	a := Assess(Bench{GPUs: []GPU{g}})
	if len(a.Warnings) != 1 || a.Warnings[0].Code != WarnMIG {
		t.Fatalf("warnings %v, want only mig", a.Warnings)
	}
	for _, f := range a.GPUs[0].Figures {
		if f.Ratio != 0 || f.Low || f.Healthy != 0 || f.Datasheet != 0 {
			t.Errorf("slice figure compared: %+v", f)
		}
	}
	if got := TensorTFLOPS(Bench{GPUs: []GPU{g}}); got != 40 {
		t.Errorf("TensorTFLOPS = %v, want the slice's own 40", got)
	}
}

func TestAssess_UnknownCard(t *testing.T) {
	g := GPU{Index: 2, Name: "NVIDIA RTX PRO 6000 Blackwell Server Edition", BF16TFLOPS: 300, MemGBps: 1500, H2DGBps: 50}
	a := Assess(Bench{GPUs: []GPU{g}})
	if len(a.Warnings) != 1 || a.Warnings[0].Code != WarnUnknownCard || a.Warnings[0].GPU != 2 {
		t.Fatalf("warnings %v", a.Warnings)
	}
	c := a.GPUs[0]
	if c.Ref != nil || c.Model != "RTX PRO 6000 Blackwell Server Edition" {
		t.Errorf("check %+v", c)
	}
	for _, f := range c.Figures {
		if f.Ratio != 0 || f.Datasheet != 0 || f.Healthy != 0 {
			t.Errorf("figure with a guessed reference: %+v", f)
		}
	}
}

func TestAssess_MeasuredHealthy(t *testing.T) {
	// A row with the bench's own healthy figures gives tensor ratios, and
	// a cause behind a slow tensor figure.
	i := -1
	for j, r := range references {
		if r.Healthy.BF16TFLOPS > 0 {
			i = j
			break
		}
	}
	if i < 0 {
		t.Skip("no row has the bench's own healthy figures yet (the H200's are measured on the device)")
	}
	r := references[i]
	g := GPU{Name: r.names[0], BF16TFLOPS: r.Healthy.BF16TFLOPS * 0.7, PowerLimitW: r.PowerW * 0.6, PowerDefaultW: r.PowerW}
	a := Assess(Bench{GPUs: []GPU{g}})
	if len(a.Warnings) != 2 || a.Warnings[0].Code != WarnPowerCap || a.Warnings[1].Code != WarnSlowTensor || a.Warnings[1].Cause != WarnPowerCap {
		t.Fatalf("warnings %v", a.Warnings)
	}
}

func TestAssess_FactsAlone(t *testing.T) {
	e := true
	g := healthy4090()
	g.ECC = &e
	g.ECCUncorrected, g.RetiredPages = 2, 1
	g.ClockReasons = 0x4 | 0x40
	a := Assess(Bench{GPUs: []GPU{g}})
	got := codes(a.Warnings)
	want := []WarnCode{WarnECCErrors, WarnRetiredPages, WarnClocksHeld}
	if len(got) != len(want) {
		t.Fatalf("warnings %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("warnings %v, want %v", got, want)
		}
	}
	// A software power cap under load alone is normal.
	g = healthy4090()
	g.ClockReasons = 0x4
	if a := Assess(Bench{GPUs: []GPU{g}}); len(a.Warnings) != 0 {
		t.Errorf("warnings %v", a.Warnings)
	}
}

func TestAssess_OrderAcrossGPUs(t *testing.T) {
	a0, a1 := healthy4090(), healthy4090()
	a1.Index = 1
	a0.PowerLimitW = 400 // 11 % cut
	a1.PowerLimitW = 250 // 44 % cut: said first
	a := Assess(Bench{GPUs: []GPU{a0, a1}})
	if len(a.Warnings) != 2 || a.Warnings[0].GPU != 1 || a.Warnings[1].GPU != 0 {
		t.Fatalf("warnings %v", a.Warnings)
	}
	if got := Weakest(Bench{GPUs: []GPU{healthy4090(), func() GPU { g := healthy4090(); g.Index = 1; g.MemGBps = 600; return g }()}}); got != 1 {
		t.Errorf("Weakest = %d, want 1", got)
	}
	if got := Weakest(Bench{}); got != -1 {
		t.Errorf("Weakest(no GPU) = %d", got)
	}
}

func TestTensorTFLOPS(t *testing.T) {
	for _, tc := range []struct {
		gpus []GPU
		want float64
	}{
		{nil, 0},
		{[]GPU{{BF16TFLOPS: 150, FP16TFLOPS: 152}}, 152},
		{[]GPU{{BF16TFLOPS: 150}, {FP16TFLOPS: 140}}, 290},
		{[]GPU{{FP32TFLOPS: 80}}, 0},
		{[]GPU{{BF16TFLOPS: math.NaN(), FP16TFLOPS: math.Inf(1)}, {BF16TFLOPS: -5}}, 0},
	} {
		if got := TensorTFLOPS(Bench{GPUs: tc.gpus}); got != tc.want {
			t.Errorf("TensorTFLOPS(%+v) = %v, want %v", tc.gpus, got, tc.want)
		}
	}
}

// healthyH200 is the H200 as this bench measured it on the device
// (BENCHMARKS.md), with its NVML facts.
func healthyH200() GPU {
	return GPU{
		Index: 0, Name: "NVIDIA H200", Model: "H200", ComputeCap: "9.0",
		FP32TFLOPS: 62.8, BF16TFLOPS: 648.6, FP16TFLOPS: 653.4, MemGBps: 4267.6, H2DGBps: 55.4, D2HGBps: 55.3,
		MemoryTotalMiB: 143771, PCIeGen: 5, PCIeGenMax: 5, PCIeWidth: 16, PCIeWidthMax: 16,
		PowerLimitW: 700, PowerDefaultW: 700, SMClockMaxMHz: 1980, SMClockBenchMHz: 1980, ClockReasons: 0x4,
	}
}

func TestAssess_HealthyH200(t *testing.T) {
	a := Assess(Bench{Source: "cuda", GPUs: []GPU{healthyH200()}})
	if len(a.Warnings) != 0 {
		t.Fatalf("warnings on the measured card: %v", a.Warnings)
	}
	c := a.GPUs[0]
	if c.Ref == nil || c.Ref.Model != "H200" || len(c.Figures) != 6 {
		t.Fatalf("check %+v", c)
	}
	for _, f := range c.Figures {
		if f.Derived || f.Healthy <= 0 || math.Abs(f.Ratio-1) > 0.001 || f.Low {
			t.Errorf("%s: %+v, want a ratio of 1 to the measured card", f.Name, f)
		}
	}
	if bf := figure(t, c, "bf16_tflops"); bf.Datasheet != 989.5 {
		t.Errorf("bf16 datasheet %v", bf.Datasheet)
	}
	// A second H200 that gives 80 % of the tensor rate with its clocks
	// held by heat: slow_tensor, the cause named, said first.
	g := healthyH200()
	g.Index = 1
	g.BF16TFLOPS, g.FP16TFLOPS = 520, 530
	g.ClockReasons |= 0x40
	a = Assess(Bench{GPUs: []GPU{healthyH200(), g}})
	if len(a.Warnings) != 2 || a.Warnings[0].Code != WarnSlowTensor || a.Warnings[0].GPU != 1 || a.Warnings[0].Cause != WarnClocksHeld || a.Warnings[1].Code != WarnClocksHeld {
		t.Fatalf("warnings %v", a.Warnings)
	}
	if w := a.Warnings[0]; w.Value != 520 || w.Expected != 648.6 {
		t.Errorf("slow tensor %+v: the lower of bf16 and fp16, against its own healthy figure", w)
	}
	if got := Weakest(Bench{GPUs: []GPU{healthyH200(), g}}); got != 1 {
		t.Errorf("Weakest = %d", got)
	}
	if got := TensorTFLOPS(Bench{GPUs: []GPU{healthyH200(), g}}); math.Abs(got-(653.4+530)) > 1e-9 {
		t.Errorf("TensorTFLOPS = %v", got)
	}
}
