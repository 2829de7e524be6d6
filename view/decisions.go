package view

import (
	"errors"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// decisionTexts renders the decision log (/why): the summary and evidence
// messages the scheduler records (ledger.Decision.SummaryMsg, EvidenceMsg)
// and the reasons ledger.AutoDecide gives (ledger.AutoKeys). Arguments are
// typed (see renderArgs): times show in the reader's zone when /why is
// read, durations, actions, states and who is connected in the reader's
// language. The texts are plain: /why escapes them.
var decisionTexts = chat.Catalog{
	// Summaries: what was decided.
	"d_warn":                 {"idle warning shown", "已发出空闲提醒"},
	"d_remind":               {"idle reminder #%[1]v", "第 %[1]v 次空闲提醒"},
	"d_held":                 {"automatic action held back", "自动操作暂缓"},
	"d_not_ordered":          {"automatic %[1]v not ordered", "未能下达自动%[1]v指令"},
	"d_ordered":              {"automatic %[1]v ordered (%[2]v)", "已下达自动%[1]v指令（%[2]v）"},
	"d_outcome":              {"%[1]v order %[2]v: %[3]v", "%[1]v指令 %[2]v：%[3]v"},
	"d_silent":               {"silent-agent alert", "代理失联提醒"},
	"d_idle_silent":          {"idle streak ended: agent silent", "空闲记录结束：代理失联"},
	"d_release_pressed":      {"Release now pressed: order %[1]v", "按下了“立即释放”：指令 %[1]v"},
	"d_snooze_pressed":       {"Snooze 1h pressed", "按下了“推迟 1 小时”"},
	"d_keep_pressed":         {"Keep pressed", "按下了“保留”"},
	"d_at_end_pressed":       {"Release at end pressed", "按下了“到期释放”"},
	"d_marked_released":      {"I released it pressed", "按下了“我已释放”"},
	"d_mismatch":             {"GPU facts differ from the rental", "显卡与租用记录不符"},
	"d_unconfirmed":          {"release not confirmed", "释放未确认"},
	"d_adopted":              {"logged from the announcement of %[1]v", "根据 %[1]v 的报到记账"},
	"d_returned":             {"the instance reported without its own token", "实例没有用自己的令牌上报"},
	"d_reconnect_pressed":    {"Reconnect pressed: a new agent token", "按下了“重新连接”：新的代理令牌"},
	"d_host_stop":            {"stop recorded: the host shut down", "已记录关机：主机关机了"},
	"d_host_resume":          {"resume recorded: the host started again", "已记录开机：主机重新启动"},
	"d_host_cycle":           {"stop and resume recorded: the host was down", "已记录关机和开机：主机曾停机"},
	"d_host_ask":             {"asked whether billing stopped", "已询问是否停止计费"},
	"d_host_stopped_pressed": {"Stopped pressed", "按下了“已关机”"},
	"d_host_billed_pressed":  {"It billed pressed: nothing recorded", "按下了“照常计费”：未记录"},
	"d_pact_pressed":         {"%[1]v through %[2]v's API pressed", "按下了通过 %[2]v API %[1]v"},
	"d_pact_auto":            {"automatic %[1]v through %[2]v's API", "通过 %[2]v API 自动%[1]v"},
	"d_pact_done":            {"%[1]v through %[2]v's API confirmed", "通过 %[2]v API %[1]v已确认"},
	"d_pact_unconfirmed":     {"%[1]v through %[2]v's API not confirmed", "通过 %[2]v API %[1]v未确认"},
	"d_pact_failed":          {"%[1]v through %[2]v's API failed", "通过 %[2]v API %[1]v失败"},
	"d_pact_cannot_stop":     {"automatic stop not possible: %[1]v can only terminate", "无法自动关机：%[1]v 只能销毁"},
	"d_pact_ask":             {"automatic %[1]v through %[2]v's API not done: asked for a tap", "未通过 %[2]v API 自动%[1]v：等待你点按"},
	"d_pact_auto_unc":        {"automatic stop through %[1]v's API (a stop keeps the disk; never a terminate)", "通过 %[1]v API 自动关机（关机保留磁盘；绝不自动销毁）"},
	"d_trust_asked":          {"automation through %[1]v's API off: the agent's reports contradict the platform's list", "通过 %[1]v API 的自动操作已关闭：代理上报与平台列表不符"},
	"d_trust_off":            {"Keep automation off pressed", "按下了“保持关闭自动操作”"},
	"d_trust_trusted":        {"Trust this agent pressed", "按下了“信任这个代理”"},
	"d_trust_new":            {"New token pressed: the agent's token revoked", "按下了“新令牌”：代理令牌已吊销"},

	// Evidence: the facts each rested on.
	"e_warn":             {"idle %[1]v since %[2]v, %[3]v spent idle, policy %[4]v", "自 %[2]v 起空闲 %[1]v，空闲花费 %[3]v，策略：%[4]v"},
	"e_remind":           {"idle %[1]v, %[2]v spent idle", "空闲 %[1]v，空闲花费 %[2]v"},
	"e_silent":           {"last heartbeat %[1]v (%[2]v ago); no release is ever taken on silence", "最后一次心跳 %[1]v（%[2]v前）；失联从不触发释放"},
	"e_idle_silent":      {"idle %[1]v until %[2]v, %[3]v spent idle; silence is not counted", "空闲 %[1]v，截至 %[2]v，空闲花费 %[3]v；失联期间不计入"},
	"e_tap_people":       {"%[1]v connected; a tap is not held", "%[1]v 已连接；手动操作不会暂缓"},
	"e_until":            {"until %[1]v", "直到 %[1]v"},
	"e_card":             {"%[1]v card", "%[1]v卡片"},
	"e_lease_ends":       {"lease ends %[1]v", "租期在 %[1]v 结束"},
	"e_recorded_at":      {"release recorded at %[1]v", "已记录 %[1]v 释放"},
	"e_gpu_model":        {"the agent sees %[1]v, you logged %[2]v", "代理看到的是 %[1]v，记录的是 %[2]v"},
	"e_gpu_count":        {"the agent sees only %[1]v of the %[2]v GPUs you pay for", "代理只看到 %[1]v 张卡，你付费的是 %[2]v 张"},
	"e_both":             {"%[1]v; %[2]v", "%[1]v；%[2]v"},
	"e_reported_after":   {"the agent reported at %[1]v after the release at %[2]v", "代理在 %[2]v 释放之后仍于 %[1]v 上报"},
	"e_adopted":          {"starts %[1]v at %[2]v", "从 %[1]v 起，价格 %[2]v"},
	"e_adopted_unpriced": {"starts %[1]v, no price yet", "从 %[1]v 起，尚未定价"},
	"e_instance":         {"instance %[1]v", "实例 %[1]v"},
	"e_shutdown_stops":   {"shutdown reported at %[1]v; on %[2]v a shutdown from inside stops billing", "%[1]v 报告关机；在 %[2]v 上从内部关机会停止计费"},
	"e_shutdown_ask":     {"shutdown reported at %[1]v; on %[2]v that may not stop billing", "%[1]v 报告关机；在 %[2]v 上这不一定停止计费"},
	"e_boot":             {"new boot at %[1]v; last heartbeat before it %[2]v", "%[1]v 重新启动；之前最后一次心跳 %[2]v"},
	"e_down_ask":         {"down from %[1]v to %[2]v, and whether it billed is not known", "%[1]v 至 %[2]v 停机，不确定是否计费"},
	"e_stop_range":       {"stopped %[1]v, resumed %[2]v", "%[1]v 关机，%[2]v 开机"},
	"e_stop_at":          {"stopped %[1]v", "%[1]v 关机"},
	"e_pact_busy":        {"the agent's fresh heartbeat says the GPUs are working", "代理的最新心跳显示显卡在工作"},
	"e_pact_listed":      {"the platform still lists it %[1]v %[2]v", "平台仍显示为 %[1]v %[2]v"},
	"e_pact_at":          {"recorded at the platform's time %[1]v", "按平台时间 %[1]v 记录"},
	"e_pact_at_approx":   {"recorded at %[1]v, when it was seen so (the platform gave no time)", "按看到的时间 %[1]v 记录（平台未给出时间）"},
	OutcomeKey:           {"%[1]v", "%[1]v"}, // OutcomeText of the outcome and message
	LedgerErrorKey:       {"%[1]v", "%[1]v"}, // a ledger error, from the ledger errors' catalog
	"e_text":             {"%[1]v", "%[1]v"}, // a text with no key (a store error), as it is
	WayKey:               {"%[1]v", "%[1]v"}, // why an automatic action asks (autoway.go)

	// The reasons ledger.AutoDecide gives, and its evidence.
	ledger.AutoNoPolicy:   {"no automatic action chosen (/autorelease)", "没有设置自动操作（/autorelease）"},
	ledger.AutoNotRunning: {"rental is not running", "租用不在运行"},
	ledger.AutoNoAgent:    {"no agent reports for this rental", "这个租用没有代理上报"},
	ledger.AutoOrderOpen:  {"an order is already in flight", "已有指令在执行中"},
	ledger.AutoNoWarning:  {"no idle warning shown yet", "还没有发出空闲提醒"},
	ledger.AutoGrace:      {"grace period: warned %[1]v, acting not before %[2]v", "宽限期：%[1]v 已提醒，%[2]v 之前不会操作"},
	ledger.AutoSnoozed:    {"snoozed until %[1]v", "已推迟到 %[1]v"},
	ledger.AutoKept:       {"the user chose Keep", "用户选择了保留"},
	ledger.AutoStale:      {"no fresh heartbeat (last %[1]v ago)", "没有最新心跳（上一次在 %[1]v前）"},
	ledger.AutoJob:        {"the wrapped job is running", "托管的任务正在运行"},
	ledger.AutoBusy:       {"the host is busy", "主机正忙"},
	ledger.AutoNotIdle:    {"the host's state is unknown", "无法判断主机是否空闲"},
	ledger.AutoPeopleRefused: {"the agent found someone connected at %[1]v; waiting for its next heartbeat",
		"代理在 %[1]v 发现有人连接；等待它的下一次心跳"},
	ledger.AutoPeopleHeld: {"someone is connected: %[1]v (wait_for=%[2]v; /autorelease %[3]v %[4]v wait_for=none acts anyway)",
		"有人连接：%[1]v（wait_for=%[2]v；/autorelease %[3]v %[4]v wait_for=none 则照常执行）"},
	ledger.AutoEvidence: {"idle %[1]v, warned %[2]v ago, heartbeat %[3]v ago, no job, %[4]v, policy %[5]v after %[6]v",
		"空闲 %[1]v，%[2]v前已提醒，心跳在 %[3]v前，没有任务，%[4]v，策略：%[6]v 后%[5]v"},
	ledger.AutoNobody:        {"nobody reported connected", "没有人连接"},
	ledger.AutoPeopleIgnored: {"%[1]v connected, not waited for (wait_for=%[2]v)", "%[1]v 已连接，不等待（wait_for=%[2]v）"},
	ledger.AutoPeopleIdle:    {"%[1]v connected but nothing done for %[2]v (idle_people)", "%[1]v 已连接，但 %[2]v 没有任何操作（idle_people）"},
}

// actionWords names automatic actions inside texts.
var actionWords = map[ledger.AutoAction][2]string{
	ledger.AutoOff: {"off", "关闭"}, ledger.AutoNotify: {"notify", "仅提醒"},
	ledger.AutoStop: {"stop", "关机"}, ledger.AutoRelease: {"release", "释放"},
}

// ActionWord names an automatic action in lang: "stop" / "关机".
func ActionWord(lang string, a ledger.AutoAction) string { return word(actionWords, a, lang) }

// orderStateWords names order states inside texts.
var orderStateWords = map[ledger.OrderState][2]string{
	ledger.OrderPending: {"pending", "等待中"}, ledger.OrderStarted: {"started", "执行中"},
	ledger.OrderDone: {"done", "已完成"}, ledger.OrderRefused: {"refused", "被拒绝"},
	ledger.OrderFailed: {"failed", "失败"}, ledger.OrderExpired: {"expired", "已过期"},
}

// cardWords names the kinds of card inside texts ("idle card").
var cardWords = map[ledger.CardKind][2]string{
	ledger.CardIdle: {"idle", "空闲"}, ledger.CardSilent: {"silent-agent", "代理失联"}, ledger.CardJob: {"job", "任务"},
	ledger.CardLease: {"lease", "租期"}, ledger.CardLongRun: {"long-run", "长时间运行"},
	ledger.CardUnconfirmed: {"unconfirmed-release", "释放未确认"}, ledger.CardOrder: {"order", "指令"},
	ledger.CardReceipt: {"receipt", "测速收据"},
}

// OutcomeKey is the evidence of an order's outcome: its arguments are the
// outcome (ledger.Order.Outcome), the agent's message and, from an agent
// that sends them, its notes (NotesMsg), worded by OutcomeNotesText as the
// order card words them.
const OutcomeKey = "e_outcome"

// notesKey holds an order's notes, each a message of its own, as one
// argument of an OutcomeKey message.
const notesKey = "e_notes"

// NotesMsg is notes as one argument of an OutcomeKey message.
func NotesMsg(notes []ledger.Message) ledger.Message {
	args := make([]any, len(notes))
	for i, n := range notes {
		args[i] = n
	}
	return ledger.Msg(notesKey, args...)
}

// notesIn reads NotesMsg back.
func notesIn(m ledger.Message) []ledger.Message {
	if m.Key != notesKey {
		return nil
	}
	out := make([]ledger.Message, 0, len(m.Args))
	for _, a := range m.Args {
		if n, ok := a.(ledger.Message); ok {
			out = append(out, n)
		}
	}
	return out
}

// LedgerErrorKey is the evidence of a refusal: its arguments are a
// ledger error's key and then that error's arguments, worded from the
// ledger errors' catalog as LedgerMessage words them.
const LedgerErrorKey = "e_error"

// ErrorEvidence is the decision-log message for err: LedgerErrorKey for a
// keyed ledger error, else the error's English user text as it is
// (LedgerMessage: an Errorf's message, or "internal error").
func ErrorEvidence(err error) ledger.Message {
	var le *ledger.Error
	if errors.As(err, &le) && le.Key != "" {
		return ledger.Msg(LedgerErrorKey, append([]any{le.Key}, le.Args...)...)
	}
	return ledger.Msg("e_text", LedgerMessage(err, chat.LangEN, time.UTC, time.Time{}))
}

// DecisionText renders a decision-log message in lang, with its times in
// loc relative to now (the moment /why is read) in the bot's usual format.
// ok is false for a message the catalog does not hold (none, or a key of
// a newer version): the caller then shows the stored English text.
func DecisionText(m ledger.Message, lang string, loc *time.Location, now time.Time) (text string, ok bool) {
	if _, known := decisionTexts[m.Key]; m.IsZero() || !known {
		return "", false
	}
	if m.Key == OutcomeKey && len(m.Args) == 3 {
		// The outcome, the agent's message and its notes (NotesMsg).
		outcome, _ := m.Args[0].(string)
		message, _ := m.Args[1].(string)
		notes, _ := m.Args[2].(ledger.Message)
		return OutcomeNotesText(lang, ledger.OrderOutcome(outcome), message, notesIn(notes)), true
	}
	for _, a := range m.Args {
		if n, isMsg := a.(ledger.Message); isMsg {
			if _, ok := DecisionText(n, lang, loc, now); !ok {
				return "", false
			}
		}
	}
	if key, _ := firstString(m.Args); m.Key == LedgerErrorKey {
		if _, ok := ledgerErrors[key]; !ok {
			return "", false
		}
		return ledgerErrors.Text(lang, key, renderArgs(m.Args[1:], lang, loc, now)...), true
	}
	if m.Key == WayKey {
		return wayDecisionText(lang, m.Args)
	}
	if m.Key == OutcomeKey && len(m.Args) == 2 {
		outcome, _ := m.Args[0].(string)
		message, _ := m.Args[1].(string)
		return OutcomeText(lang, ledger.OrderOutcome(outcome), message), true
	}
	return decisionTexts.Text(lang, m.Key, renderArgs(m.Args, lang, loc, now)...), true
}

// firstString returns args[0] if it is a string.
func firstString(args []any) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	s, ok := args[0].(string)
	return s, ok
}

