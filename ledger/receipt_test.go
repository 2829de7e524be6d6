package ledger

import (
	"math/big"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// receiptBench is a bench of one card that is not in perf's reference
// table (no ratios, no warnings), so the sums below rest on the receipt's
// arithmetic alone: 152 tensor TFLOPS.
func receiptBench(gpus ...perf.GPU) perf.Bench {
	if len(gpus) == 0 {
		gpus = []perf.GPU{{Index: 0, Name: "Example GPU 9000", Model: "Example 9000", BF16TFLOPS: 150, FP16TFLOPS: 152, FP32TFLOPS: 70}}
	}
	return perf.Bench{Source: "simulate", GPUs: gpus}
}

// TestBuildReceipt: every sum by hand, on a per-second ¥1.88/h rental
// started at t0 and read an hour later.
func TestBuildReceipt(t *testing.T) {
	r := newRental("box1", PerSecond, "1.88", UnitHour, CNY, ev(EventStart, 0))
	b := bookOf(r)
	in := ReceiptInput{Book: b, Rental: r, Now: off(hour),
		Benches:   []BenchRecord{{ID: 2, RentalID: r.ID, At: off(3 * min1), Bench: receiptBench()}},
		FirstWork: off(31 * min1),
		Jobs: []JobRun{
			{RentalID: r.ID, Label: "yolo-epoch", StartedAt: off(40 * min1), EndedAt: off(52 * min1), Source: JobFromAgent},
			{RentalID: r.ID + 1000, Label: "other", StartedAt: off(10 * min1), EndedAt: off(20 * min1), Source: JobFromAgent},
		}}
	rc := BuildReceipt(in)

	if rc.Bench == nil || rc.Bench.ID != 2 {
		t.Fatalf("bench %+v, want the stored one", rc.Bench)
	}
	if rc.GPU != "Example 9000" || rc.GPUCount != 1 {
		t.Errorf("headline %q ×%d, want the bench's model ×1", rc.GPU, rc.GPUCount)
	}
	if rc.TensorTFLOPS != 152 {
		t.Errorf("tensor %v, want 152 (the better of bf16 150 and fp16 152)", rc.TensorTFLOPS)
	}
	// ¥1.88/h ÷ 152 TFLOPS = 188/15200 = 47/3800 exactly.
	if want := big.NewRat(47, 3800); rc.PerTFLOPHour == nil || rc.PerTFLOPHour.Cmp(want) != 0 {
		t.Errorf("per tensor-TFLOP-hour %v, want 47/3800", rc.PerTFLOPHour)
	}
	if h, ok := rc.HourlyMoney(); !ok || h.String() != "1.88" {
		t.Errorf("hourly %v %v, want 1.88", h, ok)
	}
	money(t, rc.SoFar, "1.88") // one hour at ¥1.88/h
	// Setup: 31 min × ¥1.88/h = ¥0.97133… → ¥0.97.
	if rc.SetupTax == nil || rc.SetupTax.Duration() != 31*time.Minute || !rc.SetupTax.Priced {
		t.Fatalf("setup tax %+v, want 31 min priced", rc.SetupTax)
	}
	money(t, rc.SetupTax.Money, "0.97")
	// The job: 12 min × ¥1.88/h = ¥0.376 → ¥0.38; another rental's run is not its.
	if len(rc.Jobs) != 1 || rc.Jobs[0].Run.Label != "yolo-epoch" {
		t.Fatalf("jobs %+v, want the rental's one run", rc.Jobs)
	}
	money(t, rc.Jobs[0].Cost, "0.38")
}

// TestBuildReceipt_FirstBench: of several benches the earliest is the
// receipt's.
func TestBuildReceipt_FirstBench(t *testing.T) {
	r := newRental("box1", PerSecond, "1.88", UnitHour, CNY, ev(EventStart, 0))
	later := receiptBench(perf.GPU{Index: 0, Model: "Example 9000", BF16TFLOPS: 10})
	rc := BuildReceipt(ReceiptInput{Book: bookOf(r), Rental: r, Now: off(hour), Benches: []BenchRecord{
		{ID: 5, At: off(20 * min1), Bench: later}, {ID: 4, At: off(2 * min1), Bench: receiptBench()}}})
	if rc.Bench == nil || rc.Bench.ID != 4 {
		t.Fatalf("bench %+v, want the earliest (ID 4)", rc.Bench)
	}
}

// TestBuildReceipt_NothingToDivide: no price per unit without a price or
// without a tensor figure; never a guess.
func TestBuildReceipt_NothingToDivide(t *testing.T) {
	t.Run("unpriced", func(t *testing.T) {
		r := newRental("box1", PerSecond, "1.88", UnitHour, CNY, ev(EventStart, 0))
		r.Priced = false
		rc := BuildReceipt(ReceiptInput{Book: bookOf(r), Rental: r, Now: off(hour), Benches: []BenchRecord{{Bench: receiptBench()}}})
		if rc.PerTFLOPHour != nil || rc.Hourly != nil || rc.Priced {
			t.Errorf("unpriced rental: per unit %v hourly %v priced %v, want none", rc.PerTFLOPHour, rc.Hourly, rc.Priced)
		}
	})
	t.Run("no tensor figure", func(t *testing.T) {
		r := newRental("box1", PerSecond, "1.88", UnitHour, CNY, ev(EventStart, 0))
		none := perf.Bench{Source: "none", Skipped: []perf.Skip{{What: "gpu", GPU: -1, Why: "no CUDA driver"}}}
		rc := BuildReceipt(ReceiptInput{Book: bookOf(r), Rental: r, Now: off(hour), Benches: []BenchRecord{{Bench: none}}})
		if rc.PerTFLOPHour != nil {
			t.Errorf("per unit %v, want none without a tensor figure", rc.PerTFLOPHour)
		}
		if rc.GPU != "RTX 4090" || rc.GPUCount != 1 {
			t.Errorf("headline %q ×%d, want the rental's own", rc.GPU, rc.GPUCount)
		}
		if h, ok := rc.HourlyMoney(); !ok || h.String() != "1.88" {
			t.Errorf("hourly %v, want still 1.88", h)
		}
	})
	t.Run("no bench, no work", func(t *testing.T) {
		r := newRental("box1", PerSecond, "1.88", UnitHour, CNY, ev(EventStart, 0))
		rc := BuildReceipt(ReceiptInput{Book: bookOf(r), Rental: r, Now: off(hour)})
		if rc.Bench != nil || rc.SetupTax != nil || rc.PerTFLOPHour != nil {
			t.Errorf("receipt %+v, want no bench, no setup tax, no price per unit", rc)
		}
	})
	t.Run("work seen before the start is no setup tax", func(t *testing.T) {
		r := newRental("box1", PerSecond, "1.88", UnitHour, CNY, ev(EventStart, hour))
		rc := BuildReceipt(ReceiptInput{Book: bookOf(r), Rental: r, Now: off(2 * hour), FirstWork: off(30 * min1)})
		if rc.SetupTax != nil {
			t.Errorf("setup tax %+v, want none", rc.SetupTax)
		}
	})
	t.Run("a day package's hour", func(t *testing.T) {
		r := newRental("box1", AlwaysOn, "48", UnitDay, CNY, ev(EventStart, 0))
		rc := BuildReceipt(ReceiptInput{Book: bookOf(r), Rental: r, Now: off(hour), Benches: []BenchRecord{{Bench: receiptBench()}}})
		// ¥48/day is ¥2/h; ÷ 152 = 1/76.
		if want := big.NewRat(1, 76); rc.PerTFLOPHour == nil || rc.PerTFLOPHour.Cmp(want) != 0 {
			t.Errorf("per unit %v, want 1/76", rc.PerTFLOPHour)
		}
	})
}

// TestReceiptWarnings: the money at stake by hand, the folding of a cause
// into the warning it explains, and the order most costly first.
func TestReceiptWarnings(t *testing.T) {
	a := perf.Assessment{
		GPUs: []perf.GPUCheck{{Index: 0, Model: "RTX 4090"}, {Index: 1, Model: "RTX 4090"}},
		Warnings: []perf.Warning{
			{Code: perf.WarnPowerCap, GPU: 1, Value: 300, Expected: 450},
			{Code: perf.WarnSlowMemory, GPU: 0, Value: 900, Expected: 1000},
			{Code: perf.WarnSlowTensor, GPU: 1, Value: 111, Expected: 150, Cause: perf.WarnPowerCap},
			{Code: perf.WarnPCIeNarrow, GPU: 0, Value: 8, Expected: 16},
			{Code: perf.WarnSlowCopy, GPU: 0, Value: 6, Expected: 24, Cause: perf.WarnPCIeNarrow},
		},
	}
	// $3.60/h over two GPUs is $1.80 each.
	ws := receiptWarnings(a, big.NewRat(36, 10), USD, 2)
	if len(ws) != 3 {
		t.Fatalf("%d warnings %+v, want 3 (power cap and PCIe width folded into what they explain)", len(ws), ws)
	}
	// GPU 1's tensor: $1.80 × 39/150 = $0.468 → $0.47, first.
	if ws[0].Code != perf.WarnSlowTensor || ws[0].Because == nil || ws[0].Because.Code != perf.WarnPowerCap || ws[0].Because.Value != 300 {
		t.Errorf("first %+v, want the slow tensor with the power cap as its cause", ws[0])
	}
	money(t, ws[0].Share, "1.80")
	money(t, ws[0].Waste, "0.47")
	if ws[0].Model != "RTX 4090" {
		t.Errorf("model %q", ws[0].Model)
	}
	// GPU 0's memory: $1.80 × 100/1000 = $0.18.
	if ws[1].Code != perf.WarnSlowMemory {
		t.Errorf("second %s, want slow_memory", ws[1].Code)
	}
	money(t, ws[1].Waste, "0.18")
	// A slow copy is time, not a share of the bill: no money at stake.
	if ws[2].Code != perf.WarnSlowCopy || ws[2].HasWaste() || ws[2].Because == nil || ws[2].Because.Code != perf.WarnPCIeNarrow {
		t.Errorf("third %+v, want the slow copy, its link as the cause, no money", ws[2])
	}

	t.Run("unpriced", func(t *testing.T) {
		for _, w := range receiptWarnings(a, nil, USD, 2) {
			if w.HasWaste() {
				t.Errorf("%s: money at stake %v without a price", w.Code, w.Waste)
			}
		}
	})
	t.Run("absurd figures price nothing", func(t *testing.T) {
		bad := perf.Assessment{Warnings: []perf.Warning{{Code: perf.WarnSlowTensor, Value: 200, Expected: 100}, {Code: perf.WarnSlowFP32, Value: -1, Expected: 0}}}
		for _, w := range receiptWarnings(bad, big.NewRat(2, 1), CNY, 1) {
			if w.HasWaste() {
				t.Errorf("%+v: money at stake from figures that show no loss", w)
			}
		}
	})
}

// TestBuildReceipt_PowerCappedH200: through perf's own assessment, a
// power-capped H200 at three quarters of a healthy one's tensor figure
// (486.45 of 648.6 bf16, 490.05 of 653.4 fp16) on a $3.60/h rental: one
// warning, the slow tensor with the power cap as its cause, and $3.60 ×
// 0.25 = $0.90/h of it buying nothing. The price per unit divides by the
// better of the two: $3.60 ÷ 490.05.
func TestBuildReceipt_PowerCappedH200(t *testing.T) {
	r := newRental("h1", PerSecond, "3.6", UnitHour, USD, ev(EventStart, 0))
	r.GPU = "H200"
	g := perf.GPU{Index: 0, Name: "NVIDIA H200", Model: "H200", BF16TFLOPS: 486.45, FP16TFLOPS: 490.05, FP32TFLOPS: 62.8,
		MemGBps: 4267.6, H2DGBps: 55.4, D2HGBps: 55.3, PCIeGen: 5, PCIeGenMax: 5, PCIeWidth: 16, PCIeWidthMax: 16,
		PowerLimitW: 500, PowerDefaultW: 700, SMClockMaxMHz: 1980}
	rc := BuildReceipt(ReceiptInput{Book: bookOf(r), Rental: r, Now: off(hour),
		Benches: []BenchRecord{{Bench: perf.Bench{Source: "simulate", GPUs: []perf.GPU{g}}}}})
	if len(rc.Warnings) != 1 {
		t.Fatalf("warnings %+v, want the slow tensor alone (its power cap folded in)", rc.Warnings)
	}
	w := rc.Warnings[0]
	if w.Code != perf.WarnSlowTensor || w.Because == nil || w.Because.Code != perf.WarnPowerCap || w.Because.Value != 500 || w.Because.Expected != 700 {
		t.Fatalf("warning %+v (because %+v), want slow_tensor because of a 500 of 700 W cap", w, w.Because)
	}
	money(t, w.Share, "3.60")
	money(t, w.Waste, "0.90")
	if want := new(big.Rat).Quo(big.NewRat(36, 10), new(big.Rat).SetFloat64(490.05)); rc.PerTFLOPHour == nil || rc.PerTFLOPHour.Cmp(want) != 0 {
		t.Errorf("per unit %v, want 3.6 ÷ 490.05", rc.PerTFLOPHour)
	}
}
