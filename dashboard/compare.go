package dashboard

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// ComparePage answers PathCompare: the user's own price/performance
// table, the same the chat's /compare shows (ledger.Compare): per
// platform × card what the benches measured and what a unit of work
// cost, the setup tax per platform, and per label the time and money of
// a run, best first. Figures are the agents' claims (Claim says so);
// money is exact decimal strings, never converted between currencies.
type ComparePage struct {
	AsOf time.Time `json:"as_of"`
	// Label is the label asked for (?label=), "" for every label.
	Label string `json:"label,omitempty"`
	// Labels are every label the user's runs have, for the page's picker.
	Labels []string `json:"labels"`
	Claim  string   `json:"claim"`
	// Columns names each column in the user's language, by key.
	Columns map[string]string `json:"columns"`
	Cards   []CompareCard     `json:"cards"`
	Setup   []CompareSetup    `json:"setup"`
	Tables  []CompareLabel    `json:"tables"`
	// Empty, when the user has no bench and no labelled run, says how to
	// get them.
	Empty string `json:"empty,omitempty"`
}

// CompareCard is one platform × card in one currency (ledger.CardRow).
type CompareCard struct {
	Platform     string `json:"platform"`
	PlatformName string `json:"platform_name"`
	GPU          string `json:"gpu"`
	MIG          bool   `json:"mig"`
	Currency     string `json:"currency"`
	Rentals      int    `json:"rentals"`
	Benched      int    `json:"benched"`
	// Medians per GPU over the benches; 0 not measured. PCIe is the link
	// seen most often ("4.0 x16"), "" unknown.
	TensorTFLOPS float64 `json:"tensor_tflops"`
	FP32TFLOPS   float64 `json:"fp32_tflops"`
	MemGBps      float64 `json:"mem_gbps"`
	H2DGBps      float64 `json:"h2d_gbps"`
	PCIe         string  `json:"pcie"`
	// HourPerGPU is the median price of a GPU-hour over PricedRentals,
	// PerTFLOPHour the median price of a tensor-TFLOP-hour over
	// PerUnitRentals; null when none. The texts are them as shown.
	PricedRentals    int     `json:"priced_rentals"`
	HourPerGPU       *string `json:"hour_per_gpu"`
	HourPerGPUText   string  `json:"hour_per_gpu_text"`
	PerUnitRentals   int     `json:"per_unit_rentals"`
	PerTFLOPHour     *string `json:"per_tflop_hour"`
	PerTFLOPHourText string  `json:"per_tflop_hour_text"`
	// PerTFLOPHourPrice is the price alone ("¥0.0124"), for a table
	// whose column says the unit; "" when none.
	PerTFLOPHourPrice string `json:"per_tflop_hour_price"`
}

// CompareSetup is one platform's setup tax (ledger.SetupRow).
type CompareSetup struct {
	Platform     string  `json:"platform"`
	PlatformName string  `json:"platform_name"`
	Currency     string  `json:"currency"`
	Rentals      int     `json:"rentals"`
	Seconds      int64   `json:"seconds"` // median start to first work
	Priced       int     `json:"priced"`
	Money        *string `json:"money"` // median; null when none priced
	Text         string  `json:"text"`
}

// CompareLabel is one label's table (ledger.LabelTable).
type CompareLabel struct {
	Label  string            `json:"label"`
	Runs   int               `json:"runs"`
	Failed int               `json:"failed"`
	Rows   []CompareLabelRow `json:"rows"`
}

// CompareLabelRow is one label on one platform × card in one currency,
// best first within its currency.
type CompareLabelRow struct {
	Platform     string  `json:"platform"`
	PlatformName string  `json:"platform_name"`
	GPU          string  `json:"gpu"`
	MIG          bool    `json:"mig"`
	Currency     string  `json:"currency"`
	Runs         int     `json:"runs"`   // succeeded runs: what the medians rest on
	Failed       int     `json:"failed"` // counted apart
	Seconds      int64   `json:"seconds"`
	TimeText     string  `json:"time_text"`
	Priced       int     `json:"priced"`
	Money        *string `json:"money"` // median per priced run; null when none
	MoneyText    string  `json:"money_text"`
	RestsOn      string  `json:"rests_on"` // "rests on 3 runs (1 failed)"
}

