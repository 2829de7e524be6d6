package ledger

import (
	"math/big"
	"testing"

	"github.com/gpuledger/gpuledger/perf"
)

// The price of a tensor-TFLOP-hour is per GPU paid for: a bench that
// measured half the rental's cards, or a host that shows more cards
// than were rented, must not double or halve it.
func TestPerTFLOPHour_PerGPUPaid(t *testing.T) {
	card := func(tf float64) perf.GPU { return perf.GPU{Model: "RTX 4090", BF16TFLOPS: tf} }
	bench := func(tfs ...float64) perf.Bench {
		var b perf.Bench
		for _, tf := range tfs {
			b.GPUs = append(b.GPUs, card(tf))
		}
		return b
	}
	for _, c := range []struct {
		name   string
		hourly *big.Rat
		paid   int
		b      perf.Bench
		want   *big.Rat // nil: no price per unit
	}{
		{"one card", big.NewRat(188, 100), 1, bench(152), big.NewRat(188, 15200)},
		{"all eight measured", big.NewRat(16, 1), 8, bench(150, 150, 150, 150, 150, 150, 150, 150), big.NewRat(16, 1200)},
		{"four of eight measured", big.NewRat(16, 1), 8, bench(150, 150, 150, 150), big.NewRat(2, 150)},
		{"the host shows two, one paid", big.NewRat(2, 1), 1, bench(100, 100), big.NewRat(2, 100)},
		{"a card without a tensor figure is not counted", big.NewRat(4, 1), 2, bench(100, 0), big.NewRat(2, 100)},
		{"nothing measured", big.NewRat(4, 1), 2, bench(0, 0), nil},
		{"unpriced", nil, 1, bench(100), nil},
	} {
		got := PerTFLOPHour(c.hourly, c.paid, c.b)
		switch {
		case c.want == nil && got != nil:
			t.Errorf("%s: %s per TFLOP-hour, want none", c.name, got.FloatString(6))
		case c.want != nil && (got == nil || got.Cmp(c.want) != 0):
			t.Errorf("%s: %v per TFLOP-hour, want %s", c.name, got, c.want.FloatString(6))
		}
	}
}
