package perf

import (
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		name string
		want string // "" no reference
	}{
		// NVML names, as the agent's tests and the e2e fakes carry them.
		{"NVIDIA H200", "H200"},
		{"NVIDIA H200 NVL", "H200 NVL"},
		{"NVIDIA H100 80GB HBM3", "H100 SXM"},
		{"NVIDIA H100 PCIe", "H100 PCIe"},
		{"NVIDIA H100 NVL", "H100 NVL"},
		{"NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB"},
		{"NVIDIA A100-SXM4-40GB", "A100 SXM4 40GB"},
		{"NVIDIA A100 80GB PCIe", "A100 PCIe 80GB"},
		{"NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB"},
		{"NVIDIA GeForce RTX 4090", "RTX 4090"},
		{"NVIDIA GeForce RTX 3090", "RTX 3090"},
		{"NVIDIA GeForce RTX 4090 D", "RTX 4090 D"},
		{"RTX 4090D", "RTX 4090 D"},
		{"NVIDIA GeForce RTX 5090", "RTX 5090"},
		{"NVIDIA GeForce RTX 5090 D", ""},
		{"NVIDIA H800", "H800"},
		{"NVIDIA H800 80GB HBM3", "H800"},
		{"NVIDIA H800 PCIe", ""}, // its figures were not found
		{"NVIDIA A800-SXM4-80GB", "A800 SXM4 80GB"},
		{"NVIDIA A800 80GB PCIe", "A800 PCIe 80GB"},
		{"NVIDIA A40", "A40"},
		{"NVIDIA L40S", "L40S"},
		{"NVIDIA L40", "L40"},
		{"NVIDIA L4", "L4"},
		{"NVIDIA A10", "A10"},
		{"NVIDIA RTX A6000", "RTX A6000"},
		{"NVIDIA   RTX  A6000", "RTX A6000"},
		{"NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada"},
		{"Tesla T4", "T4"},
		{"Tesla V100-SXM2-32GB", "V100 SXM2"},
		{"Tesla V100-PCIE-16GB", "V100 PCIe"},
		// Display names and what people write.
		{"H100 80GB HBM3", "H100 SXM"},
		{"h100 sxm", "H100 SXM"},
		{"RTX 4090", "RTX 4090"},
		{"4090", "RTX 4090"},
		{"rtx4090", "RTX 4090"},
		{"RTX4090D", "RTX 4090 D"},
		{"RTXA6000", "RTX A6000"},
		{"rtx6000", ""}, // still ambiguous
		{"h100sxm", ""}, // not a spelling of the table: no guess
		{"A100 SXM4 80GB", "A100 SXM4 80GB"},
		// Ambiguous or absent: never the nearest row.
		{"H100", ""},
		{"A100", ""},
		{"NVIDIA A100-SXM4", ""},
		{"RTX 6000", ""},            // a Turing Quadro or an Ada card
		{"Quadro RTX 6000", ""},     // Turing: not in the table
		{"NVIDIA RTX PRO 6000", ""}, // Blackwell workstation: not in the table
		{"NVIDIA GeForce RTX 4090 Laptop GPU", ""},
		{"NVIDIA GeForce RTX 3090 Ti", ""},
		{"NVIDIA GeForce RTX 4080 SUPER", ""},
		{"NVIDIA GH200 480GB", ""},
		{"NVIDIA A10G", ""}, // AWS's: no datasheet found
		{"Tesla V100S-PCIE-32GB", ""},
		{"NVIDIA A100-SXM4-40GB MIG 1g.5gb", ""}, // a slice is never a whole card's reference
		{"NVIDIA GeForce RTX 4090\x1b[31m\u202e", ""},
		{"NVIDIA GeForce GTX ", ""},
		{"", ""},
		{"NVIDIA", ""},
	} {
		r, ok := Lookup(tc.name)
		if got := map[bool]string{true: r.Model}[ok]; got != tc.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tc.name, r.Model, ok, tc.want)
		}
	}
}

// TestLookup_DisplayNames: every NVML name in the table still finds its
// row after DisplayName, which is what the bench puts in GPU.Model.
func TestLookup_DisplayNames(t *testing.T) {
	for _, r := range References() {
		for _, n := range r.Names() {
			if got, ok := Lookup(DisplayName(n)); !ok || got.Model != r.Model {
				t.Errorf("Lookup(DisplayName(%q)) = %q, %v; want %q", n, got.Model, ok, r.Model)
			}
		}
	}
}

