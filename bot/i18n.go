package bot

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// parseErrorText renders a parser's error in lang ("en" or "zh"): what was
// wrong, then an example of the command.
func parseErrorText(e *command.ParseError, lang string) string {
	lang = chat.NormLang(lang)
	msg := catalogText(lang, e.Key, e.Args)
	ex := parseExample(e, lang)
	if lang == chat.LangZH {
		return msg + "。例如：" + ex
	}
	return msg + ". Example: " + ex
}

// ErrorText renders any error for a user in lang: a *ParseError in that
// language, a *ledger.Error by view.LedgerMessage (times in UTC, as full dates),
// anything else as a generic
// internal error (whose details must be logged, not shown).
func ErrorText(err error, lang string) string {
	if err == nil {
		return ""
	}
	var pe *command.ParseError
	if errors.As(err, &pe) {
		return parseErrorText(pe, lang)
	}
	if ledger.ErrorCode(err) == ledger.EINTERNAL {
		if chat.NormLang(lang) == chat.LangZH {
			return "内部错误，已记录。请稍后再试"
		}
		return "internal error, logged; please try again later"
	}
	return view.LedgerMessage(err, lang, time.UTC, time.Time{})
}

// catalog holds the parser's messages: key → {en, zh}, plain text (the
// core escapes the whole message). Arguments are inserted with explicit
// indexes (%[1]s) so a translation may reorder them.
var catalog = chat.Catalog{
	"too_long": {
		"the message is too long (%[1]s bytes): a command is at most %[2]s bytes",
		"消息太长（%[1]s 字节）：一条命令最多 %[2]s 字节"},
	"too_many_words": {
		"the command has too many words (more than %[1]s)",
		"命令的词太多（超过 %[1]s 个）"},
	"bad_utf8": {
		"the message is not valid UTF-8 text",
		"消息不是有效的 UTF-8 文本"},
	"unknown_command": {
		"unknown command %[1]s: send /help for the list",
		"未知命令 %[1]s：发送 /help 查看命令列表"},
	"unknown_command_near": {
		"unknown command %[1]s: did you mean %[2]s? Send /help for the list",
		"未知命令 %[1]s：你是不是想输入 %[2]s？发送 /help 查看命令列表"},
	"missing_name": {
		"/%[1]s needs a name, e.g. box1",
		"/%[1]s 需要一个名字，比如 box1"},
	"missing_instance_id": {
		"/adopt needs the number of an announced instance, from its card (e.g. /adopt 7 0.85/h)",
		"/adopt 需要报到实例的编号，见它的卡片（例如 /adopt 7 0.85元/小时）"},
	"bad_instance_id": {
		"instance number %[1]s is not a whole number from 1 up, as its card shows it",
		"实例编号 %[1]s 不是卡片上那样从 1 起的整数"},
	"missing_platform": {
		"/%[1]s needs a platform, e.g. autodl, runpod or vast",
		"/%[1]s 需要平台名，比如 autodl、runpod 或 vast"},
	"missing_gpu": {
		"/%[1]s needs a GPU model, e.g. 4090 or 2xA100",
		"/%[1]s 需要显卡型号，比如 4090 或 2xA100"},
	"missing_price": {
		"/%[1]s needs a price, e.g. 1.88/h",
		"/%[1]s 需要价格，比如 1.88元/小时"},
	"missing_size": {
		"/%[1]s needs a size, e.g. 200GB",
		"/%[1]s 需要容量，比如 200GB"},
	"missing_amount": {
		"/%[1]s needs an amount of money, e.g. 100 or $20",
		"/%[1]s 需要金额，比如 100 或 ¥100"},
	"missing_ref": {
		"/%[1]s needs a record's number, as /records lists it (e.g. #12)",
		"/%[1]s 需要记录的编号，见 /records 的列表（比如 #12）"},
	"bad_ref": {
		"%[1]s is not a record's number: write it as /records shows it, e.g. /%[2]s #12",
		"%[1]s 不是记录的编号：请照 /records 显示的写，比如 /%[2]s #12"},
	"fix_nothing": {
		"nothing to change in %[1]s: give an amount, a size, a note or a time, e.g. /fix %[1]s 6.50",
		"%[1]s 没有要改的内容：请给出金额、流量、备注或时间，比如 /fix %[1]s 6.50"},
	"missing_action": {
		"/autorelease needs an action: off, notify, stop or release",
		"/autorelease 需要一个动作：off（关闭）、notify（提醒）、stop（关机）或 release（释放）"},
	"missing_traffic": {
		"/traffic needs an amount used (e.g. 120GB) or price=PRICE/GB",
		"/traffic 需要用量（比如 120GB）或 price=价格/GB"},
	"bad_name": {
		"name %[1]s may use only letters, digits, '-', '_' and '.', up to 32 characters",
		"名字 %[1]s 只能用字母、数字、汉字、'-'、'_' 和 '.'，最多 32 个字符"},
	"bad_rental_ref": {
		"%[1]s is not a rental's address: write NAME@YYYY-MM-DD, the day it started, e.g. yolo@2026-11-02 (NAME@YYYY-MM-DD#2 for the second of that name that day)",
		"%[1]s 不是租用的地址：请写 名称@YYYY-MM-DD（开始的日期），比如 yolo@2026-11-02（同一天同名的第二个写 名称@YYYY-MM-DD#2）"},
	"ref_future": {
		"%[1]s: no rental can have started on %[2]s, a day still to come",
		"%[1]s：%[2]s 还没到，不会有那天开始的租用"},
	"bad_platform": {
		"platform %[1]s may use only letters, digits, '-', '_' and '.', up to 32 characters",
		"平台名 %[1]s 只能用字母、数字、汉字、'-'、'_' 和 '.'，最多 32 个字符"},
	"bad_project": {
		"project %[1]s may use only letters, digits, '-', '_' and '.', starting with a letter or digit, up to %[2]s characters",
		"项目名 %[1]s 只能用字母、数字、汉字、'-'、'_' 和 '.'，以字母、数字或汉字开头，最多 %[2]s 个字符"},
	"bad_price": {
		"price %[1]s is not a price: write it like 1.88/h or ¥1.88/小时",
		"价格 %[1]s 看不懂：请写成 1.88/h 或 1.88元/小时"},
	"price_negative": {
		"price %[1]s is negative",
		"价格 %[1]s 是负数"},
	"bad_storage_price": {
		"storage price %[1]s is not a price per GB: write it like 0.0066/GB/day or 0.1元/GB/月",
		"存储价格 %[1]s 看不懂：请写成 0.0066元/GB/天 或 0.1/GB/month"},
	"stopped_unit": {
		"%[1]s must be in the price's unit (%[2]s), or a bare amount, e.g. stopped=0.20",
		"%[1]s 必须和价格用同一单位（%[2]s），或只写金额，比如 stopped=0.20"},
	"bad_traffic_price": {
		"traffic price %[1]s is not a price per GB: write it like 0.8/GB or $0.01/GB",
		"流量价格 %[1]s 看不懂：请写成 0.8元/GB 或 $0.01/GB"},
	"bad_gpu": {
		"%[1]s is not a GPU I know: write it like 4090, 2x4090, A100-80G or H100*8",
		"%[1]s 不是认识的显卡：请写成 4090、2x4090、A100-80G 或 H100*8"},
	"bad_count": {
		"GPU count %[1]s is out of range %[2]s..%[3]s",
		"显卡数量 %[1]s 超出范围 %[2]s..%[3]s"},
	"bad_time": {
		"%[1]s is not a time: write it like 10:00, 2026-11-01 10:00, -2h or 2h ago",
		"%[1]s 不是时间：请写成 10:00、2026-11-01 10:00、-2h 或 2小时前"},
	"future_time": {
		"time %[1]s is in the future (%[2]s): give the time it happened",
		"时间 %[1]s 在将来（%[2]s）：请填写实际发生的时间"},
	"old_time": {
		"time %[1]s is before 2000",
		"时间 %[1]s 早于 2000 年"},
	"bad_dur": {
		"%[1]s is not a duration: write it like 30s, 90m, 1h30m or 2d",
		"%[1]s 不是时长：请写成 30s、90m、1h30m、2d 或 2小时"},
	"dur_range": {
		"%[1]s=%[2]s is out of range %[3]s",
		"%[1]s=%[2]s 超出范围 %[3]s"},
	"bad_size": {
		"%[1]s is not a size: write it like 200GB, 1.5TB or 500G",
		"%[1]s 不是容量：请写成 200GB、1.5TB 或 500G"},
	"bad_amount": {
		"%[1]s is not an amount of money: write it like 100, ¥100 or $20.50",
		"%[1]s 不是金额：请写成 100、100元 或 $20.50"},
	"amount_positive": {
		"amount %[1]s must be more than 0",
		"金额 %[1]s 必须大于 0"},
	"amount_nonzero": {
		"amount %[1]s must not be 0",
		"金额 %[1]s 不能是 0"},
	"bad_currency": {
		"%[1]s is not a currency: use a code like CNY or USD",
		"%[1]s 不是货币：请用 CNY 或 USD 这样的代码"},
	"currency_conflict": {
		"currencies %[1]s and %[2]s disagree",
		"货币 %[1]s 和 %[2]s 不一致"},
	"twice": {
		"%[1]s is given twice (%[2]s and %[3]s)",
		"%[1]s 给了两次（%[2]s 和 %[3]s）"},
	"unexpected": {
		"I don't know what %[1]s means in /%[2]s",
		"/%[2]s 里的 %[1]s 看不懂"},
	"unknown_key": {
		"/%[2]s has no setting %[1]s: use %[3]s",
		"/%[2]s 没有 %[1]s 这个参数：可用的有 %[3]s"},
	"package_unit": {
		"%[1]s is a package paid per %[2]s, but the price is per %[3]s",
		"%[1]s 是按%[2]s的套餐，但价格是按%[3]s"},
	"bad_tz": {
		"%[1]s is not a time zone: write it like Asia/Shanghai, Europe/Berlin or UTC+8",
		"%[1]s 不是时区：请写成 Asia/Shanghai、Europe/Berlin 或 UTC+8"},
	"bad_on_off": {
		"%[2]s is not on or off: write %[1]s=on or %[1]s=off",
		"%[2]s 不是 on 或 off：请写 %[1]s=on 或 %[1]s=off"},
	"bad_lang": {
		"language %[1]s is not supported: use en or zh",
		"不支持语言 %[1]s：请用 en 或 zh"},
	"bad_hhmm": {
		"%[1]s is not a time of day: write it like 22:00",
		"%[1]s 不是钟点：请写成 22:00"},
	"bad_quiet": {
		"%[1]s is not a quiet-hours window: write it like 23:00-08:00 or off",
		"%[1]s 不是免打扰时段：请写成 23:00-08:00 或 off"},
	"bad_wait_for": {
		"wait_for=%[1]s: use none, all, or ssh, jupyter, vscode joined by commas, e.g. wait_for=ssh,jupyter",
		"wait_for=%[1]s：请用 none（无）、all（全部），或用逗号连接 ssh、jupyter、vscode，比如 wait_for=ssh,jupyter"},
	"bad_action": {
		"%[1]s is not an action: use off, notify, stop or release",
		"%[1]s 不是动作：请用 off、notify、stop 或 release"},
	"bad_direction": {
		"%[1]s is not a direction: use out, in or both",
		"%[1]s 不是方向：请用 out（出）、in（入）或 both（双向）"},
	"bad_period": {
		"%[1]s is not a period: use today, yesterday, week, last-week, month, last-month, YYYY-MM, a day YYYY-MM-DD or days YYYY-MM-DD..YYYY-MM-DD",
		"%[1]s 不是时间段：请用 today（今天）、yesterday（昨天）、week（本周）、last-week（上周）、month（本月）、last-month（上月）、YYYY-MM、某一天 YYYY-MM-DD 或几天 YYYY-MM-DD..YYYY-MM-DD"},
	"bad_format": {
		"%[1]s is not an export format: use csv or json",
		"%[1]s 不是导出格式：请用 csv 或 json"},
	"bad_budget_unit": {
		"a budget is per month, not %[1]s: write it like 3000 or 3000/month",
		"预算按月计，不是 %[1]s：请写成 3000 或 3000/月"},
	"budget_all_off": {
		"%[1]s removes every budget: write /budget off all",
		"%[1]s 用来取消全部预算：请写 /budget off all"},
	"budget_all_currency": {
		"%[1]s removes every budget, not only the %[2]s one: write /budget off all, or /budget off %[2]s",
		"%[1]s 会取消全部预算，不只是 %[2]s 的：请写 /budget off all，或 /budget off %[2]s"},
	"bad_topic": {
		"there is no command %[1]s",
		"没有命令 %[1]s"},
	"bad_topic_near": {
		"there is no command %[1]s: did you mean %[2]s?",
		"没有命令 %[1]s，你是不是想查 %[2]s？"},
	"bad_code": {
		"%[1]s is not a claim code",
		"%[1]s 不是认领码"},
	// The /connect errors never quote a word that may be a key.
	"connect_no_key": {
		"/connect %[1]s needs the API key after the platform, in a private chat: /connect %[1]s KEY",
		"/connect %[1]s 需要在平台后面写上 API key，请在私聊中发送：/connect %[1]s KEY"},
	"connect_no_platform": {
		"/connect needs the platform and the key, in that order: /connect PLATFORM KEY, where PLATFORM is one of %[1]s",
		"/connect 需要平台和 key，按这个顺序：/connect 平台 KEY，平台为 %[1]s 之一"},
	"connect_unsupported": {
		"%[1]s cannot be connected: its API is not supported. Platforms that can: %[2]s",
		"%[1]s 无法连接：不支持它的 API。可以连接的平台：%[2]s"},
	"connect_words": {
		"/connect takes a platform and one key (an API key has no spaces): /connect PLATFORM KEY, where PLATFORM is one of %[1]s",
		"/connect 只接受一个平台和一个 key（API key 里没有空格）：/connect 平台 KEY，平台为 %[1]s 之一"},
	"connect_key_length": {
		"that is not a %[4]s API key: it has %[1]s characters, and a key has %[2]s to %[3]s. Copy the whole key from the platform",
		"这不是 %[4]s 的 API key：它有 %[1]s 个字符，而 key 有 %[2]s 到 %[3]s 个。请从平台完整复制 key"},
	"connect_key_chars": {
		"that is not a %[1]s API key: it has characters a key never has (spaces, quotes of a chat app, non-ASCII). Copy the key again from the platform",
		"这不是 %[1]s 的 API key：里面有 key 不会有的字符（空格、聊天软件的引号、非 ASCII 字符）。请从平台重新复制 key"},
	"disconnect_usage": {
		"/disconnect needs the platform: /disconnect PLATFORM, where PLATFORM is one of %[1]s",
		"/disconnect 需要平台：/disconnect 平台，平台为 %[1]s 之一"},
	"disconnect_platform": {
		"%[1]s is not a platform that can be connected: use one of %[2]s",
		"%[1]s 不是可以连接的平台：请用 %[2]s 之一"},
	"bad_month": {
		"%[1]s is not a month: write it like 2026-11 (YYYY-MM), or leave it out for this month",
		"%[1]s 不是月份：请写成 2026-11（YYYY-MM），或不写表示本月"},
	"future_month": {
		"%[1]s has not begun yet: reconcile this month (%[2]s) or an earlier one",
		"%[1]s 还没开始：请对账本月（%[2]s）或更早的月份"},
	// /quote
	"quote_missing_gpu": {
		"/quote needs a GPU and how many hours it would run, e.g. /quote 4090 10",
		"/quote 需要显卡和运行的小时数，比如 /quote 4090 10"},
	"quote_missing_hours": {
		"/quote needs how many hours it would run after the GPU, e.g. /quote %[1]s 10 (or 2.5, 90m, 3d)",
		"/quote 需要在显卡后面写运行的小时数，比如 /quote %[1]s 10（也可以写 2.5、90m、3天）"},
	"quote_bad_hours": {
		"%[1]s is not a number of hours: write it like 10, 2.5, 90m or 3d",
		"%[1]s 不是小时数：请写成 10、2.5、90m 或 3天"},
	"quote_hours_range": {
		"%[1]s hours is out of range: more than 0 and at most 8760 (a year); stopped= may be 0",
		"%[1]s 小时超出范围：要大于 0、最多 8760（一年）；stopped= 可以是 0"},
	"quote_needs_price": {
		"%[1]s says how a price is billed: give the price too, e.g. price=70/day",
		"%[1]s 说明价格怎么计费：请同时给出价格，比如 price=70/天"},
	// /job and /compare
	"job_bad_label": {
		"%[1]s is not a job label: letters, digits, '.', '_' and '-', at most %[2]s of them, e.g. yolo-epoch",
		"%[1]s 不是任务标签：只能用字母、数字、'.'、'_' 和 '-'，最多 %[2]s 个，比如 yolo-epoch"},
	"job_one_time": {
		"/job needs both the start and the end of the run, e.g. /job %[1]s %[2]s 14:05 15:10, or neither to name the last job its agent ran",
		"/job 需要同时给出任务的开始和结束时间，比如 /job %[1]s %[2]s 14:05 15:10；都不写则给代理最近运行的任务加上标签"},
	"job_span_order": {
		"%[1]s to %[2]s (%[3]s to %[4]s) ends before it starts: give the start first",
		"%[1]s 到 %[2]s（%[3]s 到 %[4]s）的结束早于开始：请先写开始时间"},
	"job_span_long": {
		"%[1]s to %[2]s is longer than %[3]s days: check the dates",
		"%[1]s 到 %[2]s 超过了 %[3]s 天：请检查日期"},
}

