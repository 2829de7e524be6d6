package dashboard

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/perf"
	"github.com/gpuledger/gpuledger/view"
)

// BenchReader is what the receipt and the compare table read besides the
// book: the benches, job runs and first work the hub stored
// (ledger.BenchStore's reads; ledger/sqlite's DB implements it). Every
// call names the signed-in user, and the store returns that user's rows
// only.
type BenchReader interface {
	Benches(ctx context.Context, userID, rentalID int64) ([]ledger.BenchRecord, error)
	UserBenches(ctx context.Context, userID int64) ([]ledger.BenchRecord, error)
	JobRuns(ctx context.Context, userID int64, label string) ([]ledger.JobRun, error)
	FirstWorks(ctx context.Context, userID int64) (map[int64]time.Time, error)
}

// Receipt is a rental's receipt on its page: what its agent's first
// bench measured, each figure against the reference for the card, the
// warnings, and what a unit of work costs at the rental's price. Every
// figure is the agent's claim (Claim says so to the user): the hub
// bounded it at its door and nothing that moves money reads it.
type Receipt struct {
	ReceivedAt time.Time `json:"received_at"` // server clock
	BenchedAt  time.Time `json:"benched_at"`  // the agent's clock
	// ClaimedBy is always "agent"; Claim says in the user's language that
	// the figures are the agent's measurement, not checked by the ledger.
	ClaimedBy string `json:"claimed_by"`
	Claim     string `json:"claim"`
	Source    string `json:"source"` // "cuda", "simulate" or "none"
	// Headline is "RTX 4090 on AutoDL (box1)".
	Headline string       `json:"headline"`
	GPUs     []ReceiptGPU `json:"gpus"`
	// Host is the host's figures (disk, cores, download), measured or not.
	Host []ReceiptFigure `json:"host"`
	// Warnings are said first, most costly first.
	Warnings []ReceiptNote `json:"warnings"`
	// Skipped says what the bench could not measure and why, as the agent
	// reported it (its words, English).
	Skipped []ReceiptNote `json:"skipped"`
	// Bounded names the figures the hub did not believe (out of any
	// card's range): they show as not measured.
	Bounded []string `json:"bounded"`
	// TensorTFLOPS is the tensor throughput of all the GPUs
	// (perf.TensorTFLOPS), 0 when none was measured.
	TensorTFLOPS float64 `json:"tensor_tflops"`
	// PricePerTFLOPHour is the rental's hourly price divided by
	// TensorTFLOPS, exact to 6 decimals (a decimal string in the rental's
	// currency), null when the rental has no price or no tensor figure;
	// PricePerTFLOPHourText is it as shown, to 3 significant figures
	// ("¥0.0125 per tensor-TFLOP-hour").
	PricePerTFLOPHour     *string `json:"price_per_tflop_hour"`
	PricePerTFLOPHourText string  `json:"price_per_tflop_hour_text"`
	// PriceText is the hourly price divided ("¥2.00/h"); "" unpriced.
	PriceText string `json:"price_text"`
	// SetupTax is the rental's cost from its start to its first sustained
	// GPU work; null until that work is seen.
	SetupTax *SetupTax `json:"setup_tax"`
	// Jobs are the user's own runs on the rental, oldest first.
	Jobs []ReceiptJob `json:"jobs"`
}

// ReceiptJob is one run of the user's own work on the rental.
type ReceiptJob struct {
	Label     string    `json:"label"` // "" unlabelled
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	Seconds   int64     `json:"seconds"`
	ExitCode  int       `json:"exit_code"`
	Source    string    `json:"source"` // "agent" or "chat"
	Succeeded bool      `json:"succeeded"`
	Money     *string   `json:"money"`             // its cost over its span; null when unpriced
	Partial   bool      `json:"partial,omitempty"` // storage or traffic in it has no price: Money is the rest
}

