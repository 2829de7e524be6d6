package command

import (
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file recognises durations, clock times, dates and Chinese
// numerals in single tokens, as parse_tokens.go does the other shapes.

// --- durations -------------------------------------------------------------

var durUnits = map[string]time.Duration{
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"秒": time.Second, "秒钟": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"分": time.Minute, "分钟": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"小时": time.Hour, "个小时": time.Hour, "钟头": time.Hour, "个钟头": time.Hour, "时": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour, "天": 24 * time.Hour,
	"日": 24 * time.Hour,
	"w": 7 * 24 * time.Hour, "wk": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
	"周": 7 * 24 * time.Hour, "星期": 7 * 24 * time.Hour,
}

// maxDur bounds every duration the parser accepts (400 days).
const maxDur = 400 * 24 * time.Hour

// parseDur recognises "30s", "90m", "1h30m", "1.5h", "2d", "1w", "2小时",
// "30分钟", "1小时30分", "半小时". The result is whole seconds, at most maxDur.
func parseDur(tok string) (time.Duration, bool) {
	s := strings.ToLower(tok)
	if s == "半小时" || s == "半个小时" || s == "半个钟头" {
		return 30 * time.Minute, true
	}
	if s == "" {
		return 0, false
	}
	s = cnNumerals(s)
	total := new(big.Rat)
	for s != "" {
		num, rest, ok := cutNumber(s)
		if !ok || strings.HasPrefix(num, "-") || strings.HasPrefix(num, "+") {
			return 0, false
		}
		d, err := ledger.ParseDecimal(num)
		if err != nil {
			return 0, false
		}
		// the longest unit word at the start of rest
		j := 0
		for j < len(rest) {
			c := rest[j]
			if c >= '0' && c <= '9' || c == '.' {
				break
			}
			j++
		}
		unit, known := durUnits[rest[:j]]
		if !known {
			return 0, false
		}
		part := d.Rat()
		part.Mul(part, new(big.Rat).SetInt64(int64(unit)))
		total.Add(total, part)
		if total.Cmp(new(big.Rat).SetInt64(int64(maxDur))) > 0 {
			return 0, false
		}
		s = rest[j:]
	}
	secs := new(big.Int).Quo(total.Num(), total.Denom())
	secs.Quo(secs, big.NewInt(int64(time.Second)))
	return time.Duration(secs.Int64()) * time.Second, true
}

// --- times -----------------------------------------------------------------

// futureSlack is how far in the future a given time may lie (clocks differ,
// people round up). A bare clock time later than now+futureSlack means that
// time yesterday: "at 23:00" sent at 00:30 is last night.
const futureSlack = 5 * time.Minute

// parseClock recognises "10:00", "9:05", "10:07:30" and returns the
// seconds after midnight.
func parseClock(s string) (int, bool) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	lim := []int{24, 60, 60}
	v := 0
	for i, p := range parts {
		if !isDigits(p) || len(p) > 2 || i > 0 && len(p) != 2 {
			return 0, false
		}
		n, _ := strconv.Atoi(p)
		if n >= lim[i] {
			return 0, false
		}
		v = v*60 + n
	}
	if len(parts) == 2 {
		v *= 60
	}
	return v, true
}

// parseDate recognises "2026-11-01" and "2026/11/01".
func parseDate(s string) (y, m, d int, ok bool) {
	s = strings.ReplaceAll(s, "/", "-")
	parts := strings.Split(s, "-")
	if len(parts) != 3 || len(parts[0]) != 4 || len(parts[1]) < 1 || len(parts[1]) > 2 ||
		len(parts[2]) < 1 || len(parts[2]) > 2 || !isDigits(parts[0]) || !isDigits(parts[1]) || !isDigits(parts[2]) {
		return 0, 0, 0, false
	}
	y, _ = strconv.Atoi(parts[0])
	m, _ = strconv.Atoi(parts[1])
	d, _ = strconv.Atoi(parts[2])
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, 0, 0, false
	}
	if time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Day() != d {
		return 0, 0, 0, false // 2026-02-30
	}
	return y, m, d, true
}

var dayWords = map[string]int{
	"today": 0, "今天": 0, "今日": 0, "yesterday": -1, "昨天": -1, "昨日": -1, "昨晚": -1,
	"前天": -2, "tomorrow": 1, "明天": 1, // tomorrow parses, to be refused as future
}

