package view

import (
	"errors"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// ledgerErrors words keyed ledger errors (ledger.Error.Key): key →
// {en, zh}, with the ledger's arguments in its order. These are the only
// words of the ledger's refusals: the ledger keeps the key and the
// arguments (ledger.ErrorKeys), and the catalog test checks that every key
// has both texts showing every argument.
var ledgerErrors = chat.Catalog{
	"not_number":   {"%[1]q is not a number: %[2]v (write it like 1.88)", "%[1]q 不是数字：%[2]v（请写成 1.88 这样）"},
	"bad_currency": {"%[1]q is not a currency: use a code like CNY or USD", "%[1]q 不是货币：请用 CNY 或 USD 这样的代码"},
	"bad_month":    {"%[1]q is not a month: write it like 2026-11", "%[1]q 不是月份：请写成 2026-11"},
	"bad_price_unit": {"unknown price unit %[1]q: use /s, /min, /h, /day, /week or /month",
		"不认识的价格单位 %[1]q：请用 /s、/min、/h、/day、/week 或 /month"},
	"price_negative": {"price %[1]v is negative", "价格 %[1]v 是负数"},
	"no_platform":    {"rental %[1]v has no platform: add one, e.g. autodl", "租用 %[1]v 没有平台：请加上，比如 autodl"},
	"bad_count":      {"GPU count %[1]v is out of range %[2]v..%[3]v", "显卡数量 %[1]v 超出范围 %[2]v..%[3]v"},
	"bad_mode": {"unknown billing mode %[1]q: use per-second, per-minute, per-hour or always-on",
		"不认识的计费方式 %[1]q：请用 per-second、per-minute、per-hour 或 always-on"},
	"no_currency":    {"rental %[1]v has no currency", "租用 %[1]v 没有货币"},
	"bad_min":        {"min=%[1]v is out of range %[2]v..%[3]v in whole seconds", "min=%[1]v 超出范围 %[2]v..%[3]v（按整秒）"},
	"bad_step":       {"step=%[1]v is out of range %[2]v..%[3]v in whole seconds", "step=%[1]v 超出范围 %[2]v..%[3]v（按整秒）"},
	"floor_negative": {"floor=%[1]v is negative", "floor=%[1]v 是负数"},
	"bad_lease":      {"for=%[1]v is out of range %[2]v..%[3]v", "for=%[1]v 超出范围 %[2]v..%[3]v"},
	"price_absurd": {"price %[1]v is absurd (over %[2]v per hour): check the amount and unit",
		"价格 %[1]v 不合理（每小时超过 %[2]v）：请检查金额和单位"},
	"bad_name": {"name %[1]q may use only letters, digits, '-', '_' and '.', e.g. box1",
		"名字 %[1]q 只能用字母、数字、汉字、'-'、'_' 和 '.'，比如 box1"},
	"name_length": {"name %[1]q must be 1 to 32 characters long", "名字 %[1]q 必须是 1 到 32 个字符"},
	"no_time":     {"event has no time", "事件没有时间"},
	"not_started": {"rental %[1]v has not started: its first event must be a start", "租用 %[1]v 还没开始：第一件事必须是开始"},
	"before_start": {"%[1]v at %[2]v is before %[3]v started (%[4]v)",
		"%[2]v %[1]v早于 %[3]v 的开始时间（%[4]v）"},
	"before_last": {"%[1]v at %[2]v is before %[3]v's last change (%[4]v): events must be recorded in order",
		"%[2]v %[1]v早于 %[3]v 上一次变更（%[4]v）：事件必须按顺序记录"},
	"already_released": {"%[1]v was already released: it cannot %[2]v", "%[1]v 已经释放，不能再%[2]v"},
	"already_started":  {"%[1]v has already started: use resume", "%[1]v 已经开始了：请用 resume 恢复"},
	"already_stopped":  {"%[1]v is already stopped", "%[1]v 已经关机了"},
	"not_stopped":      {"%[1]v is running, not stopped", "%[1]v 正在运行，没有关机"},
	"bad_event":        {"unknown event %[1]q", "不认识的事件 %[1]q"},
	"bad_volume_size":  {"size %[1]vGB is out of range 0..%[2]vGB", "容量 %[1]vGB 超出范围 0..%[2]vGB"},
	"no_volume":        {"volume %[1]v does not exist yet", "存储卷 %[1]v 还不存在"},
	"volume_before_last": {"%[1]v at %[2]v is before volume %[3]v's last change (%[4]v)",
		"%[2]v %[1]v早于存储卷 %[3]v 上一次变更（%[4]v）"},
	"volume_deleted": {"volume %[1]v was already deleted", "存储卷 %[1]v 已经删除了"},
	"volume_exists":  {"volume %[1]v already exists", "存储卷 %[1]v 已经存在"},
	"bad_storage_unit": {"unknown storage price unit %[1]q: use /GB/h, /GB/day or /GB/month",
		"不认识的存储价格单位 %[1]q：请用 /GB/h、/GB/day 或 /GB/month"},
	"storage_negative":   {"storage price %[1]v is negative", "存储价格 %[1]v 是负数"},
	"stopped_negative":   {"stopped storage price %[1]v is negative", "关机时的存储价格 %[1]v 是负数"},
	"free_negative":      {"free=%[1]vGB is negative", "free=%[1]vGB 是负数"},
	"volume_no_currency": {"volume %[1]v has no currency", "存储卷 %[1]v 没有货币"},
	"volume_price_unpriced": {"volume %[1]v has no price yet: price it from its creation first, e.g. /storage %[1]v price=0.0066/GB/day",
		"存储卷 %[1]v 还没有价格：请先给出从创建时起的价格，比如 /storage %[1]v price=0.0066/GB/day"},
	"volume_price_before_create": {"price at %[1]v is before volume %[2]v was created (%[3]v)",
		"改价时间 %[1]v 早于存储卷 %[2]v 的创建时间（%[3]v）"},
	"volume_price_after_delete": {"price at %[1]v is not before volume %[2]v was deleted (%[3]v): give a time while it existed",
		"改价时间 %[1]v 不早于存储卷 %[2]v 的删除时间（%[3]v）：请给出它还在时的时间"},
	"volume_price_future": {"price at %[1]v is in the future (now %[2]v): give the time the price changed",
		"改价时间 %[1]v 在未来（现在是 %[2]v）：请给出价格改变的时间"},
	"traffic_price_unpriced": {"%[1]v has no traffic price yet: set it first, e.g. /traffic %[1]v price=0.8/GB",
		"%[1]v 还没有流量价格：请先设置，比如 /traffic %[1]v price=0.8/GB"},
	"traffic_price_before_start": {"traffic price at %[1]v is before %[2]v started (%[3]v)",
		"流量改价时间 %[1]v 早于 %[2]v 的开始时间（%[3]v）"},
	"price_past_kind": {"only a price change can be recorded in the past, not %[1]v",
		"只有改价可以记在过去，%[1]v 不行"},
	"price_before_start": {"price at %[1]v is before %[2]v started (%[3]v)",
		"改价时间 %[1]v 早于 %[2]v 的开始时间（%[3]v）"},
	"price_after_release": {"price at %[1]v is not before %[2]v was released (%[3]v): give a time while it was rented",
		"改价时间 %[1]v 不早于 %[2]v 的释放时间（%[3]v）：请给出它还在租用时的时间"},
	"rental_unpriced_at": {"%[1]v has no price yet: price it from its start first (/price %[1]v PRICE, without at), then change it from a time on",
		"%[1]v 还没有价格：请先从开始时定价（/price %[1]v 价格，不带 at），再从某个时间起改价"},
	"period_empty": {"the period %[1]v to %[2]v is empty: give a start before its end",
		"时间段 %[1]v 到 %[2]v 是空的：开始时间要早于结束时间"},
	"span_backwards": {"the span %[1]v to %[2]v ends before it starts: give the start first",
		"时间段 %[1]v 到 %[2]v 的结束早于开始：请先写开始时间"},
	"period_future": {"the period starts %[1]v, in the future: give one that has begun",
		"时间段从 %[1]v 开始，还没到：请给一个已经开始的时间段"},
	"bad_wait_for": {"wait_for=%[1]v: %[2]q is not ssh, jupyter, vscode or none, e.g. wait_for=ssh,jupyter",
		"wait_for=%[1]v：%[2]q 不是 ssh、jupyter、vscode 或 none，比如 wait_for=ssh,jupyter"},
	"wait_for_canonical": {"wait_for=%[1]v is not in canonical form (%[2]v)", "wait_for=%[1]v 不是规范写法（%[2]v）"},
	"bad_idle_people": {"idle_people=%[1]v is out of range %[2]v..%[3]v (or none), e.g. idle_people=3h",
		"idle_people=%[1]v 超出范围 %[2]v..%[3]v（或 none），比如 idle_people=3h"},
	"bad_action": {"unknown action %[1]q: use off, notify, stop or release, e.g. /autorelease box1 stop after 1h",
		"不认识的动作 %[1]q：请用 off、notify、stop 或 release，比如 /autorelease box1 stop after 1h"},
	"bad_after": {"after=%[1]v is out of range %[2]v..%[3]v, e.g. /autorelease box1 stop after 1h",
		"after=%[1]v 超出范围 %[2]v..%[3]v，比如 /autorelease box1 stop after 1h"},
	"after_short": {"after=%[1]v is too short: give at least %[2]v, e.g. /autorelease box1 stop after 30m",
		"after=%[1]v 太短：至少 %[2]v，比如 /autorelease box1 stop after 30m"},
	"no_rental_named":       {"you have no rental named %[1]v (see /status for your rentals)", "你没有名叫 %[1]v 的租用（/status 可查看你的租用）"},
	"bad_rental_ref":        {"%[1]q is not a rental's address: write NAME@YYYY-MM-DD, the day it started, e.g. yolo@2026-11-02 (NAME@YYYY-MM-DD#2 for the second of that name that day)", "%[1]q 不是租用的地址：请写 名称@YYYY-MM-DD（开始的日期），比如 yolo@2026-11-02（同一天同名的第二个写 名称@YYYY-MM-DD#2）"},
	"ref_future":            {"%[1]v: no rental can have started on %[2]v, a day still to come", "%[1]v：%[2]v 还没到，不会有那天开始的租用"},
	"no_rental_at":          {"you have no rental %[2]v that started on %[3]v (%[1]v): /status shows the addresses of rentals that share a name", "你没有在 %[3]v 开始的租用 %[2]v（%[1]v）：/status 会显示同名租用各自的地址"},
	"ref_other_then":        {"%[2]v is before this %[1]v started; the %[1]v that ran then is %[3]v: write %[3]v in place of %[1]v to correct it", "%[2]v 早于现在这个 %[1]v 的开始时间；那时的 %[1]v 是 %[3]v：要更正它，请把 %[1]v 写成 %[3]v"},
	"bad_traffic_direction": {"unknown traffic direction %[1]q: use direction=out, in or both", "不认识的流量方向 %[1]q：请用 direction=out、in 或 both"},
	"traffic_positive":      {"traffic of %[1]v bytes: record a positive amount, e.g. /traffic %[2]v 12GB", "流量 %[1]v 字节：请记录正数，比如 /traffic %[2]v 12GB"},
	"traffic_in_out":        {"traffic direction %[1]q: use out or in, e.g. /traffic %[2]v 12GB out", "流量方向 %[1]q：请用 out 或 in，比如 /traffic %[2]v 12GB out"},
	"traffic_before_start":  {"traffic at %[1]v is before %[2]v started (%[3]v)", "流量时间 %[1]v 早于 %[2]v 的开始时间（%[3]v）"},
	"no_volume_named":       {"you have no volume named %[1]v (see /status)", "你没有名叫 %[1]v 的存储卷（见 /status）"},
	"bad_volume_event":      {"unknown volume event %[1]q: use resize or delete", "不认识的存储卷操作 %[1]q：请用 resize 或 delete"},
	"charge_zero":           {"a charge of 0 records nothing: give an amount, e.g. /charge box1 5 image fee", "金额为 0 的费用不会记录：请给出金额，比如 /charge box1 5 镜像费"},
	"note_long":             {"the note is longer than %[1]v characters", "备注超过 %[1]v 个字符"},
	"charge_target":         {"a charge needs a rental or a platform, e.g. /charge box1 5 image fee", "费用需要一个租用或平台，比如 /charge box1 5 镜像费"},
	"charge_currency":       {"a charge needs a currency, e.g. /charge box1 ¥5 image fee", "费用需要货币，比如 /charge box1 ¥5 镜像费"},
	"no_platform_given":     {"no platform given, e.g. /%[1]v autodl 100", "没有给出平台，比如 /%[1]v autodl 100"},
	"no_currency_given":     {"no currency given, e.g. /%[1]v autodl ¥100", "没有给出货币，比如 /%[1]v autodl ¥100"},
	"topup_positive":        {"a top-up of %[1]v: give a positive amount, e.g. /topup autodl 100", "充值 %[1]v：请给出正数金额，比如 /topup autodl 100"},
	"bad_lang":              {"unknown language %[1]q: use lang=en or lang=zh", "不支持的语言 %[1]q：请用 lang=en 或 lang=zh"},
	"bad_tz":                {"unknown time zone %[1]q: use an IANA name, e.g. tz=Asia/Shanghai", "不认识的时区 %[1]q：请用 IANA 名称，比如 tz=Asia/Shanghai"},
	"bad_summary":           {"summary time is out of range: use HH:MM, e.g. summary=22:00, or summary=off", "日报时间超出范围：请用 HH:MM，比如 summary=22:00，或 summary=off"},
	"bad_quiet":             {"quiet hours are out of range: use HH:MM-HH:MM, e.g. quiet=23:00-08:00", "免打扰时段超出范围：请用 HH:MM-HH:MM，比如 quiet=23:00-08:00"},
	"setting_range":         {"%[1]v=%[2]v is out of range %[3]v..%[4]v", "%[1]v=%[2]v 超出范围 %[3]v..%[4]v"},
	"not_registered":        {"user %[1]v is not registered: send /start first", "用户 %[1]v 还没有注册：请先发送 /start"},
	"nothing_to_undo":       {"there is nothing to undo (a stop or release confirmed by an agent cannot be undone: /resume NAME starts a stopped rental again)", "没有可以撤销的操作（代理确认的关机或释放不能撤销：/resume 名字 可重新开机）"},
	"agent_released":        {"%[1]v was released: an agent can only report for a live rental", "%[1]v 已经释放：代理只能为在用的租用上报"},
	"was_released":          {"%[1]v was already released", "%[1]v 已经释放了"},
	"not_live":              {"%[1]v is not a live rental", "%[1]v 不是在用的租用"},
	"release_in_progress":   {"%[1]v already has a release in progress", "%[1]v 已经在释放中"},
	"no_unreleased":         {"you have no unreleased rental called %[1]v: /status lists them", "你没有名叫 %[1]v 的未释放租用：/status 可查看"},
	"currency_mismatch":     {"%[1]v is billed in %[2]v, not %[3]v: give the amount in %[2]v", "%[1]v 以 %[2]v 计费，不是 %[3]v：请用 %[2]v 填写金额"},
	"no_rental_called":      {"you have no rental called %[1]v: /status lists them", "你没有名叫 %[1]v 的租用：/status 可查看"},
	"no_agent_reported":     {"no agent has reported for %[1]v: release it on the platform, then /release %[1]v", "%[1]v 没有代理上报：请在平台上释放，然后发送 /release %[1]v"},
	"card_not_yours":        {"that message is not a card of yours", "那条消息不是你的卡片"},
	"rental_not_yours":      {"that rental is not yours", "这个租用不是你的"},
	"store_unavailable":     {"the ledger cannot be reached right now: it will be retried", "账本暂时无法访问：稍后会自动重试"},
	"disk_full":             {"the disk holding the ledger is full: it will be retried once there is room", "账本所在的磁盘已满：腾出空间后会自动重试"},

	// Refusals of the benches and job runs (ledger.BenchStore).
	"job_label": {"label %[1]q may use only letters, digits, '.', '_' and '-', at most 64 of them, e.g. yolo-epoch",
		"标签 %[1]q 只能用字母、数字、'.'、'_' 和 '-'，最多 64 个，比如 yolo-epoch"},
	"job_span":        {"a job cannot end (%[2]v) before it starts (%[1]v)", "任务的结束时间（%[2]v）不能早于开始时间（%[1]v）"},
	"bench_report_id": {"a bench report needs an ID of 1 to 64 characters", "测速报告需要 1 到 64 个字符的 ID"},

	// Refusals of the undo journal, the agent hub and budgets.
	"undo_after_agent_stop": {"cannot undo the %[1]v of %[2]v: its agent stopped %[2]v after it, and that cannot be undone; /resume %[2]v starts it again",
		"无法撤销 %[2]v 的%[1]v：之后代理已将 %[2]v 关机，这无法撤销；/resume %[2]v 可重新开机"},
	"undo_after_agent_release": {"cannot undo the %[1]v of %[2]v: its agent released %[2]v after it, and that cannot be undone; record a new rental with /rent",
		"无法撤销 %[2]v 的%[1]v：之后代理已将 %[2]v 释放，这无法撤销；请用 /rent 记录新的租用"},
	"undo_done": {"the %[1]v %[2]v is undone already: nothing more was undone",
		"%[2]v 的%[1]v已经撤销过了：没有再撤销别的"},
	"undo_stale": {"nothing was undone: another change came after the %[1]v %[2]v; send /undo again to see what it would undo now",
		"没有撤销任何内容：在 %[2]v 的%[1]v之后又有了新的修改；再发送 /undo 查看现在会撤销什么"},
	"order_nothing_to":    {"%[1]v is %[2]v: nothing to %[3]v", "%[1]v 处于%[2]v，无需%[3]v"},
	"budget_not_positive": {"budget %[1]v is not positive: use e.g. /budget 500/month", "预算 %[1]v 不是正数：请写成 /budget 500/month 这样"},
	"budget_no_currency":  {"budget %[1]v has no currency, e.g. /budget ¥500/month", "预算 %[1]v 没有货币，比如 /budget ¥500/month"},
	"budget_twice":        {"two budgets in %[1]v: a currency has one budget", "%[1]v 有两个预算：每种货币只能有一个预算"},

	// Enrolment.
	"enrol_token_unknown": {"unknown enrolment token: send /agent in the chat for a new install line",
		"不认识的注册令牌：请在聊天中发送 /agent 获取新的安装命令"},
	"enrol_token_revoked": {"this enrolment token was revoked: send /agent in the chat for a new install line",
		"这个注册令牌已被吊销：请在聊天中发送 /agent 获取新的安装命令"},
	"instance_no_key": {"the agent could not tell this host apart (no instance ID, machine-id or host name)",
		"代理无法识别这台主机（没有实例 ID、machine-id 或主机名）"},
	"instances_pending_full": {"%[1]v announced instances are waiting for your answer: answer their cards (or /agent revoke if they are not yours) before more are shown",
		"已有 %[1]v 个新实例在等你回复：请先回复它们的卡片（如果不是你的，发送 /agent revoke），之后才会显示更多"},
	"no_instance": {"you have no announced instance %[1]v: the card of a new instance gives its number, e.g. /adopt 7",
		"你没有编号为 %[1]v 的新实例：新实例的卡片上有编号，比如 /adopt 7"},
	"instance_bound":     {"instance %[1]v is already logged as %[2]v", "实例 %[1]v 已经记录为 %[2]v"},
	"instance_not_bound": {"instance %[1]v is not logged as a rental: log it first, e.g. /adopt %[2]v", "实例 %[1]v 还没有记录为租用：请先记录，比如 /adopt %[2]v"},
	"platform_id_empty": {"the platform gave no instance ID: an instance needs its platform's ID",
		"平台没有给出实例 ID：实例需要平台的 ID"},
	"platform_id_long": {"the platform's instance ID is %[1]v bytes long: at most %[2]v bytes are kept",
		"平台的实例 ID 长 %[1]v 字节：最多保留 %[2]v 字节"},
	"platform_id_chars": {"the platform's instance ID %[1]q has a control or invisible character at byte %[2]v: an ID is printable text",
		"平台的实例 ID %[1]q 在第 %[2]v 字节处有控制字符或不可见字符：ID 必须是可打印的文字"},
	"instance_label_long": {"the instance's name is %[1]v bytes long: at most %[2]v bytes are kept",
		"实例名称长 %[1]v 字节：最多保留 %[2]v 字节"},
	"instance_label_chars": {"the instance's name %[1]q has a control or invisible character at byte %[2]v",
		"实例名称 %[1]q 在第 %[2]v 字节处有控制字符或不可见字符"},
	"instance_gpu_long": {"the instance's GPU model is %[1]v bytes long: at most %[2]v bytes are kept",
		"实例的显卡型号长 %[1]v 字节：最多保留 %[2]v 字节"},
	"instance_gpu_chars": {"the instance's GPU model %[1]q has a control or invisible character at byte %[2]v",
		"实例的显卡型号 %[1]q 在第 %[2]v 字节处有控制字符或不可见字符"},
	"instance_gpu_count": {"the instance's GPU count %[1]v is out of range 0..%[2]v",
		"实例的显卡数量 %[1]v 超出范围 0..%[2]v"},
	"instance_currency": {"%[1]q is not a currency code: use an upper-case ISO code such as USD or CNY",
		"%[1]q 不是货币代码：请用 USD 或 CNY 这样的大写 ISO 代码"},
	"instance_message": {"message ID %[1]v is negative: give 0 for none",
		"消息 ID %[1]v 是负数：没有消息请用 0"},
	"platform_key": {"%[1]q is not a platform name: use a lowercase key such as runpod, vast, lambda or autodl",
		"%[1]q 不是平台名称：请用 runpod、vast、lambda 或 autodl 这样的小写名称"},
	"platform_status": {"unknown instance status %[1]q: use asked, bound or declined",
		"不认识的实例状态 %[1]q：请用 asked、bound 或 declined"},
	"platform_status_rental": {"an instance marked %[1]v names no rental: only a bound one does",
		"状态为 %[1]v 的实例不能关联租用：只有已绑定的实例才关联"},
	"platform_bound_no_rental": {"instance %[1]v is marked bound but names no rental: give the rental it is bound to",
		"实例 %[1]v 标记为已绑定，但没有指明租用：请给出它绑定的租用"},
	"platform_state": {"unknown instance state %[1]q: use running, stopped, terminated or unknown",
		"不认识的实例运行状态 %[1]q：请用 running、stopped、terminated 或 unknown"},
	"platform_bound": {"instance %[1]v is already bound to %[2]v",
		"实例 %[1]v 已经绑定到 %[2]v"},
	"platform_not_bound": {"instance %[1]v is not bound to a rental: nothing to apply its change to",
		"实例 %[1]v 没有绑定租用：无法记录它的变化"},
	"platform_mismatch": {"%[1]v is a rental on %[2]v, not on %[3]v",
		"%[1]v 是 %[2]v 上的租用，不是 %[3]v 上的"},
	"platform_id_in_use": {"%[1]v already is the platform's instance %[2]v: one live rental per instance",
		"%[1]v 已经对应平台实例 %[2]v：每个实例只能有一个未释放的租用"},
	"no_platform_instance": {"you have no platform instance %[1]v: /connect lists your connected platforms",
		"你没有编号为 %[1]v 的平台实例：/connect 列出已连接的平台"},
	"no_rental_id": {"you have no rental number %[1]v: /status lists your rentals",
		"你没有编号为 %[1]v 的租用：/status 列出你的租用"},
	"rental_other_instance": {"%[1]v is not the platform's instance %[2]v: bind it to the instance first",
		"%[1]v 不是平台实例 %[2]v：请先把它绑定到该实例"},
	"no_platform_rental": {"you have no rental of %[1]v instance %[2]v",
		"你没有对应 %[1]v 实例 %[2]v 的租用"},
	"record_not_found": {"no record #%[1]v: /records lists your charges, top-ups, balances and traffic with their numbers",
		"没有记录 #%[1]v：/records 会列出你的费用、充值、余额和流量记录及其编号"},
	"record_no_note": {"#%[1]v is not a charge: only a charge has a note",
		"#%[1]v 不是费用：只有费用有备注"},
	"record_no_size": {"#%[1]v is not a traffic record: give an amount of money, e.g. /fix #%[1]v 6.50",
		"#%[1]v 不是流量记录：请给出金额，比如 /fix #%[1]v 6.50"},
	"record_no_amount": {"#%[1]v is a traffic record: give its size and direction, e.g. /fix #%[1]v 12GB out",
		"#%[1]v 是流量记录：请给出流量和方向，比如 /fix #%[1]v 12GB out"},
	"record_currency": {"#%[1]v is in %[2]v, not %[3]v: a record keeps its currency (/delete #%[1]v and record it again)",
		"#%[1]v 的货币是 %[2]v，不是 %[3]v：记录的货币不能改（可 /delete #%[1]v 后重新记录）"},
	"record_future": {"%[1]v is in the future (now %[2]v): give the time it happened",
		"%[1]v 还没到（现在 %[2]v）：请给出发生的时间"},
	"charge_before_start": {"a charge at %[1]v is before %[2]v started (%[3]v)",
		"费用时间 %[1]v 早于 %[2]v 的开始时间（%[3]v）"},
	"record_no_change": {"nothing to change in #%[1]v: give an amount, a note, a size or a time, e.g. /fix #%[1]v 6.50",
		"#%[1]v 没有要改的内容：请给出金额、备注、流量或时间，比如 /fix #%[1]v 6.50"},
}

// eventWords names rental and volume event kinds inside error texts.
var eventWords = map[string][2]string{
	string(ledger.EventStart): {"start", "开始"}, string(ledger.EventStop): {"stop", "关机"},
	string(ledger.EventResume): {"resume", "恢复"}, string(ledger.EventPrice): {"price change", "改价"},
	string(ledger.EventRelease): {"release", "释放"},
	string(ledger.VolumeCreate): {"create", "创建"}, string(ledger.VolumeResize): {"resize", "调整容量"},
	string(ledger.VolumeDelete): {"delete", "删除"},
}

// stateWords names rental states inside error texts.
var stateWords = map[ledger.State][2]string{
	ledger.Running: {"running", "运行状态"}, ledger.Stopped: {"stopped", "关机状态"}, ledger.Released: {"released", "已释放状态"},
}

// LedgerMessage renders the message of a ledger error in lang: a keyed
// *ledger.Error from the catalog above, with times in loc in the bot's
// usual format (relative to now) and durations as the bot writes them; a
// ledger error without a key (ledger.Errorf) by its English message; any
// other error as "internal error", its details being for the log. It is
// the one place the bot, the scheduler, the platform sync and the button
// router (chat.Buttons' ErrorText, ButtonErrors) turn ledger errors into
// user text: its signature is theirs. An error's own text (err.Error())
// stays for logs and operators: the code, the key and the arguments.
func LedgerMessage(err error, lang string, loc *time.Location, now time.Time) string {
	var le *ledger.Error
	if !errors.As(err, &le) {
		return "internal error"
	}
	if le.Key == "" {
		return le.Message
	}
	if _, ok := ledgerErrors[le.Key]; !ok {
		return le.Error() // a key without words: the catalog test fails on it
	}
	return ledgerErrors.Text(lang, le.Key, renderArgs(le.Args, lang, loc, now)...)
}
