package bot

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// ledgerErrors renders keyed ledger errors (ledger.Error.Key): key →
// {en, zh}, with the ledger's arguments in the order of its English text.
// Every key of ledger.ErrorTexts has an entry here; the catalog test checks
// that both texts use the same arguments.
var ledgerErrors = map[string][2]string{
	"not_number":   {"%[1]q is not a number: %[2]v (write it like 1.88)", "%[1]q 不是数字：%[2]v（请写成 1.88 这样）"},
	"bad_currency": {"%[1]q is not a currency: use a code like CNY or USD", "%[1]q 不是货币：请用 CNY 或 USD 这样的代码"},
	"bad_month":    {"%[1]q is not a month: write it like 2026-11", "%[1]q 不是月份：请写成 2026-11"},
	"bad_price_unit": {"unknown price unit %[1]q: use /s, /min, /h, /day, /week or /month",
		"不认识的价格单位 %[1]q：请用 /s、/min、/h、/day、/week 或 /month"},
	"price_negative": {"price %[1]v is negative", "价格 %[1]v 是负数"},
	"no_platform":    {"rental %[1]v has no platform: add one, e.g. autodl", "租用 %[1]v 没有平台：请加上，比如 autodl"},
	"bad_count":      {"GPU count %[1]v is out of range 1..64", "显卡数量 %[1]v 超出范围 1..64"},
	"bad_mode": {"unknown billing mode %[1]q: use per-second, per-minute, per-hour or always-on",
		"不认识的计费方式 %[1]q：请用 per-second、per-minute、per-hour 或 always-on"},
	"no_currency":    {"rental %[1]v has no currency", "租用 %[1]v 没有货币"},
	"bad_min":        {"min=%[1]v is out of range 0..31d", "min=%[1]v 超出范围 0..31天"},
	"bad_step":       {"step=%[1]v must be whole seconds up to 31d", "step=%[1]v 必须是整秒，最多 31天"},
	"floor_negative": {"floor=%[1]v is negative", "floor=%[1]v 是负数"},
	"bad_lease":      {"for=%[1]v is out of range (up to a year)", "for=%[1]v 超出范围（最多一年）"},
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
	"bad_wait_for": {"wait_for=%[1]v: %[2]q is not ssh, jupyter, vscode or none, e.g. wait_for=ssh,jupyter",
		"wait_for=%[1]v：%[2]q 不是 ssh、jupyter、vscode 或 none，比如 wait_for=ssh,jupyter"},
	"wait_for_canonical": {"wait_for=%[1]v is not in canonical form (%[2]v)", "wait_for=%[1]v 不是规范写法（%[2]v）"},
	"bad_action": {"unknown action %[1]q: use off, notify, stop or release, e.g. /autorelease box1 stop after 1h",
		"不认识的动作 %[1]q：请用 off、notify、stop 或 release，比如 /autorelease box1 stop after 1h"},
	"bad_after": {"after=%[1]v is out of range (0 to 7 days), e.g. /autorelease box1 stop after 1h",
		"after=%[1]v 超出范围（0 到 7 天），比如 /autorelease box1 stop after 1h"},
	"after_short": {"after=%[1]v is too short: give at least %[2]v, e.g. /autorelease box1 stop after 30m",
		"after=%[1]v 太短：至少 %[2]v，比如 /autorelease box1 stop after 30m"},
	"rental_not_yours": {"that rental is not yours", "这个租用不是你的"},
}

// eventWords names rental and volume event kinds inside error texts.
var eventWords = map[string][2]string{
	string(ledger.EventStart): {"start", "开始"}, string(ledger.EventStop): {"stop", "关机"},
	string(ledger.EventResume): {"resume", "恢复"}, string(ledger.EventPrice): {"price change", "改价"},
	string(ledger.EventRelease): {"release", "释放"},
	string(ledger.VolumeCreate): {"create", "创建"}, string(ledger.VolumeResize): {"resize", "调整容量"},
	string(ledger.VolumeDelete): {"delete", "删除"},
}

// LedgerMessage renders the message of a ledger error in lang: a keyed
// *ledger.Error from the catalog above, with times in loc in the bot's
// usual format (relative to now) and durations as the bot writes them;
// any other ledger error by its English message. It is the one place the
// bot and the scheduler turn ledger errors into user text.
func LedgerMessage(err error, lang string, loc *time.Location, now time.Time) string {
	var le *ledger.Error
	if !errors.As(err, &le) {
		return ledger.ErrorMessage(err)
	}
	m, ok := ledgerErrors[le.Key]
	if le.Key == "" || !ok {
		return le.Message
	}
	zh := NormLang(lang) == LangZH
	tmpl := m[0]
	if zh {
		tmpl = m[1]
	}
	pick := func(w [2]string) string {
		if zh {
			return w[1]
		}
		return w[0]
	}
	a := make([]any, len(le.Args))
	for i, v := range le.Args {
		switch v := v.(type) {
		case time.Time:
			a[i] = FormatTime(v, loc, now, lang)
		case time.Duration:
			a[i] = FormatDuration(v, lang)
		case ledger.EventKind:
			if w, ok := eventWords[string(v)]; ok {
				a[i] = pick(w)
			} else {
				a[i] = string(v)
			}
		case ledger.VolumeEventKind:
			if w, ok := eventWords[string(v)]; ok {
				a[i] = pick(w)
			} else {
				a[i] = string(v)
			}
		default:
			a[i] = v
		}
	}
	return fmt.Sprintf(tmpl, a...)
}
