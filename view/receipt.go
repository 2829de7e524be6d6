package view

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/perf"
)

// The receipt in the chat: the card a rental's first bench brings, its
// follow-up when the rental starts working, and /receipt. The sums are
// ledger.BuildReceipt's; the words are here, from perf's codes and
// numbers (never perf's English, which is the agent's CLI's).

// ReceiptReleaseButton is the receipt card's release button: "Release
// now (¥0.03 so far)".
func ReceiptReleaseButton(lang string, soFar ledger.Money) string {
	return receiptTexts.Text(lang, "rc_btn_release", soFar.Format())
}

// ReceiptKept is the line a receipt card gains when the user keeps the
// rental.
func ReceiptKept(lang string) string { return rt(lang, "rc_kept") }

// ReceiptCard is the card of a rental's first bench, naming the rental
// name: the warnings first (most costly first, with the evidence and the
// money at stake), then one line of figures and the price per
// tensor-TFLOP-hour, then what could not be measured and why. rc must
// have a Bench.
func ReceiptCard(lang string, rc ledger.Receipt, name string) string {
	lang = chat.NormLang(lang)
	var lines []string
	cut := 0
	for i, w := range rc.Warnings {
		if i == cardWarnings {
			cut += len(rc.Warnings) - i
			break
		}
		lines = append(lines, "⚠ "+warningText(lang, rc, w))
	}
	lines = append(lines, headline(lang, rc, name)+priceLine(lang, rc))
	lines = append(lines, rt(lang, "rc_claim"))
	s, n := skippedText(lang, rc, cardSkips)
	if s != "" {
		lines = append(lines, s)
	}
	if cut += n; cut > 0 {
		lines = append(lines, rt(lang, "rc_more", strconv.Itoa(cut), name))
	}
	return strings.Join(lines, "\n")
}

// What a card shows at most of the warnings, and of the figures not
// measured or not believed: a bench may carry 16 GPUs and 64 skips (a
// forged one too), and a card must stay one short message; /receipt has
// them all.
const (
	cardWarnings = 3
	cardSkips    = 4
)

// ReceiptFollowUp is the line sent when a rental with a receipt card first
// works: "box1 started working at 14:31: ¥4.10 before training started
// (31m)".
func ReceiptFollowUp(lang string, name string, tax ledger.SetupTax, loc *time.Location) string {
	at := tax.To.In(loc).Format("15:04")
	d := chat.FormatDuration(tax.Duration().Truncate(time.Minute), lang)
	if !tax.Priced {
		return rt(lang, "rc_started_unpriced", name, at, d)
	}
	return rt(lang, "rc_started", name, at, tax.Money.Format(), d)
}

// NoReceipt says why a rental has no receipt and how to get one.
type NoReceipt int

// Why a rental has no receipt.
const (
	NoReceiptYet      NoReceipt = iota // an agent reports, no bench came (older agent, --no-bench, GPU busy)
	NoReceiptOff                       // the user turned benches off
	NoReceiptNoAgent                   // no agent reports for the rental
	NoReceiptReleased                  // released without one
)

// ReceiptsOffText is /receipt's answer where the store keeps no benches.
func ReceiptsOffText(lang string) string { return rt(lang, "rcp_off") }

// NoReceiptText is /receipt's answer for a rental without a bench.
func NoReceiptText(lang, name string, why NoReceipt) string {
	switch why {
	case NoReceiptOff:
		return rt(lang, "rcp_no_bench_off", name)
	case NoReceiptNoAgent:
		return rt(lang, "rcp_no_bench_agent", name)
	case NoReceiptReleased:
		return rt(lang, "rcp_no_bench_released", name)
	}
	return rt(lang, "rcp_no_bench_yet", name)
}

