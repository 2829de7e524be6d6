package perf

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The bounds at the hub's door. A bench is the agent's claim and a token
// holder can send anything: Bound keeps what is physically possible and
// clips what is shown.
const (
	// MaxGPUs and MaxSkips are the most GPUs and skips a bench keeps
	// (MaxGPUs is wire.MaxGPUs, which this leaf cannot import).
	MaxGPUs  = 16
	MaxSkips = 64
	// MaxNameBytes bounds names, versions, paths and the URL; MaxWhyBytes
	// a skip's reason.
	MaxNameBytes = 128
	MaxWhyBytes  = 256
	maxWhatBytes = 64
)

// Fixed ceilings, well above any card or host there is: a figure above
// its ceiling is not a measurement.
const (
	ceilTensorTFLOPS = 10_000  // bf16/fp16 dense, one GPU (an H200 is 989.5)
	ceilFP32TFLOPS   = 1_000   // one GPU (an RTX 5090 is about 105)
	ceilMemGBps      = 50_000  // one GPU (an H200 is 4,800)
	ceilCopyGBps     = 1_000   // host to device (PCIe 6.0 x16 is about 121; NVLink-C2C 450)
	ceilDiskMBps     = 100_000 // one directory
	ceilDownloadMBps = 100_000 // 800 Gbit/s
	ceilCores        = 4_096
	ceilSeconds      = 86_400 // a bench's wall or GPU time
	ceilPowerW       = 5_000
	ceilClockMHz     = 10_000
	ceilTempC        = 200
	ceilProcs        = 65_536
	ceilPages        = 1 << 20
	ceilMemMiB       = 1 << 22 // 4 TiB on one GPU
	ceilHostMemMiB   = 1 << 30 // 1 PiB
	ceilPCIeGen      = 8
	ceilPCIeWidth    = 32
	ceilIndex        = 1_023
	// floorFigure is the least a throughput or a core count can be and
	// still be a measurement (0.01 TFLOPS, GB/s, MB/s or cores): a tiny
	// positive figure is never a card's or a host's, and a price divided
	// by it (a tensor-TFLOP-hour at 5e-324 TFLOPS) would be hundreds of
	// digits long on every card and table that shows it.
	floorFigure = 0.01
	// modelSlack is how far above its own datasheet a figure of a known
	// card may be (boost clocks above the rated one): beyond it the figure
	// is not that card's.
	modelSlack = 1.25
)

// Bound returns b as the hub may keep it, and the JSON paths of what it
// changed ("gpus[0].bf16_tflops", "gpus", "skipped[3].why"...): NaN,
// infinite and negative figures become 0; a figure above its physical
// ceiling, or above 1.25 times the datasheet of the card it claims to be,
// becomes 0; a throughput (TFLOPS, GB/s, MB/s) or a core count above 0
// but below 0.01 becomes 0; strings are made valid UTF-8 without control characters and
// clipped (names to MaxNameBytes, a skip's reason to MaxWhyBytes); GPUs
// past MaxGPUs and skips past MaxSkips are dropped; an unknown Source
// becomes "". Timestamps are kept as given (the hub stamps its own).
// Bound is deterministic, never panics, and does not modify b's slices.
func Bound(b Bench) (Bench, []string) {
	var changed []string
	note := func(format string, args ...any) { changed = append(changed, fmt.Sprintf(format, args...)) }
	num := func(path string, v *float64, ceil float64) {
		switch {
		case math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0 || *v > ceil:
			*v = 0
			note("%s", path)
		}
	}
	// rate is num for a throughput or a core count, which is also 0 (not
	// measured) below floorFigure.
	rate := func(path string, v *float64, ceil float64) {
		if *v > 0 && *v < floorFigure {
			*v = 0
			note("%s", path)
			return
		}
		num(path, v, ceil)
	}
	str := func(path string, s *string, limit int) {
		if c := clipText(*s, limit); c != *s {
			*s = c
			note("%s", path)
		}
	}

	num("wall_s", &b.WallSeconds, ceilSeconds)
	num("gpu_s", &b.GPUSeconds, ceilSeconds*MaxGPUs)
	switch b.Source {
	case "", "cuda", "simulate", "none":
	default:
		b.Source = ""
		note("source")
	}
	str("driver_version", &b.DriverVersion, MaxNameBytes)
	str("cuda_driver_version", &b.CUDADriver, MaxNameBytes)

	gpus := b.GPUs
	if len(gpus) > MaxGPUs {
		gpus = gpus[:MaxGPUs]
		note("gpus")
	}
	b.GPUs = nil
	if gpus != nil {
		b.GPUs = make([]GPU, len(gpus))
		copy(b.GPUs, gpus)
	}
	for i := range b.GPUs {
		boundGPU(&b.GPUs[i], i, note, num, rate, str)
	}

	h := &b.Host
	rate("host.cpu_cores", &h.CPUCores, ceilCores)
	str("host.cpu_model", &h.CPUModel, MaxNameBytes)
	if h.MemoryMiB > ceilHostMemMiB {
		h.MemoryMiB = 0
		note("host.memory_mib")
	}
	str("host.disk_path", &h.DiskPath, MaxNameBytes)
	rate("host.disk_write_mbps", &h.DiskWriteMBps, ceilDiskMBps)
	rate("host.disk_read_mbps", &h.DiskReadMBps, ceilDiskMBps)
	str("host.download_url", &h.DownloadURL, MaxNameBytes)
	rate("host.download_mbps", &h.DownloadMBps, ceilDownloadMBps)

	skips := b.Skipped
	if len(skips) > MaxSkips {
		skips = skips[:MaxSkips]
		note("skipped")
	}
	b.Skipped = nil
	if skips != nil {
		b.Skipped = make([]Skip, len(skips))
		copy(b.Skipped, skips)
	}
	for i := range b.Skipped {
		s := &b.Skipped[i]
		str(fmt.Sprintf("skipped[%d].what", i), &s.What, maxWhatBytes)
		str(fmt.Sprintf("skipped[%d].why", i), &s.Why, MaxWhyBytes)
		if s.GPU < -1 || s.GPU > ceilIndex {
			s.GPU = -1
			note("skipped[%d].gpu", i)
		}
	}

	if b.Torch != nil {
		t := *b.Torch
		str("torch.version", &t.Version, MaxNameBytes)
		rate("torch.bf16_tflops", &t.BF16TFLOPS, ceilTensorTFLOPS)
		b.Torch = &t
	}
	return b, changed
}

