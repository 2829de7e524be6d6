package perf

import (
	"cmp"
	"math"
	"slices"
)

// WarnCode names one thing a bench found wrong, or a reason its figures
// are not compared. The chat and the dashboard word it in the user's
// language from the code and the warning's numbers; String words it in
// English for the agent's command line.
type WarnCode string

// The warnings. Value and Expected of each are documented beside it; a
// code may also stand as the likely Cause of a slow_* warning.
const (
	// WarnPowerCap: the enforced power limit is below the card's default.
	// Value the limit, Expected the default, in W.
	WarnPowerCap WarnCode = "power_cap"
	// WarnPCIeNarrow: the link has fewer lanes than the card and slot can
	// use. Value the current width, Expected the maximum (lanes).
	WarnPCIeNarrow WarnCode = "pcie_narrow"
	// WarnPCIeSlow: the link runs an older generation than the card can.
	// Links train down at idle, so this is only said as the cause of slow
	// copies (the copies are the evidence), or when the slot itself is
	// older than the card (the maximum NVML reports is below the card's).
	// Value the generation seen, Expected the card's.
	WarnPCIeSlow WarnCode = "pcie_slow"
	// WarnClocksHeld: the highest SM clock the card allows is below its
	// rated boost, or the clock-event reasons seen during the bench show a
	// hardware slowdown or thermal throttling (a software power cap under
	// load is normal and not a warning). Value the clock in MHz, Expected
	// the rated boost (0 when only the reasons say so).
	WarnClocksHeld WarnCode = "clocks_held"
	// WarnNeighbour: before the bench, other processes ran on the GPU, or
	// memory was in use, or it was busy. Value the memory in use (MiB),
	// Expected the most a fresh card shows (MiB: 1 GiB or 2 % of the
	// card); the bench's GPU has the process count and utilisation.
	WarnNeighbour WarnCode = "neighbour"
	// WarnSlowTensor, WarnSlowFP32, WarnSlowMemory, WarnSlowCopy: a figure
	// below the band of what a healthy card of the model gives with this
	// bench. Value the measured figure, Expected the healthy one (TFLOPS or
	// GB/s); Cause the likely reason when the facts show one.
	WarnSlowTensor WarnCode = "slow_tensor"
	WarnSlowFP32   WarnCode = "slow_fp32"
	WarnSlowMemory WarnCode = "slow_memory"
	WarnSlowCopy   WarnCode = "slow_copy"
	// WarnECCErrors: uncorrected ECC errors since the driver loaded.
	// Value the count, Expected 0.
	WarnECCErrors WarnCode = "ecc_errors"
	// WarnRetiredPages: retired or pending memory pages. Value the count,
	// Expected 0.
	WarnRetiredPages WarnCode = "retired_pages"
	// WarnMIG: the GPU is a MIG slice: its figures are the slice's and are
	// never compared with a whole card.
	WarnMIG WarnCode = "mig"
	// WarnUnknownCard: the card is not in the reference table: figures
	// without ratios, never a guess.
	WarnUnknownCard WarnCode = "unknown_card"
)

// Assessment is a bench set against the reference table.
type Assessment struct {
	GPUs []GPUCheck
	// Warnings are ordered most costly first: the share of what is paid
	// for that the finding likely loses (see docs/design.md, "The
	// receipt's figures"), then by GPU and code so the order is stable.
	Warnings []Warning
}

// GPUCheck is one GPU's figures against its reference.
type GPUCheck struct {
	Index int        // the GPU's index as the bench reports it
	Model string     // the display name, e.g. "RTX 4090"
	Ref   *Reference // nil when the card is not in the table
	// Figures are the measured throughput figures in the bench's JSON
	// order (fp32, bf16, fp16, mem, h2d, d2h); figures not measured are
	// left out.
	Figures []Figure
}

