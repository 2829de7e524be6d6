package command

import (
	"strconv"
	"strings"
	"time"
)

// --- reports -----------------------------------------------------------------

var periodWords = map[string]string{
	"today": "today", "今天": "today", "今日": "today",
	"yesterday": "yesterday", "昨天": "yesterday", "昨日": "yesterday",
	"week": "week", "this-week": "week", "本周": "week", "这周": "week", "这个星期": "week",
	"last-week": "last-week", "上周": "last-week",
	"month": "month", "this-month": "month", "本月": "month", "这个月": "month",
	"last-month": "last-month", "上月": "last-month", "上个月": "last-month",
}

func (p *parser) spend(toks []string) (Command, error) {
	if err := p.split(toks, nil, false); err != nil {
		return nil, err
	}
	// "this month", "last week"
	words := p.words
	if len(words) == 2 {
		words = []string{strings.ToLower(words[0]) + "-" + strings.ToLower(words[1])}
	}
	if len(words) > 1 {
		return nil, p.err("unexpected", quote(p.words[1]), string(p.kind))
	}
	w := "month"
	if len(words) == 1 {
		w = strings.ToLower(words[0])
	}
	local := p.now.In(p.loc)
	day := func(off int) time.Time {
		return time.Date(local.Year(), local.Month(), local.Day()+off, 0, 0, 0, 0, p.loc)
	}
	month := func(y int, m time.Month) (time.Time, time.Time) {
		from := time.Date(y, m, 1, 0, 0, 0, 0, p.loc)
		return from, from.AddDate(0, 1, 0)
	}
	if period, ok := periodWords[w]; ok {
		s := SpendCmd{Period: period}
		switch period {
		case "today":
			s.From, s.To = day(0), day(1)
		case "yesterday":
			s.From, s.To = day(-1), day(0)
		case "week", "last-week":
			back := (int(local.Weekday()) + 6) % 7 // days since Monday
			s.From, s.To = day(-back), day(7-back)
			if period == "last-week" {
				s.From, s.To = day(-back-7), day(-back)
			}
		case "month":
			s.From, s.To = month(local.Year(), local.Month())
		case "last-month":
			s.From, s.To = month(local.Year(), local.Month()-1)
		}
		return s, nil
	}
	// YYYY-MM
	if len(w) == 7 && w[4] == '-' && isDigits(w[:4]) && isDigits(w[5:]) {
		y, _ := strconv.Atoi(w[:4])
		m, _ := strconv.Atoi(w[5:])
		if y >= 2000 && y <= 2200 && m >= 1 && m <= 12 {
			s := SpendCmd{Period: w}
			s.From, s.To = month(y, time.Month(m))
			return s, nil
		}
	}
	// YYYY-MM-DD, or YYYY-MM-DD..YYYY-MM-DD: whole days, both ends included
	if from, to, ok := p.days(w); ok {
		if from.After(p.now) {
			return nil, p.err("future_time", quote(p.words[0]), from.Format("2006-01-02 15:04"))
		}
		return SpendCmd{Period: w, From: from, To: to}, nil
	}
	return nil, p.err("bad_period", quote(p.words[0]))
}

// days reads one day ("2026-11-02") or a range of days
// ("2026-11-02..2026-11-05", also with "~"), both ends included, as the
// instants [first day 00:00, the day after the last 00:00) in the user's
// zone; ok is false for anything else, or a range that ends before it
// starts.
func (p *parser) days(w string) (from, to time.Time, ok bool) {
	a, b, isRange := strings.Cut(strings.ReplaceAll(w, "~", ".."), "..")
	if !isRange {
		b = a
	}
	y1, m1, d1, ok1 := parseDate(a)
	y2, m2, d2, ok2 := parseDate(b)
	if !ok1 || !ok2 {
		return time.Time{}, time.Time{}, false
	}
	from = time.Date(y1, time.Month(m1), d1, 0, 0, 0, 0, p.loc)
	to = time.Date(y2, time.Month(m2), d2+1, 0, 0, 0, 0, p.loc)
	if !from.Before(to) || from.Year() < 2000 {
		return time.Time{}, time.Time{}, false
	}
	return from, to, true
}

func (p *parser) export(toks []string) (Command, error) {
	if err := p.split(toks, []string{"format"}, false); err != nil {
		return nil, err
	}
	f, fromKV := p.kv["format"]
	if !fromKV && len(p.words) > 0 {
		f = p.words[0]
		p.words = p.words[1:]
	}
	if err := p.noWords(); err != nil {
		return nil, err
	}
	switch strings.ToLower(f) {
	case "", "csv":
		return ExportCmd{Format: "csv"}, nil
	case "json":
		return ExportCmd{Format: "json"}, nil
	}
	return nil, p.err("bad_format", quote(f))
}