// ReceiptText is /receipt NAME: every figure with its reference and
// ratio, the GPUs' facts, the host, the warnings, what was not measured
// and why, the price per unit, the money so far, the setup tax and the
// jobs, in the user's zone. rc must have a Bench.
func ReceiptText(lang string, rc ledger.Receipt, name string, loc *time.Location, now time.Time) string {
	lang = chat.NormLang(lang)
	b := rc.Bench.Bench
	var lines []string
	lines = append(lines, rt(lang, "rcp_head", name, gpuHead(rc), PlatformName(lang, rc.Rental.Platform)))
	src := b.Source
	if b.DriverVersion != "" {
		src += ", " + rt(lang, "rcp_driver", b.DriverVersion)
	}
	lines = append(lines, rt(lang, "rcp_measured", FormatTime(rc.Bench.At, loc, now, lang), sig3(b.WallSeconds), sig3(b.GPUSeconds), src))
	for _, w := range rc.Warnings {
		lines = append(lines, "⚠ "+warningText(lang, rc, w))
	}
	raw := gpusByIndex(b)
	for _, g := range rc.Assessment.GPUs {
		name := g.Model
		if bg, ok := raw[g.Index]; ok && bg.Name != "" && bg.Name != g.Model {
			name += " (" + bg.Name + ")"
		}
		lines = append(lines, "", rt(lang, "rcp_gpu", strconv.Itoa(g.Index), name))
		for _, f := range g.Figures {
			if f.Value <= 0 {
				continue
			}
			line := "   " + rt(lang, "rcp_fig", chat.RawHTML(figureLabel(lang, f.Name)), figureValue(f.Name, f.Value))
			if f.Healthy > 0 {
				line += rt(lang, "rcp_healthy", figureValue(f.Name, f.Healthy))
			}
			if f.Datasheet > 0 {
				line += rt(lang, "rcp_datasheet", figureValue(f.Name, f.Datasheet))
			}
			if f.Ratio > 0 {
				line += rt(lang, "rcp_ratio", pct(f.Ratio))
			}
			if f.Low {
				line += rt(lang, "rcp_low")
			}
			lines = append(lines, line)
		}
		if bg, ok := raw[g.Index]; ok {
			if facts := gpuFacts(lang, bg); facts != "" {
				lines = append(lines, "   "+facts)
			}
		}
	}
	if h := hostText(lang, b.Host, true); h != "" {
		lines = append(lines, "", rt(lang, "rcp_host", chat.RawHTML(h)))
	}
	if t := b.Torch; t != nil && t.BF16TFLOPS > 0 {
		lines = append(lines, rt(lang, "rcp_torch", t.Version, sig3(t.BF16TFLOPS)))
	}
	if s, _ := skippedText(lang, rc, 0); s != "" {
		lines = append(lines, s)
	}
	lines = append(lines, rt(lang, "rc_claim"), "")
	hourly, priced := rc.HourlyMoney()
	switch {
	case !priced:
		lines = append(lines, rt(lang, "rcp_unpriced", rc.Rental.Name))
	case rc.PerTFLOPHour != nil:
		lines = append(lines, rt(lang, "rcp_price", hourly.Format(), PerUnitText(rc.PerTFLOPHour, rc.Rental.Currency)))
	default:
		lines = append(lines, rt(lang, "rcp_price_no", hourly.Format()))
	}
	lines = append(lines, rt(lang, "rcp_so_far", moneyOr(lang, rc.Priced, rc.SoFar)))
	if t := rc.SetupTax; t != nil {
		lines = append(lines, rt(lang, "rcp_setup", spanMoney(lang, t.Priced, t.Partial, t.Money),
			chat.FormatDuration(t.Duration().Truncate(time.Minute), lang),
			FormatTime(t.From, loc, now, lang), t.To.In(loc).Format("15:04")))
	} else {
		lines = append(lines, rt(lang, "rcp_setup_no"))
	}
	if len(rc.Jobs) > 0 {
		lines = append(lines, "", rt(lang, "rcp_jobs"))
		for _, j := range rc.Jobs {
			label := j.Run.Label
			if label == "" {
				label = receiptTexts.Text(lang, "rcp_nolabel")
			}
			how := rt(lang, "rcp_job_chat")
			if j.Run.Source == ledger.JobFromAgent {
				how = rt(lang, "rcp_job_exit", strconv.Itoa(j.Run.ExitCode))
			}
			lines = append(lines, "   "+rt(lang, "rcp_job", label, FormatTime(j.Run.StartedAt, loc, now, lang),
				chat.FormatDuration(j.Run.Duration().Truncate(time.Second), lang)+" · "+spanMoney(lang, j.Priced, j.Partial, j.Cost), chat.RawHTML(how)))
		}
	}
	return strings.Join(lines, "\n")
}