// Figure is one measured figure beside its references.
type Figure struct {
	Name      string  // the JSON name, e.g. "bf16_tflops"
	Value     float64 // measured
	Datasheet float64 // the vendor's peak for this figure; 0 unknown
	// Healthy is what this bench gives on a healthy card of the model; 0
	// unknown. Derived says it comes from the datasheet by the bench's
	// known fraction (memory and copies) rather than from a measured card.
	Healthy float64
	Derived bool
	Ratio   float64 // Value / Healthy, else 0
	Low     bool    // Ratio below the figure's band
}

// Warning is one finding about one GPU.
type Warning struct {
	Code  WarnCode
	GPU   int // the GPU's index as the bench reports it
	Value float64
	// Expected is what a healthy card shows; the meaning of both numbers
	// is given by Code.
	Expected float64
	// Cause is the likely cause of a slow_* warning, when the facts show
	// one (e.g. WarnPowerCap behind WarnSlowTensor); "" unknown.
	Cause WarnCode
}

// scored is a warning with the share of the card it likely loses, for
// the order of Assessment.Warnings.
type scored struct {
	w    Warning
	loss float64
}

// The bands: a ratio to the healthy figure below these warns. Compute and
// memory vary little between healthy cards of one model (a few per cent
// with clocks and temperature); pinned copies depend also on the host's
// memory and chipset, so their band is wider.
const (
	ComputeBand = 0.85
	MemoryBand  = 0.85
	CopyBand    = 0.80
)

// The bench's fractions of the datasheet, used for a model without a
// measured healthy figure (Figure.Derived). A device-to-device copy is
// bound by memory on every architecture and reaches a stable share of
// the datasheet bandwidth: 0.889 on the H200 (4267.6 of 4800 GB/s,
// BENCHMARKS.md), 85-93 % across cards. Pinned copies are bound by the
// PCIe link: 0.879 of PCIe 5.0 x16's 63.0 GB/s on the H200; 0.82 is
// taken lower for older hosts, so that with CopyBand a copy warns below
// 0.66 of the link, where a link of half the lanes or of an older
// generation (0.5) falls and a healthy host does not. Tensor and FP32
// loops have no such share (mma.sync reaches 82 % of cuBLAS on Hopper,
// whose full rate needs wgmma; other architectures differ), so they get
// the datasheet figure and no ratio.
const (
	derivedMemFraction  = 0.89
	derivedCopyFraction = 0.82
)

// neighbourMiB is the most memory a fresh card may show in use before
// anything runs: NVML's v1 memory reading counts the driver's own
// reservation (hundreds of MiB on a data-centre card), so a neighbour is
// said from memory only above 1 GiB or 2 % of the card, whichever is
// more; a small neighbour shows by its process or its utilisation.
func neighbourMiB(totalMiB uint64) uint64 { return max(1024, totalMiB/50) }

// Clock-event reason bits (nvmlClocksEventReason*) that mean trouble: a
// hardware slowdown, thermal throttling (software or hardware), the
// power brake. The software power cap (0x4) under load is normal.
const badClockReasons uint64 = 0x8 | 0x20 | 0x40 | 0x80

// Assess sets a bench against the reference table: for each GPU its
// figures with their references and ratios, and the warnings with their
// likely causes. It never fails: what it cannot judge it leaves without
// a ratio. It only reads b.
func Assess(b Bench) Assessment {
	var a Assessment
	var all []scored
	for _, g := range b.GPUs {
		c, ws := assessGPU(g)
		a.GPUs = append(a.GPUs, c)
		all = append(all, ws...)
	}
	slices.SortStableFunc(all, func(x, y scored) int {
		if c := cmp.Compare(y.loss, x.loss); c != 0 {
			return c
		}
		if c := cmp.Compare(x.w.GPU, y.w.GPU); c != 0 {
			return c
		}
		return cmp.Compare(x.w.Code, y.w.Code)
	})
	for _, s := range all {
		a.Warnings = append(a.Warnings, s.w)
	}
	return a
}