// DecisionCatalog returns the decision log's catalog, for its tests.
func DecisionCatalog() chat.Catalog { return decisionTexts }

// pick returns w's text in lang.
func pick(w [2]string, lang string) string {
	if chat.NormLang(lang) == chat.LangZH {
		return w[1]
	}
	return w[0]
}

// word names v in lang from words, or shows it as it is.
func word[K ~string](words map[K][2]string, v K, lang string) string {
	if w, ok := words[v]; ok {
		return pick(w, lang)
	}
	return string(v)
}

// renderArgs turns typed message arguments into what a text shows in
// lang: a time in loc relative to now, a duration as the bot writes it,
// money with its symbol, event kinds, states, actions and who is
// connected in words, a nested decision message rendered first; anything
// else as it is. The ledger's errors and the decision log share it.
func renderArgs(args []any, lang string, loc *time.Location, now time.Time) []any {
	a := make([]any, len(args))
	for i, v := range args {
		switch v := v.(type) {
		case time.Time:
			a[i] = FormatTime(v, loc, now, lang)
		case time.Duration:
			a[i] = chat.FormatDuration(v, lang)
		case ledger.Money:
			a[i] = v.Format()
		case ledger.EventKind:
			a[i] = word(eventWords, string(v), lang)
		case ledger.VolumeEventKind:
			a[i] = word(eventWords, string(v), lang)
		case ledger.State:
			a[i] = word(stateWords, v, lang)
		case ledger.ApprovalState:
			a[i] = word(approvalWords, v, lang)
		case ledger.AutoAction:
			a[i] = word(actionWords, v, lang)
		case ledger.OrderState:
			a[i] = word(orderStateWords, v, lang)
		case ledger.CardKind:
			a[i] = word(cardWords, v, lang)
		case ledger.WaitFor:
			a[i] = v.String()
		case []ledger.Session:
			a[i] = chat.StripHTML(SessionsText(lang, v))
		case ledger.Message:
			a[i], _ = DecisionText(v, lang, loc, now)
		default:
			a[i] = v
		}
	}
	return a
}