// compareColumns are the table's column keys.
var compareColumns = []string{"platform", "gpu", "rentals", "tensor_tflops", "fp32_tflops", "mem_gbps", "h2d_gbps", "pcie",
	"hour_per_gpu", "per_tflop_hour", "setup", "label", "runs", "time", "money"}

func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request, g *grant, b *ledger.Book) {
	q, ok := s.query(w, r)
	if !ok {
		return
	}
	label := q.Get("label")
	if label != "" && !ledger.ValidLabel(label) {
		s.fail(w, r, http.StatusBadRequest, "bad_request", "err_label", ledger.MaxLabelLen)
		return
	}
	now := s.now()
	in := ledger.CompareInput{Book: b, Now: now}
	if s.benches != nil {
		ctx := r.Context()
		var err error
		if in.Benches, err = s.benches.UserBenches(ctx, g.user); err != nil {
			s.internal(w, r, err)
			return
		}
		if in.Runs, err = s.benches.JobRuns(ctx, g.user, ""); err != nil {
			s.internal(w, r, err)
			return
		}
		if in.FirstWorks, err = s.benches.FirstWorks(ctx, g.user); err != nil {
			s.internal(w, r, err)
			return
		}
	}
	table := ledger.Compare(in)
	if label != "" {
		if _, ok := table.Label(label); !ok {
			names := strings.Join(table.LabelNames(), ", ")
			if names == "" {
				names = compareText.Text(g.lang, "no_labels")
			}
			s.fail(w, r, http.StatusNotFound, "not_found", "err_no_label", label, names)
			return
		}
	}
	s.writeJSON(w, r, http.StatusOK, comparePage(table, label, now, g.lang))
}

// comparePage lays out t for the page in lang; only label's table when
// label is not "".
func comparePage(t ledger.CompareTable, label string, now time.Time, lang string) ComparePage {
	tx := func(key string, args ...any) string { return compareText.Text(lang, key, args...) }
	p := ComparePage{AsOf: now, Label: label, Labels: t.LabelNames(), Claim: tx("claim"), Columns: map[string]string{},
		Cards: []CompareCard{}, Setup: []CompareSetup{}, Tables: []CompareLabel{}}
	for _, c := range compareColumns {
		p.Columns[c] = tx("col_" + c)
	}
	for _, c := range t.Cards {
		cur := c.Currency
		row := CompareCard{Platform: c.Platform, PlatformName: view.PlatformName(lang, c.Platform), GPU: c.GPU, MIG: c.MIG, Currency: string(cur),
			Rentals: c.Rentals, Benched: c.Benched, TensorTFLOPS: c.TensorTFLOPS, FP32TFLOPS: c.FP32TFLOPS, MemGBps: c.MemGBps, H2DGBps: c.H2DGBps,
			PricedRentals: c.PricedRentals, PerUnitRentals: c.PerUnitRentals, HourPerGPUText: tx("none"), PerTFLOPHourText: tx("none")}
		if c.PCIeGen > 0 && c.PCIeWidth > 0 {
			row.PCIe = pcieText(c.PCIeGen, c.PCIeWidth)
		}
		if c.PricedRentals > 0 {
			v := c.HourPerGPU.String()
			row.HourPerGPU = &v
			row.HourPerGPUText = view.PerUnitText(c.HourPerGPU.Rat(), cur) + receiptText.Text(lang, "per_hour")
		}
		if c.PerUnitRentals > 0 {
			v := c.PerTFLOPHour.String()
			row.PerTFLOPHour = &v
			row.PerTFLOPHourPrice = view.PerUnitText(c.PerTFLOPHour.Rat(), cur)
			row.PerTFLOPHourText = receiptText.Text(lang, "per_tflop_hour", row.PerTFLOPHourPrice)
		}
		p.Cards = append(p.Cards, row)
	}
	for _, st := range t.Setup {
		row := CompareSetup{Platform: st.Platform, PlatformName: view.PlatformName(lang, st.Platform), Currency: string(st.Currency),
			Rentals: st.Rentals, Seconds: int64(st.Time / time.Second), Priced: st.Priced}
		mins := (row.Seconds + 30) / 60
		if st.Priced > 0 {
			v := st.Money.String()
			row.Money = &v
			row.Text = receiptText.Text(lang, "setup_tax", ledger.MoneyFromDecimal(st.Money, st.Currency).Format(), mins)
		} else {
			row.Text = receiptText.Text(lang, "setup_tax_unpriced", mins)
		}
		p.Setup = append(p.Setup, row)
	}
	for _, lt := range t.Labels {
		if label != "" && lt.Label != label {
			continue
		}
		out := CompareLabel{Label: lt.Label, Runs: lt.Runs, Failed: lt.Failed, Rows: []CompareLabelRow{}}
		for _, lr := range lt.Rows {
			row := CompareLabelRow{Platform: lr.Platform, PlatformName: view.PlatformName(lang, lr.Platform), GPU: lr.GPU, MIG: lr.MIG,
				Currency: string(lr.Currency), Runs: lr.Runs, Failed: lr.Failed, Seconds: int64(lr.Time / time.Second),
				TimeText: runTime(lr.Time, lang), Priced: lr.Priced, MoneyText: tx("none")}
			if lr.Priced > 0 {
				v := ledger.MoneyFromDecimal(lr.Money, lr.Currency)
				s := v.String()
				row.Money = &s
				row.MoneyText = v.Format()
			}
			row.RestsOn = tx("rests_on", lr.Runs)
			if lr.Failed > 0 {
				row.RestsOn = tx("rests_on_failed", lr.Runs, lr.Failed)
			}
			out.Rows = append(out.Rows, row)
		}
		p.Tables = append(p.Tables, out)
	}
	if t.Empty() {
		p.Empty = tx("empty")
	}
	return p
}

