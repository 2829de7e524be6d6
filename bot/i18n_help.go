package bot

import (
	"strings"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
)

// helpItem documents one command in both languages: its usage line, a short
// description (also used for Telegram's command menu) and a working example.
type helpItem struct {
	kind  command.Kind
	usage string
	desc  [2]string // en, zh
	ex    [2]string // en, zh
}

func (h helpItem) example(lang string) string {
	if chat.NormLang(lang) == chat.LangZH {
		return h.ex[1]
	}
	return h.ex[0]
}

func (h helpItem) description(lang string) string {
	if chat.NormLang(lang) == chat.LangZH {
		return h.desc[1]
	}
	return h.desc[0]
}

// helpItems lists every command in the order /help shows them. Examples
// here are checked by a test: each must parse to a command of its kind.
var helpItems = []helpItem{
	{command.KindRent, "/rent NAME PLATFORM GPU PRICE [MODE] [min=DUR] [step=DUR] [floor=AMOUNT] [currency=CUR] [for=DUR] [project=NAME] [at TIME]",
		[2]string{"start a rental", "记一台新租的机器"},
		[2]string{"/rent box1 autodl 4090 1.88/h", "/rent box1 autodl 4090 1.88元/小时 按秒"}},
	{command.KindStop, "/stop NAME [at TIME]",
		[2]string{"stop a rental (compute stops billing)", "关机（停止计算计费）"},
		[2]string{"/stop box1", "/stop box1 at 10分钟前"}},
	{command.KindResume, "/resume NAME [at TIME]",
		[2]string{"resume a stopped rental", "开机（恢复计费）"},
		[2]string{"/resume box1", "/resume box1 at 今天 09:00"}},
	{command.KindRelease, "/release NAME [at TIME]",
		[2]string{"release a rental (the end)", "释放机器（结束租用）"},
		[2]string{"/release box1", "/release box1 at 2小时前"}},
	{command.KindPrice, "/price NAME PRICE [at TIME]",
		[2]string{"change a rental's price from now or from TIME; a past TIME corrects it, released rentals too", "修改价格（从现在或指定时间起）；过去的时间可更正价格，已释放的也可以"},
		[2]string{"/price box1 2.28/h", "/price box1 2.28元/小时"}},
	{command.KindStorage, "/storage VOLUME SIZE [PRICE] [free=SIZE] [rental=NAME | platform=NAME] [project=NAME] [at TIME] | VOLUME resize SIZE | VOLUME delete | VOLUME price=PRICE [stopped=PRICE] [at TIME]",
		[2]string{"add, resize, price (from its creation, or from TIME on) or delete a storage volume", "记录、扩容、定价（从创建时起，或从指定时间起）或删除存储盘"},
		[2]string{"/storage data1 200GB 0.0066/GB/day free=50GB rental=box1", "/storage data1 200GB 0.0066元/GB/天 free=50GB rental=box1"}},
	{command.KindTraffic, "/traffic NAME price=PRICE/GB [free=SIZE] [direction=out|in|both] | NAME price=PRICE/GB at TIME | NAME AMOUNT [out|in] [at TIME]",
		[2]string{"set a traffic price, or change it from TIME on (released rentals too), or record traffic used", "设置流量价格，或从指定时间起改价（已释放的也可以），或记录流量"},
		[2]string{"/traffic box1 price=0.8/GB free=100GB", "/traffic box1 120GB out"}},
	{command.KindCharge, "/charge NAME AMOUNT NOTE... [at TIME] [project=NAME]",
		[2]string{"a one-off charge (image fee, support), dated now or at TIME", "一次性费用（镜像费等），记在现在或 at 给出的时间"},
		[2]string{"/charge box1 5 image fee at 2026-11-01 10:05", "/charge box1 5元 镜像费 at 昨天 10:05"}},
	{command.KindTopup, "/topup PLATFORM AMOUNT [at TIME]",
		[2]string{"record a top-up of a platform balance", "记录给平台充值"},
		[2]string{"/topup autodl 100", "/topup autodl 100元"}},
	{command.KindBalance, "/balance [PLATFORM AMOUNT] [at TIME]",
		[2]string{"record the balance a platform shows, or show balances", "记录平台显示的余额，或查看余额"},
		[2]string{"/balance autodl 67.01", "/balance autodl 67.01元"}},
	{command.KindRecords, "/records [NAME|PLATFORM]",
		[2]string{"your charges, top-ups, balances and traffic records with their numbers, to /fix or /delete any of them", "列出费用、充值、余额和流量记录及其编号，可用 /fix 更正或 /delete 删除"},
		[2]string{"/records box1", "/records autodl"}},
	{command.KindFix, "/fix #N [AMOUNT|SIZE] [in|out] [NOTE...] [at TIME]",
		[2]string{"correct a past charge, top-up, balance or traffic record (undoable)", "更正过去的费用、充值、余额或流量记录（可撤销）"},
		[2]string{"/fix #12 6.50 image fee at 10:05", "/fix #12 6.50 镜像费 at 10:05"}},
	{command.KindDelete, "/delete #N",
		[2]string{"delete a past charge, top-up, balance or traffic record (undoable)", "删除过去的费用、充值、余额或流量记录（可撤销）"},
		[2]string{"/delete #12", "/delete #12"}},
	{command.KindBudget, "/budget [AMOUNT[/month]|off] [currency=CODE]",
		[2]string{"set, remove (off currency=USD) or show the monthly budgets, one per currency: with several currencies, write the sign (¥3000, $500) or currency=",
			"设置、取消（off currency=USD）或查看每月预算，每种货币一个：用多种货币时请写明符号（¥3000、$500）或 currency="},
		[2]string{"/budget $500/month", "/budget 3000元/月"}},
	{command.KindStatus, "/status",
		[2]string{"what is running and what it costs", "查看在租机器和费用"},
		[2]string{"/status", "/status"}},
	{command.KindSpend, "/spend [today|yesterday|week|last-week|month|last-month|YYYY-MM|YYYY-MM-DD[..YYYY-MM-DD]]",
		[2]string{"what was spent in a period", "查看某段时间的花费"},
		[2]string{"/spend week", "/spend 本周"}},
	{command.KindSummary, "/summary",
		[2]string{"the nightly summary, now", "立即发送每日总结"},
		[2]string{"/summary", "/summary"}},
	{command.KindExport, "/export [csv|json]",
		[2]string{"the ledger as a file", "导出账本文件"},
		[2]string{"/export csv", "/export csv"}},
	{command.KindDashboard, "/dashboard",
		[2]string{"a one-time link to the dashboard (charts of your spend and idle hours); it signs in whoever opens it, so don't forward it", "仪表盘的一次性链接（花费和空闲时间的图表）；谁打开就登录谁，请勿转发"},
		[2]string{"/dashboard", "/dashboard"}},
	{command.KindUndo, "/undo",
		[2]string{"undo the last change, and say which; asks first when it may not be the one you mean (after a refused message, a button or sync change, or one over 5 min old)", "撤销上一次修改，并说明撤销的是什么；可能不是你想撤销的那一次时先询问（上一条消息被拒绝、按钮或同步做的修改、超过 5 分钟的修改）"},
		[2]string{"/undo", "/undo"}},
	{command.KindAgent, "/agent [NAME | revoke]",
		[2]string{"a token and install command for a rental's agent; with no name, an install line for every instance you start (each one is announced here and logged with one tap); revoke: revoke those lines",
			"获取机器监控代理的令牌和安装命令；不带名字：获取通用安装命令，用它启动的每个实例都会在这里报到，一键记账；revoke：作废这些通用命令"},
		[2]string{"/agent box1", "/agent box1"}},
	{command.KindAdopt, "/adopt ID [PRICE]",
		[2]string{"log an announced instance (ID from its card) as a rental, at PRICE or at the price its card offers", "把报到的实例（卡片上的 ID）记为租用，按 PRICE 或卡片给出的价格"},
		[2]string{"/adopt 7 0.85/h", "/adopt 7 0.85元/小时"}},
	{command.KindAutoRelease, "/autorelease NAME off|notify|stop|release [after DUR] [wait_for=ssh,jupyter,vscode|none]",
		[2]string{"what to do when a rental sits idle; an automatic stop or release waits while someone is connected (SSH, Jupyter, VS Code) unless wait_for=none",
			"设置机器空闲时自动做什么；有人在线（SSH、Jupyter、VS Code）时自动关机/释放会暂缓，wait_for=none（等待=无）则照常执行"},
		[2]string{"/autorelease box1 stop after 30m", "/autorelease box1 关机 after 30分钟"}},
	{command.KindSettings, "/settings [tz=ZONE] [lang=en|zh] [summary=HH:MM] [idle_warn=DUR] [silent=DUR] [quiet=HH:MM-HH:MM] [long_run=DUR] [bench=on|off]",
		[2]string{"show or change your settings", "查看或修改设置"},
		[2]string{"/settings tz=Asia/Shanghai lang=en summary=22:00", "/settings lang=zh quiet=23:00-08:00"}},
	{command.KindWhy, "/why NAME",
		[2]string{"why the bot did what it did to a rental", "查看自动操作的原因"},
		[2]string{"/why box1", "/why box1"}},
	{command.KindReceipt, "/receipt NAME",
		[2]string{"what a rental's bench measured, at what price per TFLOP-hour",
			"租用的测速收据：测得的性能与每 TFLOP·小时的价格"},
		[2]string{"/receipt box1", "/receipt box1"}},
	{command.KindQuote, "/quote GPU HOURS [storage=SIZE] [stopped=HOURS] [traffic=SIZE] [price=PRICE] [platform=NAME] [MODE]",
		[2]string{"the whole bill before you rent", "租之前先算总账"},
		[2]string{"/quote 4090 10", "/quote 4090 10 price=1.88元/小时"}},
	{command.KindJob, "/job NAME [LABEL [FROM TO]]",
		[2]string{"label a past run of your job on a rental (or its agent's last one) to time and price it; alone, its runs",
			"给租用上跑过的一次任务（或代理最近一次）加标签，计时计价；只写名字则列出它的任务"},
		[2]string{"/job box1 yolo-epoch 14:05 15:10", "/job box1 yolo-epoch 昨天 22:00 今天 01:10"}},
	{command.KindCompare, "/compare [LABEL]",
		[2]string{"your price/performance: per platform and card the bench and price per tensor-TFLOP-hour; per label, time and money a run",
			"你的性价比：各平台各显卡的测速和每 TFLOP·小时价格；各标签每次的用时和花费"},
		[2]string{"/compare yolo-epoch", "/compare yolo-epoch"}},
	{command.KindConnect, "/connect [PLATFORM KEY]",
		[2]string{"connect a platform API (runpod, vast, lambda, autodl) in a private chat: the message with the key is deleted at once; alone, lists the connections",
			"在私聊中连接平台 API（runpod、vast、lambda、autodl）：带 key 的消息会立即删除；不带参数则列出已连接的平台"},
		[2]string{"/connect runpod rpa_0123456789ABCDEF", "/connect"}},
	{command.KindDisconnect, "/disconnect PLATFORM",
		[2]string{"forget a platform key; rentals keep their platform IDs, nothing is stopped", "删除平台的 key；机器保留平台 ID，不会关机或释放"},
		[2]string{"/disconnect runpod", "/disconnect vast"}},
	{command.KindReconcile, "/reconcile [YYYY-MM]",
		[2]string{"the ledger against what the connected platforms billed, per rental, this month or in YYYY-MM", "账本与已连接平台的账单逐台对账，本月或指定月份"},
		[2]string{"/reconcile", "/reconcile 2026-11"}},
	{command.KindHelp, "/help [COMMAND]",
		[2]string{"this help", "帮助"},
		[2]string{"/help rent", "/help rent"}},
	{command.KindStart, "/start [CODE]",
		[2]string{"start, or claim the bot with the code from its log", "开始，或用日志里的认领码认领机器人"},
		[2]string{"/start", "/start"}},
}