// ReceiptGPU is one GPU's figures on a receipt.
type ReceiptGPU struct {
	Index int    `json:"index"`
	Name  string `json:"name"`  // as the driver names it
	Model string `json:"model"` // the display name ("RTX 4090")
	// Reference is the reference table's card the figures are compared
	// with; "" when the card is not in the table (figures without ratios,
	// never a guess), and ReferenceText then says so.
	Reference     string          `json:"reference"`
	ReferenceText string          `json:"reference_text"`
	MIG           bool            `json:"mig"`
	Figures       []ReceiptFigure `json:"figures"`
}

// ReceiptFigure is one figure of a receipt, labelled in the user's
// language with its unit, and its reference and ratio where the table
// has one.
type ReceiptFigure struct {
	Name  string  `json:"name"`  // the bench's JSON name ("bf16_tflops", "pcie")
	Label string  `json:"label"` // "Tensor (bf16)"
	Unit  string  `json:"unit"`  // "TFLOPS", "GB/s", "MB/s", "W", "cores"...
	Value float64 `json:"value"` // 0: not measured
	// Text is the value as shown with its unit ("160 TFLOPS", "4.0 x16
	// of 4.0 x16", "450 / 450 W"), or "not measured".
	Text     string `json:"text"`
	Measured bool   `json:"measured"`
	// Reference is the healthy card's figure for this bench when known,
	// else the datasheet's; RefKind is "healthy" or "datasheet" ("" none).
	Reference float64 `json:"reference,omitempty"`
	RefKind   string  `json:"reference_kind,omitempty"`
	// Ratio is Value / the healthy figure (0: no ratio), RatioText it
	// said ("97 % of a healthy RTX 4090"); Low: below the card's band.
	Ratio     float64 `json:"ratio,omitempty"`
	RatioText string  `json:"ratio_text,omitempty"`
	Low       bool    `json:"low"`
}

// ReceiptNote is one warning or skipped figure.
type ReceiptNote struct {
	Code string `json:"code"` // a warning's perf.WarnCode, or the skipped figure's name
	GPU  int    `json:"gpu"`  // -1: the host
	Text string `json:"text"` // said in the user's language (a skip: the agent's words)
}

// SetupTax is what a rental cost before it started working.
type SetupTax struct {
	Seconds int64   `json:"seconds"` // the rental's start to its first work
	Money   *string `json:"money"`   // null when the rental has no price
	Text    string  `json:"text"`    // "¥4.10 before work started: 31 min"
	// Partial: storage or traffic in the span has no price: Money is
	// the part that has one.
	Partial bool `json:"partial,omitempty"`
}

// num writes a measured figure to 3 significant figures, whole numbers
// from 100 up ("160", "24.6", "0.950").
func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// percent writes a ratio as a whole percentage.
func percent(r float64) string { return strconv.Itoa(int(math.Round(r*100))) + " %" }

// figureSpecs are a GPU's figures in the order the page shows them: the
// bench's JSON name, the label's message key and the unit.
var figureSpecs = []struct{ name, key, unit string }{
	{"bf16_tflops", "fig_bf16", "TFLOPS"},
	{"fp16_tflops", "fig_fp16", "TFLOPS"},
	{"fp32_tflops", "fig_fp32", "TFLOPS"},
	{"mem_gbps", "fig_mem", "GB/s"},
	{"h2d_gbps", "fig_h2d", "GB/s"},
	{"d2h_gbps", "fig_d2h", "GB/s"},
}

func gpuValue(g perf.GPU, name string) float64 {
	switch name {
	case "bf16_tflops":
		return g.BF16TFLOPS
	case "fp16_tflops":
		return g.FP16TFLOPS
	case "fp32_tflops":
		return g.FP32TFLOPS
	case "mem_gbps":
		return g.MemGBps
	case "h2d_gbps":
		return g.H2DGBps
	case "d2h_gbps":
		return g.D2HGBps
	}
	return 0
}

