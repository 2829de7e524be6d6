package bot

import "github.com/gpuledger/gpuledger/chat"

// wordTexts are the replies about what the user's words meant: a billing
// mode written against the platform's profile, and which budget an amount
// or "off" without a currency is for (core_mode.go).
var wordTexts = chat.Catalog{
	"mode_profile": {
		"%[1]s bills <b>%[2]s</b>, but you wrote <b>%[3]s</b>: %[4]s Which one? Nothing is recorded until you choose:\n<code>%[5]s</code>",
		"%[1]s 是<b>%[2]s</b>计费，你写的是<b>%[3]s</b>：%[4]s用哪一种？选择之前什么也不记录：\n<code>%[5]s</code>"},
	"mode_profile_line": {
		"%[1]s bills <b>%[2]s</b>, but this line says <b>%[3]s</b>, nothing recorded. Send this line by itself to choose, or write the price's unit as 1.88/h.",
		"%[1]s 是<b>%[2]s</b>计费，这一行写的是<b>%[3]s</b>，没有记录。单独发送这一行来选择，或把价格单位写成 1.88元/小时。"},
	"mode_means_per-second": {
		"per-second bills the running time to the second.",
		"按秒计费按实际运行时间计到秒。"},
	"mode_means_per-minute": {
		"per-minute bills every started minute in full.",
		"按分钟计费每个开始的分钟都按整分钟计。"},
	"mode_means_per-hour": {
		"per-hour bills every started hour in full (a price per hour is written 1.88/h, not per-hour).",
		"按小时计费每个开始的小时都按整小时计（每小时的价格写成 1.88元/小时 即可，不是按小时计费）。"},
	"mode_means_always-on": {
		"always-on bills the whole time, running or stopped, like a package (包日/包月).",
		"包时段（包日/包周/包月）不论运行还是关机都计费。"},
	"budget_off_which": {
		"You have monthly budgets in %[1]s: which one to remove? Nothing was changed. %[2]s",
		"你有 %[1]s 的每月预算：要取消哪一个？什么也没改。%[2]s"},
	"budget_off_nothing": {
		"There is no monthly budget to remove. Set one: <code>/budget ¥3000/month</code>",
		"没有每月预算可取消。设置：<code>/budget ¥3000/月</code>"},
	"mode_profile_note": {
		"⚠️ %[1]s bills <b>%[2]s</b>; this records <b>%[3]s</b>: %[4]s",
		"⚠️ %[1]s 是<b>%[2]s</b>计费；这样会记为<b>%[3]s</b>：%[4]s"},
	"today_at":         {"today %[1]s", "今天 %[1]s"},
	"btn_mode_profile": {"✓ %[1]s, as %[2]s bills", "✓ %[1]s（%[2]s 的计费方式）"},
	"btn_mode_typed":   {"%[1]s, as I wrote", "%[1]s（按我写的）"},
}

// wt renders one of wordTexts in the user's language.
func (r *req) wt(key string, args ...any) string { return wordTexts.Render(r.lang, key, args...) }