func helpEntry(k command.Kind) (helpItem, bool) {
	for _, h := range helpItems {
		if h.kind == k {
			return h, true
		}
	}
	for _, h := range teamHelpItems {
		if h.kind == k {
			return h, true
		}
	}
	return helpItem{}, false
}

// CommandInfo is one entry of Telegram's command menu (setMyCommands):
// Command is lowercase a-z, 0-9 and '_', at most 32 characters, without the
// slash; Description is at most 256 characters.
type CommandInfo struct {
	Command     string
	Description string
}

// CommandList returns the command menu in lang ("en" or "zh"), in the
// order /help shows it, the team commands (/team, /use, /project) last as
// /help lists them: a menu without them would hide the commands a team
// member types most. The transport registers one list per language.
func CommandList(lang string) []CommandInfo {
	out := make([]CommandInfo, 0, len(helpItems)+len(teamHelpItems))
	for _, items := range [][]helpItem{helpItems, teamHelpItems} {
		for _, h := range items {
			out = append(out, CommandInfo{Command: string(h.kind), Description: h.description(lang)})
		}
	}
	return out
}

// helpText returns /help's reply in lang: every command with its usage, a
// description and an example. With a topic it returns that command's entry
// only, with the shapes its arguments may take.
func helpText(lang string, topic command.Kind) string {
	lang = chat.NormLang(lang)
	var b strings.Builder
	if isTeamTopic(topic) {
		return teamHelpText(lang)
	}
	if topic != "" {
		if h, ok := helpEntry(topic); ok {
			writeHelpItem(&b, lang, h, true)
			b.WriteString("\n")
			b.WriteString(shapesFor(lang, h.usage))
			return b.String()
		}
	}
	if lang == chat.LangZH {
		b.WriteString("命令（参数顺序随意，key=value 总是可用）：\n\n")
	} else {
		b.WriteString("Commands (arguments in any order; key=value always works):\n\n")
	}
	for _, h := range helpItems {
		writeHelpItem(&b, lang, h, false)
	}
	b.WriteString(teamHelpLine(lang))
	b.WriteString("\n")
	if lang == chat.LangZH {
		b.WriteString("也可以直接说：租了一台4090 1.88元/小时 autodl\n")
	} else {
		b.WriteString("Or just say: rented 2x4090 on vast at $0.70/h\n")
	}
	return b.String()
}