func moneyOr(lang string, priced bool, m ledger.Money) string {
	if !priced {
		return receiptTexts.Text(lang, "rcp_unpriced_money")
	}
	return m.Format()
}

// spanMoney is a span's cost (a setup tax, a job): UNPRICED without a
// compute price, and said to be partial when storage or traffic in it
// has none, as /job says it.
func spanMoney(lang string, priced, partial bool, m ledger.Money) string {
	if priced && partial {
		return rt(lang, "rcp_money_partial", m.Format())
	}
	return moneyOr(lang, priced, m)
}

// gpuHead is "RTX 4090" or "8× H200".
func gpuHead(rc ledger.Receipt) string {
	if rc.GPUCount > 1 {
		return fmt.Sprintf("%d× %s", rc.GPUCount, rc.GPU)
	}
	return rc.GPU
}

func gpusByIndex(b perf.Bench) map[int]perf.GPU {
	m := make(map[int]perf.GPU, len(b.GPUs))
	for _, g := range b.GPUs {
		if _, ok := m[g.Index]; !ok {
			m[g.Index] = g
		}
	}
	return m
}

// tensorOf is a GPU's tensor figure: the better of bf16 and fp16.
func tensorOf(g perf.GPU) float64 { return max(g.BF16TFLOPS, g.FP16TFLOPS) }

// headlineGPU is the GPU the card's line speaks of: the one with the
// lowest tensor figure (a rental is as good as its weakest card), else
// the first.
func headlineGPU(b perf.Bench) (perf.GPU, bool) {
	if len(b.GPUs) == 0 {
		return perf.GPU{}, false
	}
	best := b.GPUs[0]
	for _, g := range b.GPUs[1:] {
		if t := tensorOf(g); t > 0 && (tensorOf(best) <= 0 || t < tensorOf(best)) {
			best = g
		}
	}
	return best, true
}

// figureOf returns GPU index's figure name from the assessment.
func figureOf(a perf.Assessment, index int, name string) (perf.Figure, bool) {
	for _, g := range a.GPUs {
		if g.Index != index {
			continue
		}
		for _, f := range g.Figures {
			if f.Name == name {
				return f, true
			}
		}
	}
	return perf.Figure{}, false
}

// modelOf is the model the assessment gives GPU index, or its bench name.
func modelOf(a perf.Assessment, g perf.GPU) string {
	for _, c := range a.GPUs {
		if c.Index == g.Index && c.Model != "" {
			return c.Model
		}
	}
	if g.Model != "" {
		return g.Model
	}
	return g.Name
}

// headline is the card's line of figures.
func headline(lang string, rc ledger.Receipt, name string) string {
	b := rc.Bench.Bench
	platform := PlatformName(lang, rc.Rental.Platform)
	g, ok := headlineGPU(b)
	if !ok {
		line := rt(lang, "rc_head_none", gpuHead(rc), platform, name)
		if h := hostText(lang, b.Host, false); h != "" {
			line += " " + h
		}
		return line
	}
	var parts []string
	if t := tensorOf(g); t > 0 {
		fname := "bf16_tflops"
		if g.FP16TFLOPS > g.BF16TFLOPS {
			fname = "fp16_tflops"
		}
		p := rt(lang, "rc_tensor", sig3(t))
		if f, ok := figureOf(rc.Assessment, g.Index, fname); ok && f.Ratio > 0 {
			p += rt(lang, "rc_of_healthy", pct(f.Ratio), modelOf(rc.Assessment, g))
		}
		if rc.GPUCount > 1 {
			p += " ×" + strconv.Itoa(rc.GPUCount)
		}
		parts = append(parts, p)
	} else if g.FP32TFLOPS > 0 {
		parts = append(parts, rt(lang, "rc_fp32", sig3(g.FP32TFLOPS)))
	}
	if g.MemGBps > 0 {
		parts = append(parts, rt(lang, "rc_memory", MemBandwidth(g.MemGBps)))
	}
	if p := pcieText(lang, g); p != "" {
		parts = append(parts, p)
	}
	if g.PowerLimitW > 0 {
		if g.PowerDefaultW > 0 {
			parts = append(parts, rt(lang, "rc_power", sig3(g.PowerLimitW), sig3(g.PowerDefaultW)))
		} else {
			parts = append(parts, rt(lang, "rc_power_one", sig3(g.PowerLimitW)))
		}
	}
	if h := hostText(lang, b.Host, false); h != "" {
		parts = append(parts, h)
	}
	return rt(lang, "rc_head", gpuHead(rc), platform, name, chat.RawHTML(strings.Join(parts, rt(lang, "rc_sep"))))
}

