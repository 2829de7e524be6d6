package ledger

import (
	"testing"
	"time"
)

func TestPeriods(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	d := func(loc *time.Location, y int, m time.Month, day, h int) time.Time {
		return time.Date(y, m, day, h, 0, 0, 0, loc)
	}
	tests := []struct {
		name       string
		f          func(time.Time, *time.Location) (time.Time, time.Time)
		t          time.Time
		loc        *time.Location
		start, end time.Time
		hours      float64
	}{
		{"spring-forward day is 23 h", DayRange, d(ny, 2026, 3, 8, 12), ny, d(ny, 2026, 3, 8, 0), d(ny, 2026, 3, 9, 0), 23},
		{"fall-back day is 25 h", DayRange, d(ny, 2026, 11, 1, 23), ny, d(ny, 2026, 11, 1, 0), d(ny, 2026, 11, 2, 0), 25},
		{"UTC instant in the previous local day", DayRange, time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC), ny, d(ny, 2026, 10, 31, 0), d(ny, 2026, 11, 1, 0), 24},
		{"Shanghai day", DayRange, time.Date(2026, 11, 1, 16, 0, 0, 0, time.UTC), sh, d(sh, 2026, 11, 2, 0), d(sh, 2026, 11, 3, 0), 24},
		{"ISO week from a Sunday", WeekRange, d(ny, 2026, 11, 1, 10), ny, d(ny, 2026, 10, 26, 0), d(ny, 2026, 11, 2, 0), 7*24 + 1},
		{"ISO week from a Monday", WeekRange, d(sh, 2026, 11, 2, 0), sh, d(sh, 2026, 11, 2, 0), d(sh, 2026, 11, 9, 0), 7 * 24},
		{"week with spring forward", WeekRange, d(ny, 2026, 3, 8, 5), ny, d(ny, 2026, 3, 2, 0), d(ny, 2026, 3, 9, 0), 7*24 - 1},
		{"November in New York", MonthRange, d(ny, 2026, 11, 30, 23), ny, d(ny, 2026, 11, 1, 0), d(ny, 2026, 12, 1, 0), 30*24 + 1},
		{"December into January", MonthRange, d(sh, 2026, 12, 31, 23), sh, d(sh, 2026, 12, 1, 0), d(sh, 2027, 1, 1, 0), 31 * 24},
		{"March in New York", MonthRange, d(ny, 2026, 3, 1, 0), ny, d(ny, 2026, 3, 1, 0), d(ny, 2026, 4, 1, 0), 31*24 - 1},
	}
	for _, tt := range tests {
		start, end := tt.f(tt.t, tt.loc)
		if !start.Equal(tt.start) || !end.Equal(tt.end) {
			t.Errorf("%s: [%s, %s), want [%s, %s)", tt.name, start, end, tt.start, tt.end)
		}
		if h := end.Sub(start).Hours(); h != tt.hours {
			t.Errorf("%s: %v hours, want %v", tt.name, h, tt.hours)
		}
	}
}

func TestParseMonth(t *testing.T) {
	sh, _ := time.LoadLocation("Asia/Shanghai")
	start, end, err := ParseMonth("2026-11", sh)
	if err != nil || !start.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, sh)) || !end.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, sh)) {
		t.Errorf("ParseMonth: %s %s %v", start, end, err)
	}
	for _, bad := range []string{"", "2026-13", "2026-1", "Nov 2026", "2026-11-01", "2026/11"} {
		if _, _, err := ParseMonth(bad, sh); ErrorCode(err) != EINVALID {
			t.Errorf("ParseMonth(%q): %v, want EINVALID", bad, err)
		}
	}
}
