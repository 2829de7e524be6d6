package view

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// quoteTexts are /quote's words: the bill of a rental before it is made
// (ledger.Quote), one line per platform and price.
var quoteTexts = chat.Catalog{
	"quote_head": {
		"<b>Quote</b>: %[1]s, %[2]s running%[3]s",
		"<b>报价</b>：%[1]s，运行 %[2]s%[3]s"},
	"quote_stopped": {", then %[1]s stopped", "，之后关机 %[1]s"},
	"quote_disk":    {" · disk %[1]s GB", " · 硬盘 %[1]s GB"},
	"quote_traffic": {" · traffic %[1]s GB", " · 流量 %[1]s GB"},
	"quote_rules": {
		"Each by that platform's billing rules, as your bill would be; currencies are never converted.",
		"每一行都按该平台的计费规则算，和实际账单一致；不同货币不换算。"},
	"quote_currency": {"<b>%[1]s</b>", "<b>%[1]s</b>"},
	"quote_line": {
		"%[1]s. <b>%[2]s total %[3]s</b>%[4]s — %[5]s: %[6]s a GPU, %[7]s",
		"%[1]s. <b>%[2]s 合计 %[3]s</b>%[4]s —— %[5]s：单卡 %[6]s，%[7]s"},
	"quote_from_rental": {"your %[1]s, %[2]s", "你的 %[1]s，%[2]s"},
	"quote_from_price":  {"your price", "你给的价格"},
	"quote_no_platform": {"no platform named", "未指定平台"},
	"quote_compute": {
		"compute %[1]s (%[2]s billed)",
		"计算 %[1]s（计费 %[2]s）"},
	"quote_compute_plain": {"compute %[1]s", "计算 %[1]s"},
	"quote_min":           {", at least %[1]s a start", "，每次开机至少计 %[1]s"},
	"quote_step":          {", in steps of %[1]s", "，按 %[1]s 递增"},
	"quote_floor":         {", at least %[1]s in all", "，总计至少 %[1]s"},
	"quote_storage": {
		"storage %[1]s (%[2]s GB%[3]s at %[4]s%[5]s)",
		"存储 %[1]s（%[2]s GB%[3]s，%[4]s%[5]s）"},
	"quote_storage_free":    {", %[1]s free", "，其中 %[1]s 免费"},
	"quote_storage_stopped": {", %[1]s stopped", "，关机时 %[1]s"},
	"quote_storage_profile": {", the platform's usual price", "，平台的常见价格"},
	"quote_storage_none": {
		"storage: no price known for %[1]s GB here (give the volume's price with <code>/storage</code> once you rent)",
		"存储：这里 %[1]s GB 的价格未知（租了以后用 <code>/storage</code> 记下它的价格）"},
	"quote_traffic_cost": {
		"traffic %[1]s (%[2]s GB free a month)",
		"流量 %[1]s（每月免费 %[2]s GB）"},
	"quote_traffic_cost_nofree": {"traffic %[1]s", "流量 %[1]s"},
	"quote_traffic_none": {
		"traffic: no price known here",
		"流量：这里的价格未知"},
	"quote_package": {
		"a %[1]s package at %[2]s a GPU (your %[3]s) beats paying by the hour after %[4]s of running a %[1]s; for this quote: %[5]s",
		"包%[1]s单卡 %[2]s（你的 %[3]s）在一%[1]s内运行超过 %[4]s 就比按量便宜；这次报价按包%[1]s：%[5]s"},
	"quote_package_never": {
		"a %[1]s package at %[2]s a GPU (your %[3]s) never beats paying by the hour within a %[1]s; for this quote: %[4]s",
		"包%[1]s单卡 %[2]s（你的 %[3]s）在一%[1]s内都不如按量便宜；这次报价按包%[1]s：%[4]s"},
	"quote_runs": {
		"your %[1]s took %[2]s a run on this card here (median of %[3]s): %[4]s ≈ %[5]s runs, %[6]s a run",
		"你的 %[1]s 在这里的这种卡上每次用时 %[2]s（%[3]s 次的中位数）：%[4]s 约可跑 %[5]s 次，每次 %[6]s"},
	"quote_runs_long": {
		"your %[1]s took %[2]s a run on this card here (median of %[3]s): longer than %[4]s",
		"你的 %[1]s 在这里的这种卡上每次用时 %[2]s（%[3]s 次的中位数）：比 %[4]s 还长"},
	"quote_tflops": {
		"tensor %[1]s TFLOPS a GPU (your %[2]s's bench, the agent's measurement) → %[3]s per tensor-TFLOP-hour",
		"张量算力单卡 %[1]s TFLOPS（你的 %[2]s 的测速，代理测得）→ 每 TFLOP·小时 %[3]s"},
	"quote_unpriced_total": {" without the parts with no price", "（不含价格未知的部分）"},
	"quote_none": {
		"No price for %[1]s%[2]s yet: you have not rented one there. Give one (a GPU's, per hour unless you write the unit), with the platform for its rules: <code>/quote %[3]s price=1.88 autodl</code>",
		"还没有 %[1]s%[2]s的价格：你在那里没租过这种卡。请给出价格（单卡价格，不写单位就是每小时），加上平台就按它的规则算：<code>/quote %[3]s price=1.88元/小时 autodl</code>"},
	"quote_none_on": {" on %[1]s", "（%[1]s）"},
	"quote_connect": {
		"Or connect a platform (%[1]s): the instances it lists become your rentals, with their prices: <code>/connect PLATFORM KEY</code>",
		"或者连接平台（%[1]s）：它列出的实例会记成你的机器，带着价格：<code>/connect 平台 KEY</code>"},
}

