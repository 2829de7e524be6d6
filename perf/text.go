package perf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// figureLabels are the figures' names in English, with their units.
var figureLabels = map[string][2]string{
	"fp32_tflops": {"FP32", "TFLOPS"},
	"bf16_tflops": {"bf16 tensor", "TFLOPS"},
	"fp16_tflops": {"fp16 tensor", "TFLOPS"},
	"mem_gbps":    {"memory", "GB/s"},
	"h2d_gbps":    {"host→device", "GB/s"},
	"d2h_gbps":    {"device→host", "GB/s"},
}

// FigureLabel returns a figure's JSON name in English and its unit
// ("bf16 tensor", "TFLOPS"); the name itself and "" for one it does not
// know.
func FigureLabel(name string) (label, unit string) {
	if l, ok := figureLabels[name]; ok {
		return l[0], l[1]
	}
	return name, ""
}

// String is the figure in English for the agent's command line, e.g.
// "bf16 tensor 152 TFLOPS: 92 % of a healthy card (165), datasheet 165".
func (f Figure) String() string {
	label, unit := FigureLabel(f.Name)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s", label, num(f.Value))
	if unit != "" {
		sb.WriteString(" " + unit)
	}
	switch {
	case f.Ratio > 0:
		of := "a healthy card"
		if f.Derived {
			of = "a healthy card (from the datasheet)"
		}
		fmt.Fprintf(&sb, ": %d %% of %s (%s)", pct(f.Ratio), of, num(f.Healthy))
		if f.Datasheet > 0 {
			fmt.Fprintf(&sb, ", datasheet %s", num(f.Datasheet))
		}
		if f.Low {
			sb.WriteString(" (low)")
		}
	case f.Datasheet > 0:
		fmt.Fprintf(&sb, " (datasheet %s; no healthy figure of this bench for the card)", num(f.Datasheet))
	}
	return sb.String()
}

// String is the warning in English for the agent's command line, e.g.
// "GPU 0: tensor 120 TFLOPS, 73 % of a healthy card's 165; likely cause:
// power limit below its default".
func (w Warning) String() string {
	head := fmt.Sprintf("GPU %d: ", w.GPU)
	switch w.Code {
	case WarnPowerCap:
		return head + fmt.Sprintf("power limit %s W, below the card's default %s W", num(w.Value), num(w.Expected))
	case WarnPCIeNarrow:
		return head + fmt.Sprintf("PCIe link x%s, the card and slot can do x%s", num(w.Value), num(w.Expected))
	case WarnPCIeSlow:
		return head + fmt.Sprintf("PCIe %s.0, the card can do %s.0", num(w.Value), num(w.Expected))
	case WarnClocksHeld:
		if w.Expected > 0 {
			return head + fmt.Sprintf("SM clock held at %s MHz, the card's rated boost is %s MHz", num(w.Value), num(w.Expected))
		}
		return head + "clocks slowed by heat or a hardware slowdown during the bench"
	case WarnNeighbour:
		return head + fmt.Sprintf("something else was using the GPU before the bench (%s MiB of memory in use)", num(w.Value))
	case WarnSlowTensor, WarnSlowFP32, WarnSlowMemory, WarnSlowCopy:
		what, unit := slowLabel(w.Code)
		s := head + fmt.Sprintf("%s %s %s, ", what, num(w.Value), unit)
		if w.Expected > 0 {
			s += fmt.Sprintf("%d %% of a healthy card's %s", pct(w.Value/w.Expected), num(w.Expected))
		} else {
			s += "below a healthy card's"
		}
		if w.Cause != "" {
			s += "; likely cause: " + causeText(w.Cause)
		}
		return s
	case WarnECCErrors:
		return head + fmt.Sprintf("%s uncorrected memory (ECC) errors", num(w.Value))
	case WarnRetiredPages:
		return head + fmt.Sprintf("%s retired memory pages", num(w.Value))
	case WarnMIG:
		return head + "a MIG slice: its figures are the slice's and are not compared with a whole card"
	case WarnUnknownCard:
		return head + "this card is not in the reference table: figures without ratios"
	}
	return head + string(w.Code)
}

// slowLabel is what a slow_* warning is about, in English, and its unit.
func slowLabel(c WarnCode) (what, unit string) {
	switch c {
	case WarnSlowTensor:
		return "tensor", "TFLOPS"
	case WarnSlowFP32:
		return "FP32", "TFLOPS"
	case WarnSlowMemory:
		return "memory", "GB/s"
	}
	return "host↔device copies", "GB/s"
}

func causeText(c WarnCode) string {
	switch c {
	case WarnPowerCap:
		return "power limit below its default"
	case WarnPCIeNarrow:
		return "PCIe link narrower than it can be"
	case WarnPCIeSlow:
		return "PCIe link of an older generation than the card's"
	case WarnClocksHeld:
		return "clocks held"
	case WarnNeighbour:
		return "another process on the GPU"
	}
	return string(c)
}

// num writes a figure without an exponent and with no more digits than
// a measurement carries: whole numbers from 100, one decimal from 10, two
// below (152, 12.5, 0.95), trailing zeros dropped.
func num(v float64) string {
	prec := 2
	switch a := math.Abs(v); {
	case a >= 99.5:
		prec = 0
	case a >= 9.95:
		prec = 1
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// pct is a ratio as a whole percentage, rounded down so that 0.849 is
// never shown as the band's 85 (the small term absorbs binary fractions:
// 0.29 is 29).
func pct(r float64) int { return int(math.Floor(r*100 + 1e-9)) }
