package view

import (
	"strings"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
)

// noteTexts words an agent's reasons (a ledger.NoteCode and its values,
// carried as a ledger.Message: agent/hub's notesOf) in the reader's language. The
// English is the agent's own text for the note.
var noteTexts = chat.Catalog{
	string(ledger.NoteGPUUtil):      {"gpu%[1]s util %[2]s%%", "gpu%[1]s 利用率 %[2]s%%"},
	string(ledger.NoteGPUUtilMean):  {"gpu%[1]s util max %[2]s%% (mean %[3]s%% of %[4]s samples)", "gpu%[1]s 利用率最高 %[2]s%%（%[4]s 次采样平均 %[3]s%%）"},
	string(ledger.NoteJob):          {"job running (pid %[1]s)", "托管的任务在运行（pid %[1]s）"},
	string(ledger.NoteWatchGrew):    {"watch %[1]s grew", "监视的 %[1]s 在增长"},
	string(ledger.NoteCPU):          {"cpu %[1]s%%", "CPU %[1]s%%"},
	string(ledger.NoteNet):          {"net %[1]s KiB/s", "网络 %[1]s KiB/s"},
	string(ledger.NoteTransfers):    {"%[1]s running", "%[1]s 正在运行"},
	string(ledger.NoteDisk):         {"disk %[1]s MB/s", "磁盘 %[1]s MB/s"},
	string(ledger.NoteGPUError):     {"gpu: %[1]s", "GPU 读取出错：%[1]s"},
	string(ledger.NoteNoGPUs):       {"no gpus seen", "没有看到 GPU"},
	string(ledger.NoteGPUNoReading): {"gpu%[1]s: %[2]s", "gpu%[1]s 没有读数：%[2]s"},
	string(ledger.NoteCPUNoReading): {"cpu: %[1]s", "CPU 没有读数：%[1]s"},
	string(ledger.NoteNetNoReading): {"net: %[1]s", "网络没有读数：%[1]s"},
	string(ledger.NoteNoCommand):    {"no --release-cmd on this host: the agent only reports", "这台机器没有设置 --release-cmd：代理只上报"},
	string(ledger.NoteJobPID):       {"wrapped job pid %[1]s is running", "托管的任务（pid %[1]s）仍在运行"},
	string(ledger.NoteConnected):    {"%[1]s connected", "%[1]s 个连接"},
	string(ledger.NoteSession):      {"%[1]s %[2]s from %[3]s", "%[1]s %[2]s（来自 %[3]s）"},
	string(ledger.NoteSessionFrom):  {"%[1]s from %[2]s", "%[1]s（来自 %[2]s）"},

	"agents_words": {"%[1]s", "代理原话：%[1]s"},
}

// noteArgs is how many values each note code carries.
var noteArgs = map[ledger.NoteCode]int{
	ledger.NoteGPUUtil: 2, ledger.NoteGPUUtilMean: 4, ledger.NoteJob: 1, ledger.NoteWatchGrew: 1, ledger.NoteCPU: 1,
	ledger.NoteNet: 1, ledger.NoteTransfers: 1, ledger.NoteDisk: 1, ledger.NoteGPUError: 1, ledger.NoteNoGPUs: 0,
	ledger.NoteGPUNoReading: 2, ledger.NoteCPUNoReading: 1, ledger.NoteNetNoReading: 1, ledger.NoteNoCommand: 0,
	ledger.NoteJobPID: 1, ledger.NoteConnected: 1, ledger.NoteSession: 3, ledger.NoteSessionFrom: 2,
}

// NotesText words notes in lang, joined as the agent joins its reasons;
// ok is false when one of them is not a note this server knows (a newer
// agent's code, or the wrong number of values).
func NotesText(lang string, notes []ledger.Message) (string, bool) {
	if len(notes) == 0 {
		return "", false
	}
	parts := make([]string, 0, len(notes))
	for _, n := range notes {
		want, known := noteArgs[ledger.NoteCode(n.Key)]
		if !known || want != len(n.Args) {
			return "", false
		}
		args := make([]any, len(n.Args))
		for i, a := range n.Args {
			s, isStr := a.(string)
			if !isStr {
				return "", false
			}
			args[i] = s
		}
		parts = append(parts, noteTexts.Text(lang, n.Key, args...))
	}
	sep := "; "
	if chat.NormLang(lang) == chat.LangZH {
		sep = "；"
	}
	return strings.Join(parts, sep), true
}

// agentsWords marks a text as the agent's own (in Chinese: the agent
// writes English): an older agent's message, or a command's output.
func agentsWords(lang, text string) string {
	return noteTexts.Text(lang, "agents_words", text)
}

// policyRefusedTexts word an agent's refusal of the server's policy
// (ledger.AgentState.PolicyRefusedCode).
var policyRefusedTexts = chat.Catalog{
	"policy_refused": {
		"⚠️ The agent refused the server's policy (%[1]s), so it keeps its own lease and thresholds: a lease or threshold set here does not reach it.",
		"⚠️ 代理拒绝了服务器的策略（%[1]s），所以它沿用自己的租期和阈值：这里设置的租期或阈值到不了它那里。"},
	string(ledger.PolicyRefusedUnsigned): {"it came unsigned", "策略没有签名"},
	string(ledger.PolicyRefusedBadSignature): {"its signature does not verify: was the rental's token issued anew? Install the agent again with the line /agent %[1]s gives",
		"签名校验失败：这台租用的令牌是否重新发放过？用 /agent %[1]s 给出的命令重新安装代理"},
	string(ledger.PolicyRefusedExpired): {"it had expired when it arrived: check the host's clock", "收到时已过期：请检查机器的时钟"},
	string(ledger.PolicyRefusedFuture):  {"it was issued in the future: check the host's clock", "签发时间在未来：请检查机器的时钟"},
	string(ledger.PolicyRefusedInvalid): {"it was malformed", "格式不对"},
	string(ledger.PolicyRefusedRental):  {"it is for another rental", "它属于另一台租用"},
	string(ledger.PolicyRefusedOlder):   {"it is older than one the agent took already", "比代理已接受的策略更旧"},
	string(ledger.PolicyRefusedState):   {"the agent cannot record it: check --state-dir on the host", "代理无法记录它：请检查机器上的 --state-dir"},
}

// PolicyRefusedText is /why's line on an agent that refused the server's
// policy of the rental: why, from its code in lang, or in the agent's own words from an
// agent that sends no code (marked as such in Chinese). The text is plain.
func PolicyRefusedText(lang, rental string, code ledger.PolicyRefusal, words string) string {
	why := ""
	if _, ok := policyRefusedTexts[string(code)]; ok && code != "policy_refused" {
		why = policyRefusedTexts.Text(lang, string(code), rental)
	} else {
		why = agentsWords(lang, clip.Bytes(words, 200, "…"))
	}
	return policyRefusedTexts.Text(lang, "policy_refused", why)
}
