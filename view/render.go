package view

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// Rendering turns the cost engine's figures into reply texts (Telegram's
// HTML subset, user text escaped). The functions here are pure: the core
// uses them for /status, /spend and /summary, and the scheduler for the
// nightly summary.

// RenderStatus shows each unreleased rental with its state, running time,
// rate, accrued cost (idle time and its cost when an agent reports) and
// volumes, and the live volumes not attached to a rental, as of now.
func RenderStatus(b *ledger.Book, now time.Time, lang string) string {
	lang = chat.NormLang(lang)
	loc := b.User.Location()
	st := ledger.StatementAsOf(b, now)
	costs := liveCosts(b, st)
	vols := map[int64][]ledger.VolumeCost{}
	var loose []ledger.VolumeCost
	for _, vc := range st.Volumes {
		if vc.Deleted {
			continue
		}
		if vc.Volume.RentalID != 0 {
			vols[vc.Volume.RentalID] = append(vols[vc.Volume.RentalID], vc)
		} else {
			loose = append(loose, vc)
		}
	}
	var sb strings.Builder
	n := 0
	for _, rc := range costs {
		x := rc.Rental
		n++
		if n == 1 {
			sb.WriteString(tr(lang, "status_head") + "\n")
		}
		state := tr(lang, "state_running", chat.FormatDuration(time.Duration(rc.RunningSeconds)*time.Second, lang))
		if rc.State == ledger.Stopped {
			state = tr(lang, "state_stopped", FormatTime(lastStop(x), loc, now, lang))
		}
		sb.WriteString("\n" + tr(lang, "status_rental", rc.Label(), PlatformWord(lang, x.Platform), GPUText(x), chat.RawHTML(state)))
		price := "UNPRICED"
		if x.Priced {
			price = FormatPrice(rc.Rate, x.Currency, lang)
		}
		sb.WriteString("\n   " + tr(lang, "status_cost", price, FormatMode(x.Mode, lang), MoneyOrUnpriced(rc.ComputePriced, rc.Compute)))
		if rc.Total != rc.Compute || !rc.Priced() {
			sb.WriteString(tr(lang, "status_total", totalText(rc)))
		}
		if len(x.Idle) > 0 {
			sb.WriteString("\n   " + tr(lang, "status_idle", chat.FormatDuration(time.Duration(rc.IdleSeconds)*time.Second, lang), MoneyOrUnpriced(x.Priced, rc.IdleCost)))
		}
		if x.Lease > 0 {
			sb.WriteString("\n   " + tr(lang, "status_lease", FormatTime(x.StartedAt().Add(x.Lease), loc, now, lang)))
		}
		for _, vc := range vols[x.ID] {
			sb.WriteString("\n   " + volumeLine(vc, lang))
		}
	}
	if len(loose) > 0 {
		sb.WriteString("\n\n" + tr(lang, "status_volumes"))
		for _, vc := range loose {
			sb.WriteString("\n   " + volumeLine(vc, lang))
		}
	}
	if n == 0 && len(loose) == 0 {
		return tr(lang, "status_empty")
	}
	if u := UnpricedText(liveUnpriced(st.Unpriced), lang); u != "" {
		sb.WriteString("\n\n" + u)
	}
	return sb.String()
}

// liveCosts returns the cost of each unreleased rental as of the
// statement's end, in the statement's order. A rental started in the very
// second of the statement has accrued nothing yet and is not in it: it gets
// a zero cost, so it is still listed.
func liveCosts(b *ledger.Book, st *ledger.Statement) []ledger.RentalCost {
	var out []ledger.RentalCost
	seen := map[*ledger.Rental]bool{}
	for _, rc := range st.Rentals {
		seen[rc.Rental] = true
		if rc.State != ledger.Released {
			out = append(out, rc)
		}
	}
	for _, x := range b.Rentals {
		// A rental the statement left out has not accrued anything yet:
		// it started in the statement's last (partial) second. The engine
		// meters whole seconds, so compare nothing finer here.
		if seen[x] || x.State() == ledger.Released || len(x.Events) == 0 {
			continue
		}
		z := ledger.Money{Currency: x.Currency}
		rc := ledger.RentalCost{Rental: x, State: x.State(), Rate: x.Price, ComputePriced: x.Priced,
			StoragePriced: true, TrafficPriced: true, Compute: z, Storage: z, Traffic: z, Other: z, Total: z, IdleCost: z}
		if l := ledger.Label(b.Rentals, x, b.User.Location()); l != x.Name {
			rc.Ref = l
		}
		out = append(out, rc)
	}
	return out
}