// runTime writes a run's median time: "42 s", "3 min 05 s", "1 h 02 min".
func runTime(d time.Duration, lang string) string {
	s := int64((d + time.Second/2) / time.Second)
	zh := chat.NormLang(lang) == chat.LangZH
	unit := func(en, zhs string) string {
		if zh {
			return zhs
		}
		return " " + en
	}
	two := func(n int64) string {
		if n < 10 {
			return "0" + strconv.FormatInt(n, 10)
		}
		return strconv.FormatInt(n, 10)
	}
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + unit("s", "秒")
	case s < 3600:
		return strconv.FormatInt(s/60, 10) + unit("min", "分") + " " + two(s%60) + unit("s", "秒")
	}
	return strconv.FormatInt(s/3600, 10) + unit("h", "小时") + " " + two(s%3600/60) + unit("min", "分")
}

// compareText is the compare page's words, in English and Chinese.
var compareText = chat.Catalog{
	"claim": {"Bench figures are the agents' claims (bounded by the server); times and money are your own jobs' and your ledger's.",
		"测试数值是代理的说法（服务器已做合理性限制）；时间和费用来自你自己的任务和账本。"},
	"empty": {"Nothing to compare yet. The receipt comes with the agent: each rental it reports for is benched once. Label your own work with gpuledger-agent run --label NAME -- COMMAND, or name a span afterwards with /job.",
		"还没有可比较的数据。收据随代理而来：它为每个租用测试一次。用 gpuledger-agent run --label 名称 -- 命令 标记你自己的任务，或之后用 /job 命名一段时间。"},
	"no_labels":          {"none yet", "暂无"},
	"none":               {"—", "—"},
	"rests_on":           {"rests on %[1]d run(s)", "基于 %[1]d 次运行"},
	"rests_on_failed":    {"rests on %[1]d run(s); %[2]d failed, left out", "基于 %[1]d 次运行；%[2]d 次失败未计入"},
	"col_platform":       {"Platform", "平台"},
	"col_gpu":            {"GPU", "GPU"},
	"col_rentals":        {"Rentals (benched)", "租用（已测试）"},
	"col_tensor_tflops":  {"Tensor TFLOPS per GPU", "每卡张量 TFLOPS"},
	"col_fp32_tflops":    {"FP32 TFLOPS per GPU", "每卡 FP32 TFLOPS"},
	"col_mem_gbps":       {"Memory GB/s", "显存 GB/s"},
	"col_h2d_gbps":       {"Host → GPU GB/s", "主机 → GPU GB/s"},
	"col_pcie":           {"PCIe", "PCIe"},
	"col_hour_per_gpu":   {"Price per GPU-hour", "每卡每小时价格"},
	"col_per_tflop_hour": {"Price per tensor-TFLOP-hour", "每张量 TFLOP·小时价格"},
	"col_setup":          {"Setup tax (median)", "启动成本（中位数）"},
	"col_label":          {"Job", "任务"},
	"col_runs":           {"Runs", "运行次数"},
	"col_time":           {"Time per run", "每次用时"},
	"col_money":          {"Money per run", "每次费用"},
}
