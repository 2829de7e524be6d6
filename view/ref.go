package view

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// refTexts are the texts that tell rentals of one name apart by their
// addresses (ledger.RentalRef): the note on a rental that took a released
// rental's name, and the note on a correction that a bare name aimed.
var refTexts = chat.Catalog{
	"ref_reused": {
		"ℹ️ The name %[1]s was used before: the earlier %[1]s (%[2]s – %[3]s) is now <code>%[4]s</code>. Write that where you would write its name (/price, /charge, /traffic, /why …) to reach it; %[1]s alone now means this one.",
		"ℹ️ %[1]s 这个名字以前用过：之前的 %[1]s（%[2]s – %[3]s）现在叫 <code>%[4]s</code>。要找它，请在写名字的地方（/price、/charge、/traffic、/why …）写这个；单写 %[1]s 现在指这一个。"},
	"ref_reused_more": {
		"ℹ️ The name %[1]s was used before; the earlier ones are now: %[2]s. Write one of those to correct it.",
		"ℹ️ %[1]s 这个名字以前用过；之前的几个现在分别叫：%[2]s。要更正其中一个请写它的名字。"},
	"ref_took": {
		"ℹ️ %[1]s here is the one started %[2]s (<code>%[3]s</code>). Another rental had that name: %[4]s; write its address to reach it.",
		"ℹ️ 这里的 %[1]s 是 %[2]s 开始的那个（<code>%[3]s</code>）。同名的其他租用：%[4]s；要找它请写它的地址。"},
	"ref_span":    {"<code>%[1]s</code> (%[2]s – %[3]s)", "<code>%[1]s</code>（%[2]s – %[3]s）"},
	"ref_running": {"now", "至今"},
}

// maxRefsShown bounds the earlier rentals a note lists (a name reused
// every week would otherwise make a long note).
const maxRefsShown = 3

// DayText shows the day t falls on in loc: "Nov 2" ("11月2日"), with the
// year when it is not now's year.
func DayText(t time.Time, loc *time.Location, now time.Time, lang string) string {
	if loc == nil {
		loc = time.UTC
	}
	lt := t.In(loc)
	if lt.Year() != now.In(loc).Year() {
		return lt.Format(time.DateOnly)
	}
	if chat.NormLang(lang) == chat.LangZH {
		return fmt.Sprintf("%d月%d日", int(lt.Month()), lt.Day())
	}
	return fmt.Sprintf("%s %d", monthsEN[lt.Month()-1], lt.Day())
}

// others returns the rentals of same other than x, newest first.
func others(x *ledger.Rental, same []*ledger.Rental) []*ledger.Rental {
	var out []*ledger.Rental
	for i := len(same) - 1; i >= 0; i-- {
		if r := same[i]; r != x && r.ID != x.ID && r.Name == x.Name && len(r.Events) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// spanText is "yolo@2026-11-02 (Nov 2 – Nov 5)" for r among same.
func spanText(r *ledger.Rental, same []*ledger.Rental, loc *time.Location, now time.Time, lang string) string {
	end := tr2(lang, "ref_running")
	if t, ok := r.ReleasedAt(); ok {
		end = DayText(t, loc, now, lang)
	}
	return refTexts.Render(lang, "ref_span", ledger.RefOf(same, r, loc), DayText(r.StartedAt(), loc, now, lang), end)
}

func tr2(lang, key string) string { return refTexts.Render(lang, key) }

// ReuseNote is the note on a new rental x that took the name of earlier
// (released) rentals: each stays reachable by its address, and the note
// says which. same holds every rental called x.Name, x among them; "" when
// x is the only one. A name is reused silently nowhere: the chat's /rent,
// a card's Log button and /adopt all add it.
func ReuseNote(x *ledger.Rental, same []*ledger.Rental, loc *time.Location, now time.Time, lang string) string {
	old := others(x, same)
	if len(old) == 0 {
		return ""
	}
	if len(old) == 1 {
		o := old[0]
		end := tr2(lang, "ref_running")
		if t, ok := o.ReleasedAt(); ok {
			end = DayText(t, loc, now, lang)
		}
		return refTexts.Render(lang, "ref_reused", x.Name, DayText(o.StartedAt(), loc, now, lang), end, ledger.RefOf(same, o, loc))
	}
	return refTexts.Render(lang, "ref_reused_more", x.Name, chat.RawHTML(spans(old, same, loc, now, lang)))
}

// TookNote is the note on a change made through a bare name that more
// than one rental has: it says which rental the name took (x), by its
// start and address, and lists the others', so a correction meant for an
// older one is seen at once and undone. "" when x's name is its own.
func TookNote(x *ledger.Rental, same []*ledger.Rental, loc *time.Location, now time.Time, lang string) string {
	old := others(x, same)
	if len(old) == 0 {
		return ""
	}
	return refTexts.Render(lang, "ref_took", x.Name, FormatTime(x.StartedAt(), loc, now, lang), ledger.RefOf(same, x, loc),
		chat.RawHTML(spans(old, same, loc, now, lang)))
}

// spans lists rs (newest first) as spanText does, at most maxRefsShown.
func spans(rs, same []*ledger.Rental, loc *time.Location, now time.Time, lang string) string {
	parts := make([]string, 0, maxRefsShown+1)
	for i, r := range rs {
		if i == maxRefsShown {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, spanText(r, same, loc, now, lang))
	}
	sep := ", "
	if chat.NormLang(lang) == chat.LangZH {
		sep = "、"
	}
	return strings.Join(parts, sep)
}
