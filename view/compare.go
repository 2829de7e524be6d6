package view

import (
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// compareTexts are the texts of /compare and /job: the user's own
// price/performance table and their job runs.
var compareTexts = chat.Catalog{
	"compare_head": {
		"<b>What you got for what you paid</b> (figures measured by your agents' benches: their claim; money from your ledger)",
		"<b>花的钱换来了什么</b>（性能由你的代理测得，是代理的声明；金额来自你的账本）"},
	"compare_card":      {"• <b>%[1]s</b> on %[2]s: %[3]s (%[4]s rented, %[5]s benched)", "• %[2]s 上的 <b>%[1]s</b>：%[3]s（租过 %[4]s 次，测过 %[5]s 次）"},
	"compare_mig":       {"%[1]s (MIG slice)", "%[1]s（MIG 切片）"},
	"compare_no_bench":  {"no bench yet", "还没有测速"},
	"compare_tensor":    {"tensor %[1]s TFLOPS", "张量 %[1]s TFLOPS"},
	"compare_memory":    {"memory %[1]s", "显存 %[1]s"},
	"compare_pcie":      {"PCIe %[1]s.0 x%[2]s", "PCIe %[1]s.0 x%[2]s"},
	"compare_h2d":       {"host→GPU %[1]s GB/s", "主机→显卡 %[1]s GB/s"},
	"compare_hour":      {"%[1]s/GPU-hour", "%[1]s/卡·小时"},
	"compare_per_unit":  {"→ <b>%[1]s</b> per tensor-TFLOP-hour", "→ 每 TFLOP·小时张量算力 <b>%[1]s</b>"},
	"compare_unpriced":  {"unpriced", "未定价"},
	"compare_setup":     {"<b>Setup tax</b> (start to first GPU work, median):", "<b>准备时间成本</b>（从开机到 GPU 开始工作，中位数）："},
	"compare_setup_row": {"• %[1]s: %[2]s, %[3]s (of %[4]s)", "• %[1]s：%[2]s，%[3]s（共 %[4]s）"},
	"compare_rentals":   {"%[1]s rentals", "%[1]s 次租用"},
	"compare_rental":    {"1 rental", "1 次租用"},
	"compare_label": {
		"<b>%[1]s</b>, best first (time and money per run):",
		"<b>%[1]s</b>，最好的在前（每次的用时和花费）："},
	"compare_label_row": {
		"%[1]s. %[2]s on %[3]s: %[4]s, %[5]s a run (rests on %[6]s)",
		"%[1]s. %[3]s 上的 %[2]s：每次 %[4]s，%[5]s（基于 %[6]s）"},
	"compare_label_unpriced": {
		"%[1]s. %[2]s on %[3]s: %[4]s a run, unpriced (rests on %[5]s)",
		"%[1]s. %[3]s 上的 %[2]s：每次 %[4]s，未定价（基于 %[5]s）"},
	"compare_label_none_ok": {
		"%[1]s. %[2]s on %[3]s: no run succeeded",
		"%[1]s. %[3]s 上的 %[2]s：没有成功的运行"},
	"compare_runs":   {"%[1]s runs", "%[1]s 次"},
	"compare_run":    {"1 run", "1 次"},
	"compare_failed": {"; %[1]s failed, not counted", "；另有 %[1]s 次失败，未计入"},
	"compare_more":   {"…and %[1]s more: /compare %[2]s", "……还有 %[1]s 行：/compare %[2]s"},
	"compare_cut":    {"…and %[1]s more lines", "……还有 %[1]s 行"},
	"compare_no_jobs": {
		"No labelled job yet: time one with <code>gpuledger-agent run --label NAME -- CMD</code> on the host, or name a past run with <code>/job RENTAL NAME FROM TO</code>.",
		"还没有带标签的任务：在主机上用 <code>gpuledger-agent run --label 标签 -- 命令</code> 运行，或用 <code>/job 租用 标签 开始 结束</code> 记录过去的一次运行。"},
	"compare_empty": {
		"Nothing to compare yet. Each rental gets a bench (its receipt) when its agent first reports: install the agent with /agent NAME. Time your own jobs with <code>gpuledger-agent run --label yolo-epoch -- python train.py</code>, or name a past run with <code>/job NAME yolo-epoch 14:05 15:10</code>. Then /compare shows, per platform and card, what you got for what you paid.",
		"还没有可对比的数据。代理第一次报到时会为每个租用测速（收据）：用 /agent 名字 安装代理。用 <code>gpuledger-agent run --label yolo-epoch -- python train.py</code> 为你自己的任务计时，或用 <code>/job 名字 yolo-epoch 14:05 15:10</code> 记录过去的一次运行。之后 /compare 会按平台和显卡列出花的钱换来了什么。"},
	"compare_unknown": {
		"You have no job labelled %[1]s. Your labels: %[2]s",
		"你没有标签为 %[1]s 的任务。你的标签：%[2]s"},
	"compare_unknown_near": {
		"You have no job labelled %[1]s: did you mean %[2]s? Your labels: %[3]s",
		"你没有标签为 %[1]s 的任务：你是不是想输入 %[2]s？你的标签：%[3]s"},
	"compare_unknown_none": {
		"You have no job labelled %[1]s, nor any labelled job yet: time one with <code>gpuledger-agent run --label %[1]s -- CMD</code> on the host, or name a past run with <code>/job RENTAL %[1]s FROM TO</code>.",
		"你没有标签为 %[1]s 的任务，也还没有任何带标签的任务：在主机上用 <code>gpuledger-agent run --label %[1]s -- 命令</code> 运行，或用 <code>/job 租用 %[1]s 开始 结束</code> 记录过去的一次运行。"},

	"job_named": {
		"Recorded a run of <b>%[1]s</b> on %[2]s: %[3]s to %[4]s (%[5]s), %[6]s. Your table: /compare %[1]s",
		"已记录 %[2]s 上 <b>%[1]s</b> 的一次运行：%[3]s 到 %[4]s（%[5]s），%[6]s。你的对比表：/compare %[1]s"},
	"job_named_agent": {
		"That was the last job its agent ran without a label: <code>%[1]s</code>.",
		"这是代理最近运行的无标签任务：<code>%[1]s</code>。"},
	"job_already": {
		"This run of %[1]s on %[2]s (%[3]s to %[4]s) is already recorded: nothing changed.",
		"%[2]s 上 %[1]s 的这次运行（%[3]s 到 %[4]s）已经记录过了，没有改动。"},
	"job_no_unlabelled": {
		"%[1]s has no unlabelled job from its agent to name: give the span of the run, e.g. /job %[1]s %[2]s 14:05 15:10",
		"%[1]s 没有代理运行过的无标签任务可以命名：请给出运行的时间段，比如 /job %[1]s %[2]s 14:05 15:10"},
	"job_last_named": {
		"The last job its agent ran on %[1]s without a label is already named %[2]s: to name another run, give its span: /job %[1]s %[3]s FROM TO",
		"%[1]s 上代理最近运行的无标签任务已经命名为 %[2]s：要命名另一次运行，请给出时间段：/job %[1]s %[3]s 开始 结束"},
	"job_last_failed": {
		"The last unlabelled job on %[1]s failed (exit code %[2]s): a failed run is no benchmark, so nothing was recorded. Give the span of a run that succeeded: /job %[1]s %[3]s FROM TO",
		"%[1]s 上最近的无标签任务失败了（退出码 %[2]s）：失败的运行不能当基准，没有记录。请给出一次成功运行的时间段：/job %[1]s %[3]s 开始 结束"},
	"job_off": {
		"This server keeps no job runs, so /job and /compare are off.",
		"这台服务器不保存任务记录，/job 和 /compare 不可用。"},
	"job_list_head": {"<b>Job runs on %[1]s</b>, newest first:", "<b>%[1]s 上的任务</b>，最新的在前："},
	"job_list_none": {
		"No job run on %[1]s yet. Time one with <code>gpuledger-agent run --label NAME -- CMD</code> on the host, or name a past one: /job %[1]s NAME FROM TO",
		"%[1]s 上还没有任务记录。在主机上用 <code>gpuledger-agent run --label 标签 -- 命令</code> 运行，或记录过去的一次：/job %[1]s 标签 开始 结束"},
	"job_list_row":  {"• %[1]s: %[2]s, %[3]s · %[4]s · %[5]s", "• %[1]s：%[2]s，%[3]s · %[4]s · %[5]s"},
	"job_no_label":  {"(no label)", "（无标签）"},
	"job_ok":        {"exit 0", "退出码 0"},
	"job_exit":      {"failed, exit %[1]s", "失败，退出码 %[1]s"},
	"job_chat":      {"named in the chat", "在聊天中记录"},
	"job_list_more": {"…and %[1]s older", "……还有 %[1]s 条更早的"},
	"job_cost_parts": {
		"%[1]s (compute %[2]s · storage %[3]s · traffic %[4]s)",
		"%[1]s（计算 %[2]s · 存储 %[3]s · 流量 %[4]s）"},
	"job_pro_rata": {" (traffic shared out by time)", "（流量按时间分摊）"},
	"job_unpriced": {
		"%[1]s so far, part of it unpriced",
		"已知 %[1]s，有部分未定价"},
}

// CompareCatalog is the texts of /compare and /job, for the catalog tests.
func CompareCatalog() chat.Catalog { return compareTexts }

func ctr(lang, key string, args ...any) string { return compareTexts.Render(lang, key, args...) }

// CompareMaxChars bounds a /compare reply below Telegram's 4096
// characters, leaving room for the escaping of what it quotes.
const CompareMaxChars = 3800

// CompareText renders the user's table: the cards, the setup tax and
// every label's best rows (at most perLabel each, 0 for all), cut with
// "…and N more lines" before CompareMaxChars.
func CompareText(t ledger.CompareTable, lang string, perLabel int) string {
	lines := []string{ctr(lang, "compare_head")}
	for _, c := range t.Cards {
		lines = append(lines, cardLine(c, lang))
	}
	if len(t.Setup) > 0 {
		lines = append(lines, "", ctr(lang, "compare_setup"))
		for _, s := range t.Setup {
			money := ctr(lang, "compare_unpriced")
			if s.Priced > 0 {
				money = FormatMoney(ledger.Round(s.Money.Rat(), s.Currency))
			}
			n := ctr(lang, "compare_rental")
			if s.Rentals != 1 {
				n = ctr(lang, "compare_rentals", strconv.Itoa(s.Rentals))
			}
			lines = append(lines, ctr(lang, "compare_setup_row", PlatformName(lang, s.Platform), chat.FormatDuration(s.Time.Round(time.Minute), lang), money, n))
		}
	}
	if len(t.Labels) == 0 {
		lines = append(lines, "", ctr(lang, "compare_no_jobs"))
	}
	for _, l := range t.Labels {
		lines = append(lines, "")
		lines = append(lines, labelLines(l, lang, perLabel)...)
	}
	return cutLines(lines, lang)
}

// CompareLabelText renders one label's whole table.
func CompareLabelText(l ledger.LabelTable, lang string) string {
	return cutLines(labelLines(l, lang, 0), lang)
}

// CompareEmptyText says how to get a table: the agent's bench, a
// labelled job.
func CompareEmptyText(lang string) string { return ctr(lang, "compare_empty") }

// CompareUnknownLabel answers /compare LABEL for a label the user has no
// job of: the labels they have, and the nearest ones.
func CompareUnknownLabel(label string, have, near []string, lang string) string {
	switch {
	case len(have) == 0:
		return ctr(lang, "compare_unknown_none", label)
	case len(near) > 0:
		return ctr(lang, "compare_unknown_near", label, strings.Join(near, ", "), strings.Join(have, ", "))
	}
	return ctr(lang, "compare_unknown", label, strings.Join(have, ", "))
}

func cutLines(lines []string, lang string) string {
	n := 0
	for i, l := range lines {
		if n+len(l)+1 > CompareMaxChars {
			rest := 0
			for _, x := range lines[i:] {
				if x != "" {
					rest++
				}
			}
			return strings.Join(lines[:i], "\n") + "\n" + ctr(lang, "compare_cut", strconv.Itoa(rest))
		}
		n += len(l) + 1
	}
	return strings.Join(lines, "\n")
}

func cardName(gpu string, mig bool, lang string) string {
	if mig {
		return compareTexts.Text(lang, "compare_mig", gpu)
	}
	return gpu
}

func cardLine(c ledger.CardRow, lang string) string {
	var figs []string
	if c.TensorTFLOPS > 0 {
		figs = append(figs, ctr(lang, "compare_tensor", fig3(c.TensorTFLOPS)))
	}
	if c.MemGBps > 0 {
		figs = append(figs, ctr(lang, "compare_memory", bandwidth(c.MemGBps)))
	}
	if c.PCIeGen > 0 {
		figs = append(figs, ctr(lang, "compare_pcie", strconv.Itoa(c.PCIeGen), strconv.Itoa(c.PCIeWidth)))
	}
	if c.H2DGBps > 0 {
		figs = append(figs, ctr(lang, "compare_h2d", fig3(c.H2DGBps)))
	}
	if c.Benched == 0 {
		figs = append(figs, ctr(lang, "compare_no_bench"))
	}
	if c.PricedRentals > 0 {
		price := ctr(lang, "compare_hour", FormatMoney(ledger.Round(c.HourPerGPU.Rat(), c.Currency)))
		if c.PerUnitRentals > 0 {
			price += " " + ctr(lang, "compare_per_unit", c.Currency.Symbol()+SigFigs(c.PerTFLOPHour, 3))
		}
		figs = append(figs, price)
	}
	return ctr(lang, "compare_card", cardName(c.GPU, c.MIG, lang), PlatformName(lang, c.Platform), chat.RawHTML(strings.Join(figs, " · ")),
		strconv.Itoa(c.Rentals), strconv.Itoa(c.Benched))
}

// labelLines renders one label: its best rows first, at most max (0:
// all), then how many more there are.
func labelLines(l ledger.LabelTable, lang string, max int) []string {
	lines := []string{ctr(lang, "compare_label", l.Label)}
	for i, r := range l.Rows {
		if max > 0 && i == max {
			lines = append(lines, ctr(lang, "compare_more", strconv.Itoa(len(l.Rows)-max), l.Label))
			break
		}
		n := strconv.Itoa(i + 1)
		gpu := cardName(r.GPU, r.MIG, lang)
		var line string
		if r.Runs == 0 {
			line = ctr(lang, "compare_label_none_ok", n, gpu, PlatformName(lang, r.Platform))
		} else {
			runs := ctr(lang, "compare_run")
			if r.Runs != 1 {
				runs = ctr(lang, "compare_runs", strconv.Itoa(r.Runs))
			}
			d := chat.FormatDuration(r.Time.Round(time.Second), lang)
			if r.Priced > 0 {
				line = ctr(lang, "compare_label_row", n, gpu, PlatformName(lang, r.Platform), d, FormatMoney(ledger.Round(r.Money.Rat(), r.Currency)), runs)
			} else {
				line = ctr(lang, "compare_label_unpriced", n, gpu, PlatformName(lang, r.Platform), d, runs)
			}
		}
		if r.Failed > 0 {
			line += ctr(lang, "compare_failed", strconv.Itoa(r.Failed))
		}
		lines = append(lines, line)
	}
	return lines
}

// fig3 shows a measured figure to about three significant digits.
func fig3(x float64) string {
	switch {
	case x >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case x >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// bandwidth shows GB/s, as TB/s from 1000 GB/s.
func bandwidth(gbps float64) string {
	if gbps >= 1000 {
		return strconv.FormatFloat(gbps/1000, 'f', 2, 64) + " TB/s"
	}
	return fig3(gbps) + " GB/s"
}

// SigFigs shows d rounded (half away from zero) to n significant digits:
// 0.01253333 → "0.0125", 1.88 → "1.88", 1234.5 → "1230". The figure
// stays exact until it is shown.
func SigFigs(d ledger.Decimal, n int) string {
	r := d.Rat()
	if r.Sign() == 0 || n < 1 {
		return "0"
	}
	neg := r.Sign() < 0
	r.Abs(r)
	// e is the exponent of the first significant digit.
	e := 0
	ten, one := big.NewRat(10, 1), big.NewRat(1, 1)
	for x := new(big.Rat).Set(r); x.Cmp(ten) >= 0; x.Quo(x, ten) {
		e++
	}
	for x := new(big.Rat).Set(r); x.Cmp(one) < 0; x.Mul(x, ten) {
		e--
	}
	dec := n - 1 - e // digits after the point; negative: zeros before it
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(dec))), nil))
	x := new(big.Rat).Set(r)
	if dec >= 0 {
		x.Mul(x, p)
	} else {
		x.Quo(x, p)
	}
	q, rem := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	if rem.Lsh(rem, 1).Cmp(x.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if q.Cmp(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)) >= 0 {
		q.Quo(q, big.NewInt(10)) // 9.995 → 10.0: the carry made one digit more
		dec--
		if dec < 0 {
			p.Mul(p, ten)
		}
	}
	if dec < 0 {
		q.Mul(q, p.Num())
		dec = 0
	}
	out := q.String()
	if dec > 0 {
		for len(out) <= dec {
			out = "0" + out
		}
		out = out[:len(out)-dec] + "." + out[len(out)-dec:]
	}
	if neg {
		out = "-" + out
	}
	return out
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// JobText renders one of /job's short answers (keys job_*) in lang.
func JobText(lang, key string, args ...any) string { return ctr(lang, key, args...) }