func lastStop(x *ledger.Rental) time.Time {
	for i := len(x.Events) - 1; i >= 0; i-- {
		if x.Events[i].Kind == ledger.EventStop {
			return x.Events[i].At
		}
	}
	return x.LastEventAt()
}

func volumeLine(vc ledger.VolumeCost, lang string) string {
	return tr(lang, "status_volume", vc.Volume.Name, vc.SizeGB.String(), MoneyOrUnpriced(vc.Priced, vc.Charge))
}

func MoneyOrUnpriced(priced bool, m ledger.Money) string {
	if !priced {
		return "UNPRICED"
	}
	return FormatMoney(m)
}

// totalText is a rental's total with "+ UNPRICED" when a part has no price.
func totalText(rc ledger.RentalCost) string {
	s := FormatMoney(rc.Total)
	if !rc.Priced() {
		s += " + UNPRICED"
	}
	return s
}

// RenderSpend shows what was spent in [from, to): totals by category for
// each currency, by platform and by rental, and UNPRICED lines.
func RenderSpend(b *ledger.Book, from, to time.Time, lang string) string {
	lang = chat.NormLang(lang)
	st := ledger.Spend(b, from, to)
	var sb strings.Builder
	writeSpend(&sb, st, lang)
	return sb.String()
}

func writeSpend(sb *strings.Builder, st *ledger.Statement, lang string) {
	curs := st.Currencies()
	if len(curs) == 0 {
		sb.WriteString(tr(lang, "spend_nothing"))
		return
	}
	for i, c := range curs {
		t := st.Totals[c]
		if i > 0 {
			sb.WriteString("\n")
		}
		sb.WriteString(tr(lang, "spend_total", FormatMoney(t.Total), FormatMoney(t.Compute), FormatMoney(t.Storage), FormatMoney(t.Traffic), FormatMoney(t.Other)))
		if t.Unpriced > 0 {
			sb.WriteString(tr(lang, "spend_unpriced", strconv.Itoa(t.Unpriced)))
		}
	}
	plats := make([]string, 0, len(st.ByPlatform))
	for p := range st.ByPlatform {
		plats = append(plats, p)
	}
	sort.Strings(plats)
	if len(plats) > 0 {
		parts := make([]string, 0, len(plats))
		for _, p := range plats {
			name := PlatformWord(lang, p) // 恒源云 in Chinese, not gpushare
			if name == "" {
				name = tr(lang, "no_platform")
			}
			parts = append(parts, chat.Escape(name)+" "+totalsText(st.ByPlatform[p]))
		}
		sb.WriteString("\n" + tr(lang, "spend_by_platform", chat.RawHTML(strings.Join(parts, " · "))))
	}
	var parts []string
	for _, rc := range st.Rentals {
		parts = append(parts, chat.Escape(rc.Label())+" "+totalText(rc))
	}
	for _, vc := range st.Volumes {
		if vc.Volume.RentalID == 0 {
			parts = append(parts, "💾"+chat.Escape(vc.Volume.Name)+" "+MoneyOrUnpriced(vc.Priced, vc.Charge))
		}
	}
	if len(parts) > 0 {
		sb.WriteString("\n" + tr(lang, "spend_by_rental", chat.RawHTML(strings.Join(parts, " · "))))
	}
	if u := UnpricedText(st.Unpriced, lang); u != "" {
		sb.WriteString("\n" + u)
	}
}

