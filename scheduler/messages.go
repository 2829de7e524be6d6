package scheduler

import (
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// messages is the scheduler's catalog: key → {English, Chinese}. Cards,
// alerts, button labels and button toasts follow the user's language
// setting, like the core's replies (bot/messages.go). Templates are HTML
// (Telegram's subset) with indexed verbs (%[1]s) so that a translation
// may reorder its arguments. The /why log stays in English: it is
// evidence recorded once, not a reply.
var messages = chat.Catalog{
	// buttons
	"btn_release_now": {"Release now", "立即释放"},
	"btn_snooze":      {"Snooze 1h", "推迟 1 小时"},
	"btn_keep":        {"Keep", "保留"},
	"btn_released":    {"I released it", "我已释放"},
	"btn_extend":      {"Extend 2h", "延长 2 小时"},
	"btn_release_end": {"Release at end", "到期释放"},

	// the idle card
	"idle": {
		"<b>%[1]s</b> idle %[2]s · %[3]s spent idle",
		"<b>%[1]s</b> 空闲 %[2]s · 空闲花费 %[3]s"},
	"idle_kept": {
		"Kept: no more reminders while it stays idle.",
		"已保留：空闲期间不再提醒。"},
	"snoozed_until": {"Snoozed until %[1]s.", "已推迟到 %[1]s。"},
	"idle_auto": {
		"Auto-%[1]s at %[2]s if it stays idle (/autorelease %[3]s off to cancel).",
		"如果一直空闲，将在 %[2]s 自动%[1]s（取消：/autorelease %[3]s off）。"},
	"idle_people": {"Connected: %[1]s", "在线：%[1]s"},
	"idle_people_idle_jupyter": {"Jupyter connected but nothing run for %[1]s: it no longer holds the automatic %[2]s.",
		"Jupyter 在线，但已 %[1]s 没有运行任何代码：不再暂缓自动%[2]s。"},
	"idle_people_idle_ssh": {"SSH connected but nothing typed for %[1]s: it no longer holds the automatic %[2]s.",
		"SSH 在线，但已 %[1]s 没有任何输入：不再暂缓自动%[2]s。"},
	"idle_people_idle": {"Connected but nothing done for %[1]s: they no longer hold the automatic %[2]s.",
		"有人在线，但已 %[1]s 没有任何操作：不再暂缓自动%[2]s。"},
	"idle_auto_held": {
		"Automatic %[1]s held while someone is connected (/autorelease %[2]s %[3]s wait_for=none acts anyway). Release now still releases.",
		"有人在线，自动%[1]s暂缓（/autorelease %[2]s %[3]s wait_for=none 则照常执行）。点「立即释放」仍会释放。"},
	"idle_silent": {
		"<b>%[1]s</b> idle %[2]s · %[3]s spent idle, until its agent went silent at %[4]s: agent silent since %[4]s. Silence is not counted as idle.",
		"<b>%[1]s</b> 空闲 %[2]s · 空闲花费 %[3]s，直到代理于 %[4]s 失联。失联期间不计为空闲。"},
	"reminder_below": {"<i>(reminder below)</i>", "<i>（见下方提醒）</i>"},
	"busy_again":     {"<b>%[1]s</b> is busy again.", "<b>%[1]s</b> 又忙起来了。"},
	"is_state":       {"<b>%[1]s</b> is %[2]s.", "<b>%[1]s</b> %[2]s。"},
	"verdict_unknown": {
		"<b>%[1]s</b>: the agent cannot tell whether it is idle.",
		"<b>%[1]s</b>：代理无法判断它是否空闲。"},
	"auto_ordered": {
		"<b>%[1]s</b>: automatic %[2]s ordered (idle past the grace period). Waiting for the agent to confirm…",
		"<b>%[1]s</b>：空闲已超过宽限期，已下令自动%[2]s。等待代理确认…"},

	// silent agents, long runs, leases
	"silent_back": {
		"<b>%[1]s</b>'s agent is back (silent %[2]s).",
		"<b>%[1]s</b> 的代理恢复上报了（失联 %[2]s）。"},
	"silent": {
		"<b>%[1]s</b>'s agent has been silent %[2]s: crashed, preempted or released elsewhere? It may still be billing.",
		"<b>%[1]s</b> 的代理已失联 %[2]s：崩溃了、被抢占了，还是在别处释放了？它可能仍在计费。"},
	"long_run": {
		"<b>%[1]s</b> has been running %[2]s (%[3]s so far) and has no agent watching it. Still using it?",
		"<b>%[1]s</b> 已运行 %[2]s（已花 %[3]s），没有代理在监控它。还在用吗？"},
	"lease_ended": {
		"<b>%[1]s</b>'s lease ended at %[2]s and it is still running (billing).",
		"<b>%[1]s</b> 的租期已于 %[2]s 结束，但它仍在运行（计费中）。"},
	"lease_ends": {
		"<b>%[1]s</b>'s lease ends at %[2]s (in %[3]s).",
		"<b>%[1]s</b> 的租期将于 %[2]s 结束（还有 %[3]s）。"},
	"lease_agent_releases": {
		" Its agent will release it then, unless it is busy.",
		"届时代理会释放它，除非它正忙。"},
	"lease_now_ends": {
		"<b>%[1]s</b>'s lease now ends at %[2]s.",
		"<b>%[1]s</b> 的租期已延长到 %[2]s。"},
	"lease_release_at": {
		"<b>%[1]s</b> will be released by its agent at %[2]s, unless it is busy then.",
		"<b>%[1]s</b> 将由代理在 %[2]s 释放，除非届时它正忙。"},

	// button toasts
	"t_broken":           {"This button is broken: use /status.", "这个按钮坏了：请用 /status。"},
	"t_already_released": {"%[1]s is already released.", "%[1]s 已经释放了。"},
	"t_releasing_order": {
		"%[1]s is already being released (order %[2]s, %[3]s).",
		"%[1]s 正在释放中（指令 %[2]s，%[3]s）。"},
	"t_releasing":   {"%[1]s is already being released.", "%[1]s 正在释放中。"},
	"t_no_agent":    {"%[1]s has no agent: release it on the platform, then send /release %[1]s.", "%[1]s 没有代理：请在平台上释放，然后发送 /release %[1]s。"},
	"t_no_command":  {"%[1]s's agent has no --release-cmd: release it on the platform, then send /release %[1]s.", "%[1]s 的代理没有设置 --release-cmd：请在平台上释放，然后发送 /release %[1]s。"},
	"t_release_ord": {"Release ordered: %[1]s", "已下令释放：%[1]s"},
	"releasing_people": {
		"Someone is connected (%[1]s); you asked, so it is released anyway.",
		"有人在线（%[1]s）；这是你的指令，仍会释放。"},
	"releasing": {
		"Releasing <b>%[1]s</b>: waiting for its agent to confirm (it re-checks that the GPU is idle first)…",
		"正在释放 <b>%[1]s</b>：等待代理确认（它会先再次确认 GPU 空闲）…"},
	"t_nothing_snooze": {"Nothing to snooze.", "没有需要推迟的提醒。"},
	"t_snoozed":        {"Snoozed until %[1]s", "已推迟到 %[1]s"},
	"t_ok":             {"OK.", "好的。"},
	"kept":             {"Kept: no more reminders about this.", "已保留：不再就此提醒。"},
	"t_kept":           {"Kept %[1]s", "已保留 %[1]s"},
	"t_no_lease":       {"%[1]s has no lease.", "%[1]s 没有设置租期。"},
	"t_extended":       {"Lease extended to %[1]s", "租期已延长到 %[1]s"},
	"t_release_at":     {"Release at %[1]s", "将在 %[1]s 释放"},
	"released_by_hand": {
		"✓ <b>%[1]s</b> released at %[2]s (recorded by hand). Released earlier? Send /undo, then /release %[1]s at TIME.",
		"✓ <b>%[1]s</b> 已于 %[2]s 释放（手动记录）。如果更早就释放了：发送 /undo，再发送 /release %[1]s at 时间（如 2小时前）。"},
	"t_released": {"✓ %[1]s released %[2]s. Earlier? /undo, then /release %[1]s at TIME",
		"✓ %[1]s 已于 %[2]s 释放。更早？/undo 后 /release %[1]s at 时间"},

	// what the agents report
	"the_job": {"the job", "任务"},
	"job_finished": {
		"<b>%[1]s</b>: %[2]s finished (exit %[3]s, %[4]s, %[5]s). Release?",
		"<b>%[1]s</b>：%[2]s 已结束（退出码 %[3]s，用时 %[4]s，花费 %[5]s）。要释放吗？"},
	"gpu_model_differs": {"the agent sees %[1]s, you logged %[2]s", "代理看到的是 %[1]s，你记录的是 %[2]s"},
	"gpu_count_short":   {"the agent sees only %[1]s of the %[2]s GPUs you pay for", "代理只看到 %[1]s 张卡，你付费的是 %[2]s 张"},
	"gpu_mismatch_sep":  {"; ", "；"},
	"gpu_mismatch": {
		"⚠ <b>%[1]s</b>: %[2]s. Check what you are paying for.",
		"⚠ <b>%[1]s</b>：%[2]s。请核对你付费的配置。"},
	"unconfirmed": {
		"⚠ <b>%[1]s</b>: release not confirmed. It was recorded as released at %[2]s, but its agent still reports, so the instance is still up: unless you released it on the platform too, it may still be billing. Check the platform.",
		"⚠ <b>%[1]s</b>：释放未确认。账本记录它已于 %[2]s 释放，但它的代理仍在上报，说明实例仍在运行：除非你在平台上也释放了它，否则可能仍在计费。请到平台上检查。"},
	"order_started": {
		"<b>%[1]s</b>: the agent is running the %[2]s command…",
		"<b>%[1]s</b>：代理正在执行%[2]s命令…"},
	"order_done": {
		"✓ <b>%[1]s</b> %[2]s at %[3]s, confirmed by its agent.",
		"✓ <b>%[1]s</b> 于 %[3]s %[2]s，代理已确认。"},
	"order_not_done": {
		"<b>%[1]s</b> was not %[2]s: %[3]s. Nothing was recorded in the ledger.",
		"<b>%[1]s</b> 未能%[2]s：%[3]s。账本中没有记录。"},

	// enrolment: new instances, their buttons and answers
	"inst_new": {
		"New instance on %[1]s%[2]s: %[3]s, host <code>%[4]s</code>, up since %[5]s.",
		"%[1]s 上的新实例%[2]s：%[3]s，主机 <code>%[4]s</code>，%[5]s 起运行。"},
	"inst_new_unknown": {
		"New instance (platform unknown)%[1]s: %[2]s, host <code>%[3]s</code>, up since %[4]s.",
		"新实例（平台未知）%[1]s：%[2]s，主机 <code>%[3]s</code>，%[4]s 起运行。"},
	"inst_id":               {" (ID %[1]s)", "（ID %[1]s）"},
	"inst_host":             {" (host %[1]s)", "（主机 %[1]s）"},
	"inst_platform_unknown": {"platform unknown", "平台未知"},
	"inst_gpus":             {"%[1]d× %[2]s", "%[1]d× %[2]s"},
	"inst_no_gpu":           {"no GPU seen", "未见显卡"},
	"inst_claimed": {
		"<i>The boot time is the instance's own claim, moved to what the server can believe.</i>",
		"<i>启动时间是实例自己报告的，已按服务器能确认的时间调整。</i>"},
	"inst_no_offer": {
		"No earlier price for this platform and GPU: log it now and set the price with /price, or send /adopt with one.",
		"这个平台和显卡还没有记录过价格：可以先记账，再用 /price 定价，或用 /adopt 带上价格。"},
	"inst_no_offer_currency": {
		"No platform and no earlier price known: send <code>/adopt %[1]s PRICE</code> with its currency, e.g. <code>/adopt %[1]s $0.85</code> or <code>/adopt %[1]s ¥2.5</code>.",
		"平台未知，也没有记录过价格：请发送 <code>/adopt %[1]s 价格</code> 并带上币种，例如 <code>/adopt %[1]s $0.85</code> 或 <code>/adopt %[1]s ¥2.5</code>。"},
	"btn_log_at":        {"Log at %[1]s", "按 %[1]s 记账"},
	"btn_log_later":     {"Log, price later", "先记账，稍后定价"},
	"btn_other_price":   {"Other price", "其他价格"},
	"btn_not_mine":      {"Not mine", "不是我的"},
	"btn_reconnect":     {"Reconnect it to %[1]s", "重新连接到 %[1]s"},
	"btn_revoke_enrol":  {"Revoke enrolment tokens", "作废注册令牌"},
	"btn_stopped_at":    {"Stopped at %[1]s", "%[1]s 已关机"},
	"btn_still_billing": {"Still billing", "仍在计费"},
	"btn_stopped_range": {"Stopped %[1]s–%[2]s", "%[1]s–%[2]s 关机"},
	"btn_it_billed":     {"It billed", "照常计费"},
	"inst_logged": {
		"✓ Logged as <b>%[1]s</b> from %[2]s at %[3]s. /undo takes it back.",
		"✓ 已记账为 <b>%[1]s</b>，从 %[2]s 起，价格 %[3]s。/undo 可撤销。"},
	"inst_logged_unpriced": {
		"✓ Logged as <b>%[1]s</b> from %[2]s, without a price: set it with <code>/price %[1]s PRICE</code>. /undo takes it back.",
		"✓ 已记账为 <b>%[1]s</b>，从 %[2]s 起，尚未定价：用 <code>/price %[1]s 价格</code> 设置。/undo 可撤销。"},
	"inst_other_price": {
		"Send <code>/adopt %[1]s PRICE</code>, e.g. <code>/adopt %[1]s 0.85</code>",
		"发送 <code>/adopt %[1]s 价格</code>，例如 <code>/adopt %[1]s 0.85</code>"},
	"inst_ignored": {
		"Not yours: %[1]s is ignored, and nothing more is announced for it.",
		"不是你的：已忽略 %[1]s，不会再通知它。"},
	"inst_merged": {
		"<b>More new instances (%[1]s)</b> announced, waiting for a card of their own:\n%[2]s\nAnswer the cards above, or /agent revoke if these are not yours.",
		"<b>另有 %[1]s 个新实例</b>报到，等待单独的卡片：\n%[2]s\n请先回答上面的卡片；如果它们不是你的，发送 /agent revoke。"},
	"inst_merged_more": {"… and %[1]d more", "… 还有 %[1]d 个"},
	"inst_merged_none": {
		"Every instance announced has a card of its own now.",
		"每个报到的实例都已有自己的卡片。"},
	"inst_revoked": {
		"Enrolment tokens revoked: %[1]s. Instances already announced keep their cards; agents with those tokens can announce nothing more. Send /agent for a new install line.",
		"已作废 %[1]s 个注册令牌。已报到的实例保留卡片；持有这些令牌的代理不能再报到。发送 /agent 获取新的安装命令。"},
	"inst_returned": {
		"<b>%[1]s</b>%[2]s reports again without its own token (a new container, or a copy of it?).",
		"<b>%[1]s</b>%[2]s 没有用自己的令牌再次上报（新容器，还是它的副本？）。"},
	"inst_reconnected": {
		"✓ Reconnected: the instance gets <b>%[1]s</b>'s new agent token at its next report; the old one is revoked.",
		"✓ 已重新连接：实例下次上报时会拿到 <b>%[1]s</b> 的新代理令牌，旧令牌已作废。"},
	"inst_not_reconnected": {
		"Not reconnected: <b>%[1]s</b> stays as it is, and that instance gets no token.",
		"未重新连接：<b>%[1]s</b> 保持不变，那个实例拿不到令牌。"},
	"t_logged":           {"Logged as %[1]s", "已记账为 %[1]s"},
	"t_ignored":          {"Ignored: nothing more is announced for it.", "已忽略：不会再通知它。"},
	"t_inst_unknown":     {"This instance is not known (any more).", "找不到这个实例。"},
	"t_inst_bound":       {"Already logged as %[1]s.", "已经记账为 %[1]s。"},
	"t_inst_not_bound":   {"This instance is not logged as a rental any more.", "这个实例已不再对应任何租用。"},
	"t_no_enrolment":     {"Enrolment needs the agent hub, which is not running.", "实例报到需要代理服务，它没有运行。"},
	"t_revoked":          {"%[1]d enrolment tokens revoked.", "已作废 %[1]d 个注册令牌。"},
	"t_none_to_revoke":   {"No enrolment token to revoke.", "没有可作废的注册令牌。"},
	"t_reconnected":      {"Reconnected to %[1]s", "已重新连接到 %[1]s"},
	"t_not_reconnected":  {"Not reconnected: %[1]s stays as it is.", "未重新连接：%[1]s 保持不变。"},
	"t_recorded":         {"Recorded. /undo takes it back.", "已记录。/undo 可撤销。"},
	"t_nothing_recorded": {"Nothing recorded: it billed.", "未记录：照常计费。"},
	"t_host_not_running": {"%[1]s is not running in the ledger: nothing recorded.", "账本中 %[1]s 不在运行：未记录。"},

	// a host's shutdown and new boot
	"host_stop_recorded": {
		"<b>%[1]s</b> shut down at %[2]s: stop recorded (%[3]s stops billing on a shutdown from inside). /undo takes it back.",
		"<b>%[1]s</b> 于 %[2]s 关机：已记录关机（在 %[3]s 上从内部关机会停止计费）。/undo 可撤销。"},
	"host_resume_recorded": {
		"<b>%[1]s</b> started again at %[2]s: resume recorded. /undo takes it back.",
		"<b>%[1]s</b> 于 %[2]s 重新启动：已记录开机。/undo 可撤销。"},
	"host_cycle_recorded": {
		"<b>%[1]s</b> was down %[2]s–%[3]s: stop and resume recorded (%[4]s stops billing on a shutdown from inside). /undo takes back the resume, a second /undo the stop.",
		"<b>%[1]s</b> 在 %[2]s–%[3]s 停机：已记录关机和开机（在 %[4]s 上从内部关机会停止计费）。/undo 撤销开机，再一次 /undo 撤销关机。"},
	"host_ask_shutdown": {
		"<b>%[1]s</b>'s host shut down at %[2]s.",
		"<b>%[1]s</b> 的主机于 %[2]s 关机。"},
	"host_ask_cycle": {
		"<b>%[1]s</b>'s host shut down at %[2]s and started again at %[3]s.",
		"<b>%[1]s</b> 的主机于 %[2]s 关机，%[3]s 重新启动。"},
	"host_ask_gap": {
		"<b>%[1]s</b>'s agent went silent at %[2]s and its host started again at %[3]s: was it stopped in between?",
		"<b>%[1]s</b> 的代理于 %[2]s 失联，主机于 %[3]s 重新启动：中间是否关过机？"},
	"rule_bills": {
		"On %[1]s billing goes on until the instance is terminated.",
		"在 %[1]s 上，实例销毁之前会一直计费。"},
	"rule_unknown": {
		"On %[1]s it is not known whether that stops billing.",
		"在 %[1]s 上，不确定这样是否会停止计费。"},
	"rule_unknown_platform": {
		"It is not known whether that stops billing.",
		"不确定这样是否会停止计费。"},
	"host_stopped_done": {
		"✓ <b>%[1]s</b>: stop recorded at %[2]s. /undo takes it back.",
		"✓ <b>%[1]s</b>：已记录 %[2]s 关机。/undo 可撤销。"},
	"host_cycle_done": {
		"✓ <b>%[1]s</b>: stopped %[2]s–%[3]s recorded. /undo takes back the resume, a second /undo the stop.",
		"✓ <b>%[1]s</b>：已记录 %[2]s–%[3]s 关机。/undo 撤销开机，再一次 /undo 撤销关机。"},
	"host_billed_done": {
		"<b>%[1]s</b>: it billed, nothing recorded.",
		"<b>%[1]s</b>：照常计费，未记录。"},

	// actions and states, as words inside sentences
	"act_stop":       {"stop", "关机"},
	"act_release":    {"release", "释放"},
	"done_stop":      {"stopped", "已关机"},
	"done_release":   {"released", "已释放"},
	"state_running":  {"running", "运行中"},
	"state_stopped":  {"stopped", "已关机"},
	"state_released": {"released", "已释放"},

	// the nightly summary and money alerts
	"summary_late": {
		"<i>(late: this summary was due at %[1]s; the server was not running)</i>",
		"<i>（迟到：这份总结应在 %[1]s 发送，当时服务器没有运行）</i>"},
	"chart_caption": {"Last 14 days", "最近 14 天"},
	"budget": {
		"Budget: %[1]s of %[2]s spent this month (%[3]s%%).",
		"预算：本月已花 %[1]s / %[2]s（%[3]s%%）。"},
	"budget_over": {"⚠ %[1]s You are over budget.", "⚠ %[1]s 已超预算。"},
	"runway": {
		"⚠ Your %[1]s balance (%[2]s) runs out in %[3]s (at %[4]s) at %[5]s/h. Top up, or instances will be stopped.",
		"⚠ 你的 %[1]s 余额（%[2]s）按每小时 %[5]s 的消耗，将在 %[3]s 后（%[4]s）用完。请充值，否则实例会被停机。"},
	"deadline": {
		"⚠ <b>%[1]s</b> has been stopped since %[2]s: %[3]s releases it and deletes its data at %[4]s. Start it, or move your data.",
		"⚠ <b>%[1]s</b> 自 %[2]s 起关机：%[3]s 将在 %[4]s 释放它并删除数据。请开机，或把数据迁走。"},
	// acting through a platform's API (platform.go)
	"btn_pstop":              {"Stop on %[1]s", "在 %[1]s 上关机"},
	"btn_pterm":              {"Terminate on %[1]s", "在 %[1]s 上销毁"},
	"t_pact_stopping":        {"Stopping on %[1]s…", "正在 %[1]s 上关机…"},
	"t_pact_terminating":     {"Terminating on %[1]s…", "正在 %[1]s 上销毁…"},
	"t_pact_inflight":        {"%[1]s: already acting on %[2]s; the card will say how it went.", "%[1]s：已在 %[2]s 上操作中，结果会显示在卡片上。"},
	"t_pact_busy":            {"%[1]s is busy: its agent says the GPUs are working, so it was not stopped. Press again when it is idle.", "%[1]s 正忙：代理报告显卡在工作，未关机。空闲后再按。"},
	"t_pact_stopped_already": {"%[1]s is already stopped on %[2]s; /release %[1]s terminates it there.", "%[1]s 已在 %[2]s 上关机；/release %[1]s 可在平台上销毁它。"},
	"t_pact_not_live":        {"%[1]s is not an instance a connected platform lists now: nothing was sent.", "%[1]s 不是已连接平台当前列出的实例：未发送任何操作。"},
	"t_pact_cannot_stop":     {"%[2]s cannot stop %[1]s, only terminate it: nothing was sent.", "%[2]s 不能关机 %[1]s，只能销毁：未发送任何操作。"},
	"pact_stopping":          {"Stopping <b>%[1]s</b> on %[2]s…", "正在 %[2]s 上关机 <b>%[1]s</b>…"},
	"pact_terminating":       {"Terminating <b>%[1]s</b> on %[2]s…", "正在 %[2]s 上销毁 <b>%[1]s</b>…"},
	"pact_stopped": {
		"✓ Stopped <b>%[1]s</b> on %[2]s at %[3]s%[4]s. Its disk is kept and still bills storage: /release %[1]s terminates it there.",
		"✓ 已于 %[3]s 在 %[2]s 上关机 <b>%[1]s</b>%[4]s。磁盘保留，仍按存储计费：/release %[1]s 可在平台上销毁。"},
	"pact_terminated": {
		"✓ Terminated <b>%[1]s</b> on %[2]s at %[3]s%[4]s: released in the ledger.",
		"✓ 已于 %[3]s 在 %[2]s 上销毁 <b>%[1]s</b>%[4]s：账本已记录释放。"},
	"pact_approx": {
		" (when it was first seen so; the platform gives no time)",
		"（按首次看到的时间；平台未给出时间）"},
	"pact_unconfirmed": {
		"⚠ <b>%[1]s</b>: release not confirmed: %[2]s still lists it %[3]s after %[4]s%[5]s. Nothing changed in the ledger; check it on %[2]s.",
		"⚠ <b>%[1]s</b>：释放未确认：%[4]s 后 %[2]s 仍显示为 %[3]s%[5]s。账本未改动；请在 %[2]s 上核实。"},
	"pact_failed": {
		"⚠ <b>%[1]s</b> was not %[2]s on %[3]s: %[4]s. Nothing changed in the ledger.",
		"⚠ 未能在 %[3]s 上%[2]s <b>%[1]s</b>：%[4]s。账本未改动。"},
	"pact_interrupted": {
		"<b>%[1]s</b>: the server stopped while acting on %[2]s; the next sync shows what %[2]s did.",
		"<b>%[1]s</b>：在 %[2]s 上操作时服务器停止了；下次同步会显示 %[2]s 的结果。"},
	"pact_cannot_stop": {
		"<b>%[1]s</b> is idle and its /autorelease policy is stop, but %[2]s can only terminate instances, so nothing is done automatically. /autorelease %[1]s release terminates it when idle.",
		"<b>%[1]s</b> 空闲，自动策略是关机，但 %[2]s 只能销毁实例，因此不会自动操作。/autorelease %[1]s release 可在空闲时自动销毁。"},
	"done_terminate": {"terminated", "已销毁"},
	"act_terminate":  {"terminate", "销毁"},

	// An agent whose reports do not show it runs on the rental's platform
	// instance (trust.go).
	"pact_ask": {
		"Not done automatically: %[1]s. Release now does it if you want it.",
		"未自动执行：%[1]s。如需要，请点「立即释放」。"},
	"idle_auto_ask": {
		"No automatic %[1]s: %[2]s. Release now still releases.",
		"不会自动%[1]s：%[2]s。点「立即释放」仍会释放。"},
	"trust_ask": {
		"<b>%[1]s</b>: the agent reporting for it contradicts %[2]s's list for instance %[3]s.\nThe agent said: %[4]s\n%[2]s lists: %[5]s\nAutomatic stops and releases through %[2]s's API are off for %[1]s until you decide. If this is not your agent, its token may have leaked: New token revokes it (then /agent %[1]s for a new install line).",
		"<b>%[1]s</b>：为它上报的代理与 %[2]s 上实例 %[3]s 的列表不符。\n代理报告：%[4]s\n%[2]s 显示：%[5]s\n在你决定之前，%[1]s 通过 %[2]s API 的自动关机和释放已关闭。如果这不是你的代理，令牌可能已泄露：「新令牌」会吊销它（然后用 /agent %[1]s 获取新的安装命令）。"},
	"trust_kept_off": {
		"<b>%[1]s</b>: automation through %[2]s's API stays off (the agent said %[3]s, %[2]s lists %[4]s). Idle cards ask you; a new token (/agent %[1]s) checks afresh.",
		"<b>%[1]s</b>：通过 %[2]s API 的自动操作保持关闭（代理报告 %[3]s，%[2]s 显示 %[4]s）。空闲时会询问你；新令牌（/agent %[1]s）会重新核对。"},
	"trust_trusted": {
		"<b>%[1]s</b>: trusted (the agent said %[3]s, %[2]s lists %[4]s). Its next heartbeat is checked again; any other disagreement asks you again.",
		"<b>%[1]s</b>：已信任（代理报告 %[3]s，%[2]s 显示 %[4]s）。下一次心跳会再次核对；其他不符会再次询问你。"},
	"trust_new": {
		"<b>%[1]s</b>: its agent token is revoked; nothing reports for it now. Send /agent %[1]s for a new install line: the new agent's reports are checked afresh.",
		"<b>%[1]s</b>：代理令牌已吊销，现在没有代理为它上报。发送 /agent %[1]s 获取新的安装命令：新代理的上报会重新核对。"},
	"btn_trust_off":   {"Keep automation off", "保持关闭自动操作"},
	"btn_trust":       {"Trust this agent", "信任这个代理"},
	"btn_trust_new":   {"New token", "新令牌"},
	"t_trust_off":     {"Automation stays off for %[1]s.", "%[1]s 的自动操作保持关闭。"},
	"t_trust":         {"Trusted; checked again at its next heartbeat.", "已信任；下一次心跳会再次核对。"},
	"t_trust_new":     {"Token revoked: /agent %[1]s gives a new one.", "令牌已吊销：/agent %[1]s 获取新令牌。"},
	"t_trust_settled": {"Already answered.", "已经回答过了。"},

	// a team's cards (team.go, approval.go)
	"team_owner_prefix": {"%[1]s, ", "%[1]s，"},
	"team_unclaimed":    {"unclaimed", "无人认领"},
	"t_team_not_yours": {
		"Only %[1]s (its owner) or an admin of the team can do this to %[2]s.",
		"只有 %[1]s（它的所有者）或团队管理员可以对 %[2]s 这样做。"},
	"t_team_not_yours_admin": {
		"%[1]s has no owner yet: only an admin of the team can do this to it.",
		"%[1]s 还没有所有者：只有团队管理员可以这样做。"},
	"owner_ask": {
		"<b>%[1]s</b> on %[2]s (%[3]s): whose is it?",
		"%[2]s 上的 <b>%[1]s</b>（%[3]s）：这是谁的？"},
	"owner_claimed":      {"<b>%[1]s</b> on %[2]s is %[3]s's.", "%[2]s 上的 <b>%[1]s</b> 归 %[3]s。"},
	"btn_mine":           {"Mine", "我的"},
	"t_mine":             {"%[1]s is yours now.", "%[1]s 现在归你了。"},
	"t_mine_taken":       {"%[1]s is %[2]s's already.", "%[1]s 已经归 %[2]s 了。"},
	"btn_approve":        {"Approve", "批准"},
	"btn_stop_it":        {"Stop it", "停止它"},
	"approval_card":      {"%[1]s's <b>%[2]s</b> (%[3]s) is over %[4]s: %[5]s of %[6]s.", "%[1]s 的 <b>%[2]s</b>（%[3]s）超出了%[4]s：%[5]s，上限 %[6]s。"},
	"approval_owner":     {"Your <b>%[1]s</b> (%[2]s) is over %[3]s: %[4]s of %[5]s. The team's admins were asked to approve it.", "你的 <b>%[1]s</b>（%[2]s）超出了%[3]s：%[4]s，上限 %[5]s。已请团队管理员批准。"},
	"approval_reminder":  {"Still waiting for an admin: ", "仍在等待管理员处理："},
	"approval_approved":  {"Approved by %[1]s.", "已由 %[1]s 批准。"},
	"approval_stopped":   {"Stopped by %[1]s.", "已由 %[1]s 停止。"},
	"t_approved":         {"Approved.", "已批准。"},
	"t_already_approved": {"Already approved by %[1]s.", "已由 %[1]s 批准。"},
	"t_already_stopped":  {"Already stopped by %[1]s.", "已由 %[1]s 停止。"},
	"t_admin_only":       {"Only an admin of the team can decide this.", "只有团队管理员可以决定。"},
	"limit_member":       {"%[1]s's limit", "%[1]s 的限额"},
	"limit_project":      {"project %[1]s's limit", "项目 %[1]s 的限额"},
	"limit_team":         {"the team's limit", "团队的限额"},
	"limit_rate":         {"%[1]s/h", "%[1]s/小时"},
	"limit_gpus":         {"%[1]d GPUs", "%[1]d 块显卡"},
	"limit_gpu_one":      {"1 GPU", "1 块显卡"},
	"limit_month":        {"%[1]s this month", "本月 %[1]s"},

	"approval_release_error": {"the release failed.", "释放失败。"},
	"summary_split_today":    {"<b>Today:</b>", "<b>今天：</b>"},
	"approval_stop_failed": {
		"Recorded as stopped by %[1]s, but <b>%[2]s</b> could not be released: %[3]s Press Stop it again or send /release %[2]s.",
		"已由 %[1]s 记为停止，但 <b>%[2]s</b> 未能释放：%[3]s 请再按“停止它”或发送 /release %[2]s。"},

	// an approval that no longer applies, closed by the system (approval_lapse.go)
	"approval_lapsed_released": {"No longer needed: <b>%[1]s</b> was released.", "不再需要：<b>%[1]s</b> 已释放。"},
	"approval_lapsed_gone":     {"No longer needed: its rental is gone.", "不再需要：这台租用已不存在。"},
	"approval_lapsed_stopped":  {"No longer needed: <b>%[1]s</b> is stopped.", "不再需要：<b>%[1]s</b> 已停止。"},
	"approval_lapsed_under":    {"No longer needed: <b>%[1]s</b> is within %[2]s now.", "不再需要：<b>%[1]s</b> 现在没有超出%[2]s。"},
	"approval_lapsed_scope":    {"No longer needed: <b>%[1]s</b> no longer counts against %[2]s.", "不再需要：<b>%[1]s</b> 已不计入%[2]s。"},
	"approval_lapsed_month":    {"No longer needed: %[1]s is over.", "不再需要：%[1]s 已经过去。"},
	"t_lapsed":                 {"This request was closed: %[1]s no longer needs it.", "这个请求已关闭：%[1]s 不再需要批准。"},
	"t_lapsed_gone":            {"This request was closed: its rental is gone.", "这个请求已关闭：这台租用已不存在。"},
}

// lang returns the user's language (chat.LangEN or chat.LangZH).
func lang(u *ledger.User) string { return chat.NormLang(u.Lang) }

// tr renders message key in lang with args: strings are escaped, chat.RawHTML
// is not (chat.Catalog.Render).
func tr(lang, key string, args ...any) string { return messages.Render(lang, key, args...) }

// text renders a message without HTML escaping, for button labels and
// callback toasts (plain text on Telegram's side).
func text(lang, key string, args ...any) string { return messages.Text(lang, key, args...) }