// receiptGPU lays out one GPU's figures, each with its reference and
// ratio from the assessment when the table has them.
func receiptGPU(g perf.GPU, check *perf.GPUCheck, lang string) ReceiptGPU {
	t := func(key string, args ...any) string { return receiptText.Text(lang, key, args...) }
	model := g.Model
	if model == "" {
		model = perf.DisplayName(g.Name)
	}
	out := ReceiptGPU{Index: g.Index, Name: g.Name, Model: model, MIG: g.MIG}
	var assessed map[string]perf.Figure
	if check != nil && check.Ref != nil {
		out.Reference = check.Ref.Model
		assessed = map[string]perf.Figure{}
		for _, f := range check.Figures {
			assessed[f.Name] = f
		}
	}
	switch {
	case g.MIG:
		out.ReferenceText = t("ref_mig")
	case out.Reference == "":
		out.ReferenceText = t("ref_unknown", model)
	default:
		out.ReferenceText = t("ref_known", out.Reference)
	}
	for _, spec := range figureSpecs {
		v := gpuValue(g, spec.name)
		f := ReceiptFigure{Name: spec.name, Label: t(spec.key), Unit: spec.unit, Value: v, Measured: v > 0}
		if f.Measured {
			f.Text = num(v) + " " + spec.unit
		} else {
			f.Text = t("not_measured")
		}
		if a, ok := assessed[spec.name]; ok && f.Measured {
			switch {
			case a.Healthy > 0:
				f.Reference, f.RefKind = a.Healthy, "healthy"
			case a.Datasheet > 0:
				f.Reference, f.RefKind = a.Datasheet, "datasheet"
			}
			if a.Ratio > 0 {
				f.Ratio, f.Low = a.Ratio, a.Low
				f.RatioText = t("ratio_healthy", percent(a.Ratio), out.Reference)
			} else if f.RefKind == "datasheet" {
				f.RatioText = t("ratio_datasheet", num(a.Datasheet)+" "+spec.unit)
			}
		}
		out.Figures = append(out.Figures, f)
	}
	// The facts NVML gave: the link, the power limit, the clock, ECC and
	// what else was on the card.
	pcie := ReceiptFigure{Name: "pcie", Label: t("fig_pcie"), Unit: "PCIe", Value: float64(g.PCIeWidth), Measured: g.PCIeGen > 0 && g.PCIeWidth > 0}
	if pcie.Measured {
		pcie.Text = pcieText(g.PCIeGen, g.PCIeWidth)
		if g.PCIeGenMax > 0 && g.PCIeWidthMax > 0 {
			pcie.Text = t("of_max", pcie.Text, pcieText(g.PCIeGenMax, g.PCIeWidthMax))
			pcie.Low = g.PCIeWidth < g.PCIeWidthMax
		}
	} else {
		pcie.Text = t("not_measured")
	}
	power := ReceiptFigure{Name: "power_limit_w", Label: t("fig_power"), Unit: "W", Value: g.PowerLimitW, Measured: g.PowerLimitW > 0}
	if power.Measured {
		power.Text = num(g.PowerLimitW) + " W"
		if g.PowerDefaultW > 0 {
			power.Text = num(g.PowerLimitW) + " / " + num(g.PowerDefaultW) + " W"
			power.Reference, power.RefKind = g.PowerDefaultW, "default"
			power.Low = g.PowerLimitW < g.PowerDefaultW
		}
	} else {
		power.Text = t("not_measured")
	}
	clock := ReceiptFigure{Name: "sm_clock_max_mhz", Label: t("fig_clock"), Unit: "MHz", Value: float64(g.SMClockMaxMHz), Measured: g.SMClockMaxMHz > 0}
	if clock.Measured {
		clock.Text = strconv.Itoa(g.SMClockMaxMHz) + " MHz"
	} else {
		clock.Text = t("not_measured")
	}
	used := ReceiptFigure{Name: "memory_used_mib", Label: t("fig_used"), Unit: "MiB", Value: float64(g.MemoryUsedMiB), Measured: g.MemoryTotalMiB > 0}
	if used.Measured {
		used.Text = t("used_text", g.MemoryUsedMiB, g.MemoryTotalMiB, g.OtherProcs)
		used.Low = g.MemoryUsedMiB > 0 || g.OtherProcs > 0
	} else {
		used.Text = t("not_measured")
	}
	ecc := ReceiptFigure{Name: "ecc", Label: t("fig_ecc"), Unit: "", Measured: g.ECC != nil}
	switch {
	case g.ECC == nil:
		ecc.Text = t("not_measured")
	case *g.ECC:
		ecc.Value = 1
		ecc.Text = t("ecc_on", g.ECCUncorrected, g.RetiredPages)
	default:
		ecc.Text = t("ecc_off", g.RetiredPages)
	}
	ecc.Low = g.ECCUncorrected > 0 || g.RetiredPages > 0
	out.Figures = append(out.Figures, pcie, power, clock, used, ecc)
	return out
}