// TestReferences_Sane checks every row against what a datasheet can say:
// dense is half the sparse headline, the tensor rate exceeds FP32, the
// PCIe link exists, a source is named.
func TestReferences_Sane(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range References() {
		t.Run(r.Model, func(t *testing.T) {
			if seen[r.Model] {
				t.Fatalf("two rows for %s", r.Model)
			}
			seen[r.Model] = true
			if len(r.Names()) == 0 {
				t.Error("no names: Lookup cannot reach the row")
			}
			if !strings.Contains(r.Source, "https://") && !strings.Contains(r.Source, "whitepaper") {
				t.Errorf("source %q names no document", r.Source)
			}
			for name, v := range map[string]float64{"fp32": r.FP32TFLOPS, "bf16": r.BF16TFLOPS, "fp16": r.FP16TFLOPS, "sparse": r.TensorSparseTFLOPS, "mem": r.MemGBps, "power": r.PowerW} {
				if v < 0 || v > 5000 {
					t.Errorf("%s = %v: out of any card's range", name, v)
				}
			}
			if r.MemGBps <= 0 || r.PowerW <= 0 {
				t.Errorf("memory %v, power %v: every row has both", r.MemGBps, r.PowerW)
			}
			tensor := max(r.BF16TFLOPS, r.FP16TFLOPS)
			if tensor > 0 && r.FP32TFLOPS > 0 && tensor < 1.9*r.FP32TFLOPS { // GeForce Ampere: 71 against 35.6
				t.Errorf("tensor %v below FP32 %v", tensor, r.FP32TFLOPS)
			}
			if r.BF16TFLOPS > 0 && r.FP16TFLOPS > 0 && r.BF16TFLOPS != r.FP16TFLOPS {
				t.Errorf("bf16 %v and fp16 %v differ: both are dense with FP32 accumulate", r.BF16TFLOPS, r.FP16TFLOPS)
			}
			if r.TensorSparseTFLOPS > 0 {
				// Dense is half the sparse headline, within the datasheets'
				// rounding (the L40S's own two figures, 362.05 and 733,
				// differ by 1.2 %); a sparse figure copied as dense is 2x.
				if d := r.TensorSparseTFLOPS/2 - tensor; d > r.TensorSparseTFLOPS*0.01 || d < -r.TensorSparseTFLOPS*0.01 {
					t.Errorf("dense %v is not half the sparse %v: the sparse headline was copied as dense?", tensor, r.TensorSparseTFLOPS)
				}
			}
			if hasBF16 := r.Arch != "Turing" && r.Arch != "Volta"; !hasBF16 && r.BF16TFLOPS > 0 {
				t.Errorf("%s card with bf16 %v", r.Arch, r.BF16TFLOPS)
			}
			if r.PCIeGen < 3 || r.PCIeGen > 6 || r.PCIeWidth != 16 {
				t.Errorf("PCIe %d.0 x%d", r.PCIeGen, r.PCIeWidth)
			}
			h := r.Healthy
			for name, hv := range map[string][2]float64{
				"fp32": {h.FP32TFLOPS, r.FP32TFLOPS}, "bf16": {h.BF16TFLOPS, r.BF16TFLOPS},
				"fp16": {h.FP16TFLOPS, r.FP16TFLOPS}, "mem": {h.MemGBps, r.MemGBps},
				"h2d": {h.H2DGBps, pcieGBps(r.PCIeGen, r.PCIeWidth)}, "d2h": {h.D2HGBps, pcieGBps(r.PCIeGen, r.PCIeWidth)},
			} {
				if hv[0] > 0 && (hv[1] <= 0 || hv[0] > hv[1]*1.05) {
					t.Errorf("healthy %s %v above the datasheet's %v", name, hv[0], hv[1])
				}
			}
			if h != (Healthy{}) && h.Source == "" {
				t.Error("healthy figures without their source")
			}
		})
	}
}

func TestPCIeGBps(t *testing.T) {
	for _, tc := range []struct {
		gen, width int
		want       float64
	}{
		{3, 16, 15.75}, {4, 16, 31.51}, {5, 16, 63.02}, {4, 8, 15.75}, {0, 16, 0}, {9, 16, 0}, {4, 0, 0}, {4, 64, 0},
	} {
		if got := pcieGBps(tc.gen, tc.width); got < tc.want-0.01 || got > tc.want+0.01 {
			t.Errorf("pcieGBps(%d, %d) = %.3f, want %.2f", tc.gen, tc.width, got, tc.want)
		}
	}
}

func TestDisplayName_ModelKey(t *testing.T) {
	for _, tc := range []struct{ in, display, key string }{
		{"NVIDIA GeForce RTX 4090", "RTX 4090", "4090"},
		{"NVIDIA H100 80GB HBM3", "H100 80GB HBM3", "h100"},
		{"NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB", "a100"},
		{"Tesla T4", "T4", "t4"},
		{"  NVIDIA   RTX  A6000 ", "RTX A6000", "a6000"},
		{"", "", ""},
	} {
		if got := DisplayName(tc.in); got != tc.display {
			t.Errorf("DisplayName(%q) = %q, want %q", tc.in, got, tc.display)
		}
		if got := ModelKey(tc.in); got != tc.key {
			t.Errorf("ModelKey(%q) = %q, want %q", tc.in, got, tc.key)
		}
	}
}