// JobCostText is what a span of a rental cost: its total, with the parts
// when storage or traffic add to the compute, or what is known of it when
// a part has no price.
func JobCostText(sc ledger.SpanCost, lang string) string {
	total := FormatMoney(sc.Total)
	if !sc.Priced() {
		return ctr(lang, "job_unpriced", total)
	}
	if sc.Storage.Minor == 0 && sc.Traffic.Minor == 0 {
		return total
	}
	s := ctr(lang, "job_cost_parts", total, FormatMoney(sc.Compute), FormatMoney(sc.Storage), FormatMoney(sc.Traffic))
	if sc.TrafficProRata && sc.Traffic.Minor != 0 {
		s += ctr(lang, "job_pro_rata")
	}
	return s
}

// JobRun is one line of /job NAME: a run and what it cost.
type JobRun struct {
	Run  ledger.JobRun
	Cost ledger.SpanCost
}

// JobRunsMax is how many runs /job NAME lists.
const JobRunsMax = 20

// JobRunsText lists a rental's runs, newest first, at most JobRunsMax.
func JobRunsText(name string, runs []JobRun, lang string, loc *time.Location, now time.Time) string {
	if len(runs) == 0 {
		return ctr(lang, "job_list_none", name)
	}
	lines := []string{ctr(lang, "job_list_head", name)}
	for i := len(runs) - 1; i >= 0; i-- {
		if len(runs)-1-i == JobRunsMax {
			lines = append(lines, ctr(lang, "job_list_more", strconv.Itoa(i+1)))
			break
		}
		j := runs[i]
		label := j.Run.Label
		if label == "" {
			label = compareTexts.Text(lang, "job_no_label")
		}
		outcome := ctr(lang, "job_chat")
		if j.Run.Source == ledger.JobFromAgent {
			outcome = ctr(lang, "job_ok")
			if j.Run.ExitCode != 0 {
				outcome = ctr(lang, "job_exit", strconv.Itoa(j.Run.ExitCode))
			}
		}
		lines = append(lines, ctr(lang, "job_list_row", label, FormatTime(j.Run.StartedAt, loc, now, lang),
			chat.FormatDuration(j.Run.Duration().Round(time.Second), lang), outcome, chat.RawHTML(JobCostText(j.Cost, lang))))
	}
	return cutLines(lines, lang)
}

// JobNamedText confirms a run named with /job; agentCmd is the command of
// the agent's run it names, "" when the user gave the span.
func JobNamedText(name string, run ledger.JobRun, cost ledger.SpanCost, agentCmd string, lang string, loc *time.Location, now time.Time) string {
	from, to := FormatSpan(run.StartedAt, run.EndedAt, loc, now, lang)
	s := ctr(lang, "job_named", run.Label, name, from, to, chat.FormatDuration(run.Duration().Round(time.Second), lang), chat.RawHTML(JobCostText(cost, lang)))
	if agentCmd != "" {
		s += "\n" + ctr(lang, "job_named_agent", agentCmd)
	}
	return s
}
