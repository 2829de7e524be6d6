package view

import (
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// reconcileTexts are the texts of /reconcile and of the nightly summary's
// reconciliation line.
var reconcileTexts = chat.Catalog{
	"reconcile_head": {"<b>Ledger against the platforms, %[1]s</b>", "<b>账本与平台对账，%[1]s</b>"},
	"reconcile_none": {
		"No platform is connected, so there is nothing to reconcile. Connect one in a private chat: <code>/connect runpod KEY</code>",
		"没有连接任何平台，无从对账。请在私聊中连接：<code>/connect runpod KEY</code>"},
	"reconcile_platform": {
		"<b>%[1]s</b>: ledger %[2]s · platform %[3]s · %[4]s",
		"<b>%[1]s</b>：账本 %[2]s · 平台 %[3]s · %[4]s"},
	"reconcile_err": {
		"<b>%[1]s</b>: ledger %[2]s · the platform's side could not be read: %[3]s",
		"<b>%[1]s</b>：账本 %[2]s · 无法读取平台一方：%[3]s"},
	"reconcile_source_billing": {"from the platform's billing, per instance", "来自平台的逐台账单"},
	"reconcile_source_balance": {
		"from the fall of the platform's balance less top-ups: one total, no per-rental lines",
		"来自平台余额的减少（扣除充值）：只有总数，没有逐台明细"},
	"reconcile_line": {
		"• %[1]s%[2]s: ledger %[3]s · platform %[4]s · %[5]s",
		"• %[1]s%[2]s：账本 %[3]s · 平台 %[4]s · %[5]s"},
	"reconcile_line_noamount": {
		"• %[1]s%[2]s: ledger %[3]s · the platform gives no per-instance amount",
		"• %[1]s%[2]s：账本 %[3]s · 平台不提供逐台金额"},
	"reconcile_instance": {" (instance %[1]s)", "（实例 %[1]s）"},
	"reconcile_no_drift": {"no drift", "无差额"},
	"reconcile_drift":    {"drift %[1]s: %[2]s", "差额 %[1]s：%[2]s"},
	"reconcile_summary": {
		"%[1]s: ledger %[2]s, platform %[3]s, %[4]s",
		"%[1]s：账本 %[2]s，平台 %[3]s，%[4]s"},
	"reconcile_summary_err": {
		"%[1]s: the platform's side could not be read: %[2]s",
		"%[1]s：无法读取平台一方：%[2]s"},
	"cause_none":          {"within rounding", "在舍入范围内"},
	"cause_price":         {"a price change: the platform's price differs from the ledger's rate", "价格变化：平台价格与账本费率不同"},
	"cause_storage":       {"the platform billed more than compute: storage or traffic not in the ledger", "平台收费多于计算费：有账本未记的存储或流量"},
	"cause_not_in_ledger": {"billed for an instance the ledger has no rental for", "平台收费的实例在账本中没有对应机器"},
	"cause_not_billed":    {"the ledger counts a rental the platform did not bill", "账本计了费，平台却未收费"},
	"cause_time":          {"the running time differs: a stop or start the ledger lacks", "运行时长不同：账本缺少一次关机或开机"},
	"cause_unknown":       {"cause unknown", "原因不明"},
}

// ReconcileCatalog is the reconciliation's texts, for the catalog tests
// of the parts that show them.
func ReconcileCatalog() chat.Catalog { return reconcileTexts }

func rtr(lang, key string, args ...any) string { return reconcileTexts.Render(lang, key, args...) }

// ReconcileText renders /reconcile: per platform, the ledger's total
// against the platform's, then each rental with its drift and the drift's
// likely cause in words. A platform whose side could not be read shows
// why instead of a drift, so a platform that is down never reads as "the
// ledger is wrong". Dates are shown in loc (the user's zone).
func ReconcileText(lang string, loc *time.Location, rs []ledger.Reconciliation) string {
	if len(rs) == 0 {
		return rtr(lang, "reconcile_none")
	}
	if loc == nil {
		loc = time.UTC
	}
	var sb strings.Builder
	sb.WriteString(rtr(lang, "reconcile_head", periodText(rs[0].From, rs[0].To, loc, lang)))
	for _, r := range rs {
		sb.WriteString("\n\n")
		name := platformName(r.Platform)
		if r.Err != "" {
			sb.WriteString(rtr(lang, "reconcile_err", name, r.LedgerTotal.Format(), r.Err))
			continue
		}
		sb.WriteString(rtr(lang, "reconcile_platform", name, r.LedgerTotal.Format(), r.PlatformTotal.Format(),
			chat.RawHTML(driftText(lang, r.DriftTotal, r.Cause))))
		switch r.Source {
		case "billing":
			sb.WriteString("\n" + rtr(lang, "reconcile_source_billing"))
		case "balance":
			sb.WriteString("\n" + rtr(lang, "reconcile_source_balance"))
		}
		for _, l := range r.Lines {
			inst := ""
			if l.PlatformID != "" {
				inst = rtr(lang, "reconcile_instance", l.PlatformID)
			}
			label := l.Name
			if label == "" {
				label = l.PlatformID
			}
			if !l.PlatformOK {
				sb.WriteString("\n" + rtr(lang, "reconcile_line_noamount", label, chat.RawHTML(inst), l.Ledger.Format()))
				continue
			}
			sb.WriteString("\n" + rtr(lang, "reconcile_line", label, chat.RawHTML(inst), l.Ledger.Format(),
				l.Platform.Format(), chat.RawHTML(driftText(lang, l.Drift, l.Cause))))
		}
	}
	return sb.String()
}

// ReconcileLine renders one platform's reconciliation as the nightly
// summary's one line: the totals, the drift and its main cause.
func ReconcileLine(lang string, r ledger.Reconciliation) string {
	name := platformName(r.Platform)
	if r.Err != "" {
		return rtr(lang, "reconcile_summary_err", name, r.Err)
	}
	return rtr(lang, "reconcile_summary", name, r.LedgerTotal.Format(), r.PlatformTotal.Format(),
		chat.RawHTML(driftText(lang, r.DriftTotal, r.Cause)))
}

// driftText is "no drift" for a zero drift, else the signed drift and its
// cause in words.
func driftText(lang string, d ledger.Money, c ledger.ReconcileCause) string {
	if d.Minor == 0 {
		return rtr(lang, "reconcile_no_drift")
	}
	s := d.Format()
	if d.Minor > 0 {
		s = "+" + s
	}
	return rtr(lang, "reconcile_drift", s, causeText(lang, c))
}

// causeText names a drift's likely cause; an unknown code reads as
// "cause unknown" rather than the code.
func causeText(lang string, c ledger.ReconcileCause) string {
	key := "cause_" + string(c)
	if c == ledger.CauseNone {
		key = "cause_none"
	}
	if _, ok := reconcileTexts[key]; !ok {
		key = "cause_unknown"
	}
	return reconcileTexts.Text(lang, key)
}

// platformName is the platform's display name ("RunPod"), or its key
// when no profile knows it.
func platformName(key string) string {
	if p, ok := ledger.LookupProfile(key); ok && p.Name != "" {
		return p.Name
	}
	return key
}

// periodText names [from, to): "2026-11" for a whole calendar month in
// loc, else the two dates.
func periodText(from, to time.Time, loc *time.Location, lang string) string {
	f, t := from.In(loc), to.In(loc)
	if f.Day() == 1 && f.Hour() == 0 && f.Minute() == 0 && f.Second() == 0 && f.AddDate(0, 1, 0).Equal(t) {
		return f.Format("2006-01")
	}
	last := to.Add(-time.Second)
	return FormatDate(from, loc, lang) + " – " + FormatDate(last, loc, lang)
}
