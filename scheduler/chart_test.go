package scheduler_test

import (
	"bytes"
	"image/png"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
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
	b, err := scheduler.SpendChart(days, ledger.CNY)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() != scheduler.ChartWidth || r.Dy() != scheduler.ChartHeight {
		t.Fatalf("size %v", r)
	}
	// Count the pixels of each bar colour in the plot area: the compute,
	// idle and storage parts must be drawn, and the tallest day (the last)
	// taller than the first.
	count := map[[3]uint32]int{}
	colHeight := func(x int) int {
		n := 0
		for y := 40; y < scheduler.ChartHeight-30; y++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 != 255 || g>>8 != 255 || b>>8 != 255 {
				if !(r>>8 == 225 && g>>8 == 225) {
					n++
				}
			}
		}
		return n
	}
	for y := 40; y < scheduler.ChartHeight-30; y++ {
		for x := 71; x < scheduler.ChartWidth-10; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			count[[3]uint32{r >> 8, g >> 8, b >> 8}]++
		}
	}
	for name, c := range map[string][3]uint32{"compute": {66, 133, 244}, "idle": {234, 67, 53}, "storage": {251, 188, 5}} {
		if count[c] < 100 {
			t.Errorf("%s bars: %d pixels", name, count[c])
		}
	}
	slot := (scheduler.ChartWidth - 80) / 14
	first, last := colHeight(70+slot/2), colHeight(70+13*slot+slot/2)
	if last <= first || first == 0 {
		t.Errorf("bar heights first %d, last %d", first, last)
	}
	// An empty fortnight still draws.
	if _, err := scheduler.SpendChart(nil, ledger.USD); err != nil {
		t.Fatal(err)
	}
}
