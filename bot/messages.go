package bot

import (
	"errors"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// messages is the core's reply catalog: key → {English, Chinese}. The
// templates are HTML (Telegram's subset); arguments are inserted with
// explicit indexes (%[1]s) so a translation may reorder them, and are
// escaped unless they are chat.RawHTML.
var messages = chat.Catalog{
	// access
	"refused": {
		"Sorry, this is a private bot: you are not on its list of users. (I won't reply again.)",
		"抱歉，这是私人机器人，你不在用户名单中。（之后不再回复。）"},
	"refused_claim": {
		"Sorry, this bot has not been set up for you. Its owner claims it with <code>/start CODE</code>, using the code from the server's log. (I won't reply again.)",
		"抱歉，这个机器人不对你开放。机器人主人用服务器日志里的认领码发送 <code>/start 认领码</code> 来认领。（之后不再回复。）"},
	"claimed": {
		"✓ You are now the owner of this bot. Start with /help, or record a rental: <code>/rent box1 autodl 4090 1.88/h</code>",
		"✓ 你现在是这个机器人的主人。发送 /help 查看命令，或记一台机器：<code>/rent box1 autodl 4090 1.88元/小时</code>"},
	"claim_wrong": {
		"✗ That claim code is wrong: copy it from the server's log, e.g. <code>/start k7q2m9xdpa3r</code>. Nothing was changed.",
		"✗ 认领码不对：请从服务器日志复制，例如 <code>/start k7q2m9xdpa3r</code>。没有做任何修改。"},

	// group chats (group.go)
	"group_sent_privately": {
		"%[1]sI sent it to you privately.",
		"%[1]s已私聊发给你。"},
	"group_open_private": {
		"%[1]sI can't write to you privately yet: open a private chat with me and send /start first, then ask again. Nothing was changed.",
		"%[1]s我还不能私聊你：请先打开和我的私聊并发送 /start，然后再问一次。没有做任何修改。"},
	"group_send_failed": {
		"%[1]sI could not send you the answer privately; please try again in a moment.",
		"%[1]s私聊发送失败，请稍后再试。"},
	"group_write": {
		"%[1]sYour ledger is kept in our private chat, so nothing was recorded here: send the command to me in a private chat (open a chat with me and send /start).",
		"%[1]s账本只在私聊里记，这里什么也没有记录：请在和我的私聊中发送这条命令（打开和我的私聊并发送 /start）。"},
	"agent_private_head": {
		"You asked in a group for the agent install command of <b>%[1]s</b>. It holds a secret, so it comes here, for you only:",
		"你在群里要了 <b>%[1]s</b> 的代理安装命令。它含有密钥，所以只私聊发给你："},

	// input the bot does not act on
	"text_only": {
		"I read text only — try /help",
		"我只看得懂文字，试试 /help"},
	"forwarded": {
		"Forwarded messages are not executed. To do it, send the command yourself.",
		"转发的消息不会被执行。如需执行，请自己发送这条命令。"},
	"unknown_command": {
		"unknown command %[1]s — /help lists them",
		"未知命令 %[1]s —— /help 列出所有命令"},
	"unknown_command_near": {
		"Unknown command %[1]s. Did you mean %[2]s? (/help lists them all)",
		"未知命令 %[1]s。你是不是想输入 %[2]s？（/help 列出所有命令）"},
	"not_a_command": {
		"I didn't understand that, so nothing was recorded. Commands start with /, e.g. <code>/rent box1 autodl 4090 1.88/h</code> or <code>/status</code>; /help lists them all.",
		"没看懂，什么也没记录。命令以 / 开头，例如 <code>/rent box1 autodl 4090 1.88元/小时</code> 或 <code>/status</code>；/help 列出所有命令。"},
	"internal": {
		"✗ Something went wrong, nothing was changed. Please try again later.",
		"✗ 出了点问题，没有做任何修改。请稍后再试。"},
	"already_recorded": {
		"✓ Already recorded: <code>%[1]s</code> (its first answer was interrupted). No need to send it again.",
		"✓ 已经记录：<code>%[1]s</code>（之前的回复被中断了）。不用重发。"},
	"already_done": {"✓ Already done", "✓ 已完成"},
	"lines_ok": {
		"Ran %[1]s lines:",
		"已执行 %[1]s 行："},
	"lines_failed": {
		"Ran %[2]s lines: %[1]s applied; failed: line %[3]s (the other lines still apply):",
		"已执行 %[2]s 行：%[1]s 行成功，第 %[3]s 行失败（其他行照常生效）："},
	"welcome": {
		"Hi! I keep the ledger of your rented GPUs: what runs, what it costs, what is left.",
		"你好！我帮你记租用 GPU 的账：哪些在跑、花了多少、余额还够多久。"},

	// rentals
	"rented": {
		"✓ <b>%[1]s</b> started %[2]s — %[4]s %[3]s, %[5]s %[6]s",
		"✓ <b>%[1]s</b> 已开始计费 %[2]s —— %[4]s %[3]s，%[5]s %[6]s"},
	"rented_min":   {", minimum %[1]s per start", "，每次开机最少计 %[1]s"},
	"rented_step":  {", billed in steps of %[1]s", "，按 %[1]s 为单位计费"},
	"rented_lease": {", lease %[1]s (ends %[2]s)", "，租期 %[1]s（%[2]s 到期）"},
	"currency_assumed": {
		"(currency %[1]s assumed: add currency=… to change it)",
		"（默认货币 %[1]s：如不对，加上 currency=…）"},
	"stopped": {
		"✓ <b>%[1]s</b> stopped %[2]s — ran %[3]s, compute so far %[4]s",
		"✓ <b>%[1]s</b> 已关机 %[2]s —— 累计运行 %[3]s，计算费用 %[4]s"},
	"resumed": {
		"✓ <b>%[1]s</b> resumed %[2]s — ran %[3]s before, compute so far %[4]s",
		"✓ <b>%[1]s</b> 已开机 %[2]s —— 之前运行 %[3]s，计算费用 %[4]s"},
	"released": {
		"✓ <b>%[1]s</b> released %[2]s — ran %[3]s, compute total %[4]s",
		"✓ <b>%[1]s</b> 已释放 %[2]s —— 共运行 %[3]s，计算费用合计 %[4]s"},
	"always_on_note": {
		"(always-on: the meter keeps running until you /release it)",
		"（包时段：释放前一直计费，请用 /release 结束）"},
	"priced": {
		"✓ <b>%[1]s</b> costs %[2]s from %[3]s",
		"✓ <b>%[1]s</b> 从 %[3]s 起价格改为 %[2]s"},
	"price_package_ends": {
		"\n<b>%[1]s</b> is billed in prepaid periods: the %[2]s period that began %[3]s is billed in full, and a new period at the new price begins %[4]s.",
		"\n<b>%[1]s</b> 按预付周期计费：%[3]s 开始的这一期（%[2]s）照付全额，新价格从 %[4]s 起开始新的一期。"},
	"priced_from_start": {
		"✓ <b>%[1]s</b> costs %[2]s from its start (%[3]s)",
		"✓ <b>%[1]s</b> 价格定为 %[2]s，从开始时（%[3]s）起计"},

	// storage and traffic
	"volume_created": {
		"✓ volume <b>%[1]s</b> %[2]sGB at %[3]s (free %[4]sGB) from %[5]s",
		"✓ 存储盘 <b>%[1]s</b> %[2]sGB，%[3]s（免费 %[4]sGB），从 %[5]s 起计费"},
	"volume_created_nofree": {
		"✓ volume <b>%[1]s</b> %[2]sGB at %[3]s from %[4]s",
		"✓ 存储盘 <b>%[1]s</b> %[2]sGB，%[3]s，从 %[4]s 起计费"},
	"volume_attached":      {", attached to %[1]s", "，挂在 %[1]s 上"},
	"volume_price_stopped": {", %[1]s while stopped", "，关机时 %[1]s"},
	"volume_price_profile": {
		"price from %[1]s's profile; to use your own: /undo, then /storage %[2]s %[3]sGB PRICE",
		"价格取自 %[1]s 的默认配置；要改用自己的价格：先 /undo，再 /storage %[2]s %[3]sGB 价格"},
	"volume_resized": {
		"✓ volume <b>%[1]s</b> resized to %[2]sGB from %[3]s",
		"✓ 存储盘 <b>%[1]s</b> 从 %[3]s 起改为 %[2]sGB"},
	"volume_priced": {
		"✓ volume <b>%[1]s</b> costs %[2]s from its creation (%[3]s)",
		"✓ 存储盘 <b>%[1]s</b> 价格改为 %[2]s，从创建时（%[3]s）起计"},
	"volume_priced_until": {
		", until %[1]s, when its next price starts",
		"，到 %[1]s 为止（之后按下一个价格计）"},
	"volume_priced_from": {
		"✓ volume <b>%[1]s</b> costs %[2]s from %[3]s (the old price before)",
		"✓ 存储盘 <b>%[1]s</b> 从 %[3]s 起价格改为 %[2]s（之前按原价）"},
	"volume_price_one_rate": {
		"; from then on one rate whether its rental runs or not (its stopped rate ends there)",
		"；此后不论机器是否运行都按这一价格（关机价到此为止）"},
	// A price change that replaced another term says so, and how to keep it.
	"volume_price_keep": {" To keep a stopped rate: <code>%[1]s</code>", " 要保留关机价：<code>%[1]s</code>"},
	"volume_stopped_replaced": {
		"\n⚠️ Its stopped rate %[1]s is replaced too: %[2]s is now its one rate whether its rental runs or not. To keep a stopped rate: <code>%[3]s</code>",
		"\n⚠️ 它的关机价 %[1]s 也被替换了：现在不论机器是否运行都按 %[2]s 计。要保留关机价：<code>%[3]s</code>"},
	"volume_profile_stopped": {
		"\n%[1]s bills the volume of a stopped instance at %[2]s (its profile); <b>%[3]s</b> has one rate whether its rental runs or not. To bill stopped time as %[1]s does: <code>%[4]s</code>",
		"\n%[1]s 对关机实例的存储按 %[2]s 计费（平台默认配置）；<b>%[3]s</b> 现在不论机器是否运行都按同一价格。要像 %[1]s 那样计关机时的费用：<code>%[4]s</code>"},
	"traffic_terms_kept": {
		"\nThe free allowance and the charged direction set before are kept; free= or direction= changes them.",
		"\n之前设置的免费额度和计费方向保持不变；要修改请写 free= 或 direction=。"},
	"volume_deleted": {
		"✓ volume <b>%[1]s</b> deleted %[2]s: it no longer bills",
		"✓ 存储盘 <b>%[1]s</b> 已删除 %[2]s，不再计费"},
	"traffic_priced": {
		"✓ <b>%[1]s</b> traffic costs %[2]s/GB (%[4]s), %[3]sGB free per month",
		"✓ <b>%[1]s</b> 流量 %[2]s/GB（%[4]s），每月免费 %[3]sGB"},
	"traffic_priced_from": {
		"✓ <b>%[1]s</b> traffic costs %[2]s/GB from %[3]s (the old price before)",
		"✓ <b>%[1]s</b> 流量从 %[3]s 起改为 %[2]s/GB（之前按原价）"},
	"traffic_free_profile": {
		"%[2]sGB free a month from %[1]s's profile; free=0 for none",
		"每月免费 %[2]sGB 取自 %[1]s 的默认配置；没有免费额度请写 free=0"},
	"traffic_used": {
		"✓ <b>%[1]s</b>: %[2]sGB %[3]s recorded at %[4]s",
		"✓ <b>%[1]s</b>：已记录流量 %[2]sGB %[3]s（%[4]s）"},
	// An UNPRICED line, with the command that prices it (view.PriceCommand).
	"volume_unpriced_how": {
		"\nNo storage price is known for %[1]s, so <b>%[2]s</b> is UNPRICED (left out of totals): set one with <code>%[3]s</code>, your price in place of %[4]s.",
		"\n不知道 %[1]s 的存储价格，所以 <b>%[2]s</b> 未定价（UNPRICED，不计入合计）：用 <code>%[3]s</code> 设置，把 %[4]s 换成你的价格。"},
	"traffic_unpriced_how": {
		"\n<b>%[1]s</b>'s traffic has no price, so it is UNPRICED (left out of totals): set one with <code>%[2]s</code>, your price in place of %[3]s.",
		"\n<b>%[1]s</b> 的流量没有价格，所以未定价（UNPRICED，不计入合计）：用 <code>%[2]s</code> 设置，把 %[3]s 换成你的价格。"},
	"unpriced_this_volume": {"this volume", "这个存储盘"},
	"rental_unpriced_how": {
		"\n<b>%[1]s</b> has no price, so its compute is UNPRICED (left out of totals): set one from its start with <code>%[2]s</code>, your price in place of %[3]s.",
		"\n<b>%[1]s</b> 没有价格，所以计算费用未定价（UNPRICED，不计入合计）：用 <code>%[2]s</code> 从开始时定价，把 %[3]s 换成你的价格。"},

	// money
	"charged": {
		"✓ charge %[1]s on %[2]s recorded: %[3]s",
		"✓ 已记录 %[2]s 的费用 %[1]s：%[3]s"},
	"charged_at": {" (dated %[1]s)", "（时间 %[1]s）"},
	"topped_up": {
		"✓ top-up %[1]s on %[2]s recorded",
		"✓ 已记录 %[2]s 充值 %[1]s"},
	"balance_set": {
		"✓ %[1]s balance %[2]s recorded at %[3]s",
		"✓ 已记录 %[1]s 余额 %[2]s（%[3]s）"},
	"budget_set": {
		"✓ monthly budget set to %[1]s",
		"✓ 每月预算设为 %[1]s"},
	"budget_assumed": {
		"(no spending yet, so %[1]s was assumed; for another currency write its sign, e.g. <code>/budget $500/month</code>)",
		"（还没有花费，按 %[1]s 计；其他货币请写明符号，例如 <code>/budget $500/月</code>）"},
	"budget_which": {
		"You spend in %[1]s: which currency is this budget in? Each currency has its own budget: %[2]s",
		"你在用 %[1]s 消费：这个预算是哪种货币？每种货币各有预算：%[2]s"},
	"budget_off": {
		"✓ monthly budgets removed",
		"✓ 已取消每月预算"},
	"budget_off_one": {
		"✓ monthly %[1]s budget removed",
		"✓ 已取消 %[1]s 每月预算"},
	"budget_off_none": {
		"There is no %[1]s budget to remove. See them: <code>/budget</code>",
		"没有 %[1]s 预算可取消。查看：<code>/budget</code>"},
	"balances_none": {
		"No balances recorded. Record one: <code>/balance autodl 67.01</code>",
		"还没有记录余额。记录：<code>/balance autodl 67.01</code>"},

	// undo
	"undone": {
		"↩ undone: %[1]s, recorded %[2]s (%[3]s)",
		"↩ 已撤销：%[1]s（记录于 %[2]s，%[3]s）"},
	"undo_ago_now": {"just now", "刚刚"},
	"undo_ago_min": {"%[1]s min ago", "%[1]s分钟前"},
	"undo_ago":     {"%[1]s ago", "%[1]s前"},
	"undo_ask": {
		"Undo the %[1]s, recorded %[2]s (%[3]s)?\n%[4]s",
		"要撤销%[1]s吗？（记录于 %[2]s，%[3]s）\n%[4]s"},
	"undo_why_refused": {
		"Your last message was refused, so this may not be the change you mean.",
		"你的上一条消息被拒绝了，这可能不是你想撤销的修改。"},
	"undo_why_button": {
		"It was made with a button, not by your last command.",
		"它是通过按钮做的，不是你的上一条命令。"},
	"undo_why_sync": {
		"The platform sync made it, not your last command.",
		"它是平台同步做的，不是你的上一条命令。"},
	"undo_why_other": {
		"gpuledger recorded it itself (from the platform's list, an agent's report or an automatic action), not your last command.",
		"它是 gpuledger 自己记录的（来自平台实例列表、代理的报告或自动操作），不是你的上一条命令。"},
	"undo_why_later": {
		"It is not your last change: a change that /undo cannot reverse came after it.",
		"它不是你的最后一次修改：之后还有 /undo 无法撤销的修改。"},
	"undo_why_old": {
		"It is more than %[1]s min old.",
		"它已超过 %[1]s 分钟。"},
	"undo_yes":      {"Undo it", "撤销"},
	"undo_no":       {"Keep it", "保留"},
	"undo_kept":     {"✓ kept: the %[1]s stays; nothing was undone.", "✓ 已保留：%[1]s不变，没有撤销任何内容。"},
	"undo_kept_any": {"✓ kept: nothing was undone.", "✓ 已保留：没有撤销任何内容。"},
	"undo_done_press": {
		"✗ the %[1]s is undone already: nothing more was undone.",
		"✗ %[1]s已经撤销过了：没有再撤销别的。"},
	"undo_stale_press": {
		"✗ nothing was undone: another change came after the %[1]s since this question. Send /undo again to see what it would undo now.",
		"✗ 没有撤销任何内容：提问之后，%[1]s之后又有了新的修改。再发送 /undo 查看现在会撤销什么。"},
	"undo_now_running": {
		"Now %[1]s is running, billing %[2]s.",
		"现在 %[1]s 运行中，按 %[2]s 计费。"},
	"undo_now_running_unpriced": {
		"Now %[1]s is running, without a price: <code>/price %[1]s PRICE</code> sets it.",
		"现在 %[1]s 运行中，尚未定价：用 <code>/price %[1]s 价格</code> 设置。"},
	"undo_now_stopped":        {"Now %[1]s is stopped: its compute is not billed.", "现在 %[1]s 已关机：算力不计费。"},
	"undo_now_released":       {"Now %[1]s is released.", "现在 %[1]s 已释放。"},
	"undo_now_gone":           {"Now %[1]s is no longer in the ledger.", "现在账本中已没有 %[1]s。"},
	"undo_now_volume":         {"Now volume %[1]s is %[2]s GB.", "现在存储盘 %[1]s 为 %[2]s GB。"},
	"undo_now_volume_deleted": {"Now volume %[1]s is deleted.", "现在存储盘 %[1]s 已删除。"},
	"undo_now_volume_gone":    {"Now volume %[1]s is no longer in the ledger.", "现在账本中已没有存储盘 %[1]s。"},
	"undo_now_record":         {"It no longer counts in any total.", "它不再计入任何合计。"},
	"undo_now_settings":       {"Your settings are as they were before it.", "你的设置已恢复为修改之前的样子。"},
	"undo_now_restored":       {"The record is as it was before it.", "该记录已恢复为修改之前的样子。"},
	"undo_release_token": {
		"The agent token of %[1]s was revoked at the release and stays revoked: issue a new one with <code>/agent %[1]s</code>.",
		"%[1]s 的代理令牌已在释放时作废，不会恢复：请用 <code>/agent %[1]s</code> 重新生成。"},
	"undo_instance": {
		"Instance %[1]s waits for an answer again: <code>/adopt %[1]s PRICE</code> logs it, e.g. <code>/adopt %[1]s 0.85</code>.",
		"实例 %[1]s 重新等待你的答复：发送 <code>/adopt %[1]s 价格</code> 记账，例如 <code>/adopt %[1]s 0.85</code>。"},
	"undo_instance_card": {
		"Instance %[1]s waits for an answer again: its card is below, or send <code>/adopt %[1]s PRICE</code>, e.g. <code>/adopt %[1]s 0.85</code>.",
		"实例 %[1]s 重新等待你的答复：卡片在下方，也可以发送 <code>/adopt %[1]s 价格</code> 记账，例如 <code>/adopt %[1]s 0.85</code>。"},
	"undo_instance_ignored": {
		"Instance %[1]s is ignored again, as it was before it was logged; <code>/adopt %[1]s PRICE</code> still logs it.",
		"实例 %[1]s 恢复为已忽略（记账之前就是如此）；仍可用 <code>/adopt %[1]s 价格</code> 记账。"},
	"undo_sync": {
		"%[1]s was created from the platform's list; it will not be created again.",
		"%[1]s 是根据平台实例列表创建的；之后不会再次创建。"},
	"undo_kind_rent":           {"rent", "记录租用"},
	"undo_kind_stop":           {"stop", "关机"},
	"undo_kind_resume":         {"resume", "开机"},
	"undo_kind_price":          {"price change", "改价"},
	"undo_kind_release":        {"release", "释放"},
	"undo_kind_traffic":        {"traffic price", "流量价格"},
	"undo_kind_traffic_usage":  {"traffic", "流量记录"},
	"undo_kind_storage":        {"volume", "存储盘"},
	"undo_kind_storage_resize": {"volume resize", "存储盘扩容"},
	"undo_kind_storage_delete": {"volume deletion", "删除存储盘"},
	"undo_kind_storage_price":  {"volume price", "存储盘价格"},
	"undo_kind_charge":         {"charge", "费用"},
	"undo_kind_topup":          {"top-up", "充值"},
	"undo_kind_balance":        {"balance", "余额记录"},
	"undo_kind_settings":       {"settings change", "设置修改"},
	"undo_kind_adopt":          {"instance logged", "实例记账"},
	"undo_kind_ignore":         {"instance ignored", "忽略实例"},
	"undo_kind_sync":           {"rental created from the platform's list", "根据平台实例列表创建的租用"},

	// deletions and corrections of records (core_records.go)
	"undo_kind_charge_delete":        {"charge deletion", "删除费用"},
	"undo_kind_charge_fix":           {"charge correction", "更正费用"},
	"undo_kind_topup_delete":         {"top-up deletion", "删除充值"},
	"undo_kind_topup_fix":            {"top-up correction", "更正充值"},
	"undo_kind_balance_delete":       {"balance deletion", "删除余额记录"},
	"undo_kind_balance_fix":          {"balance correction", "更正余额记录"},
	"undo_kind_traffic_usage_delete": {"traffic record deletion", "删除流量记录"},
	"undo_kind_traffic_usage_fix":    {"traffic record correction", "更正流量记录"},

	// settings
	"settings_saved": {"✓ settings saved", "✓ 设置已保存"},
	"settings": {
		"<b>Settings</b>\nlang=%[1]s tz=%[2]s summary=%[3]s\nidle_warn=%[4]s silent=%[5]s quiet=%[6]s long_run=%[7]s bench=%[9]s\nbudget: %[8]s",
		"<b>设置</b>\nlang=%[1]s tz=%[2]s summary=%[3]s\nidle_warn=%[4]s silent=%[5]s quiet=%[6]s long_run=%[7]s bench=%[9]s\n预算：%[8]s"},
	"off": {"off", "关闭"},
	"on":  {"on", "开启"},

	// agent and automatic decisions
	"agent_off": {
		"The agent hub is not running on this server, so no agent token can be issued.",
		"服务器上的代理服务没有运行，无法发放代理令牌。"},
	"agent_token": {
		"Agent token for <b>%[1]s</b> (shown once). On the rented host run:\n<pre>%[2]s</pre>\nIt downloads the agent from this server, checks its SHA-256 and starts it (at every boot where systemd runs). To let it release the host, put <code>GPULEDGER_AGENT_ARGS='--release-cmd \"shutdown -h now\"'</code> before <code>sh</code>.",
		"<b>%[1]s</b> 的代理令牌（只显示一次）。在租用的机器上运行：\n<pre>%[2]s</pre>\n它从本服务器下载代理、校验 SHA-256 并启动（有 systemd 时开机自启）。要允许它释放机器，在 <code>sh</code> 前加 <code>GPULEDGER_AGENT_ARGS='--release-cmd \"shutdown -h now\"'</code>。"},
	"agent_enrol": {
		"Install line for every instance you start (shown once). Put it in the start-up hook of your instances, or run it once on one:\n<pre>%[1]s</pre>\nIt logs nothing by itself: each instance that boots with it is announced here with a card, and one tap logs it as a rental.",
		"通用安装命令（只显示一次）。把它放进实例的启动钩子，或在某台实例上运行一次：\n<pre>%[1]s</pre>\n它本身不会记账：每台用它启动的实例都会在这里报到并发来卡片，点一下即可记为租用。"},
	"release_agent_reports": {
		"⚠️ Its agent reported %[2]s ago: the instance is still up, and billing on %[3]s unless you release it there too. Its agent token is revoked; if the agent runs on, I tell you once.",
		"⚠️ 它的代理 %[2]s 前还在上报：实例仍在运行，除非你在 %[3]s 上也释放它，否则那边仍在计费。它的代理令牌已作废；代理若继续运行，我会提醒你一次。"},
	"release_agent_reports_enrolled": {
		"It is not offered as a new instance while that agent runs on; once its agent starts again (the instance came back), it is announced anew.",
		"在这个代理继续运行期间，它不会当作新实例报到；代理重新启动后（实例又开机了），才会重新报到。"},
	"its_platform": {"the platform", "平台"},
	"agent_url_local": {
		"⚠️ This line points at %[1]s, which only this machine can reach: no rented host can download the agent from it or report to it. Set <code>GPULEDGER_PUBLIC_URL</code> to an address the host can reach and restart the server, then ask again: your HTTPS domain behind a proxy, or a tunnel such as <code>cloudflared tunnel --url http://localhost:%[2]s</code> (its https address is the URL). For one host you can instead open <code>ssh -R %[2]s:localhost:%[2]s HOST</code> from this machine and keep it open: the line then works on that host as it is. More in docs/deploy.md.",
		"⚠️ 这条命令指向 %[1]s，只有本机能访问：租用的机器无法从这里下载代理，也无法上报。请把 <code>GPULEDGER_PUBLIC_URL</code> 设为租用机器能访问的地址并重启服务器，然后再来获取：放在反向代理后的 HTTPS 域名，或隧道，例如 <code>cloudflared tunnel --url http://localhost:%[2]s</code>（它给出的 https 地址就是 URL）。只有一台机器时，也可以从本机执行 <code>ssh -R %[2]s:localhost:%[2]s 机器</code> 并保持连接：这条命令在那台机器上即可原样使用。详见 docs/deploy.md。"},
	"agent_url_private": {
		"⚠️ This line points at %[1]s, a private address: only machines on its private network can reach it, and no rented host outside that network can download the agent from it or report to it. If your hosts are not on that network, set <code>GPULEDGER_PUBLIC_URL</code> to an address they can reach and restart the server, then ask again: your HTTPS domain behind a proxy, or a tunnel such as <code>cloudflared tunnel --url http://localhost:%[2]s</code>, or <code>ssh -R %[2]s:localhost:%[2]s HOST</code> for one host. More in docs/deploy.md.",
		"⚠️ 这条命令指向 %[1]s，这是内网地址：只有同一内网的机器能访问，内网之外的租用机器无法从这里下载代理，也无法上报。如果你的机器不在这个内网里，请把 <code>GPULEDGER_PUBLIC_URL</code> 设为它们能访问的地址并重启服务器，然后再来获取：放在反向代理后的 HTTPS 域名，或隧道，例如 <code>cloudflared tunnel --url http://localhost:%[2]s</code>，一台机器时也可用 <code>ssh -R %[2]s:localhost:%[2]s 机器</code>。详见 docs/deploy.md。"},
	"agent_enrol_where": {
		"Where to put it:\n• AutoDL: no start-up hook; run it after each power-on (or add it to <code>~/.bashrc</code>)\n• RunPod: the template's Container Start Command, before the image's own start; put <code>GPULEDGER_AGENT_DIR=/workspace/.gpuledger</code> before <code>sh</code> so it survives a stop\n• Vast.ai: the instance's On-start Script\n• a VM with systemd (AWS, GCP, your own): run it once as root; it starts at every boot\n• your Docker image: run it in the entrypoint, before your own command\nMore in docs/deploy.md.",
		"放在哪里：\n• AutoDL：没有启动钩子；每次开机后运行一次（或写进 <code>~/.bashrc</code>）\n• RunPod：模板的 Container Start Command，放在镜像自己的启动命令之前；在 <code>sh</code> 前加 <code>GPULEDGER_AGENT_DIR=/workspace/.gpuledger</code>，关机后数据才保留\n• Vast.ai：实例的 On-start Script\n• 有 systemd 的虚拟机（AWS、GCP、自己的机器）：以 root 运行一次，之后开机自启\n• 自己的 Docker 镜像：在 entrypoint 里、你自己的命令之前运行\n详见 docs/deploy.md。"},
	"agent_enrol_private_head": {
		"You asked in a group for the enrolment install line. It holds a secret, so it comes here, for you only:",
		"你在群里请求了通用安装命令。它包含密钥，所以只发到这里给你："},
	"agent_enrol_revoked_oldest": {
		"Your oldest enrolment token (issued %[1]s) was revoked: at most %[2]s are valid at once. Instances that boot with it are refused until they get a newer line.",
		"你最早的注册令牌（%[1]s 发放）已作废：同时最多 %[2]s 个有效。用它启动的实例会被拒绝，直到换上新的命令。"},
	"agent_enrol_tokens": {
		"Your valid enrolment tokens (%[1]s of at most %[2]s; /agent revoke revokes them all):",
		"你的有效注册令牌（%[1]s 个，最多 %[2]s 个；/agent revoke 全部作废）："},
	"agent_enrol_token_line": {
		"%[1]s. issued %[2]s · last used %[3]s · %[4]s instances announced",
		"%[1]s. %[2]s 发放 · 最近使用 %[3]s · 已报到 %[4]s 个实例"},
	"never": {"never", "从未"},
	"agent_revoke_done": {
		"✓ %[1]s enrolment tokens revoked: agents with them can announce nothing more. Rentals' own agent tokens are not touched. /agent gives a new install line.",
		"✓ 已作废 %[1]s 个注册令牌：持有它们的代理不能再报到。各租用自己的代理令牌不受影响。/agent 可获取新的安装命令。"},
	"agent_revoke_none": {
		"You have no enrolment token to revoke (none to revoke).",
		"你没有可作废的注册令牌。"},
	"adopt_done": {
		"✓ Logged as <b>%[1]s</b> from %[2]s at %[3]s. /undo takes it back.",
		"✓ 已记账为 <b>%[1]s</b>，从 %[2]s 起，价格 %[3]s。/undo 可撤销。"},
	"adopt_done_unpriced": {
		"✓ Logged as <b>%[1]s</b> from %[2]s, without a price: set it with <code>/price %[1]s PRICE</code>. /undo takes it back.",
		"✓ 已记账为 <b>%[1]s</b>，从 %[2]s 起，尚未定价：用 <code>/price %[1]s 价格</code> 设置。/undo 可撤销。"},
	"agent_no_binary": {
		"⚠️ This server has no agent binary to hand out (it looks for one at <code>%[1]s</code>), so the command above fails: its download answers 503. To fix it: build the agent with <code>scripts/agent-build-portable.sh</code> and copy it to that path (picked up at once), or set <code>GPULEDGER_AGENT_BINARY</code> to it and restart the server, or run the server from the Docker image, which carries the agent. The token stays valid: run the command again once the download works.",
		"⚠️ 本服务器没有可下载的代理程序（它在 <code>%[1]s</code> 查找），所以上面的命令会失败：下载返回 503。解决办法：用 <code>scripts/agent-build-portable.sh</code> 构建代理并复制到该路径（立即生效），或把 <code>GPULEDGER_AGENT_BINARY</code> 设为它的路径后重启服务器，或用 Docker 镜像运行服务器（镜像里带有代理）。令牌仍然有效：下载可用后再运行一次该命令即可。"},
	"why_none": {
		"No automatic decisions are recorded for <b>%[1]s</b>.",
		"<b>%[1]s</b> 没有自动操作的记录。"},
	"autorelease_stop": {
		"✓ <b>%[1]s</b>: when it has been idle %[3]s I warn you; if it stays idle %[2]s more, its agent runs its release command and I record a <b>stop</b> (preferred: the data stays, /resume records the restart). Never while a job runs or the GPU is busy.",
		"✓ <b>%[1]s</b>：空闲 %[3]s 后提醒你；提醒后仍空闲 %[2]s，代理执行它的释放命令，并记为<b>关机</b>（推荐：数据保留，重新开机后用 /resume 记录）。有任务在跑或 GPU 在忙时从不执行。"},
	"autorelease_release": {
		"✓ <b>%[1]s</b>: when it has been idle %[3]s I warn you; if it stays idle %[2]s more, its agent runs its release command and I record a <b>release</b> (final: the instance's data is gone, its agent token is revoked). Stopping keeps the data: <code>/autorelease %[1]s stop</code>. Never while a job runs or the GPU is busy.",
		"✓ <b>%[1]s</b>：空闲 %[3]s 后提醒你；提醒后仍空闲 %[2]s，代理执行它的释放命令，并记为<b>释放</b>（不可恢复：实例数据丢失，代理令牌作废）。关机可保留数据：<code>/autorelease %[1]s stop</code>。有任务在跑或 GPU 在忙时从不执行。"},
	"autorelease_stop_api": {
		"✓ <b>%[1]s</b>: when it has been idle %[3]s I warn you; if it stays idle %[2]s more, I record a <b>stop</b> (preferred: the data stays, /resume records the restart). Never while a job runs or the GPU is busy.",
		"✓ <b>%[1]s</b>：空闲 %[3]s 后提醒你；提醒后仍空闲 %[2]s，记为<b>关机</b>（推荐：数据保留，重新开机后用 /resume 记录）。有任务在跑或 GPU 在忙时从不执行。"},
	"autorelease_release_api": {
		"✓ <b>%[1]s</b>: when it has been idle %[3]s I warn you; if it stays idle %[2]s more, I record a <b>release</b> (final: the instance's data is gone, its agent token is revoked). Stopping keeps the data: <code>/autorelease %[1]s stop</code>. Never while a job runs or the GPU is busy.",
		"✓ <b>%[1]s</b>：空闲 %[3]s 后提醒你；提醒后仍空闲 %[2]s，记为<b>释放</b>（不可恢复：实例数据丢失，代理令牌作废）。关机可保留数据：<code>/autorelease %[1]s stop</code>。有任务在跑或 GPU 在忙时从不执行。"},
	"autorelease_stop_storage": {
		"While stopped, %[1]s keeps billing its storage.",
		"关机期间 %[1]s 仍按存储计费。"},
	"autorelease_stop_deadline": {
		"%[1]s releases an instance stopped for %[2]s, with its data; I warn you a day before.",
		"%[1]s 会释放关机满 %[2]s 的实例及其数据；我会提前一天提醒。"},
	"autorelease_notify": {
		"✓ <b>%[1]s</b>: when idle, I only warn you",
		"✓ <b>%[1]s</b>：空闲时只提醒"},
	"autorelease_none": {
		"✓ <b>%[1]s</b>: no idle warnings or automatic actions",
		"✓ <b>%[1]s</b>：不提醒空闲，也不自动操作"},
	"autorelease_wait_for": {
		"While someone is connected (wait_for=%[1]s: SSH sessions, Jupyter or VS Code clients) it waits; <code>/autorelease %[2]s %[3]s wait_for=none</code> acts anyway.",
		"有人在线时（wait_for=%[1]s：SSH 会话、Jupyter 或 VS Code 客户端）暂缓执行；<code>/autorelease %[2]s %[3]s wait_for=none</code> 则照常执行。"},
	"autorelease_wait_none": {
		"wait_for=none: it acts even while someone is connected.",
		"wait_for=none：即使有人在线也照常执行。"},
	"why_policy": {
		"<b>%[1]s</b>: automatic %[2]s after %[3]s of warning; waits while connected: %[4]s.",
		"<b>%[1]s</b>：提醒后 %[3]s 自动%[2]s；有人在线时暂缓：%[4]s。"},
	"why_policy_notify": {
		"<b>%[1]s</b>: idle warnings only, no automatic action.",
		"<b>%[1]s</b>：只提醒空闲，不自动操作。"},
	"why_policy_off": {
		"<b>%[1]s</b>: no idle warnings or automatic actions.",
		"<b>%[1]s</b>：不提醒空闲，也不自动操作。"},
	"why_people_idle": {
		"Connected: %[1]s (heartbeat %[2]s), but nothing done for %[3]s: they no longer hold the automatic %[4]s (idle_people).",
		"在线：%[1]s（心跳 %[2]s），但已 %[3]s 没有任何操作：不再暂缓自动%[4]s（idle_people）。"},
	"autorelease_idle_people": {
		"A connection where nothing is done for %[1]s (no input in the terminal, no cell run) no longer holds it: <code>idle_people=3h</code> sets another bound, <code>idle_people=none</code> none.",
		"连接后 %[1]s 没有任何操作（终端无输入、没有运行单元格）就不再暂缓：<code>idle_people=3h</code> 可改时长，<code>idle_people=none</code> 不限。"},
	"autorelease_idle_people_none": {
		"A connection holds it however long nothing is done (idle_people=none).",
		"连接着就一直暂缓，不论多久没有操作（idle_people=none，不限）。"},
	"why_working": {
		"Working: %[1]s (heartbeat %[2]s).",
		"正在工作：%[1]s（心跳 %[2]s）。"},
	"why_nobody": {
		"Nobody connected (heartbeat %[1]s).",
		"无人在线（心跳 %[1]s）。"},
	"why_people": {
		"Connected: %[1]s (heartbeat %[2]s).",
		"在线：%[1]s（心跳 %[2]s）。"},
	"why_people_held": {
		"Connected: %[1]s (heartbeat %[2]s): the automatic %[3]s is held while they are.",
		"在线：%[1]s（心跳 %[2]s）：有人在线期间自动%[3]s暂缓。"},
	"why_head": {
		"<b>Automatic decisions for %[1]s</b>, newest first:",
		"<b>%[1]s 的自动操作记录</b>（最新在前）："},
	"autorelease_off": {
		"Automatic actions need the agent hub, which is not running on this server: nothing was changed.",
		"自动操作需要代理服务，但服务器上没有运行：没有做任何修改。"},

	// status

	// spend and summary
	"spend_head":        {"<b>Spend: %[1]s</b> (%[2]s – %[3]s)", "<b>花费：%[1]s</b>（%[2]s – %[3]s）"},
	"period_today":      {"today", "今天"},
	"period_yesterday":  {"yesterday", "昨天"},
	"period_week":       {"this week", "本周"},
	"period_month":      {"this month", "本月"},
	"period_last-month": {"last month", "上月"},
	"period_last-week":  {"last week", "上周"},
	"chart_caption":     {"Last 14 days", "最近 14 天"},
	"exported": {
		"Your ledger as of %[1]s",
		"截至 %[1]s 的账本"},
	"summary_team_month": {
		"The team's month to date:",
		"团队本月至今："},

	// buttons and proposals
	"button_stale": {
		"This button no longer works.",
		"这个按钮已失效。"},
	"propose": {
		"Looks like a rental. Record it as:\n<code>%[1]s</code>",
		"看起来是租了一台机器。这样记录吗：\n<code>%[1]s</code>"},
	"propose_incomplete": {
		"Looks like a rental, but I need the platform and the price. Fill them in and send:\n<code>%[1]s</code>",
		"看起来是租了一台机器，但还缺平台或价格。补全后发送：\n<code>%[1]s</code>"},
	"propose_per_card": {
		"%[1]s at %[2]s each = %[3]s",
		"%[1]s，每张 %[2]s，共 %[3]s"},
	"propose_change": {
		"Record it as:\n<code>%[1]s</code>",
		"这样记录吗：\n<code>%[1]s</code>"},
	"change_no_rental": {
		"You have no rental called %[1]s, so nothing was recorded: /status lists them.",
		"没有叫 %[1]s 的机器，什么也没记录：/status 列出所有机器。"},
	"btn_confirm": {"✓ Confirm", "✓ 确认"},
	"btn_edit":    {"✎ Edit", "✎ 修改"},
	"btn_cancel":  {"✗ Cancel", "✗ 取消"},
	"proposal_gone": {
		"This proposal has expired or was already answered: send the text again.",
		"这个建议已过期或已处理：请重新发送。"},
	"proposal_cancelled": {
		"✗ Cancelled, nothing recorded: <code>%[1]s</code>",
		"✗ 已取消，没有记录：<code>%[1]s</code>"},
	"proposal_edit": {
		"Copy, change and send:\n<code>%[1]s</code>",
		"复制、修改后发送：\n<code>%[1]s</code>"},

	// names that match nothing the user has (typo.go)
	"near_platform": {
		"Unknown platform <b>%[1]s</b>. Did you mean %[2]s? Nothing is recorded until you choose:\n<code>%[3]s</code>",
		"不认识平台 <b>%[1]s</b>，你是不是想写 %[2]s？选择之前什么也不记录：\n<code>%[3]s</code>"},
	"near_target": {
		"You have no rental, volume or platform called <b>%[1]s</b>. Did you mean %[2]s? Nothing is recorded until you choose:\n<code>%[3]s</code>",
		"你没有叫 <b>%[1]s</b> 的机器、存储盘或平台，你是不是想写 %[2]s？选择之前什么也不记录：\n<code>%[3]s</code>"},
	"new_target": {
		"You have no rental, volume or platform called <b>%[1]s</b>. Record this on a new name <b>%[1]s</b>? Nothing is recorded until you choose:\n<code>%[3]s</code>",
		"你没有叫 <b>%[1]s</b> 的机器、存储盘或平台。要记在新名字 <b>%[1]s</b> 上吗？选择之前什么也不记录：\n<code>%[3]s</code>"},
	"near_platform_line": {
		"Unknown platform <b>%[1]s</b>, nothing recorded. Did you mean %[2]s? Send this line by itself to choose.",
		"不认识平台 <b>%[1]s</b>，没有记录。你是不是想写 %[2]s？单独发送这一行来选择。"},
	"near_target_line": {
		"You have no rental, volume or platform called <b>%[1]s</b>, nothing recorded. Did you mean %[2]s? Send this line by itself to choose.",
		"你没有叫 <b>%[1]s</b> 的机器、存储盘或平台，没有记录。你是不是想写 %[2]s？单独发送这一行来选择。"},
	"new_target_line": {
		"You have no rental, volume or platform called <b>%[1]s</b>, nothing recorded. Send this line by itself to record it on a new name.",
		"你没有叫 <b>%[1]s</b> 的机器、存储盘或平台，没有记录。单独发送这一行，可以记在新名字上。"},
	"btn_use":          {"✓ Use %[1]s", "✓ 改用 %[1]s"},
	"btn_new_platform": {"＋ Create %[1]s as a new platform", "＋ 新建平台 %[1]s"},
	"btn_new_target":   {"＋ Create %[1]s as a new name", "＋ 新建名字 %[1]s"},
}

// tr renders one of the core's messages.
func tr(lang, key string, args ...any) string { return messages.Render(lang, key, args...) }

// t renders a message in the user's language.
func (r *req) t(key string, args ...any) string { return tr(r.lang, key, args...) }

// errorPrefixZH is the Chinese lead of a ledger error, by code; the
// ledger's own message (English) follows, so no detail is lost.
var errorPrefixZH = map[string]string{
	ledger.EINVALID:      "输入有误",
	ledger.ENOTFOUND:     "找不到",
	ledger.ECONFLICT:     "与现状冲突",
	ledger.EUNAUTHORIZED: "无权操作",
}

// ledgerErrorText renders a *ledger.Error for the user in lang, its times
// in loc: the message (view.LedgerMessage); in Chinese after a lead naming the
// kind of problem; then that nothing was changed.
func ledgerErrorText(err error, lang string, loc *time.Location, now time.Time) string {
	msg := view.LedgerMessage(err, lang, loc, now)
	var le *ledger.Error
	if !errors.As(err, &le) {
		return msg
	}
	return nothingChanged(le.Code, msg, lang)
}

// nothingChanged frames msg, the text of a ledger error of code, in lang:
// in Chinese after a lead naming the kind of problem; then that nothing
// was changed.
func nothingChanged(code, msg, lang string) string {
	if chat.NormLang(lang) == chat.LangZH {
		p := errorPrefixZH[code]
		if p == "" {
			p = "出错"
		}
		return p + "：" + msg + "（没有做任何修改）"
	}
	return msg + " (nothing was changed)"
}
