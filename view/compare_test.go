package view

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestCompareTexts_Catalog: both languages of every text of /compare and
// /job show the same arguments.
func TestCompareTexts_Catalog(t *testing.T) {
	for _, err := range compareTexts.Check() {
		t.Error(err)
	}
}

// TestSigFigs: a price per unit is shown to three significant digits,
// rounded half away from zero from the exact figure.
func TestSigFigs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0.01236842", "0.0124"},
		{"0.0125", "0.0125"},
		{"0.00125", "0.00125"},
		{"0.012345", "0.0123"},
		{"0.0123450", "0.0123"},
		{"0.01235", "0.0124"},
		{"0.009995", "0.0100"},
		{"1.88", "1.88"},
		{"1.885", "1.89"},
		{"2", "2.00"},
		{"1234.5", "1230"},
		{"99950", "100000"},
		{"-0.01236842", "-0.0124"},
		{"0", "0"},
	} {
		if got := SigFigs(ledger.MustDecimal(tc.in), 3); got != tc.want {
			t.Errorf("SigFigs(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestCompareText_Units: figures with their units, a card without a
// tensor figure without a price per unit, a MIG slice named as one, money
// of two currencies each with its own symbol.
func TestCompareText_Units(t *testing.T) {
	tab := ledger.CompareTable{
		Cards: []ledger.CardRow{
			{Platform: "autodl", GPU: "RTX 4090", Currency: ledger.CNY, Rentals: 2, Benched: 2, TensorTFLOPS: 151.5, MemGBps: 1010,
				PCIeGen: 4, PCIeWidth: 8, PricedRentals: 2, HourPerGPU: ledger.MustDecimal("1.88"), PerUnitRentals: 2, PerTFLOPHour: ledger.MustDecimal("0.012409")},
			{Platform: "runpod", GPU: "A100 80GB PCIe", MIG: true, Currency: ledger.USD, Rentals: 1, Benched: 1, MemGBps: 400,
				PricedRentals: 1, HourPerGPU: ledger.MustDecimal("0.5")},
		},
		Labels: []ledger.LabelTable{{Label: "mnist", Rows: []ledger.LabelRow{
			{Platform: "runpod", GPU: "A100 80GB PCIe", MIG: true, Currency: ledger.USD, Runs: 1, Time: 90 * time.Second, Priced: 0},
		}}},
	}
	got := CompareText(tab, "en", 3)
	for _, w := range []string{"tensor 152 TFLOPS", "memory 1.01 TB/s", "PCIe 4.0 x8", "¥1.88/GPU-hour → <b>¥0.0124</b> per tensor-TFLOP-hour",
		"<b>A100 80GB PCIe (MIG slice)</b> on RunPod", "memory 400 GB/s", "$0.50/GPU-hour (1 rented", "1m a run, unpriced (rests on 1 run)"} {
		if !strings.Contains(got, w) {
			t.Errorf("no %q in\n%s", w, got)
		}
	}
	if strings.Count(got, "per tensor-TFLOP-hour") != 1 {
		t.Errorf("a card without a tensor figure has a price per unit:\n%s", got)
	}
}