func catalogText(lang, key string, args []string) string {
	if _, ok := catalog[key]; !ok {
		return key + " " + strings.Join(args, " ")
	}
	a := make([]any, len(args))
	for i, s := range args {
		if r, ok := strings.CutPrefix(s, command.RangeMark); ok {
			s = rangeText(r, lang)
		} else if k, ok := strings.CutPrefix(s, command.NounMark); ok {
			if n, found := nouns[k]; found {
				s = n[0]
				if lang == chat.LangZH {
					s = n[1]
				}
			} else {
				s = k
			}
		}
		a[i] = s
	}
	return catalog.Text(lang, key, a...)
}

func rangeText(r, lang string) string {
	a, b, _ := strings.Cut(r, "..")
	lo, err1 := strconv.ParseInt(a, 10, 64)
	hi, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil {
		return r
	}
	return chat.FormatDuration(time.Duration(lo)*time.Second, lang) + ".." + chat.FormatDuration(time.Duration(hi)*time.Second, lang)
}

var nouns = map[string][2]string{
	"name": {"name", "名字"}, "platform": {"platform", "平台"}, "GPU": {"GPU", "显卡"},
	"price": {"price", "价格"}, "mode": {"billing mode", "计费方式"}, "count": {"GPU count", "显卡数量"},
	"size": {"size", "容量"}, "amount": {"amount", "金额"}, "direction": {"direction", "方向"},
	"operation": {"operation", "操作"}, "action": {"action", "动作"}, "after": {"after", "等待时长"},
	"at":     {"time", "时间"},
	"second": {"second", "秒"}, "minute": {"minute", "分钟"}, "hour": {"hour", "小时"},
	"day": {"day", "天"}, "week": {"week", "周"}, "month": {"month", "月"},
	"label": {"label", "标签"}, "from": {"start", "开始时间"}, "to": {"end", "结束时间"},
}
