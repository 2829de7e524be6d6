package view

import "github.com/gpuledger/gpuledger/chat"

// messages holds the texts of the ledger views: key → {English, Chinese},
// HTML in Telegram's subset with indexed verbs (%[1]s) so that a
// translation may reorder its arguments.
var messages = chat.Catalog{
	"budget_none": {
		"No monthly budget. Set one per currency: <code>/budget ¥3000/month</code>, <code>/budget $500/month</code>",
		"没有设置每月预算。每种货币各设一个：<code>/budget ¥3000/月</code>、<code>/budget $500/月</code>"},
	"budget_unset": {
		"%[1]s spent this month in %[2]s, which has no budget",
		"本月 %[2]s 花费 %[1]s，未设预算"},
	"budget_line": {
		"Budget: %[1]s of %[2]s this month (%[3]s%%)",
		"预算：本月已花 %[1]s / %[2]s（%[3]s%%）"},
	"budget_over":   {"⚠ over budget", "⚠ 已超预算"},
	"balances_head": {"<b>Balances</b>", "<b>余额</b>"},
	"balance_line": {
		"%[1]s: %[2]s, burning %[3]s/h, %[4]s",
		"%[1]s：%[2]s，每小时消耗 %[3]s，%[4]s"},
	"balance_api": {
		" (from %[1]s's API, %[2]s)",
		"（来自 %[1]s API，%[2]s）"},
	"runway_none":    {"not burning", "当前不消耗"},
	"runway_out":     {"⚠ used up", "⚠ 已用完"},
	"runway_at":      {"runs out %[1]s (in %[2]s)", "预计 %[1]s 用完（还剩 %[2]s）"},
	"status_head":    {"<b>Rentals</b>", "<b>在租机器</b>"},
	"status_empty":   {"No rentals. Record one: <code>/rent box1 autodl 4090 1.88/h</code>", "没有在租的机器。记一台：<code>/rent box1 autodl 4090 1.88元/小时</code>"},
	"state_running":  {"▶ running, %[1]s so far", "▶ 运行中，累计 %[1]s"},
	"state_stopped":  {"⏸ stopped %[1]s", "⏸ 已关机 %[1]s"},
	"status_rental":  {"<b>%[1]s</b> · %[2]s %[3]s · %[4]s", "<b>%[1]s</b> · %[2]s %[3]s · %[4]s"},
	"status_cost":    {"%[1]s %[2]s · compute %[3]s", "%[1]s %[2]s · 计算 %[3]s"},
	"status_total":   {" · total %[1]s", " · 合计 %[1]s"},
	"status_idle":    {"idle %[1]s (%[2]s)", "空闲 %[1]s（%[2]s）"},
	"status_lease":   {"lease ends %[1]s", "租期 %[1]s 到期"},
	"status_volume":  {"💾 %[1]s %[2]sGB · %[3]s", "💾 %[1]s %[2]sGB · %[3]s"},
	"status_volumes": {"<b>Volumes</b>", "<b>存储盘</b>"},
	"spend_nothing":  {"nothing spent", "没有花费"},
	"spend_total": {
		"%[1]s — compute %[2]s · storage %[3]s · traffic %[4]s · other %[5]s",
		"%[1]s —— 计算 %[2]s · 存储 %[3]s · 流量 %[4]s · 其他 %[5]s"},
	"spend_unpriced":    {" (+ %[1]s UNPRICED)", "（另有 %[1]s 项 UNPRICED 未定价）"},
	"no_platform":       {"(no platform)", "（无平台）"},
	"spend_by_platform": {"by platform: %[1]s", "按平台：%[1]s"},
	"spend_by_rental":   {"by rental: %[1]s", "按机器：%[1]s"},
	"summary_head":      {"<b>Summary %[1]s</b>\nToday:", "<b>每日总结 %[1]s</b>\n今天："},
	"summary_month":     {"Month to date:", "本月至今："},
	"summary_none_running": {
		"Nothing is running.",
		"没有在运行的机器。"},
	"summary_running":      {"Running: %[1]s, accruing %[2]s", "运行中：%[1]s 台，合计 %[2]s"},
	"summary_running_n":    {"Running: %[1]s", "运行中：%[1]s 台"},
	"summary_running_line": {"▶ %[1]s %[2]s (%[3]s) %[4]s", "▶ %[1]s %[2]s（%[3]s）%[4]s"},
	"per_hour":             {"/h", "/小时"},
	"prepaid":              {"prepaid %[1]s", "已预付 %[1]s"},

	// The UNPRICED lines a total leaves out, and how to price each.
	"unpriced_head": {
		"⚠️ UNPRICED, not in the totals above:",
		"⚠️ 以下未定价（UNPRICED），没有计入上面的合计："},
	"unpriced_line": {"• %[1]s %[2]s: <code>%[3]s</code>", "• %[1]s %[2]s：<code>%[3]s</code>"},
	"unpriced_more": {"…and %[1]s more (listed here once these are priced)", "…还有 %[1]s 项（这些定价后会列出）"},
	"unpriced_example": {
		"Put your platform's price in place of the example amount.",
		"把示例金额换成平台的实际价格再发送。"},
}

// tr renders one of the views' messages: string arguments escaped,
// chat.RawHTML not.
func tr(lang, key string, args ...any) string { return messages.Render(lang, key, args...) }