// priceLine is " · ¥1.88/h → ¥0.0124 per tensor-TFLOP-hour", or the
// hourly price alone without a tensor figure, or "" unpriced.
func priceLine(lang string, rc ledger.Receipt) string {
	hourly, ok := rc.HourlyMoney()
	if !ok {
		return ""
	}
	if rc.PerTFLOPHour == nil {
		return rt(lang, "rc_price_only", hourly.Format())
	}
	return rt(lang, "rc_price", hourly.Format(), PerUnitText(rc.PerTFLOPHour, rc.Rental.Currency))
}

// pcieText is "PCIe 4.0 x16 24 GB/s", or with what the link could do when
// it runs below it: "PCIe 3.0 x8 (of 4.0 x16) 6.1 GB/s".
func pcieText(lang string, g perf.GPU) string {
	if g.PCIeGen <= 0 && g.PCIeWidth <= 0 && g.H2DGBps <= 0 {
		return ""
	}
	link := PCIeLink(g.PCIeGen, g.PCIeWidth)
	full := PCIeLink(max(g.PCIeGenMax, g.PCIeGen), max(g.PCIeWidthMax, g.PCIeWidth))
	if g.H2DGBps > 0 {
		bw := sig3(g.H2DGBps) + " GB/s"
		if link == "" {
			link = bw
		} else {
			link += " " + bw
		}
	}
	if full != "" && (g.PCIeGenMax > g.PCIeGen && g.PCIeGen > 0 || g.PCIeWidthMax > g.PCIeWidth && g.PCIeWidth > 0) {
		return rt(lang, "rc_pcie_of", link, full)
	}
	return rt(lang, "rc_pcie", link)
}

// PCIeLink is a link as "4.0 x16": generation N is "N.0"; "" unknown.
func PCIeLink(gen, width int) string {
	var parts []string
	if gen > 0 {
		parts = append(parts, strconv.Itoa(gen)+".0")
	}
	if width > 0 {
		parts = append(parts, "x"+strconv.Itoa(width))
	}
	return strings.Join(parts, " ")
}

// hostText is the host's figures: "disk 1.8 GB/s, 16 cores" (the disk's
// slower direction), or with full, write and read apart and the
// download.
func hostText(lang string, h perf.Host, full bool) string {
	var parts []string
	w, r := h.DiskWriteMBps, h.DiskReadMBps
	switch {
	case full && w > 0 && r > 0:
		parts = append(parts, rt(lang, "rcp_disk_rw", DiskSpeed(w), DiskSpeed(r)))
	case w > 0 && r > 0:
		parts = append(parts, rt(lang, "rc_disk", DiskSpeed(min(w, r))))
	case w > 0 || r > 0:
		parts = append(parts, rt(lang, "rc_disk", DiskSpeed(max(w, r))))
	}
	if h.CPUCores > 0 {
		parts = append(parts, rt(lang, "rc_cores", sig3(h.CPUCores)))
	}
	if full && h.DownloadMBps > 0 {
		parts = append(parts, rt(lang, "rc_download", DiskSpeed(h.DownloadMBps)))
	}
	return strings.Join(parts, rt(lang, "rc_sep"))
}

// gpuFacts is a GPU's facts for /receipt: link, power, clock, ECC.
func gpuFacts(lang string, g perf.GPU) string {
	var parts []string
	if p := pcieText(lang, g); p != "" {
		parts = append(parts, p)
	}
	if g.PowerLimitW > 0 {
		if g.PowerDefaultW > 0 {
			parts = append(parts, rt(lang, "rc_power", sig3(g.PowerLimitW), sig3(g.PowerDefaultW)))
		} else {
			parts = append(parts, rt(lang, "rc_power_one", sig3(g.PowerLimitW)))
		}
	}
	if g.SMClockMaxMHz > 0 {
		parts = append(parts, rt(lang, "rcp_clock", strconv.Itoa(g.SMClockMaxMHz)))
	}
	if g.ECC != nil {
		if *g.ECC {
			parts = append(parts, rt(lang, "rcp_ecc_on"))
		} else {
			parts = append(parts, rt(lang, "rcp_ecc_off"))
		}
	}
	return strings.Join(parts, rt(lang, "rc_sep"))
}