func assessGPU(g GPU) (GPUCheck, []scored) {
	c := GPUCheck{Index: g.Index, Model: g.Model}
	if c.Model == "" {
		c.Model = DisplayName(g.Name)
	}
	var ref *Reference
	if r, ok := lookupGPU(g); ok {
		ref = &r
		c.Ref = ref
	}
	var ws []scored
	add := func(w Warning, loss float64) { w.GPU = g.Index; ws = append(ws, scored{w, loss}) }

	// Facts first: they stand on their own and are the causes of slow
	// figures.
	memLimit := neighbourMiB(g.MemoryTotalMiB)
	neighbour := g.OtherProcs > 0 || g.MemoryUsedMiB > memLimit || g.UtilPercent > 0
	if neighbour {
		add(Warning{Code: WarnNeighbour, Value: float64(g.MemoryUsedMiB), Expected: float64(memLimit)}, 0.5)
	}
	powerCap := g.PowerDefaultW > 0 && g.PowerLimitW > 0 && g.PowerLimitW < g.PowerDefaultW*0.98
	if powerCap {
		add(Warning{Code: WarnPowerCap, Value: g.PowerLimitW, Expected: g.PowerDefaultW}, 1-g.PowerLimitW/g.PowerDefaultW)
	}
	clocksHeld := g.ClockReasons&badClockReasons != 0
	var boost float64
	if ref != nil {
		boost = float64(ref.BoostMHz)
	}
	if boost > 0 && g.SMClockMaxMHz > 0 && float64(g.SMClockMaxMHz) < boost*0.95 {
		clocksHeld = true
	}
	if clocksHeld {
		w, loss := Warning{Code: WarnClocksHeld}, 0.05
		if boost > 0 && g.SMClockMaxMHz > 0 && float64(g.SMClockMaxMHz) < boost*0.95 {
			w.Value, w.Expected, loss = float64(g.SMClockMaxMHz), boost, 1-float64(g.SMClockMaxMHz)/boost
		}
		add(w, loss)
	}
	narrow := g.PCIeWidth > 0 && g.PCIeWidthMax > 0 && g.PCIeWidth < g.PCIeWidthMax
	if narrow {
		add(Warning{Code: WarnPCIeNarrow, Value: float64(g.PCIeWidth), Expected: float64(g.PCIeWidthMax)}, 0.5*(1-float64(g.PCIeWidth)/float64(g.PCIeWidthMax)))
	}
	// A slot older than the card: NVML's maximum is the card's and the
	// slot's together, so a maximum below the card's generation is the
	// slot's, whatever the link does at idle.
	oldSlot := ref != nil && ref.PCIeGen > 0 && g.PCIeGenMax > 0 && g.PCIeGenMax < ref.PCIeGen
	if oldSlot {
		add(Warning{Code: WarnPCIeSlow, Value: float64(g.PCIeGenMax), Expected: float64(ref.PCIeGen)}, 0.5*(1-float64(g.PCIeGenMax)/float64(ref.PCIeGen)))
	}
	if g.ECCUncorrected > 0 {
		add(Warning{Code: WarnECCErrors, Value: float64(g.ECCUncorrected)}, 0.3)
	}
	if g.RetiredPages > 0 {
		add(Warning{Code: WarnRetiredPages, Value: float64(g.RetiredPages)}, 0.1)
	}

	figs := []struct {
		name  string
		value float64
	}{
		{"fp32_tflops", g.FP32TFLOPS},
		{"bf16_tflops", g.BF16TFLOPS},
		{"fp16_tflops", g.FP16TFLOPS},
		{"mem_gbps", g.MemGBps},
		{"h2d_gbps", g.H2DGBps},
		{"d2h_gbps", g.D2HGBps},
	}
	for _, f := range figs {
		if !(f.value > 0) || math.IsInf(f.value, 0) {
			continue
		}
		fig := Figure{Name: f.name, Value: f.value}
		if ref != nil && !g.MIG {
			fig.Datasheet, fig.Healthy, fig.Derived = ref.expect(f.name)
			if fig.Healthy > 0 {
				fig.Ratio = fig.Value / fig.Healthy
				fig.Low = fig.Ratio < band(f.name)
			}
		}
		c.Figures = append(c.Figures, fig)
	}

	if g.MIG {
		add(Warning{Code: WarnMIG}, 0)
		return c, ws
	}
	if ref == nil {
		add(Warning{Code: WarnUnknownCard}, 0)
		return c, ws
	}

	// One slow_* warning per kind: tensor is the lower of bf16 and fp16.
	slow := map[WarnCode]*Figure{}
	for i := range c.Figures {
		f := &c.Figures[i]
		if !f.Low {
			continue
		}
		code := slowCode(f.Name)
		if prev := slow[code]; prev == nil || f.Ratio < prev.Ratio {
			slow[code] = f
		}
	}
	for _, code := range []WarnCode{WarnSlowTensor, WarnSlowFP32, WarnSlowMemory, WarnSlowCopy} {
		f := slow[code]
		if f == nil {
			continue
		}
		w := Warning{Code: code, Value: f.Value, Expected: f.Healthy}
		switch code {
		case WarnSlowTensor, WarnSlowFP32:
			w.Cause = firstCause(neighbour, WarnNeighbour, powerCap, WarnPowerCap, clocksHeld, WarnClocksHeld)
		case WarnSlowMemory:
			w.Cause = firstCause(neighbour, WarnNeighbour, clocksHeld, WarnClocksHeld)
		case WarnSlowCopy:
			// Copies are the evidence the link's generation needs: a link
			// seen below the card's generation is the cause now, at idle
			// or not.
			genLow := ref.PCIeGen > 0 && g.PCIeGen > 0 && g.PCIeGen < ref.PCIeGen
			w.Cause = firstCause(narrow, WarnPCIeNarrow, oldSlot || genLow, WarnPCIeSlow, neighbour, WarnNeighbour)
		}
		add(w, weight(code)*(1-f.Ratio))
	}
	return c, ws
}