func pcieText(gen, width int) string { return strconv.Itoa(gen) + ".0 x" + strconv.Itoa(width) }

// receiptHost lays out the host's figures.
func receiptHost(h perf.Host, lang string) []ReceiptFigure {
	t := func(key string, args ...any) string { return receiptText.Text(lang, key, args...) }
	fig := func(name, key, unit string, v float64, text string) ReceiptFigure {
		f := ReceiptFigure{Name: name, Label: t(key), Unit: unit, Value: v, Measured: v > 0, Text: text}
		if !f.Measured {
			f.Text = t("not_measured")
		}
		return f
	}
	mbps := view.DiskSpeed
	cores := num(h.CPUCores)
	if h.CPUCores == math.Trunc(h.CPUCores) {
		cores = strconv.FormatFloat(h.CPUCores, 'f', 0, 64)
	}
	return []ReceiptFigure{
		fig("disk_write_mbps", "fig_disk_write", "MB/s", h.DiskWriteMBps, mbps(h.DiskWriteMBps)),
		fig("disk_read_mbps", "fig_disk_read", "MB/s", h.DiskReadMBps, mbps(h.DiskReadMBps)),
		fig("cpu_cores", "fig_cores", "cores", h.CPUCores, t("cores_text", cores)),
		fig("download_mbps", "fig_download", "MB/s", h.DownloadMBps, mbps(h.DownloadMBps)),
	}
}