func writeHelpItem(b *strings.Builder, lang string, h helpItem, long bool) {
	b.WriteString("/")
	b.WriteString(string(h.kind))
	b.WriteString(" — ")
	b.WriteString(h.description(lang))
	b.WriteString("\n")
	if long {
		b.WriteString("  ")
		b.WriteString(h.usage)
		b.WriteString("\n")
		if aliases := command.Aliases(h.kind); len(aliases) > 0 {
			b.WriteString("  ")
			if lang == chat.LangZH {
				b.WriteString("别名：")
			} else {
				b.WriteString("aliases: ")
			}
			b.WriteString("/" + strings.Join(aliases, " /"))
			b.WriteString("\n")
		}
	}
	b.WriteString("  ")
	if lang == chat.LangZH {
		b.WriteString("例如：")
	} else {
		b.WriteString("e.g. ")
	}
	b.WriteString(h.example(lang))
	b.WriteString("\n")
}

// shapes are the forms an argument takes, in the order one command's help
// lists those its usage names.
var shapes = []struct{ key, en, zh string }{
	{"GPU", "GPU: 4090, 2x4090, 4090x2, A100-80G, H100*8, 8xH100",
		"显卡：4090、2x4090、4090x2、A100-80G、H100*8、两张3090"},
	{"PRICE", "PRICE: 1.88 (per hour), 1.88/h, 1.88 per hour, ¥70/day, ¥70 a day, $0.70/h, 0.7usd/h, 1.88元/小时; the words after a price are its unit, not a billing mode",
		"价格：1.88（默认每小时）、1.88元/小时、1.88元 每小时、¥70/天、$0.70/h、0.7usd/h；价格后面的“每小时”“一天”是价格的单位，不是计费方式"},
	{"MODE", "MODE: per-second, per-minute, per-hour (every started hour in full), always-on (按秒, 按分钟, 按小时, 包日, 包周, 包月); left out, the platform's own; one against the platform's is asked about",
		"计费：per-second、per-minute、per-hour（每个开始的小时按整小时计）、always-on、按秒、按分钟、按小时、包日、包周、包月；不写则按平台的方式，与平台不符时会先问你"},
	{"TIME", "TIME: 10:00, yesterday 23:00, 2026-11-01 10:00, -2h, 2h ago, RFC 3339",
		"时间：10:00、今天 10:00、昨天 23:00、2026-11-01 10:00、-2h、2小时前"},
	{"DUR", "DUR: 30s, 90m, 1h30m, 2d, 1w",
		"时长：30s、90m、1h30m、2d、2小时、30分钟、2天"},
	{"SIZE", "SIZE: 200GB, 1.5TB, 500G",
		"容量：200GB、1.5TB、500G"},
}

// shapesFor lists the forms of the placeholders that usage names (GPU,
// PRICE, TIME...), so one command's help says nothing of arguments it
// does not take.
func shapesFor(lang, usage string) string {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(usage, func(r rune) bool { return r < 'A' || r > 'Z' }) {
		words[w] = true
	}
	var b strings.Builder
	for _, s := range shapes {
		if !words[s.key] {
			continue
		}
		if lang == chat.LangZH {
			b.WriteString(s.zh)
		} else {
			b.WriteString(s.en)
		}
		b.WriteString("\n")
	}
	return b.String()
}