// skippedText lists what the bench could not measure, and why, and the
// figures the hub did not believe; "" when there are none.
//
// With limit above 0 it shows at most limit of each list, and returns how
// many it left out.
func skippedText(lang string, rc ledger.Receipt, limit int) (string, int) {
	var lines []string
	var parts []string
	cut := 0
	for i, s := range rc.Bench.Bench.Skipped {
		if limit > 0 && i == limit {
			cut += len(rc.Bench.Bench.Skipped) - i
			break
		}
		what := figureLabel(lang, s.What)
		if s.GPU >= 0 && len(rc.Bench.Bench.GPUs) > 1 {
			what = "GPU " + strconv.Itoa(s.GPU) + " " + what
		}
		parts = append(parts, rt(lang, "rc_skip_one", chat.RawHTML(what), s.Why))
	}
	if len(parts) > 0 {
		lines = append(lines, rt(lang, "rc_skipped", chat.RawHTML(strings.Join(parts, "; "))))
	}
	if len(rc.Bench.Bounded) > 0 {
		// The hub keeps the first names and one "…+N" for the rest: N
		// figures more, not one.
		bounded, more := rc.Bench.Bounded, 0
		if last := bounded[len(bounded)-1]; strings.HasPrefix(last, "…+") {
			if n, err := strconv.Atoi(strings.TrimPrefix(last, "…+")); err == nil && n > 0 {
				bounded, more = bounded[:len(bounded)-1], n
			}
		}
		var names []string
		for i, n := range bounded {
			if limit > 0 && i == 2*limit {
				cut += len(bounded) - i
				break
			}
			names = append(names, boundedLabel(lang, n, len(rc.Bench.Bench.GPUs) > 1))
		}
		switch {
		case more > 0 && len(names) < len(bounded):
			cut += more
		case more > 0:
			names = append(names, "…+"+strconv.Itoa(more))
		}
		if len(names) > 0 {
			lines = append(lines, rt(lang, "rc_bounded", chat.RawHTML(strings.Join(names, ", "))))
		}
	}
	return strings.Join(lines, "\n"), cut
}

// boundedLabel words a path perf.Bound names ("gpus[1].bf16_tflops",
// "host.disk_write_mbps", "wall_s"): the figure's word, with its GPU
// when the bench has several.
func boundedLabel(lang, path string, gpus bool) string {
	if rest, ok := strings.CutPrefix(path, "host."); ok {
		return figureLabel(lang, rest)
	}
	if rest, ok := strings.CutPrefix(path, "gpus["); ok {
		if i := strings.Index(rest, "]."); i > 0 {
			w := figureLabel(lang, rest[i+2:])
			if gpus {
				w = "GPU " + chat.Escape(rest[:i]) + " " + w
			}
			return w
		}
	}
	return figureLabel(lang, path)
}

// figureNames are the words for the bench's JSON names.
var figureNames = map[string][2]string{
	"bf16_tflops":     {"tensor bf16", "张量 bf16"},
	"fp16_tflops":     {"tensor fp16", "张量 fp16"},
	"fp32_tflops":     {"FP32", "FP32"},
	"mem_gbps":        {"memory", "显存带宽"},
	"h2d_gbps":        {"host→device", "主机→显卡"},
	"d2h_gbps":        {"device→host", "显卡→主机"},
	"disk_write_mbps": {"disk write", "磁盘写"},
	"disk_read_mbps":  {"disk read", "磁盘读"},
	"download_mbps":   {"download", "下载"},
	"cpu_cores":       {"CPU cores", "CPU 核数"},
	"gpu":             {"GPU", "GPU"},
	"host":            {"host", "主机"},
	"torch":           {"PyTorch", "PyTorch"},
}

// figureLabel is a figure's name in lang (HTML), or the JSON name itself
// escaped when it has no word.
func figureLabel(lang, name string) string {
	if w, ok := figureNames[name]; ok {
		if lang == chat.LangZH {
			return chat.Escape(w[1])
		}
		return chat.Escape(w[0])
	}
	return chat.Escape(name)
}

