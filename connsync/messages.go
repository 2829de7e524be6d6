package connsync

import (
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// messages are the sync loop's texts to users, in English and Chinese
// (HTML; arguments escaped by chat.Catalog.Render unless chat.RawHTML).
var messages = chat.Catalog{
	"new_rental": {
		"%[1]s lists %[2]s (%[3]s): logged as <b>%[4]s</b> from %[5]s%[6]s. /undo removes it.",
		"%[1]s 列出 %[2]s（%[3]s）：已记为 <b>%[4]s</b>，从 %[5]s 起%[6]s。/undo 可删除。"},
	"new_rental_stopped": {
		"%[1]s lists %[2]s (%[3]s), stopped: logged as <b>%[4]s</b>, stopped from %[5]s (no compute)%[6]s. /undo removes it.",
		"%[1]s 列出已停止的 %[2]s（%[3]s）：已记为 <b>%[4]s</b>，从 %[5]s 起为停止状态（不计算力费）%[6]s。/undo 可删除。"},
	"unpriced": {
		", no price listed: set one with /price",
		"，平台未给价格：请用 /price 设置"},
	"approx_start": {
		" (approximate: the time it was first listed)",
		"（约略：首次列出的时间）"},
	"clamped_start": {
		" (the platform says it started earlier; the ledger counts at most %[1]s back)",
		"（平台显示更早开始；账本最多往前计 %[1]s）"},
	"ev_stop": {
		"%[1]s stopped <b>%[2]s</b> at %[3]s %[4]s · /undo",
		"%[1]s 停止了 <b>%[2]s</b>，时间 %[3]s %[4]s · /undo"},
	"ev_resume": {
		"%[1]s resumed <b>%[2]s</b> at %[3]s %[4]s · /undo",
		"%[1]s 恢复了 <b>%[2]s</b>，时间 %[3]s %[4]s · /undo"},
	"ev_release": {
		"%[1]s terminated <b>%[2]s</b> at %[3]s %[4]s: released in the ledger · /undo",
		"%[1]s 释放了 <b>%[2]s</b>，时间 %[3]s %[4]s：账本已记为释放 · /undo"},
	"ev_missing": {
		"%[1]s no longer lists <b>%[2]s</b>: released at %[3]s (approximate: when it was last listed) · /undo",
		"%[1]s 已不再列出 <b>%[2]s</b>：按最后一次列出的时间 %[3]s 记为释放（约略）· /undo"},
	"time_platform": {"(the platform's time)", "（平台给出的时间）"},
	"time_approx":   {"(approximate: the poll's time)", "（约略：同步时的时间）"},
	"busy_note": {
		"\nIts agent reported the GPUs busy: check that the work was saved.",
		"\n该实例上的 agent 报告 GPU 正忙：请确认工作已保存。"},
	"ask": {
		"%[1]s lists %[2]s (%[3]s). Is it one of your rentals?",
		"%[1]s 列出 %[2]s（%[3]s）。它是你已记录的某个租用吗？"},
	"btn_new":  {"A new rental", "新租用"},
	"btn_skip": {"Don't track it", "不跟踪"},
	"answered": {"Already answered.", "已经回答过了。"},
	"admin_only": {
		"Only an admin of the team can decide what the team tracks.",
		"只有团队管理员可以决定团队跟踪哪些实例。"},
	"gone": {
		"That instance is no longer known.",
		"该实例已不存在。"},
	"bound": {
		"%[1]s %[2]s is <b>%[3]s</b>: it is synced from now on.",
		"%[1]s %[2]s 即 <b>%[3]s</b>：此后自动同步。"},
	"skipped": {
		"%[1]s %[2]s will not be tracked.",
		"%[1]s %[2]s 将不被跟踪。"},
	"price": {
		"%[1]s lists <b>%[2]s</b> at %[3]s; the ledger has %[4]s. The ledger is unchanged; to use the platform's price: <code>/price %[2]s %[5]s</code>",
		"%[1]s 上 <b>%[2]s</b> 的价格为 %[3]s，账本为 %[4]s。账本未改动；如要采用平台价格：<code>/price %[2]s %[5]s</code>"},
	"no_price": {"no price", "无价格"},
	"reappeared": {
		"%[1]s lists %[2]s again, after it was released in the ledger as <b>%[3]s</b> when it went missing. It is not logged again by itself: /rent logs it if it bills.",
		"%[1]s 再次列出 %[2]s；它此前因未被列出已在账本中记为释放（<b>%[3]s</b>）。不会自动再次记录：如仍在计费，请用 /rent 记录。"},
	"rejected": {
		"%[1]s rejected the API key%[2]s. Syncing %[1]s has stopped and the ledger keeps its last state. Create a new key on the platform and send <code>/connect %[3]s NEWKEY</code>.",
		"%[1]s 拒绝了 API 密钥%[2]s。%[1]s 的同步已停止，账本保持最后状态。请在平台上新建密钥并发送 <code>/connect %[3]s 新密钥</code>。"},
	"hint": {" (ending …%[1]s)", "（尾号 …%[1]s）"},
	"unsealable": {
		"⚠ Cannot open the stored %[1]s key%[2]s: GPULEDGER_SECRET (or the key file) differs from the one it was stored with. Syncing %[1]s is paused and the ledger keeps its last state; nothing was deleted. Started again with the secret it was stored with, the server resumes by itself; or send <code>/connect %[3]s KEY</code> again.",
		"⚠ 无法打开已保存的 %[1]s 密钥%[2]s：GPULEDGER_SECRET（或密钥文件）与保存它时的不同。%[1]s 的同步已暂停，账本保持最后状态，没有删除任何内容。用保存时的那个密钥重启服务器即可自动恢复；或重新发送 <code>/connect %[3]s 密钥</code>。"},
	"key_damaged": {
		"⚠ Cannot open the stored %[1]s key%[2]s: it was altered, or belongs to another user or platform. Syncing %[1]s is paused and the ledger keeps its last state. Send <code>/connect %[3]s KEY</code> again.",
		"⚠ 无法打开已保存的 %[1]s 密钥%[2]s：它被改动过，或属于其他用户或平台。%[1]s 的同步已暂停，账本保持最后状态。请重新发送 <code>/connect %[3]s 密钥</code>。"},
	"outage": {
		"%[1]s has not answered properly since %[2]s: %[3]s. The ledger keeps its last state (last good sync: %[4]s). You will be told when it answers again.",
		"%[1]s 自 %[2]s 起未正常应答：%[3]s。账本保持最后状态（最后一次成功同步：%[4]s）。恢复时会通知你。"},
	"recovered": {
		"%[1]s answers again: syncing resumed.",
		"%[1]s 已恢复应答：同步继续。"},
	"cause_unavailable": {"it is down or answering errors", "平台宕机或返回错误"},
	"cause_bad":         {"its answers could not be read", "其应答无法解析"},
	"cause_rate":        {"it is refusing requests as too frequent", "以请求过于频繁为由拒绝"},
	"never":             {"never", "从未"},
	"flood": {
		"%[1]s lists %[2]s instances you have not logged. None is logged until you answer.",
		"%[1]s 列出了 %[2]s 个你尚未记录的实例。在你回答之前不会记录任何一个。"},
	"flood_one": {
		"%[1]s lists an instance you have not logged, past the day's %[2]s new ones logged by themselves. It is not logged until you answer.",
		"%[1]s 列出了 1 个你尚未记录的实例（今日自动记录已达 %[2]s 个上限）。在你回答之前不会记录。"},
	"btn_flood_log":    {"Log all", "全部记录"},
	"btn_flood_show":   {"Show them", "查看列表"},
	"btn_flood_ignore": {"Ignore", "忽略"},
	"flood_gone": {
		"%[1]s no longer lists instances you have not logged.",
		"%[1]s 已不再列出你尚未记录的实例。"},
	"flood_logging_soon": {
		"Logging the %[2]s instances %[1]s lists…",
		"正在记录 %[1]s 列出的 %[2]s 个实例…"},
	"flood_logging": {
		"Logging the instances %[1]s lists: %[2]s of %[3]s so far…",
		"正在记录 %[1]s 列出的实例：已记录 %[2]s / %[3]s…"},
	"flood_logged": {
		"Logged %[2]s instances %[1]s lists as rentals. /status shows them; /release or /undo each as usual.",
		"已将 %[1]s 列出的 %[2]s 个实例记为租用。/status 可查看；可照常 /release 或 /undo。"},
	"flood_ignoring_soon": {
		"Ignoring the %[2]s instances %[1]s lists…",
		"正在忽略 %[1]s 列出的 %[2]s 个实例…"},
	"flood_ignored": {
		"Ignored %[2]s instances %[1]s lists: they will not be logged. Instances it lists from now on are told as usual.",
		"已忽略 %[1]s 列出的 %[2]s 个实例：不会记录它们。此后新列出的实例照常通知。"},
	"flood_not_read": {
		"The list is read again at the next sync: try again in a minute.",
		"列表将在下次同步时重新读取：请一分钟后再试。"},
	"flood_list": {
		"%[1]s lists %[2]s instances you have not logged:",
		"%[1]s 列出了 %[2]s 个你尚未记录的实例："},
	"flood_item": {
		"• %[1]s · %[2]s · %[3]s",
		"• %[1]s · %[2]s · %[3]s"},
	"flood_more": {
		"…and %[1]s more.",
		"……另有 %[1]s 个。"},
}

// platformName is a platform's display name ("RunPod").
func platformName(p string) string {
	if pr, ok := ledger.LookupProfile(p); ok && pr.Name != "" {
		return pr.Name
	}
	return p
}

// fmtWhen shows t in loc to the minute, as the rest of the chat writes
// times in lang (view.FormatTime): the time alone when it is on now's day
// there, else "yesterday" or the date too.
func fmtWhen(t, now time.Time, loc *time.Location, lang string) string {
	if t.IsZero() {
		return ""
	}
	return view.FormatTime(t.Truncate(time.Minute), loc, now, lang)
}

// fmtRate shows an hourly price: "$0.79/h".
func fmtRate(amount ledger.Decimal, c ledger.Currency) string {
	return c.Symbol() + amount.String() + "/h"
}
