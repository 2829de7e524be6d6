package view

import (
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestFormatTime(t *testing.T) {
	now := at(2026, 11, 1, 12, 0, 0)
	tests := []struct {
		t      time.Time
		en, zh string
	}{
		{at(2026, 11, 1, 10, 0, 0), "10:00", "10:00"},
		{at(2026, 11, 1, 10, 7, 30), "10:07:30", "10:07:30"},
		{at(2026, 10, 31, 23, 0, 0), "yesterday 23:00", "昨天 23:00"},
		{at(2026, 11, 2, 9, 0, 0), "tomorrow 09:00", "明天 09:00"},
		{at(2026, 3, 5, 8, 0, 0), "Mar 5 08:00", "3月5日 08:00"},
		{at(2025, 11, 1, 10, 0, 0), "2025-11-01 10:00", "2025-11-01 10:00"},
		// an instant given in UTC is shown in the user's zone
		{time.Date(2026, 10, 31, 16, 30, 0, 0, time.UTC), "00:30", "00:30"},
	}
	for _, tt := range tests {
		if got := FormatTime(tt.t, shanghai, now, "en"); got != tt.en {
			t.Errorf("FormatTime(%v, en) = %q, want %q", tt.t, got, tt.en)
		}
		if got := FormatTime(tt.t, shanghai, now, "zh"); got != tt.zh {
			t.Errorf("FormatTime(%v, zh) = %q, want %q", tt.t, got, tt.zh)
		}
	}
	if got := FormatTime(now, nil, now, "en"); got != "04:00" {
		t.Errorf("nil location: %q, want UTC 04:00", got)
	}
}

// TestFormatSpan: a range's ends read to the minute, unless the range is
// short: then both to the second, so that a stop and a boot in the same
// minute do not read "19:05–19:05".
func TestFormatSpan(t *testing.T) {
	now := at(2026, 11, 1, 20, 0, 0)
	tests := []struct {
		from, to      time.Time
		en1, en2, zh1 string
	}{
		{at(2026, 11, 1, 18, 2, 40), at(2026, 11, 1, 20, 2, 10), "18:02", "20:02", "18:02"},
		{at(2026, 11, 1, 19, 5, 2), at(2026, 11, 1, 19, 5, 40), "19:05:02", "19:05:40", "19:05:02"},
		// a round minute is shown with its seconds too
		{at(2026, 11, 1, 19, 5, 0), at(2026, 11, 1, 19, 5, 21), "19:05:00", "19:05:21", "19:05:00"},
		// across a minute, still short
		{at(2026, 11, 1, 19, 5, 50), at(2026, 11, 1, 19, 6, 10), "19:05:50", "19:06:10", "19:05:50"},
		{at(2026, 11, 1, 19, 0, 0), at(2026, 11, 1, 19, 4, 59), "19:00:00", "19:04:59", "19:00:00"},
		{at(2026, 11, 1, 19, 0, 0), at(2026, 11, 1, 19, 5, 0), "19:00", "19:05", "19:00"},
		// another day keeps its date
		{at(2026, 10, 31, 23, 59, 30), at(2026, 11, 1, 0, 0, 20), "yesterday 23:59:30", "00:00:20", "昨天 23:59:30"},
		{at(2026, 10, 30, 23, 0, 0), at(2026, 11, 1, 9, 0, 0), "Oct 30 23:00", "09:00", "10月30日 23:00"},
	}
	for _, tt := range tests {
		if a, b := FormatSpan(tt.from, tt.to, shanghai, now, "en"); a != tt.en1 || b != tt.en2 {
			t.Errorf("FormatSpan(%v, %v, en) = %q, %q; want %q, %q", tt.from, tt.to, a, b, tt.en1, tt.en2)
		}
		if a, _ := FormatSpan(tt.from, tt.to, shanghai, now, "zh"); a != tt.zh1 {
			t.Errorf("FormatSpan(%v, %v, zh) = %q; want %q", tt.from, tt.to, a, tt.zh1)
		}
	}
}

func TestFormatMoney(t *testing.T) {
	tests := []struct {
		m    ledger.Money
		want string
	}{
		{ledger.Money{Currency: ledger.CNY, Minor: 329}, "¥3.29"},
		{ledger.Money{Currency: ledger.USD, Minor: 70}, "$0.70"},
		{ledger.Money{Currency: ledger.CNY, Minor: -100}, "-¥1.00"},
		{ledger.Money{Currency: "JPY", Minor: 500}, "JP¥500"},
	}
	for _, tt := range tests {
		if got := FormatMoney(tt.m); got != tt.want {
			t.Errorf("FormatMoney(%+v) = %q, want %q", tt.m, got, tt.want)
		}
	}
}

func TestFormatAmountAndPrice(t *testing.T) {
	tests := []struct{ got, want string }{
		{FormatAmount(dec("0.0066"), ledger.CNY), "¥0.0066"},
		{FormatAmount(dec("100"), ledger.CNY), "¥100.00"},
		{FormatAmount(dec("21.5"), ledger.USD), "$21.50"},
		{FormatAmount(dec("-2"), ledger.USD), "-$2.00"},
		{FormatAmount(dec("1.88"), ""), "1.88"},
		{FormatAmount(dec("5"), "CHF"), "CHF 5.00"},
		{FormatPrice(ledger.Price{Amount: dec("1.88"), Unit: ledger.UnitHour}, ledger.CNY, "en"), "¥1.88/h"},
		{FormatPrice(ledger.Price{Amount: dec("1.88"), Unit: ledger.UnitHour}, ledger.CNY, "zh"), "¥1.88/小时"},
		{FormatPrice(ledger.Price{Amount: dec("70"), Unit: ledger.UnitDay}, ledger.CNY, "zh"), "¥70.00/天"},
		{FormatPrice(ledger.Price{Amount: dec("21.52"), Unit: ledger.UnitHour}, ledger.USD, "en"), "$21.52/h"},
		{FormatStoragePrice(dec("0.0066"), ledger.PerGBDay, ledger.CNY, "zh"), "¥0.0066/GB/天"},
		{FormatStoragePrice(dec("0.1"), ledger.PerGBMonth, ledger.USD, "en"), "$0.10/GB/month"},
		{FormatMode(ledger.PerSecond, "zh"), "按秒"},
		{FormatMode(ledger.PerHour, "en"), "per-hour"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

var shanghai = func() *time.Location {
	l, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		panic(err)
	}
	return l
}()

func dec(s string) ledger.Decimal { return ledger.MustDecimal(s) }

func at(y, mo, d, h, mi, s int) time.Time {
	return time.Date(y, time.Month(mo), d, h, mi, s, 0, shanghai)
}
