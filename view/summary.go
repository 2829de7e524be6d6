package view

import (
	"sort"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// summaryTexts are the lines the daily summary adds to RenderSummary.
var summaryTexts = chat.Catalog{
	"idle_today":      {"Idle cost today: %[1]s", "今日空闲花费：%[1]s"},
	"idle_of_compute": {"%[1]s of %[2]s compute", "%[1]s（计算共 %[2]s）"},
}

// Summary is the daily summary as of asOf in lang, the one builder of
// both the nightly summary (scheduler) and /summary on demand (bot), so
// the two carry the same lines: RenderSummary, today's idle cost
// (IdleToday), and one line per connected platform's reconciliation of
// the month so far (recs, which the caller reads from its connections:
// nil when none is connected).
func Summary(b *ledger.Book, asOf time.Time, lang string, recs []ledger.Reconciliation) string {
	text := RenderSummary(b, asOf, lang)
	if idle := IdleToday(b, asOf, lang); idle != "" {
		text += "\n" + idle
	}
	for _, rec := range recs {
		text += "\n" + ReconcileLine(lang, rec)
	}
	return text
}

// IdleToday is "Idle cost today: ¥3.31 of ¥22.56 compute", per currency
// idle time cost anything today (the user's day, up to now); "" when none.
func IdleToday(b *ledger.Book, now time.Time, lang string) string {
	day, _ := ledger.DayRange(now, b.User.Location())
	st := ledger.Spend(b, day, now)
	curs := make([]ledger.Currency, 0, len(st.IdleCost))
	for c := range st.IdleCost {
		curs = append(curs, c)
	}
	sort.Slice(curs, func(i, j int) bool { return curs[i] < curs[j] })
	var parts []string
	for _, c := range curs {
		m := st.IdleCost[c]
		if m.Minor == 0 {
			continue
		}
		parts = append(parts, summaryTexts.Text(lang, "idle_of_compute", m.Format(), st.Total(c).Compute.Format()))
	}
	if len(parts) == 0 {
		return ""
	}
	return summaryTexts.Text(lang, "idle_today", chat.RawHTML(strings.Join(parts, "; ")))
}

// MonthSoFar is the range a summary reconciles: from the start of
// asOf's month in loc to asOf; ok is false at the month's very start.
func MonthSoFar(asOf time.Time, loc *time.Location) (from time.Time, ok bool) {
	l := asOf.In(loc)
	from = time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, loc)
	return from, asOf.After(from)
}
