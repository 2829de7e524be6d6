package view

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestQuoteCatalog(t *testing.T) {
	for _, err := range quoteTexts.Check() {
		t.Error(err)
	}
}

// TestQuoteText renders a quote built by ledger.Quote in both languages:
// a per-hour line with a day package, the user's runs and a bench.
func TestQuoteText(t *testing.T) {
	start := time.Date(2026, 11, 2, 2, 0, 0, 0, time.UTC)
	rental := func(id int64, name string, mode ledger.Mode, amount string, u ledger.Unit) *ledger.Rental {
		return &ledger.Rental{ID: id, Name: name, Platform: "featurize", GPU: "RTX 4090", GPUCount: 1, Mode: mode, Priced: true,
			Price: ledger.Price{Amount: ledger.MustDecimal(amount), Unit: u}, Currency: ledger.CNY,
			Events: []ledger.Event{{Kind: ledger.EventStart, At: start}, {Kind: ledger.EventRelease, At: start.Add(5 * time.Hour)}}}
	}
	f1 := rental(1, "f1", ledger.PerHour, "2", ledger.UnitHour)
	f2 := rental(2, "f2", ledger.AlwaysOn, "36", ledger.UnitDay)
	b := &ledger.Book{User: ledger.User{ID: 1, TZ: "Asia/Shanghai"}, Rentals: []*ledger.Rental{f1, f2}}
	jobs := []ledger.JobRun{{RentalID: 1, Label: "yolo", StartedAt: start, EndedAt: start.Add(50 * time.Minute), Source: ledger.JobFromChat}}
	lines := ledger.Quote(ledger.QuoteInput{GPU: "4090", Running: 150 * time.Minute, Stopped: 10 * time.Hour, Book: b, Jobs: jobs,
		At: start.Add(48 * time.Hour)})
	if len(lines) != 1 {
		t.Fatalf("lines %+v", lines)
	}
	lines[0].PerTFLOPHour, lines[0].TensorTFLOPS, lines[0].BenchFrom = big.NewRat(2, 150), 150, f1
	ask := QuoteAsk{GPU: "RTX 4090", GPUCount: 1, Running: 150 * time.Minute, Stopped: 10 * time.Hour}
	loc, _ := time.LoadLocation("Asia/Shanghai")
	for _, tc := range []struct {
		lang string
		want []string
	}{
		{"en", []string{"RTX 4090, 2h30m running, then 10h stopped", "<b>Featurize total ¥6.00</b> — your f1, Nov 2: ¥2.00/h a GPU, per-hour",
			"compute ¥6.00 (3h billed)",
			"a day package at ¥36.00 a GPU (your f2) beats paying by the hour after 18h of running a day; for this quote: ¥36.00",
			"your yolo took 50m a run on this card here (median of 1): 2h30m ≈ 3 runs, ¥1.67 a run",
			"tensor 150 TFLOPS a GPU (your f1's bench, the agent's measurement) → ¥0.01333 per tensor-TFLOP-hour"}},
		{"zh", []string{"RTX 4090，运行 2小时30分，之后关机 10小时", "<b>Featurize 合计 ¥6.00</b> —— 你的 f1，11月2日：单卡 ¥2.00/小时，按小时",
			"计算 ¥6.00（计费 3小时）", "包日单卡 ¥36.00（你的 f2）在一日内运行超过 18小时 就比按量便宜",
			"你的 yolo 在这里的这种卡上每次用时 50分钟（1 次的中位数）：2小时30分 约可跑 3 次，每次 ¥1.67",
			"每 TFLOP·小时 ¥0.01333"}},
	} {
		got := QuoteText(tc.lang, loc, lines, ask, nil)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q does not contain %q", tc.lang, got, w)
			}
		}
	}
}

func TestQuoteText_None(t *testing.T) {
	ask := QuoteAsk{GPU: "H100", GPUCount: 8, Running: time.Hour, Platform: "runpod", Command: "8xH100 1"}
	got := QuoteText("en", time.UTC, nil, ask, []string{"RunPod", "Vast.ai"})
	for _, w := range []string{"No price for 8×H100 on RunPod yet", "<code>/quote 8xH100 1 price=1.88 autodl</code>", "connect a platform (RunPod, Vast.ai)"} {
		if !strings.Contains(got, w) {
			t.Errorf("%q does not contain %q", got, w)
		}
	}
	if got := QuoteText("zh", time.UTC, nil, ask, nil); strings.Contains(got, "/connect") || !strings.Contains(got, "还没有 8×H100（RunPod）的价格") {
		t.Errorf("connections off, or not the Chinese words: %q", got)
	}
}