// figureValue is a figure with its unit: TFLOPS, GB/s or TB/s, MB/s.
func figureValue(name string, v float64) string {
	switch {
	case strings.HasSuffix(name, "_tflops"):
		return sig3(v) + " TFLOPS"
	case name == "mem_gbps":
		return MemBandwidth(v)
	case strings.HasSuffix(name, "_gbps"):
		return sig3(v) + " GB/s"
	case strings.HasSuffix(name, "_mbps"):
		return DiskSpeed(v)
	}
	return sig3(v)
}

// warningText words one warning with its evidence, its likely cause and
// the money at stake.
func warningText(lang string, rc ledger.Receipt, w ledger.ReceiptWarning) string {
	s := ""
	if w.GPU >= 0 && len(rc.Bench.Bench.GPUs) > 1 {
		s = rt(lang, "rw_gpu", strconv.Itoa(w.GPU))
	}
	s += warningFact(lang, rc, w.Warning, w.Model)
	if w.Because != nil {
		s += rt(lang, "rw_because", chat.RawHTML(warningFact(lang, rc, *w.Because, w.Model)))
	}
	if w.HasWaste() && w.Waste.Minor > 0 && w.Expected > 0 {
		s += rt(lang, "rw_waste", w.Share.Format(), pct(w.Value/w.Expected), modelName(lang, w.Model), w.Waste.Format())
	}
	return s
}

func modelName(lang, m string) string {
	if m == "" {
		return rt(lang, "rw_card")
	}
	return m
}

// warningFact is one warning's fact and evidence, without the money.
func warningFact(lang string, rc ledger.Receipt, w perf.Warning, model string) string {
	ratio := ""
	if w.Expected > 0 {
		ratio = pct(w.Value / w.Expected)
	}
	switch string(w.Code) {
	case "slow_tensor":
		return rt(lang, "rw_slow_tensor", sig3(w.Value), ratio, modelName(lang, model), sig3(w.Expected))
	case "slow_fp32":
		return rt(lang, "rw_slow_fp32", sig3(w.Value), ratio, modelName(lang, model), sig3(w.Expected))
	case "slow_memory":
		return rt(lang, "rw_slow_memory", MemBandwidth(w.Value), ratio, modelName(lang, model), MemBandwidth(w.Expected))
	case "slow_copy":
		return rt(lang, "rw_slow_copy", sig3(w.Value)+" GB/s", ratio, sig3(w.Expected)+" GB/s")
	case "power_cap":
		return rt(lang, "rw_power_cap", sig3(w.Value), sig3(w.Expected))
	case "pcie_narrow":
		return rt(lang, "rw_pcie_narrow", sig3(w.Value), sig3(w.Expected))
	case "pcie_slow":
		return rt(lang, "rw_pcie_slow", sig3(w.Value), sig3(w.Expected))
	case "clocks_held":
		if w.Value > 0 && w.Expected > 0 {
			return rt(lang, "rw_clocks_held", sig3(w.Value), sig3(w.Expected))
		}
		return rt(lang, "rw_clocks_held_only")
	case "neighbour":
		return neighbourText(lang, rc, w.GPU)
	case "ecc_errors":
		return rt(lang, "rw_ecc_errors", sig3(w.Value))
	case "retired_pages":
		return rt(lang, "rw_retired_pages", sig3(w.Value))
	case "mig":
		return rt(lang, "rw_mig")
	case "unknown_card":
		return rt(lang, "rw_unknown_card")
	}
	return rt(lang, "rw_other", string(w.Code), sig3(w.Value), sig3(w.Expected))
}

// neighbourText is the evidence of someone else on GPU index: the
// processes, memory and load the bench found there before it ran.
func neighbourText(lang string, rc ledger.Receipt, index int) string {
	g, ok := gpusByIndex(rc.Bench.Bench)[index]
	if !ok {
		return rt(lang, "rw_neighbour_bare")
	}
	var parts []string
	if g.OtherProcs > 0 {
		parts = append(parts, rt(lang, "rw_nb_procs", strconv.Itoa(g.OtherProcs)))
	}
	if g.MemoryUsedMiB > 0 {
		parts = append(parts, rt(lang, "rw_nb_mem", strconv.FormatUint(g.MemoryUsedMiB, 10)))
	}
	if g.UtilPercent > 0 {
		parts = append(parts, rt(lang, "rw_nb_util", sig3(g.UtilPercent)))
	}
	if len(parts) == 0 {
		return rt(lang, "rw_neighbour_bare")
	}
	return rt(lang, "rw_neighbour", chat.RawHTML(strings.Join(parts, rt(lang, "rc_sep"))))
}

