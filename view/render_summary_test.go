package view

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestRenderSummary_RunningLineSaysUnitOnce: the line of running rentals
// gives their hourly total once; the Chinese read "每小时 ¥1.88/小时", the
// hour said twice, and with only prepaid rentals running both languages
// ended on a dangling "accruing " / "每小时 ".
func TestRenderSummary_RunningLineSaysUnitOnce(t *testing.T) {
	start := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	now := start.Add(2 * time.Hour)
	rental := func(unit ledger.Unit, mode ledger.Mode) *ledger.Book {
		b := &ledger.Book{User: ledger.User{ID: 1, Lang: "en", TZ: "Asia/Shanghai"}}
		b.Rentals = []*ledger.Rental{{
			ID: 1, UserID: 1, Name: "t1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1,
			Mode: mode, Priced: true, Currency: ledger.CNY,
			Price:  ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: unit},
			Events: []ledger.Event{{ID: 1, Kind: ledger.EventStart, At: start}},
		}}
		return b
	}
	for _, tt := range []struct {
		lang, want string
		bad        []string
	}{
		{"en", "Running: 1, accruing ¥1.88/h", nil},
		{"zh", "运行中：1 台，合计 ¥1.88/小时", []string{"每小时 ¥"}},
	} {
		got := RenderSummary(rental(ledger.UnitHour, ledger.PerSecond), now, tt.lang)
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: summary lacks %q:\n%s", tt.lang, tt.want, got)
		}
		for _, b := range tt.bad {
			if strings.Contains(got, b) {
				t.Errorf("%s: summary says %q:\n%s", tt.lang, b, got)
			}
		}
	}
	for _, tt := range []struct{ lang, want string }{
		{"en", "Running: 1\n"},
		{"zh", "运行中：1 台\n"},
	} {
		got := RenderSummary(rental(ledger.UnitDay, ledger.AlwaysOn), now, tt.lang)
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s, prepaid only: summary lacks %q:\n%s", tt.lang, tt.want, got)
		}
	}
}

// TestRenderSpend_PlatformInChinese: /spend's and the summary's "by
// platform" line names a platform as the other Chinese replies do (恒源云,
// not gpushare); in English it stays the key the user types.
func TestRenderSpend_PlatformInChinese(t *testing.T) {
	start := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	now := start.Add(2 * time.Hour)
	b := &ledger.Book{User: ledger.User{ID: 1, Lang: "zh", TZ: "Asia/Shanghai"}}
	b.Rentals = []*ledger.Rental{{
		ID: 1, UserID: 1, Name: "a10", Platform: "gpushare", GPU: "A100", GPUCount: 1,
		Mode: ledger.PerSecond, Priced: true, Currency: ledger.CNY,
		Price:  ledger.Price{Amount: ledger.MustDecimal("3.5"), Unit: ledger.UnitHour},
		Events: []ledger.Event{{ID: 1, Kind: ledger.EventStart, At: start}},
	}}
	for _, tt := range []struct{ lang, want string }{
		{"zh", "按平台：恒源云 ¥7.00"},
		{"en", "by platform: gpushare ¥7.00"},
	} {
		if got := RenderSummary(b, now, tt.lang); !strings.Contains(got, tt.want) {
			t.Errorf("%s: summary lacks %q:\n%s", tt.lang, tt.want, got)
		}
		if got := RenderSpend(b, start, now, tt.lang); !strings.Contains(got, tt.want) {
			t.Errorf("%s: /spend lacks %q:\n%s", tt.lang, tt.want, got)
		}
	}
}