// QuoteAsk is what a /quote asked, for its head and its answer when there
// is no price.
type QuoteAsk struct {
	GPU       string
	GPUCount  int
	Running   time.Duration
	Stopped   time.Duration
	StorageGB *ledger.Decimal
	TrafficGB ledger.Decimal
	Platform  string // the one platform asked about; "" all
	Command   string // the command as the user could send it again ("4090 10"), for the examples
}

// QuoteCatalog returns /quote's texts, for the catalog tests.
func QuoteCatalog() chat.Catalog { return quoteTexts }

func qt(lang, key string, args ...any) string { return quoteTexts.Render(lang, key, args...) }

// QuoteText renders ledger.Quote's lines in lang, dates in loc: a head
// with what was asked, then per currency the lines cheapest first, each
// with its compute, storage and traffic, the package break-even, the
// user's own runs and the price per tensor-TFLOP-hour where known. With
// no line it says how to give a price, and which platforms connect lists
// (nil: connections are off, so none is offered).
func QuoteText(lang string, loc *time.Location, lines []ledger.QuoteLine, ask QuoteAsk, connect []string) string {
	if loc == nil {
		loc = time.UTC
	}
	gpu := ask.GPU
	if ask.GPUCount > 1 {
		gpu = fmt.Sprintf("%d×%s", ask.GPUCount, ask.GPU)
	}
	var b strings.Builder
	if len(lines) == 0 {
		on := ""
		if ask.Platform != "" {
			on = qt(lang, "quote_none_on", PlatformName(lang, ask.Platform))
		}
		b.WriteString(qt(lang, "quote_none", gpu, chat.RawHTML(on), ask.Command))
		if len(connect) > 0 {
			b.WriteString("\n")
			b.WriteString(qt(lang, "quote_connect", strings.Join(connect, ", ")))
		}
		return b.String()
	}
	extra := ""
	if ask.Stopped > 0 {
		extra += qt(lang, "quote_stopped", chat.FormatDuration(ask.Stopped, lang))
	}
	if ask.StorageGB != nil && ask.StorageGB.Sign() > 0 {
		extra += qt(lang, "quote_disk", ask.StorageGB.String())
	}
	if ask.TrafficGB.Sign() > 0 {
		extra += qt(lang, "quote_traffic", ask.TrafficGB.String())
	}
	b.WriteString(qt(lang, "quote_head", gpu, chat.FormatDuration(ask.Running, lang), chat.RawHTML(extra)))
	b.WriteString("\n")
	b.WriteString(qt(lang, "quote_rules"))
	b.WriteString("\n")
	several := lines[0].Currency != lines[len(lines)-1].Currency
	var cur ledger.Currency
	n := 0
	for _, l := range lines {
		if l.Currency != cur {
			cur, n = l.Currency, 0
			if several {
				b.WriteString("\n")
				b.WriteString(qt(lang, "quote_currency", string(cur)))
			}
		}
		n++
		b.WriteString("\n")
		b.WriteString(quoteLine(lang, loc, n, l, ask))
	}
	return b.String()
}