// buildReceipt lays out rc, the ledger's receipt of a rental as of now
// (ledger.BuildReceipt: the same sums the chat's card and /receipt
// show), for the page in the user's language; nil when the rental has no
// bench. label is the rental's name as listings show it.
func buildReceipt(rc ledger.Receipt, label string, lang string) *Receipt {
	if rc.Bench == nil {
		return nil
	}
	t := func(key string, args ...any) string { return receiptText.Text(lang, key, args...) }
	rec := rc.Bench
	bench := rec.Bench
	rental := rc.Rental
	checks := map[int]*perf.GPUCheck{}
	for i := range rc.Assessment.GPUs {
		checks[rc.Assessment.GPUs[i].Index] = &rc.Assessment.GPUs[i]
	}
	out := &Receipt{ReceivedAt: rec.At, BenchedAt: bench.StartedAt, ClaimedBy: "agent", Claim: t("claim"), Source: bench.Source,
		Bounded: append([]string{}, rec.Bounded...), Warnings: []ReceiptNote{}, Skipped: []ReceiptNote{}, GPUs: []ReceiptGPU{},
		Jobs: []ReceiptJob{}}
	for _, g := range bench.GPUs {
		out.GPUs = append(out.GPUs, receiptGPU(g, checks[g.Index], lang))
	}
	out.Host = receiptHost(bench.Host, lang)
	model := rc.GPU
	if rc.GPUCount > 1 {
		model = strconv.Itoa(rc.GPUCount) + "× " + model
	}
	out.Headline = t("headline", model, view.PlatformName(lang, rental.Platform), label)
	for _, w := range rc.Warnings {
		out.Warnings = append(out.Warnings, ReceiptNote{Code: string(w.Code), GPU: w.GPU, Text: warningText(w, len(bench.GPUs) > 1, lang)})
	}
	for _, s := range bench.Skipped {
		out.Skipped = append(out.Skipped, ReceiptNote{Code: s.What, GPU: s.GPU, Text: s.Why})
	}
	for _, name := range rec.Bounded {
		gpu, label := boundedLabel(name, lang)
		out.Skipped = append(out.Skipped, ReceiptNote{Code: name, GPU: gpu, Text: t("bounded", label)})
	}
	out.TensorTFLOPS = rc.TensorTFLOPS
	switch {
	case rc.PerTFLOPHour != nil:
		s := rc.PerTFLOPHour.FloatString(6)
		out.PricePerTFLOPHour = &s
		out.PricePerTFLOPHourText = t("per_tflop_hour", view.PerUnitText(rc.PerTFLOPHour, rental.Currency))
	case !rc.Priced:
		out.PricePerTFLOPHourText = t("per_tflop_no_price")
	default:
		out.PricePerTFLOPHourText = t("per_tflop_no_tensor")
	}
	if rc.Hourly != nil {
		out.PriceText = view.PerUnitText(rc.Hourly, rental.Currency) + t("per_hour")
	}
	if st := rc.SetupTax; st != nil {
		tax := &SetupTax{Seconds: int64(st.Duration() / time.Second), Partial: st.Partial}
		mins := (tax.Seconds + 30) / 60
		if st.Priced {
			m := st.Money.String()
			tax.Money = &m
			tax.Text = t("setup_tax", st.Money.Format(), mins)
		} else {
			tax.Text = t("setup_tax_unpriced", mins)
		}
		out.SetupTax = tax
	}
	for _, j := range rc.Jobs {
		rj := ReceiptJob{Label: j.Run.Label, StartedAt: j.Run.StartedAt, EndedAt: j.Run.EndedAt,
			Seconds: int64(j.Run.Duration() / time.Second), ExitCode: j.Run.ExitCode, Source: string(j.Run.Source), Succeeded: j.Run.Succeeded()}
		if j.Priced {
			m := j.Cost.String()
			rj.Money, rj.Partial = &m, j.Partial
		}
		out.Jobs = append(out.Jobs, rj)
	}
	return out
}

// boundedLabel names a figure the hub bounded ("gpus[0].bf16_tflops",
// "host.disk_write_mbps") as the page labels it, with its GPU (-1: the
// host or unknown); a name it does not know is shown as it is.
func boundedLabel(name, lang string) (int, string) {
	gpu := -1
	field := name
	if rest, ok := strings.CutPrefix(name, "gpus["); ok {
		if i := strings.Index(rest, "]."); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				gpu, field = n, rest[i+2:]
			}
		}
	} else if rest, ok := strings.CutPrefix(name, "host."); ok {
		field = rest
	}
	for _, spec := range figureSpecs {
		if spec.name == field {
			return gpu, receiptText.Text(lang, spec.key)
		}
	}
	for key, f := range map[string]string{"disk_write_mbps": "fig_disk_write", "disk_read_mbps": "fig_disk_read", "cpu_cores": "fig_cores", "download_mbps": "fig_download"} {
		if key == field {
			return gpu, receiptText.Text(lang, f)
		}
	}
	return gpu, name
}

// warningText says a warning in the user's language from its code and
// numbers (perf's English is the agent's CLI's), naming the GPU when the
// bench had several, with its likely cause's
// evidence and the money per hour at stake when the ledger knows it.
func warningText(w ledger.ReceiptWarning, several bool, lang string) string {
	say := func(pw perf.Warning) string {
		key := "warn_" + string(pw.Code)
		if _, ok := receiptText[key]; !ok {
			key = "warn_other"
		}
		return receiptText.Text(lang, key, num(pw.Value), num(pw.Expected), string(pw.Code))
	}
	s := say(w.Warning)
	if w.GPU >= 0 && several {
		s = receiptText.Text(lang, "warn_gpu", w.GPU) + s
	}
	if w.Because != nil {
		s += receiptText.Text(lang, "because", say(*w.Because))
	}
	if w.HasWaste() {
		s += receiptText.Text(lang, "waste", w.Waste.Format())
	}
	return s
}

