package view_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"image/png"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

func TestSpendChart(t *testing.T) {
	loc, _ := time.LoadLocation("Asia/Shanghai")
	var days []ledger.DaySpend
	for i := range 14 {
		d := ledger.DaySpend{Day: time.Date(2026, 11, 1+i, 0, 0, 0, 0, loc), Totals: map[ledger.Currency]*ledger.Totals{}, Idle: map[ledger.Currency]ledger.Money{}}
		if i%3 != 2 { // some empty days
			m := func(n int64) ledger.Money { return ledger.Money{Currency: ledger.CNY, Minor: n} }
			d.Totals[ledger.CNY] = &ledger.Totals{Currency: ledger.CNY, Compute: m(int64(1000 + 300*i)), Storage: m(200), Traffic: m(50), Other: m(0), Total: m(int64(1250 + 300*i))}
			d.Idle[ledger.CNY] = m(400)
		}
		days = append(days, d)
	}
	b, err := view.SpendChart(days, ledger.CNY)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() != view.ChartWidth || r.Dy() != view.ChartHeight {
		t.Fatalf("size %v", r)
	}
	// Count the pixels of each bar colour in the plot area: the compute,
	// idle and storage parts must be drawn, and the tallest day (the last)
	// taller than the first.
	count := map[[3]uint32]int{}
	colHeight := func(x int) int {
		n := 0
		for y := 40; y < view.ChartHeight-30; y++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 != 255 || g>>8 != 255 || b>>8 != 255 {
				if !(r>>8 == 225 && g>>8 == 225) {
					n++
				}
			}
		}
		return n
	}
	for y := 40; y < view.ChartHeight-30; y++ {
		for x := 71; x < view.ChartWidth-10; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			count[[3]uint32{r >> 8, g >> 8, b >> 8}]++
		}
	}
	for name, c := range map[string][3]uint32{"compute": {66, 133, 244}, "idle": {234, 67, 53}, "storage": {251, 188, 5}} {
		if count[c] < 100 {
			t.Errorf("%s bars: %d pixels", name, count[c])
		}
	}
	slot := (view.ChartWidth - 80) / 14
	first, last := colHeight(70+slot/2), colHeight(70+13*slot+slot/2)
	if last <= first || first == 0 {
		t.Errorf("bar heights first %d, last %d", first, last)
	}
	// An empty fortnight still draws.
	if _, err := view.SpendChart(nil, ledger.USD); err != nil {
		t.Fatal(err)
	}
}

// TestSpendCharts_SameBytes: the chart's PNG, for a fixed fortnight in one
// currency, in two and in another, and for no days at all, is byte for
// byte the one the scheduler drew before the drawing moved here (the
// digests were taken from that code).
func TestSpendCharts_SameBytes(t *testing.T) {
	loc, _ := time.LoadLocation("Asia/Shanghai")
	m := func(c ledger.Currency, n int64) ledger.Money { return ledger.Money{Currency: c, Minor: n} }
	var days []ledger.DaySpend
	for i := range 14 {
		d := ledger.DaySpend{Day: time.Date(2026, 11, 1+i, 0, 0, 0, 0, loc), Totals: map[ledger.Currency]*ledger.Totals{}, Idle: map[ledger.Currency]ledger.Money{}}
		if i%3 != 2 {
			d.Totals[ledger.CNY] = &ledger.Totals{Currency: ledger.CNY, Compute: m(ledger.CNY, int64(1000+300*i)), Storage: m(ledger.CNY, 200), Traffic: m(ledger.CNY, 50), Other: m(ledger.CNY, 7), Total: m(ledger.CNY, int64(1257+300*i))}
			d.Idle[ledger.CNY] = m(ledger.CNY, 400)
		}
		if i%4 == 1 {
			d.Totals[ledger.USD] = &ledger.Totals{Currency: ledger.USD, Compute: m(ledger.USD, int64(99*i)), Total: m(ledger.USD, int64(99*i))}
		}
		days = append(days, d)
	}
	for _, tc := range []struct {
		days []ledger.DaySpend
		curs []ledger.Currency
		want string
	}{
		{days, []ledger.Currency{ledger.CNY}, "4c6106bdd44b4eddbdcdce1d4e3edbf3abc4288b4ca809ad8af5d8a2cea9f031"},
		{days, []ledger.Currency{ledger.CNY, ledger.USD}, "ebbae51ef9ed30ea54de966c19a634e28eb2531c08d002a0ac8fbe966b544dfb"},
		{days, []ledger.Currency{ledger.USD}, "3420d2f1679be991325a4c5be6832d64a2bd521b69e0172003bc1e1e67b24acc"},
		{nil, []ledger.Currency{ledger.USD}, "ab8aaab3df56f491ebc650a8f55834c4c8bccfebfaa4e99a5282c118fac87f06"},
	} {
		b, err := view.SpendCharts(tc.days, tc.curs)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != tc.want {
			t.Errorf("%d days in %v: the PNG's SHA-256 is %s, was %s", len(tc.days), tc.curs, got, tc.want)
		}
	}
}
