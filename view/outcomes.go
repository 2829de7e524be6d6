package view

import (
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
)

// outcomeTexts words what an agent (or the hub) reported about an order
// it did not carry out, by outcome: the order card and the decision log
// (/why) say it the same way.
var outcomeTexts = chat.Catalog{
	"outcome_unknown": {"the agent reported %[1]s", "代理报告 %[1]s"},
	"outcome_with":    {"%[1]s (%[2]s)", "%[1]s（%[2]s）"},
	"outcome_" + string(ledger.OutcomeRefusedBusy): {
		"the agent found the GPU busy", "代理发现 GPU 正忙"},
	"outcome_" + string(ledger.OutcomeRefusedJob): {
		"the wrapped job is still running", "托管的任务仍在运行"},
	"outcome_" + string(ledger.OutcomeRefusedUnknown): {
		"the agent could not tell whether the GPU is idle", "代理无法判断 GPU 是否空闲"},
	"outcome_" + string(ledger.OutcomeRefusedPeople): {
		"someone is connected to it (it waits while they are)", "有人连着它（有人在线时暂缓）"},
	"outcome_" + string(ledger.OutcomeRefusedNoCommand): {
		"the agent has no --release-cmd", "代理没有设置 --release-cmd"},
	"outcome_" + string(ledger.OutcomeRejectedSignature): {
		"the agent rejected the order's signature (was the token re-issued?)", "代理拒绝了指令的签名（令牌是否重新生成过？）"},
	"outcome_" + string(ledger.OutcomeRejectedExpired): {
		"the order expired before the agent got it (check the host's clock)", "代理收到指令时它已过期（请检查机器的时钟）"},
	"outcome_" + string(ledger.OutcomeRejectedRental): {
		"the agent serves another rental", "这个代理属于另一台机器"},
	"outcome_" + string(ledger.OutcomeRejectedReplay): {
		"the agent had already seen this order, or it predates the agent's record (send it again)", "代理已经见过这条指令，或指令早于代理的记录（请重新发送）"},
	"outcome_" + string(ledger.OutcomeRefusedState): {
		"the agent cannot write its state file, so it acts on no order (check --state-dir on the host)", "代理无法写入状态文件，因此不执行任何指令（请检查机器上的 --state-dir）"},
	"outcome_" + string(ledger.OutcomeRejectedInvalid): {
		"the agent found the order malformed", "代理认为指令格式不对"},
	"outcome_" + string(ledger.OutcomePreReleaseFailed): {
		"the pre-release command failed", "释放前命令执行失败"},
	"outcome_" + string(ledger.OutcomeReleaseFailed): {
		"the release command failed", "释放命令执行失败"},
	"outcome_" + string(ledger.OutcomeExpired): {
		"the order expired", "代理没有按时取走指令，或命令开始后一直没有报告结果"},
	"outcome_" + string(ledger.OutcomeRestarted): {
		"the agent restarted", "命令执行期间代理重启了，结果未确认"},
}

// OutcomeText says in lang why an order was not carried out: the
// catalog's words for the outcome, with the agent's message. For the
// outcomes the hub sets itself (expired, agent restarted) its English
// message is the text, and the catalog's words replace it in Chinese. The
// text is plain.
func OutcomeText(lang string, outcome ledger.OrderOutcome, message string) string {
	return OutcomeNotesText(lang, outcome, message, nil)
}

// OutcomeNotesText is OutcomeText with the agent's reasons as notes
// (ledger.NoteCode with values, NotesOf): worded in lang where this server knows them all,
// else the agent's message, which in Chinese is marked as the agent's own
// words (an older agent sends no notes; a command's output is never one).
func OutcomeNotesText(lang string, outcome ledger.OrderOutcome, message string, notes []ledger.Message) string {
	key := "outcome_" + string(outcome)
	_, known := outcomeTexts[key]
	hubSide := outcome == ledger.OutcomeExpired || outcome == ledger.OutcomeRestarted
	switch {
	case hubSide && chat.NormLang(lang) == chat.LangZH:
		return outcomeTexts.Text(lang, key)
	case !known || hubSide:
		if message != "" {
			return message
		}
		return outcomeTexts.Text(lang, "outcome_unknown", outcome)
	}
	why := outcomeTexts.Text(lang, key)
	if words, ok := NotesText(lang, notes); ok {
		return outcomeTexts.Text(lang, "outcome_with", why, words)
	}
	if message != "" {
		why = outcomeTexts.Text(lang, "outcome_with", why, agentsWords(lang, clip.Bytes(message, 200, "…")))
	}
	return why
}