// parseTime recognises the TIME forms of DESIGN.md section 3 in loc:
// "2026-11-01 10:00", "2026-11-01 10:07:30", "2026-11-01T10:00",
// "10:00" (today, or yesterday if that is later than now+futureSlack),
// "today 10:00", "昨天 23:00", "-2h", "2h ago", "2小时前", "now", RFC 3339.
// The caller checks that the result is not in the future.
func parseTime(tok string, now time.Time, loc *time.Location) (time.Time, bool) {
	s := strings.ToLower(strings.TrimSpace(tok))
	switch s {
	case "now", "现在", "刚才", "刚刚":
		return now, true
	}
	if strings.HasPrefix(s, "-") {
		if d, ok := parseDur(s[1:]); ok {
			return now.Add(-d), true
		}
		return time.Time{}, false
	}
	for _, suf := range []string{" ago", "ago", "之前", "以前", "前"} {
		if strings.HasSuffix(s, suf) {
			if d, ok := parseDur(strings.TrimSpace(strings.TrimSuffix(s, suf))); ok {
				return now.Add(-d), true
			}
			return time.Time{}, false
		}
	}
	if t, err := time.Parse(time.RFC3339, strings.ToUpper(s)); err == nil {
		return t, true
	}
	local := now.In(loc)
	// "DATE CLOCK", "DATEtCLOCK", "DAYWORD CLOCK", "DAYWORDCLOCK", "DATE", "CLOCK"
	datePart, clockPart := s, ""
	if i := strings.IndexByte(s, ' '); i > 0 {
		datePart, clockPart = s[:i], strings.TrimSpace(s[i+1:])
	} else if len(s) > 11 && s[10] == 't' {
		datePart, clockPart = s[:10], s[11:]
	} else if strings.Contains(s, ":") {
		// a bare clock, or a day word glued to one: "今天10:00"
		i := strings.IndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' })
		if i < 0 {
			return time.Time{}, false
		}
		datePart, clockPart = s[:i], s[i:]
	}
	secs := 0
	if clockPart != "" {
		var ok bool
		if secs, ok = parseClock(clockPart); !ok {
			return time.Time{}, false
		}
	}
	at := func(y int, m time.Month, d int) time.Time {
		return time.Date(y, m, d, secs/3600, secs/60%60, secs%60, 0, loc)
	}
	if datePart == "" {
		t := at(local.Year(), local.Month(), local.Day())
		if t.After(now.Add(futureSlack)) {
			t = at(local.Year(), local.Month(), local.Day()-1)
		}
		return t, true
	}
	if off, ok := dayWords[datePart]; ok {
		if clockPart == "" && off == 0 {
			return time.Time{}, false // "today" alone is a period, not a time
		}
		return at(local.Year(), local.Month(), local.Day()+off), true
	}
	if y, m, d, ok := parseDate(datePart); ok {
		return at(y, time.Month(m), d), true
	}
	return time.Time{}, false
}

// looksLikeTime reports whether tok has the shape of a TIME, so that it may
// stand without "at".
func looksLikeTime(tok string) bool {
	s := strings.ToLower(tok)
	switch s {
	case "now", "现在", "刚才", "刚刚":
		return true
	}
	if strings.HasPrefix(s, "-") {
		_, ok := parseDur(s[1:])
		return ok
	}
	if strings.HasSuffix(s, "ago") || strings.HasSuffix(s, "前") {
		return true
	}
	if strings.Contains(s, ":") {
		return true
	}
	_, _, _, ok := parseDate(strings.SplitN(s, "t", 2)[0])
	return ok
}

// parseHHMM recognises a time of day "22:00" and returns minutes after
// midnight.
func parseHHMM(s string) (int, bool) {
	if strings.Count(s, ":") != 1 {
		return 0, false
	}
	v, ok := parseClock(s)
	return v / 60, ok
}

// cnDigit is the value of a Chinese numeral character, and whether it is one.
var cnDigit = map[rune]int{'零': 0, '一': 1, '二': 2, '两': 2, '俩': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}

// cnNumerals rewrites Chinese numerals from 0 to 99 written before a unit
// ("两小时", "三十分钟", "十二天", "二十五分") as Arabic digits, so that
// durations read the same either way. Anything else is left as it is.
func cnNumerals(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i := 0; i < len(rs); {
		j, n := i, -1
		// [digit] 十 [digit] | digit
		if d, ok := cnDigit[rs[j]]; ok && (j+1 >= len(rs) || rs[j+1] != '十') {
			n, j = d, j+1
		} else {
			tens := 1
			if d, ok := cnDigit[rs[j]]; ok && j+1 < len(rs) && rs[j+1] == '十' {
				tens, j = d, j+1
			}
			if j < len(rs) && rs[j] == '十' {
				n, j = tens*10, j+1
				if j < len(rs) {
					if d, ok := cnDigit[rs[j]]; ok && rs[j] != '两' && rs[j] != '俩' {
						n, j = n+d, j+1
					}
				}
			}
		}
		if n < 0 {
			b.WriteRune(rs[i])
			i++
			continue
		}
		b.WriteString(strconv.Itoa(n))
		i = j
	}
	return b.String()
}
