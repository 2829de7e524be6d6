package view

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

var monthsEN = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// FormatTime shows t in the user's zone relative to now: "10:00" today,
// "yesterday 23:00" / "昨天 23:00", "tomorrow 09:00" / "明天 09:00",
// "Nov 1 10:00" / "11月1日 10:00" within the year, "2025-11-01 10:00"
// otherwise. Seconds are shown only when not zero.
func FormatTime(t time.Time, loc *time.Location, now time.Time, lang string) string {
	return formatTime(t, loc, now, lang, false)
}

// ExactSpan is the shortest range FormatSpan shows to the minute: the
// ends of a shorter one (a stop and a boot a few seconds apart) would
// read "19:05–19:05", or a minute apart when they were seconds apart.
const ExactSpan = 5 * time.Minute

// FormatSpan shows the two ends of a range as FormatTime does: both to
// the minute ("18:02", "20:02"), or, when the range is shorter than
// ExactSpan, both to the second ("19:05:02", "19:05:40").
func FormatSpan(from, to time.Time, loc *time.Location, now time.Time, lang string) (string, string) {
	if d := to.Sub(from); d < ExactSpan && d > -ExactSpan {
		return formatTime(from.Truncate(time.Second), loc, now, lang, true), formatTime(to.Truncate(time.Second), loc, now, lang, true)
	}
	return FormatTime(from.Truncate(time.Minute), loc, now, lang), FormatTime(to.Truncate(time.Minute), loc, now, lang)
}

// formatTime is FormatTime, with the seconds shown always when seconds
// is true.
func formatTime(t time.Time, loc *time.Location, now time.Time, lang string, seconds bool) string {
	if loc == nil {
		loc = time.UTC
	}
	zh := chat.NormLang(lang) == chat.LangZH
	lt, ln := t.In(loc), now.In(loc)
	clock := lt.Format("15:04")
	if seconds || lt.Second() != 0 {
		clock = lt.Format("15:04:05")
	}
	day := func(x time.Time) time.Time { return time.Date(x.Year(), x.Month(), x.Day(), 0, 0, 0, 0, time.UTC) }
	diff := int(day(lt).Sub(day(ln)).Hours() / 24)
	switch {
	case diff == 0:
		return clock
	case diff == -1 && zh:
		return "昨天 " + clock
	case diff == -1:
		return "yesterday " + clock
	case diff == 1 && zh:
		return "明天 " + clock
	case diff == 1:
		return "tomorrow " + clock
	case lt.Year() == ln.Year() && zh:
		return fmt.Sprintf("%d月%d日 %s", int(lt.Month()), lt.Day(), clock)
	case lt.Year() == ln.Year():
		return fmt.Sprintf("%s %d %s", monthsEN[lt.Month()-1], lt.Day(), clock)
	}
	return lt.Format("2006-01-02 ") + clock
}

// FormatMoney shows m with its currency symbol: "¥3.29", "$0.70", "-¥1.00".
func FormatMoney(m ledger.Money) string { return m.Format() }

// FormatAmount shows an exact amount with a currency symbol, keeping every
// digit the user gave and at least the currency's minor digits: "¥0.0066",
// "$21.52", "¥100.00". A currency of "" shows the number alone.
func FormatAmount(d ledger.Decimal, c ledger.Currency) string {
	s := d.String()
	if c != "" {
		if n := c.MinorDigits(); n > 0 && d.Scale() < n {
			if !strings.Contains(s, ".") {
				s += "."
			}
			s += strings.Repeat("0", n-d.Scale())
		}
	}
	if strings.HasPrefix(s, "-") {
		return "-" + symbol(c) + s[1:]
	}
	return symbol(c) + s
}

func symbol(c ledger.Currency) string {
	if c == "" {
		return ""
	}
	return c.Symbol()
}

var unitShort = map[ledger.Unit][2]string{
	ledger.UnitSecond: {"s", "秒"}, ledger.UnitMinute: {"min", "分钟"}, ledger.UnitHour: {"h", "小时"},
	ledger.UnitDay: {"day", "天"}, ledger.UnitWeek: {"week", "周"}, ledger.UnitMonth: {"month", "月"},
}

// FormatPrice shows a compute price: "¥1.88/h", "$21.52/h", "¥70.00/day" in
// English; "¥1.88/小时", "¥70.00/天" in Chinese.
func FormatPrice(p ledger.Price, c ledger.Currency, lang string) string {
	i := 0
	if chat.NormLang(lang) == chat.LangZH {
		i = 1
	}
	u, ok := unitShort[p.Unit]
	if !ok {
		u = [2]string{string(p.Unit), string(p.Unit)}
	}
	return FormatAmount(p.Amount, c) + "/" + u[i]
}

var storageUnitShort = map[ledger.StorageUnit][2]string{
	ledger.PerGBHour: {"GB/h", "GB/小时"}, ledger.PerGBDay: {"GB/day", "GB/天"}, ledger.PerGBMonth: {"GB/month", "GB/月"},
}

// FormatStoragePrice shows a storage price: "¥0.0066/GB/day", "¥0.0066/GB/天".
func FormatStoragePrice(amount ledger.Decimal, u ledger.StorageUnit, c ledger.Currency, lang string) string {
	i := 0
	if chat.NormLang(lang) == chat.LangZH {
		i = 1
	}
	s, ok := storageUnitShort[u]
	if !ok {
		s = [2]string{string(u), string(u)}
	}
	return FormatAmount(amount, c) + "/" + s[i]
}

// FormatMode names a billing mode in lang: "per-second" / "按秒".
func FormatMode(m ledger.Mode, lang string) string {
	if chat.NormLang(lang) != chat.LangZH {
		return string(m)
	}
	switch m {
	case ledger.PerSecond:
		return "按秒"
	case ledger.PerMinute:
		return "按分钟"
	case ledger.PerHour:
		return "按小时"
	case ledger.AlwaysOn:
		return "包时段"
	}
	return string(m)
}