// quoteLine is one platform's bill, several lines long.
func quoteLine(lang string, loc *time.Location, n int, l ledger.QuoteLine, ask QuoteAsk) string {
	from := qt(lang, "quote_from_price")
	if l.Source == ledger.QuoteFromRental && l.From != nil {
		from = qt(lang, "quote_from_rental", l.From.Name, shortDay(l.From.StartedAt(), loc, lang))
	}
	plat := qt(lang, "quote_no_platform")
	if l.Platform != "" {
		plat = PlatformName(lang, l.Platform)
	}
	unpriced := ""
	if !l.Priced() {
		unpriced = qt(lang, "quote_unpriced_total")
	}
	var b strings.Builder
	b.WriteString(qt(lang, "quote_line", strconv.Itoa(n), plat, l.Total.Format(), chat.RawHTML(unpriced), chat.RawHTML(from),
		FormatPrice(l.PerGPU, l.Currency, lang), FormatMode(l.Mode, lang)))
	terms := ""
	if l.Min > 0 {
		terms += qt(lang, "quote_min", chat.FormatDuration(l.Min, lang))
	}
	if l.Step > 0 && l.Mode != ledger.PerMinute {
		terms += qt(lang, "quote_step", chat.FormatDuration(l.Step, lang))
	}
	if l.Floor.Sign() > 0 {
		terms += qt(lang, "quote_floor", FormatAmount(l.Floor, l.Currency))
	}
	compute := qt(lang, "quote_compute_plain", l.Compute.Format())
	if billed := time.Duration(l.BilledSeconds) * time.Second; billed != ask.Running.Round(time.Second) {
		compute = qt(lang, "quote_compute", l.Compute.Format(), chat.FormatDuration(billed, lang))
	}
	parts := []string{compute + terms}
	if l.StorageGB.Sign() > 0 {
		switch {
		case !l.StoragePriced:
			parts = append(parts, qt(lang, "quote_storage_none", l.StorageGB.String()))
		default:
			free, stopped, src := "", "", ""
			if l.StorageFreeGB.Sign() > 0 {
				free = qt(lang, "quote_storage_free", l.StorageFreeGB.String())
			}
			price := "—"
			if sp := l.StoragePrice; sp.PriceUnit != "" {
				price = FormatStoragePrice(sp.Price, sp.PriceUnit, l.Currency, lang)
				if sp.HasStoppedPrice && ask.Stopped > 0 {
					stopped = qt(lang, "quote_storage_stopped", FormatStoragePrice(sp.StoppedPrice, sp.PriceUnit, l.Currency, lang))
				}
			}
			if l.StorageFrom == "profile" {
				src = qt(lang, "quote_storage_profile")
			}
			parts = append(parts, qt(lang, "quote_storage", l.Storage.Format(), l.StorageGB.String(), chat.RawHTML(free), price, chat.RawHTML(stopped+src)))
		}
	}
	if ask.TrafficGB.Sign() > 0 {
		switch {
		case !l.TrafficPriced:
			parts = append(parts, qt(lang, "quote_traffic_none"))
		case l.TrafficFreeGB.Sign() > 0:
			parts = append(parts, qt(lang, "quote_traffic_cost", l.Traffic.Format(), l.TrafficFreeGB.String()))
		default:
			parts = append(parts, qt(lang, "quote_traffic_cost_nofree", l.Traffic.Format()))
		}
	}
	b.WriteString("\n   ")
	b.WriteString(strings.Join(parts, " · "))
	if p := l.Package; p != nil && p.From != nil {
		period := periodWord(p.PerGPU.Unit, lang)
		price := FormatAmount(p.PerGPU.Amount, l.Currency)
		b.WriteString("\n   ")
		if p.BreakEven > 0 {
			b.WriteString(qt(lang, "quote_package", period, price, p.From.Name, chat.FormatDuration(p.BreakEven, lang), p.Total.Format()))
		} else {
			b.WriteString(qt(lang, "quote_package_never", period, price, p.From.Name, p.Total.Format()))
		}
	}
	for _, r := range l.Runs {
		b.WriteString("\n   ")
		if r.Runs > 0 {
			b.WriteString(qt(lang, "quote_runs", r.Label, chat.FormatDuration(r.Median, lang), strconv.Itoa(r.Count),
				chat.FormatDuration(ask.Running, lang), strconv.FormatInt(r.Runs, 10), r.PerRun.Format()))
		} else {
			b.WriteString(qt(lang, "quote_runs_long", r.Label, chat.FormatDuration(r.Median, lang), strconv.Itoa(r.Count),
				chat.FormatDuration(ask.Running, lang)))
		}
	}
	if l.PerTFLOPHour != nil && l.BenchFrom != nil {
		b.WriteString("\n   ")
		b.WriteString(qt(lang, "quote_tflops", strconv.FormatFloat(l.TensorTFLOPS, 'f', 0, 64), l.BenchFrom.Name,
			perUnitText(l.PerTFLOPHour, l.Currency)))
	}
	return b.String()
}

// periodWord names a package's period: "day" / "日".
func periodWord(u ledger.Unit, lang string) string {
	w := map[ledger.Unit][2]string{ledger.UnitDay: {"day", "日"}, ledger.UnitWeek: {"week", "周"}, ledger.UnitMonth: {"month", "月"}}[u]
	if w[0] == "" {
		return string(u)
	}
	return pick(w, lang)
}

// shortDay is a day as a reply names a rental's start: "Dec 3" / "12月3日".
func shortDay(t time.Time, loc *time.Location, lang string) string {
	t = t.In(loc)
	if chat.NormLang(lang) == chat.LangZH {
		return fmt.Sprintf("%d月%d日", int(t.Month()), t.Day())
	}
	return t.Format("Jan 2")
}

// perUnitText writes a small exact price (of a tensor-TFLOP-hour) with
// four significant digits and its currency symbol: "¥0.01253".
func perUnitText(q *big.Rat, c ledger.Currency) string {
	f, _ := q.Float64()
	digits := 1
	for v := f; v > 0 && v < 100 && digits < 9; v *= 10 {
		digits++
	}
	s := q.FloatString(digits)
	if f >= 1 {
		s = q.FloatString(2)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return symbol(c) + s
}