// totalsText shows a platform's totals, one amount per currency.
func totalsText(m map[ledger.Currency]*ledger.Totals) string {
	curs := make([]ledger.Currency, 0, len(m))
	for c := range m {
		curs = append(curs, c)
	}
	sort.Slice(curs, func(i, j int) bool { return curs[i] < curs[j] })
	parts := make([]string, 0, len(curs))
	for _, c := range curs {
		s := FormatMoney(m[c].Total)
		if m[c].Unpriced > 0 {
			s += " + UNPRICED"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " + ")
}

// renderBudget shows, for each currency with a budget, the month to date
// against it, one line each; a currency spent in this month without a
// budget gets a line saying so (it is never counted against another
// currency's budget). With no budget it says how to set one.
func RenderBudget(b *ledger.Book, now time.Time, lang string) string {
	lang = chat.NormLang(lang)
	sts := ledger.Budgets(b, now)
	if len(sts) == 0 {
		return tr(lang, "budget_none")
	}
	var lines []string
	for _, bs := range sts {
		s := tr(lang, "budget_line", FormatMoney(bs.Spent), FormatMoney(bs.Budget), strconv.Itoa(bs.Percent))
		if bs.Over {
			s += " " + tr(lang, "budget_over")
		}
		if bs.Unpriced > 0 {
			s += tr(lang, "spend_unpriced", strconv.Itoa(bs.Unpriced))
		}
		lines = append(lines, s)
	}
	from, _ := ledger.MonthRange(now, b.User.Location())
	st := ledger.Spend(b, from, now)
	for _, c := range st.Currencies() {
		if _, ok := b.User.Budget(c); ok || st.Totals[c].Total.Minor == 0 {
			continue
		}
		lines = append(lines, tr(lang, "budget_unset", FormatMoney(st.Totals[c].Total), c.Symbol()))
	}
	return strings.Join(lines, "\n")
}

// Balances is the platform balances with their runway under a heading,
// as /balance and the nightly summary show them; "" when the user keeps
// no balance.
func Balances(b *ledger.Book, now time.Time, lang string) string {
	bal := renderBalances(b, now, lang)
	if bal == "" {
		return ""
	}
	return tr(lang, "balances_head") + "\n" + bal
}

// renderBalances shows each platform's balance, its burn rate and when it
// runs out.
func renderBalances(b *ledger.Book, now time.Time, lang string) string {
	lang = chat.NormLang(lang)
	bal := ledger.Balances(b, now)
	if len(bal) == 0 {
		return ""
	}
	loc := b.User.Location()
	plats := make([]string, 0, len(bal))
	for p := range bal {
		plats = append(plats, p)
	}
	sort.Strings(plats)
	var lines []string
	for _, p := range plats {
		bs := bal[p]
		runway := tr(lang, "runway_none")
		if bs.RunsOutAt != nil {
			if !bs.RunsOutAt.After(now) {
				runway = tr(lang, "runway_out")
			} else {
				runway = tr(lang, "runway_at", FormatTime(*bs.RunsOutAt, loc, now, lang), chat.FormatDuration(bs.RunsOutAt.Sub(now), lang))
			}
		}
		line := tr(lang, "balance_line", p, FormatMoney(bs.Balance), FormatMoney(bs.BurnPerHour), chat.RawHTML(runway))
		if bs.FromAPI {
			// A balance read from the platform is worth trusting as of
			// its time, not later: say when.
			line += tr(lang, "balance_api", profileName(p), FormatTime(bs.Since, loc, now, lang))
		}
		if bs.Unpriced > 0 {
			line += tr(lang, "spend_unpriced", strconv.Itoa(bs.Unpriced))
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// profileName is a platform's display name ("RunPod"), or its key.
func profileName(key string) string {
	if p, ok := ledger.LookupProfile(key); ok && p.Name != "" {
		return p.Name
	}
	return key
}

// hourly returns what a price accrues in an hour, rounded to the minor
// unit.
func hourly(p ledger.Price, c ledger.Currency) ledger.Money {
	secs := p.Unit.Seconds()
	if secs == 0 {
		return ledger.Money{Currency: c}
	}
	q := p.Amount.Rat()
	q.Mul(q, big.NewRat(3600, secs))
	return ledger.Round(q, c)
}

// RenderSummary is the nightly summary, as of now, in lang: today's spend
// by category, platform and rental; the month to date against the budget;
// the instances still running and what they accrue per hour; and each
// platform balance's runway.
func RenderSummary(b *ledger.Book, now time.Time, lang string) string {
	lang = chat.NormLang(lang)
	loc := b.User.Location()
	var sb strings.Builder
	dayStart, _ := ledger.DayRange(now, loc)
	sb.WriteString(tr(lang, "summary_head", FormatDate(now, loc, lang)) + "\n")
	today := ledger.Spend(b, dayStart, now)
	writeSpend(&sb, today, lang)

	monthStart, _ := ledger.MonthRange(now, loc)
	sb.WriteString("\n\n" + tr(lang, "summary_month") + "\n")
	month := ledger.Spend(b, monthStart, now)
	for i, c := range month.Currencies() {
		if i > 0 {
			sb.WriteString(" · ")
		}
		sb.WriteString(FormatMoney(month.Totals[c].Total))
		if month.Totals[c].Unpriced > 0 {
			sb.WriteString(" + UNPRICED")
		}
	}
	if len(month.Currencies()) == 0 {
		sb.WriteString(tr(lang, "spend_nothing"))
	}
	// The month's UNPRICED lines that today's list above did not name.
	if u := UnpricedText(notIn(month.Unpriced, today.Unpriced), lang); u != "" {
		sb.WriteString("\n" + u)
	}
	sb.WriteString("\n" + RenderBudget(b, now, lang))

	var running []string
	perHour := map[ledger.Currency]ledger.Money{}
	for _, rc := range liveCosts(b, ledger.StatementAsOf(b, now)) {
		x := rc.Rental
		burning := rc.State == ledger.Running || (x.Mode == ledger.AlwaysOn && rc.State != ledger.Released)
		if !burning {
			continue
		}
		rate := "UNPRICED"
		switch {
		case x.Priced && x.Mode == ledger.AlwaysOn && rc.Rate.Unit.IsPackage():
			rate = tr(lang, "prepaid", FormatPrice(rc.Rate, x.Currency, lang))
		case x.Priced:
			h := hourly(rc.Rate, x.Currency)
			perHour[x.Currency] = perHour[x.Currency].Add(h)
			rate = FormatMoney(h) + tr(lang, "per_hour")
		}
		running = append(running, tr(lang, "summary_running_line", rc.Label(), GPUText(x), PlatformWord(lang, x.Platform), rate))
	}
	sb.WriteString("\n\n")
	if len(running) == 0 {
		sb.WriteString(tr(lang, "summary_none_running"))
	} else {
		curs := make([]string, 0, len(perHour))
		for _, m := range perHour {
			curs = append(curs, FormatMoney(m)+tr(lang, "per_hour"))
		}
		sort.Strings(curs)
		if len(curs) == 0 {
			// Every running rental is prepaid or UNPRICED: no hourly total.
			sb.WriteString(tr(lang, "summary_running_n", strconv.Itoa(len(running))) + "\n")
		} else {
			sb.WriteString(tr(lang, "summary_running", strconv.Itoa(len(running)), strings.Join(curs, " + ")) + "\n")
		}
		sb.WriteString(strings.Join(running, "\n"))
	}
	if bal := Balances(b, now, lang); bal != "" {
		sb.WriteString("\n\n" + bal)
	}
	return sb.String()
}

// FormatDate shows the local date of t: "Mon Nov 2" / "11月2日 周一".
func FormatDate(t time.Time, loc *time.Location, lang string) string {
	if loc == nil {
		loc = time.UTC
	}
	t = t.In(loc)
	if chat.NormLang(lang) == chat.LangZH {
		return strconv.Itoa(int(t.Month())) + "月" + strconv.Itoa(t.Day()) + "日 " + [...]string{"周日", "周一", "周二", "周三", "周四", "周五", "周六"}[t.Weekday()]
	}
	return t.Format("Mon Jan 2")
}

// GPUText names a rental's GPUs: "RTX 4090", "8×H100".
func GPUText(x *ledger.Rental) string {
	if x.GPUCount > 1 {
		return fmt.Sprintf("%d×%s", x.GPUCount, x.GPU)
	}
	return x.GPU
}
