package view

import (
	"strconv"
	"strings"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// What an automatic stop or release of a rental really does
// (ledger.AutoWay), in words: the /autorelease reply, /why's head, the
// idle card that asks instead of acting, and the decision log. The texts
// are plain (each edge escapes them); arguments: [1] the rental's name,
// [2] the platform's name, [3] the instance's ID there, [4] what the
// agent said, [5] what the platform lists.
var wayTexts = chat.Catalog{
	ledger.CorroborateNoInstanceID: {
		"the agent reporting for %[1]s has not shown it runs on %[2]s's instance %[3]s (no instance ID in its reports)",
		"为 %[1]s 上报的代理没有证明它运行在 %[2]s 的实例 %[3]s 上（上报中没有实例 ID）"},
	ledger.CorroborateNoGPU: {
		"the agent reporting for %[1]s has not shown it runs on %[2]s's instance %[3]s (no GPU in its reports)",
		"为 %[1]s 上报的代理没有证明它运行在 %[2]s 的实例 %[3]s 上（上报中没有显卡）"},
	ledger.CorroborateNoAddress: {
		"the agent reporting for %[1]s has not shown it runs on %[2]s's instance %[3]s (the address its reports come from is not known yet)",
		"为 %[1]s 上报的代理没有证明它运行在 %[2]s 的实例 %[3]s 上（尚不知道它从哪个地址上报）"},
	ledger.CorroborateNoAgent: {
		"no agent has shown it runs on %[2]s's instance %[3]s (no report for %[1]s with its current token)",
		"没有代理证明自己运行在 %[2]s 的实例 %[3]s 上（%[1]s 当前的令牌没有上报）"},
	ledger.WayWhyMismatch: {
		"the agent reporting for %[1]s contradicts %[2]s's list: the agent said %[4]s, %[2]s lists %[5]s",
		"为 %[1]s 上报的代理与 %[2]s 的列表不符：代理报告 %[4]s，%[2]s 显示 %[5]s"},
	ledger.WayWhyAsked: {
		"the agent reporting for %[1]s contradicted %[2]s's list (the agent said %[4]s, %[2]s lists %[5]s) and you have not answered the question about it",
		"为 %[1]s 上报的代理与 %[2]s 的列表不符（代理报告 %[4]s，%[2]s 显示 %[5]s），你还没有回答相关的提问"},
	ledger.WayWhyKeptOff: {
		"you kept automation off for %[1]s after its agent contradicted %[2]s's list (the agent said %[4]s, %[2]s lists %[5]s); a new token (/agent %[1]s) checks afresh",
		"%[1]s 的代理与 %[2]s 的列表不符（代理报告 %[4]s，%[2]s 显示 %[5]s）后，你保持了自动操作关闭；新令牌（/agent %[1]s）会重新核对"},

	// What will happen, with the reason (%[6]s) where there is one.
	"way_agent": {
		"How: the agent on %[1]s runs its own release command, after a fresh sample shows the GPUs still idle.",
		"方式：%[1]s 上的代理重新采样确认显卡仍空闲后，运行它自己的释放命令。"},
	"way_agent_none": {
		"How: no agent with a release command reports for %[1]s yet, so the idle card asks you.",
		"方式：%[1]s 还没有带释放命令的代理上报，所以空闲提醒会询问你。"},
	"way_api_stop": {
		"How: the server stops %[2]s's instance %[3]s through %[2]s's API (its agent's reports match what %[2]s lists for it).",
		"方式：服务器通过 %[2]s 的 API 将实例 %[3]s 关机（其代理的上报与 %[2]s 列出的一致）。"},
	"way_api_terminate": {
		"How: the server terminates %[2]s's instance %[3]s through %[2]s's API (its agent's reports match what %[2]s lists for it).",
		"方式：服务器通过 %[2]s 的 API 销毁实例 %[3]s（其代理的上报与 %[2]s 列出的一致）。"},
	"way_api_stop_unc": {
		"How: the server stops %[2]s's instance %[3]s through %[2]s's API; a stop keeps the disk, so it is done although %[6]s. It would never terminate it.",
		"方式：服务器通过 %[2]s 的 API 将实例 %[3]s 关机；关机保留磁盘，所以即使%[6]s也会执行，但绝不会自动销毁。"},
	"way_cannot_stop": {
		"How: nothing automatically: %[2]s can only terminate %[1]s, not stop it; the idle card asks you.",
		"方式：不会自动操作：%[2]s 只能销毁 %[1]s，不能关机；空闲提醒会询问你。"},
	"way_ask": {
		"How: asks you first (the idle card's Release now), because %[6]s.",
		"方式：先询问你（空闲提醒上的「立即释放」），因为%[6]s。"},

	// The host facts, as the agent said them or the platform lists them.
	"f_instance": {"instance %[1]s", "实例 %[1]s"},
	"f_gpus":     {"%[1]d× %[2]s", "%[1]d× %[2]s"},
	"f_count":    {"%[1]d GPUs", "%[1]d 张显卡"},
	"f_address":  {"address %[1]s", "地址 %[1]s"},
	"f_none":     {"nothing", "无"},
	"f_sep":      {", ", "，"},
}

// WayKey is the decision-log key of an AutoWay's reason: its arguments
// are the reason's key and then its five arguments (see wayTexts), all
// strings, worded when /why is read.
const WayKey = "e_way"

// FactsText names host facts: "instance runpod:abc, 1× A100, address
// 198.51.100.7"; only the fields set.
func FactsText(lang string, f ledger.HostFacts) string {
	var parts []string
	if f.Instance != "" {
		parts = append(parts, wayTexts.Text(lang, "f_instance", f.Instance))
	}
	switch {
	case f.GPU != "" && f.GPUCount > 0:
		parts = append(parts, wayTexts.Text(lang, "f_gpus", f.GPUCount, f.GPU))
	case f.GPU != "":
		parts = append(parts, f.GPU)
	case f.GPUCount > 0:
		parts = append(parts, wayTexts.Text(lang, "f_count", f.GPUCount))
	}
	if f.Address != "" {
		parts = append(parts, wayTexts.Text(lang, "f_address", f.Address))
	}
	if len(parts) == 0 {
		return wayTexts.Text(lang, "f_none")
	}
	return strings.Join(parts, wayTexts.Text(lang, "f_sep"))
}

// WayEvidence is the decision-log message of w's reason.
func WayEvidence(name string, w ledger.AutoWay) ledger.Message {
	return ledger.Msg(WayKey, w.Why, name, platformTitle(w.Platform), w.PlatformID,
		factsArg(w.Said), factsArg(w.Listed))
}

// factsArg is host facts as a decision-log argument: the fields joined by
// "|" (a Message's arguments are plain values).
func factsArg(f ledger.HostFacts) string {
	return f.Instance + "|" + f.GPU + "|" + strconv.Itoa(f.GPUCount) + "|" + f.Address
}

// parseFactsArg reverses factsArg.
func parseFactsArg(s string) ledger.HostFacts {
	p := strings.SplitN(s, "|", 4)
	for len(p) < 4 {
		p = append(p, "")
	}
	n, _ := strconv.Atoi(p[2])
	return ledger.HostFacts{Instance: p[0], GPU: p[1], GPUCount: n, Address: p[3]}
}

// WayReason is why w asks (or, for an uncorroborated stop, what the agent
// lacks), for the rental called name: "" when w has no reason.
func WayReason(lang, name string, w ledger.AutoWay) string {
	if w.Why == "" {
		return ""
	}
	return wayReason(lang, w.Why, name, platformTitle(w.Platform), w.PlatformID, w.Said, w.Listed)
}

func wayReason(lang, why, name, platform, id string, said, listed ledger.HostFacts) string {
	if _, ok := wayTexts[why]; !ok {
		return why
	}
	return wayTexts.Text(lang, why, name, platform, id, FactsText(lang, said), FactsText(lang, listed))
}

// WayText says what an automatic action of the rental called name will
// really do (w), in one sentence for /autorelease and /why. agentCanRelease:
// an agent with a release command reports for it (for WayAgent).
func WayText(lang, name string, w ledger.AutoWay, agentCanRelease bool) string {
	p := platformTitle(w.Platform)
	switch w.Kind {
	case ledger.WayAgent:
		if agentCanRelease {
			return wayTexts.Text(lang, "way_agent", name)
		}
		return wayTexts.Text(lang, "way_agent_none", name)
	case ledger.WayAPIStop:
		if w.Uncorroborated {
			return wayTexts.Text(lang, "way_api_stop_unc", name, p, w.PlatformID, "", "", WayReason(lang, name, w))
		}
		return wayTexts.Text(lang, "way_api_stop", name, p, w.PlatformID)
	case ledger.WayAPITerminate:
		return wayTexts.Text(lang, "way_api_terminate", name, p, w.PlatformID)
	case ledger.WayCannotStop:
		return wayTexts.Text(lang, "way_cannot_stop", name, p)
	}
	return wayTexts.Text(lang, "way_ask", name, p, w.PlatformID, "", "", WayReason(lang, name, w))
}

// platformTitle is a platform's name as users know it ("RunPod").
func platformTitle(key string) string {
	if p, ok := ledger.LookupProfile(key); ok && p.Name != "" {
		return p.Name
	}
	return key
}

// wayDecisionText renders a WayKey message's arguments.
func wayDecisionText(lang string, args []any) (string, bool) {
	if len(args) != 6 {
		return "", false
	}
	s := make([]string, 6)
	for i, a := range args {
		v, ok := a.(string)
		if !ok {
			return "", false
		}
		s[i] = v
	}
	return wayReason(lang, s[0], s[1], s[2], s[3], parseFactsArg(s[4]), parseFactsArg(s[5])), true
}

// WayCatalog returns the catalog of these texts, for their tests.
func WayCatalog() chat.Catalog { return wayTexts }