func firstCause(pairs ...any) WarnCode {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i].(bool) {
			return pairs[i+1].(WarnCode)
		}
	}
	return ""
}

func slowCode(name string) WarnCode {
	switch name {
	case "bf16_tflops", "fp16_tflops":
		return WarnSlowTensor
	case "fp32_tflops":
		return WarnSlowFP32
	case "mem_gbps":
		return WarnSlowMemory
	}
	return WarnSlowCopy
}

// weight is how much of what a rental is paid for a slow figure of the
// kind costs: the tensor rate is what a price is divided by.
func weight(c WarnCode) float64 {
	switch c {
	case WarnSlowTensor:
		return 1
	case WarnSlowFP32, WarnSlowMemory:
		return 0.8
	}
	return 0.5
}

func band(name string) float64 {
	switch name {
	case "mem_gbps":
		return MemoryBand
	case "h2d_gbps", "d2h_gbps":
		return CopyBand
	}
	return ComputeBand
}

// TensorTFLOPS is the figure a rental's price is divided by: the sum over
// its GPUs of the better of the bf16 and fp16 tensor figures (a MIG
// slice counts its own). 0 when no GPU's tensor rate was measured.
func TensorTFLOPS(b Bench) float64 {
	var sum float64
	for _, g := range b.GPUs {
		v := max(clean(g.BF16TFLOPS), clean(g.FP16TFLOPS))
		sum += v
	}
	return sum
}

// Weakest returns the position in b.GPUs of the GPU to headline: the one
// with the lowest ratio of any figure to its healthy reference; the
// first GPU when none has a ratio; -1 when there is no GPU.
func Weakest(b Bench) int {
	if len(b.GPUs) == 0 {
		return -1
	}
	a := Assess(b)
	best, bestRatio := 0, math.Inf(1)
	for i, c := range a.GPUs {
		for _, f := range c.Figures {
			if f.Ratio > 0 && f.Ratio < bestRatio {
				best, bestRatio = i, f.Ratio
			}
		}
	}
	return best
}

// clean is v when it is a usable figure, else 0.
func clean(v float64) float64 {
	if v > 0 && !math.IsInf(v, 0) {
		return v
	}
	return 0
}