// pct is a ratio as a whole percentage: 0.924 → "92".
func pct(r float64) string {
	if !finite(r) {
		return "?"
	}
	return strconv.FormatFloat(math.Round(r*100), 'f', 0, 64)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// sig3 shows a measured figure with three significant figures, without
// trailing zeros: 152.4 → "152", 63.94 → "63.9", 1979 → "1980", 24 → "24".
func sig3(f float64) string {
	if !finite(f) {
		return "?"
	}
	if f == 0 {
		return "0"
	}
	e := int(math.Floor(math.Log10(math.Abs(f))))
	digits := 2 - e
	if digits <= 0 {
		p := math.Pow(10, float64(-digits))
		return strconv.FormatFloat(math.Round(f/p)*p, 'f', 0, 64)
	}
	s := strconv.FormatFloat(f, 'f', digits, 64)
	// Rounding may carry into a new digit (99.96 → "100.0"): trim anyway.
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// FormatTFLOPS is a throughput with three significant figures: "152
// TFLOPS".
func FormatTFLOPS(f float64) string { return sig3(f) + " TFLOPS" }

// MemBandwidth is a device memory bandwidth in GB/s (1e9), shown in TB/s
// from 500 GB/s up ("0.95 TB/s", "4.3 TB/s"), else in GB/s ("288 GB/s").
func MemBandwidth(gbps float64) string {
	if gbps >= 500 {
		return sig3(gbps/1000) + " TB/s"
	}
	return sig3(gbps) + " GB/s"
}

// DiskSpeed is a speed in MB/s (1e6), shown in GB/s from 1000 MB/s up
// ("1.8 GB/s"), else in MB/s ("350 MB/s").
func DiskSpeed(mbps float64) string {
	if mbps >= 1000 {
		return sig3(mbps/1000) + " GB/s"
	}
	return sig3(mbps) + " MB/s"
}

// PerUnitText is an exact price per unit shown with three significant
// figures and at least the currency's minor digits: ¥0.012368… →
// "¥0.0124", $2.1234 → "$2.12", ¥152.345 → "¥152.35". Rounded half away
// from zero, for display only.
func PerUnitText(x *big.Rat, c ledger.Currency) string {
	if x == nil {
		return ""
	}
	neg := x.Sign() < 0
	a := new(big.Rat).Abs(x)
	digits := c.MinorDigits()
	if a.Sign() > 0 {
		// The number of decimals that leaves three significant figures:
		// 2 − floor(log10(a)).
		e := 0
		t := new(big.Rat).Set(a)
		ten := big.NewRat(10, 1)
		for t.Cmp(ten) >= 0 {
			t.Quo(t, ten)
			e++
		}
		one := big.NewRat(1, 1)
		for t.Cmp(one) < 0 {
			t.Mul(t, ten)
			e--
		}
		digits = max(digits, 2-e)
	}
	s := ratDecimal(a, digits)
	if neg && strings.Trim(s, "0.") != "" {
		s = "-" + s
	}
	sym := c.Symbol()
	if strings.HasPrefix(s, "-") {
		return "-" + sym + s[1:]
	}
	return sym + s
}

// ratDecimal shows a ≥ 0 with digits decimals, rounded half away from zero.
func ratDecimal(a *big.Rat, digits int) string {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil)
	n := new(big.Int).Mul(a.Num(), scale)
	q, r := new(big.Int).QuoRem(n, a.Denom(), new(big.Int))
	if r.Mul(r, big.NewInt(2)).Cmp(a.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	s := q.String()
	if digits == 0 {
		return s
	}
	if len(s) <= digits {
		s = strings.Repeat("0", digits-len(s)+1) + s
	}
	return s[:len(s)-digits] + "." + s[len(s)-digits:]
}
