package ledger

import (
	"time"

	"github.com/gpuledger/gpuledger/internal/clip"
)

// Periods are cut in the user's time zone with time.Date, never by adding
// 24 hours, so a day across a daylight-saving change is 23 or 25 hours long
// and still starts at local midnight. Every range is half-open: [start, end).

// DayRange returns the local day containing t in loc: [midnight, next midnight).
func DayRange(t time.Time, loc *time.Location) (start, end time.Time) {
	t = t.In(loc)
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, loc), time.Date(y, m, d+1, 0, 0, 0, 0, loc)
}

// WeekRange returns the ISO week (Monday to Sunday) containing t in loc.
func WeekRange(t time.Time, loc *time.Location) (start, end time.Time) {
	t = t.In(loc)
	y, m, d := t.Date()
	back := (int(t.Weekday()) + 6) % 7 // days since Monday
	return time.Date(y, m, d-back, 0, 0, 0, 0, loc), time.Date(y, m, d-back+7, 0, 0, 0, 0, loc)
}

// MonthRange returns the calendar month containing t in loc.
func MonthRange(t time.Time, loc *time.Location) (start, end time.Time) {
	t = t.In(loc)
	y, m, _ := t.Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, loc), time.Date(y, m+1, 1, 0, 0, 0, 0, loc)
}

// ParseMonth parses a month written "2026-11" and returns its range in loc.
// Bad input gets an *Error with code EINVALID.
func ParseMonth(s string, loc *time.Location) (start, end time.Time, err error) {
	t, perr := time.ParseInLocation("2006-01", s, loc)
	if perr != nil || len(s) != 7 {
		return time.Time{}, time.Time{}, Errorc(EINVALID, "bad_month", clip.Runes(s, 20, "…"))
	}
	start, end = MonthRange(t, loc)
	return start, end, nil
}