func boundGPU(g *GPU, i int, note func(string, ...any), num, rate func(string, *float64, float64), str func(string, *string, int)) {
	p := func(field string) string { return fmt.Sprintf("gpus[%d].%s", i, field) }
	if g.Index < 0 || g.Index > ceilIndex {
		g.Index = i
		note("%s", p("index"))
	}
	str(p("name"), &g.Name, MaxNameBytes)
	str(p("model"), &g.Model, MaxNameBytes)
	str(p("uuid"), &g.UUID, MaxNameBytes)
	str(p("compute_capability"), &g.ComputeCap, 16)

	// A card the table knows may not claim more than its datasheet allows
	// (a MIG slice is a part of one: the same ceiling holds).
	ceil := func(fixed, datasheet float64) float64 {
		if datasheet > 0 {
			return min(fixed, datasheet*modelSlack)
		}
		return fixed
	}
	var ref Reference
	if r, ok := lookupGPU(*g); ok {
		ref = r
	}
	tensorDS := max(ref.BF16TFLOPS, ref.FP16TFLOPS)
	rate(p("fp32_tflops"), &g.FP32TFLOPS, ceil(ceilFP32TFLOPS, ref.FP32TFLOPS))
	rate(p("bf16_tflops"), &g.BF16TFLOPS, ceil(ceilTensorTFLOPS, tensorDS))
	rate(p("fp16_tflops"), &g.FP16TFLOPS, ceil(ceilTensorTFLOPS, tensorDS))
	rate(p("mem_gbps"), &g.MemGBps, ceil(ceilMemGBps, ref.MemGBps))
	link := pcieGBps(ref.PCIeGen, ref.PCIeWidth)
	rate(p("h2d_gbps"), &g.H2DGBps, ceil(ceilCopyGBps, link))
	rate(p("d2h_gbps"), &g.D2HGBps, ceil(ceilCopyGBps, link))

	if g.MemoryTotalMiB > ceilMemMiB {
		g.MemoryTotalMiB = 0
		note("%s", p("memory_total_mib"))
	}
	if g.MemoryUsedMiB > ceilMemMiB || (g.MemoryTotalMiB > 0 && g.MemoryUsedMiB > g.MemoryTotalMiB) {
		g.MemoryUsedMiB = 0
		note("%s", p("memory_used_mib"))
	}
	num(p("util_percent"), &g.UtilPercent, 100)
	intIn(p("other_processes"), &g.OtherProcs, ceilProcs, note)
	intIn(p("pcie_gen"), &g.PCIeGen, ceilPCIeGen, note)
	intIn(p("pcie_gen_max"), &g.PCIeGenMax, ceilPCIeGen, note)
	intIn(p("pcie_width"), &g.PCIeWidth, ceilPCIeWidth, note)
	intIn(p("pcie_width_max"), &g.PCIeWidthMax, ceilPCIeWidth, note)
	num(p("power_limit_w"), &g.PowerLimitW, ceilPowerW)
	num(p("power_default_w"), &g.PowerDefaultW, ceilPowerW)
	intIn(p("sm_clock_max_mhz"), &g.SMClockMaxMHz, ceilClockMHz, note)
	intIn(p("sm_clock_bench_mhz"), &g.SMClockBenchMHz, ceilClockMHz, note)
	if g.ECCUncorrected > math.MaxUint32 {
		g.ECCUncorrected = math.MaxUint32
		note("%s", p("ecc_uncorrected"))
	}
	intIn(p("retired_pages"), &g.RetiredPages, ceilPages, note)
	intIn(p("temperature_c"), &g.TemperatureC, ceilTempC, note)
	if g.ECC != nil {
		e := *g.ECC // not shared with the caller's bench
		g.ECC = &e
	}
}

func intIn(path string, v *int, ceil int, note func(string, ...any)) {
	if *v < 0 || *v > ceil {
		*v = 0
		note("%s", path)
	}
}

// clipText makes s valid UTF-8, drops control and format characters
// (newlines, bidirectional overrides) and clips it to at most limit bytes
// on a rune boundary.
func clipText(s string, limit int) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			clean = false
			break
		}
	}
	if clean && len(s) <= limit {
		return s
	}
	var sb strings.Builder
	for _, r := range strings.ToValidUTF8(s, "") {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			continue
		}
		if sb.Len()+utf8.RuneLen(r) > limit {
			break
		}
		sb.WriteRune(r)
	}
	return sb.String()
}