// receiptText is the receipt's words, in English and Chinese.
var receiptText = chat.Catalog{
	"claim": {"Measured by the agent on the rental: its claim, shown as it sent it (bounded by the server), never used to move money.",
		"由实例上的代理测得：这是代理的说法，按其发送的原样显示（服务器已做合理性限制），从不用于计费。"},
	"headline":            {"%[1]s on %[2]s (%[3]s)", "%[2]s 上的 %[1]s（%[3]s）"},
	"not_measured":        {"not measured", "未测得"},
	"ref_known":           {"Compared with a healthy %[1]s (perf's reference table, with sources).", "与健康的 %[1]s 比较（perf 参考表，附来源）。"},
	"ref_unknown":         {"%[1]s is not in the reference table: figures without ratios.", "%[1]s 不在参考表中：只给数值，不给比例。"},
	"ref_mig":             {"A MIG slice: its figures are the slice's, never compared with a whole card.", "MIG 切片：数值属于切片，不与整卡比较。"},
	"ratio_healthy":       {"%[1]s of a healthy %[2]s", "健康 %[2]s 的 %[1]s"},
	"ratio_datasheet":     {"datasheet %[1]s", "规格 %[1]s"},
	"of_max":              {"%[1]s of %[2]s", "%[1]s（最高 %[2]s）"},
	"fig_bf16":            {"Tensor (bf16)", "张量（bf16）"},
	"fig_fp16":            {"Tensor (fp16)", "张量（fp16）"},
	"fig_fp32":            {"FP32", "FP32"},
	"fig_mem":             {"Memory bandwidth", "显存带宽"},
	"fig_h2d":             {"Host → GPU copy", "主机 → GPU 拷贝"},
	"fig_d2h":             {"GPU → host copy", "GPU → 主机 拷贝"},
	"fig_pcie":            {"PCIe link", "PCIe 链路"},
	"fig_power":           {"Power limit", "功耗上限"},
	"fig_clock":           {"Max SM clock", "最高 SM 频率"},
	"fig_used":            {"Already in use", "已被占用"},
	"fig_ecc":             {"ECC", "ECC"},
	"fig_disk_write":      {"Disk write", "磁盘写入"},
	"fig_disk_read":       {"Disk read", "磁盘读取"},
	"fig_cores":           {"CPU cores", "CPU 核数"},
	"fig_download":        {"Download", "下载"},
	"cores_text":          {"%[1]s cores", "%[1]s 核"},
	"used_text":           {"%[1]d of %[2]d MiB, %[3]d other process(es)", "%[2]d MiB 中已用 %[1]d MiB，其他进程 %[3]d 个"},
	"ecc_on":              {"on, %[1]d uncorrected error(s), %[2]d retired page(s)", "开启，%[1]d 个不可纠正错误，%[2]d 个退役页"},
	"ecc_off":             {"off, %[1]d retired page(s)", "关闭，%[1]d 个退役页"},
	"bounded":             {"%[1]s: the server did not believe the figure sent (out of any card's range) and keeps it as not measured.", "%[1]s：服务器不相信发来的数值（超出任何显卡的范围），按未测得处理。"},
	"per_tflop_hour":      {"%[1]s per tensor-TFLOP-hour", "每张量 TFLOP·小时 %[1]s"},
	"per_tflop_no_price":  {"no price per unit of work: the rental has no price", "无单位算力价格：该租用没有价格"},
	"per_tflop_no_tensor": {"no price per unit of work: no tensor figure was measured", "无单位算力价格：未测得张量算力"},
	"setup_tax":           {"%[1]s before work started: %[2]d min", "开始工作前花费 %[1]s：%[2]d 分钟"},
	"setup_tax_unpriced":  {"%[1]d min before work started (no price)", "开始工作前 %[1]d 分钟（未定价）"},
	"warn_gpu":            {"GPU %[1]d: ", "GPU %[1]d："},
	"warn_power_cap":      {"power limit %[1]s W below the card's default %[2]s W", "功耗上限 %[1]s W，低于默认 %[2]s W"},
	"warn_pcie_narrow":    {"PCIe link x%[1]s, narrower than the card's x%[2]s", "PCIe 链路 x%[1]s，窄于显卡的 x%[2]s"},
	"warn_pcie_slow":      {"PCIe generation %[1]s below the card's %[2]s", "PCIe 代数 %[1]s，低于显卡的 %[2]s"},
	"warn_clocks_held":    {"SM clock held at %[1]s MHz (expected %[2]s MHz)", "SM 频率被限制在 %[1]s MHz（应为 %[2]s MHz）"},
	"warn_neighbour":      {"the card was already in use before the bench (%[1]s, expected %[2]s): a neighbour", "测试前显卡已被占用（%[1]s，应为 %[2]s）：有邻居"},
	"warn_slow_tensor":    {"tensor %[1]s TFLOPS, below a healthy card's %[2]s", "张量算力 %[1]s TFLOPS，低于健康显卡的 %[2]s"},
	"warn_slow_fp32":      {"FP32 %[1]s TFLOPS, below a healthy card's %[2]s", "FP32 %[1]s TFLOPS，低于健康显卡的 %[2]s"},
	"warn_slow_memory":    {"memory %[1]s GB/s, below a healthy card's %[2]s", "显存带宽 %[1]s GB/s，低于健康显卡的 %[2]s"},
	"warn_slow_copy":      {"host copies %[1]s GB/s, below the link's %[2]s", "主机拷贝 %[1]s GB/s，低于链路的 %[2]s"},
	"warn_ecc_errors":     {"%[1]s uncorrected ECC error(s)", "%[1]s 个不可纠正 ECC 错误"},
	"warn_retired_pages":  {"%[1]s retired memory page(s)", "%[1]s 个显存退役页"},
	"warn_mig":            {"a MIG slice: figures not compared with a whole card", "MIG 切片：不与整卡比较"},
	"warn_unknown_card":   {"the card is not in the reference table: figures without ratios", "显卡不在参考表中：只给数值，不给比例"},
	"warn_other":          {"%[3]s: %[1]s (expected %[2]s)", "%[3]s：%[1]s（应为 %[2]s）"},
	"because":             {" — likely because %[1]s", " —— 可能原因：%[1]s"},
	"waste":               {" — %[1]s/h of the price buys nothing", " —— 每小时 %[1]s 的价格买不到算力"},
	"per_hour":            {"/h", "/小时"},
	"no_receipt":          {"No receipt yet: the agent benches the GPUs when it first reports for the rental (unless turned off with --no-bench or /settings); run gpuledger-agent bench on the host to see the figures there.", "还没有收据：代理首次为该租用报告时会测试 GPU（除非用 --no-bench 或 /settings 关闭）；可在主机上运行 gpuledger-agent bench 查看数值。"},
}

// receipt reads what the rental's receipt needs (its benches, its first
// work, the user's runs) and builds it as of now; nil when the store
// keeps no benches or the rental has none.
func (s *Server) receipt(ctx context.Context, user int64, b *ledger.Book, rental *ledger.Rental, label string, now time.Time, lang string) (*Receipt, error) {
	if s.benches == nil {
		return nil, nil
	}
	benches, err := s.benches.Benches(ctx, user, rental.ID)
	if err != nil || len(benches) == 0 {
		return nil, err
	}
	firsts, err := s.benches.FirstWorks(ctx, user)
	if err != nil {
		return nil, err
	}
	runs, err := s.benches.JobRuns(ctx, user, "")
	if err != nil {
		return nil, err
	}
	rc := ledger.BuildReceipt(ledger.ReceiptInput{Book: b, Rental: rental, Benches: benches, FirstWork: firsts[rental.ID], Jobs: runs, Now: now})
	return buildReceipt(rc, label, lang), nil
}
