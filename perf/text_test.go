package perf

import (
	"strings"
	"testing"
)

func TestFigure_String(t *testing.T) {
	for _, tc := range []struct {
		f    Figure
		want string
	}{
		{Figure{Name: "bf16_tflops", Value: 152.04, Datasheet: 165.2, Healthy: 160, Ratio: 0.95025}, "bf16 tensor 152 TFLOPS: 95 % of a healthy card (160), datasheet 165"},
		{Figure{Name: "mem_gbps", Value: 700, Datasheet: 1008, Healthy: 897.12, Derived: true, Ratio: 0.78, Low: true}, "memory 700 GB/s: 78 % of a healthy card (from the datasheet) (897), datasheet 1008 (low)"},
		{Figure{Name: "fp32_tflops", Value: 80.26, Datasheet: 82.6}, "FP32 80.3 TFLOPS (datasheet 82.6; no healthy figure of this bench for the card)"},
		{Figure{Name: "h2d_gbps", Value: 0.954}, "host→device 0.95 GB/s"},
		{Figure{Name: "something_new", Value: 3}, "something_new 3"},
	} {
		if got := tc.f.String(); got != tc.want {
			t.Errorf("String() = %q\nwant       %q", got, tc.want)
		}
	}
}

func TestWarning_String(t *testing.T) {
	for _, tc := range []struct {
		w    Warning
		want string
	}{
		{Warning{Code: WarnPowerCap, GPU: 0, Value: 300, Expected: 450}, "GPU 0: power limit 300 W, below the card's default 450 W"},
		{Warning{Code: WarnPCIeNarrow, GPU: 1, Value: 8, Expected: 16}, "GPU 1: PCIe link x8, the card and slot can do x16"},
		{Warning{Code: WarnPCIeSlow, Value: 3, Expected: 4}, "GPU 0: PCIe 3.0, the card can do 4.0"},
		{Warning{Code: WarnClocksHeld, Value: 1200, Expected: 1980}, "GPU 0: SM clock held at 1200 MHz, the card's rated boost is 1980 MHz"},
		{Warning{Code: WarnClocksHeld}, "GPU 0: clocks slowed by heat or a hardware slowdown during the bench"},
		{Warning{Code: WarnNeighbour, Value: 6144, Expected: 512}, "GPU 0: something else was using the GPU before the bench (6144 MiB of memory in use)"},
		{Warning{Code: WarnSlowTensor, Value: 120, Expected: 165.2, Cause: WarnPowerCap}, "GPU 0: tensor 120 TFLOPS, 72 % of a healthy card's 165; likely cause: power limit below its default"},
		{Warning{Code: WarnSlowCopy, GPU: 2, Value: 12.8, Expected: 25.84, Cause: WarnPCIeNarrow}, "GPU 2: host↔device copies 12.8 GB/s, 49 % of a healthy card's 25.8; likely cause: PCIe link narrower than it can be"},
		{Warning{Code: WarnSlowMemory, Value: 700, Expected: 897}, "GPU 0: memory 700 GB/s, 78 % of a healthy card's 897"},
		{Warning{Code: WarnSlowFP32, Value: 50, Expected: 64}, "GPU 0: FP32 50 TFLOPS, 78 % of a healthy card's 64"},
		{Warning{Code: WarnECCErrors, Value: 2}, "GPU 0: 2 uncorrected memory (ECC) errors"},
		{Warning{Code: WarnRetiredPages, Value: 1}, "GPU 0: 1 retired memory pages"},
		{Warning{Code: WarnMIG}, "GPU 0: a MIG slice: its figures are the slice's and are not compared with a whole card"},
		{Warning{Code: WarnUnknownCard, GPU: 3}, "GPU 3: this card is not in the reference table: figures without ratios"},
		{Warning{Code: "future_code"}, "GPU 0: future_code"},
	} {
		if got := tc.w.String(); got != tc.want {
			t.Errorf("String() = %q\nwant       %q", got, tc.want)
		}
	}
}

// TestWarning_StringEveryCode: every code Assess can give has its own
// sentence, not the fallback.
func TestWarning_StringEveryCode(t *testing.T) {
	for _, c := range []WarnCode{WarnPowerCap, WarnPCIeNarrow, WarnPCIeSlow, WarnClocksHeld, WarnNeighbour, WarnSlowTensor, WarnSlowFP32, WarnSlowMemory, WarnSlowCopy, WarnECCErrors, WarnRetiredPages, WarnMIG, WarnUnknownCard} {
		if s := (Warning{Code: c, Value: 1, Expected: 2}).String(); strings.Contains(s, string(c)) {
			t.Errorf("%s has no sentence: %q", c, s)
		}
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 152.04: "152", 4287.4: "4287", 12.5: "12.5", 10: "10", 0.954: "0.95", 99.96: "100", 9.96: "10", -0.001: "0", 1e9: "1000000000"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
	for r, want := range map[float64]int{0.29: 29, 0.849: 84, 0.85: 85, 1.0: 100, 0.9999: 99} {
		if got := pct(r); got != want {
			t.Errorf("pct(%v) = %d, want %d", r, got, want)
		}
	}
}
