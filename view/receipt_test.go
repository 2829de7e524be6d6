package view

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/perf"
)

func TestReceiptTexts(t *testing.T) {
	for _, err := range ReceiptTextsCheck() {
		t.Error(err)
	}
}

func TestReceiptNumbers(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{sig3(152.4), "152"}, {sig3(63.94), "63.9"}, {sig3(1979), "1980"}, {sig3(24), "24"},
		{sig3(0.0), "0"}, {sig3(7.5), "7.5"}, {sig3(99.96), "100"}, {sig3(0.01234), "0.0123"},
		{FormatTFLOPS(779.4), "779 TFLOPS"},
		{MemBandwidth(950), "0.95 TB/s"}, {MemBandwidth(4287), "4.29 TB/s"}, {MemBandwidth(288), "288 GB/s"},
		{DiskSpeed(1800), "1.8 GB/s"}, {DiskSpeed(350.4), "350 MB/s"},
		{PCIeLink(4, 16), "4.0 x16"}, {PCIeLink(5, 0), "5.0"}, {PCIeLink(0, 8), "x8"},
		{PerUnitText(big.NewRat(47, 3800), ledger.CNY), "¥0.0124"},
		{PerUnitText(big.NewRat(21234, 10000), ledger.USD), "$2.12"},
		{PerUnitText(big.NewRat(152345, 1000), ledger.CNY), "¥152.35"},
		{PerUnitText(big.NewRat(5, 1000), ledger.USD), "$0.00500"},
		{PerUnitText(big.NewRat(1, 76), ledger.CNY), "¥0.0132"},
		{pct(0.924), "92"}, {pct(0.745), "75"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// card4090 is the RTX 4090 on AutoDL, set against a reference by
// hand (a healthy card gives 165 TFLOPS with this bench, say), so that
// the words are tested apart from perf's table.
func card4090(bf16, limit float64) ledger.Receipt {
	r := &ledger.Rental{ID: 7, Name: "box1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Priced: true,
		Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour}, Currency: ledger.CNY}
	g := perf.GPU{Index: 0, Name: "NVIDIA GeForce RTX 4090", Model: "RTX 4090", BF16TFLOPS: bf16, FP16TFLOPS: bf16,
		FP32TFLOPS: 80, MemGBps: 950, H2DGBps: 24, D2HGBps: 25, PCIeGen: 4, PCIeGenMax: 4, PCIeWidth: 16, PCIeWidthMax: 16,
		PowerLimitW: limit, PowerDefaultW: 450}
	b := perf.Bench{Source: "cuda", WallSeconds: 1.2, GPUSeconds: 0.8, GPUs: []perf.GPU{g},
		Host:    perf.Host{CPUCores: 16, DiskWriteMBps: 1800, DiskReadMBps: 2100},
		Skipped: []perf.Skip{{What: "download_mbps", GPU: -1, Why: "no download URL set"}}}
	rc := ledger.Receipt{Rental: r, GPU: "RTX 4090", GPUCount: 1, Priced: true, Hourly: big.NewRat(188, 100),
		Bench:        &ledger.BenchRecord{ID: 1, RentalID: 7, At: time.Date(2026, 12, 3, 6, 5, 0, 0, time.UTC), Bench: b},
		TensorTFLOPS: bf16, SoFar: ledger.Money{Currency: ledger.CNY, Minor: 3}}
	rc.Assessment = perf.Assessment{GPUs: []perf.GPUCheck{{Index: 0, Model: "RTX 4090", Figures: []perf.Figure{
		{Name: "bf16_tflops", Value: bf16, Datasheet: 165.2, Healthy: 165, Ratio: bf16 / 165, Low: bf16/165 < 0.85},
		{Name: "mem_gbps", Value: 950, Datasheet: 1008, Healthy: 897, Ratio: 950.0 / 897},
	}}}}
	rc.PerTFLOPHour = new(big.Rat).Quo(rc.Hourly, new(big.Rat).SetFloat64(bf16))
	return rc
}

func TestReceiptCard(t *testing.T) {
	rc := card4090(152, 450)
	got := ReceiptCard(chat.LangEN, rc, "box1")
	want := "RTX 4090 on AutoDL (box1): tensor 152 TFLOPS (92 % of a healthy RTX 4090), memory 0.95 TB/s, PCIe 4.0 x16 24 GB/s, power 450/450 W, disk 1.8 GB/s, 16 cores · ¥1.88/h → ¥0.0124 per tensor-TFLOP-hour"
	if first := strings.Split(got, "\n")[0]; first != want {
		t.Errorf("card's line\n got %q\nwant %q", first, want)
	}
	for _, w := range []string{"Measured by the agent", "Not measured: download (no download URL set)"} {
		if !strings.Contains(got, w) {
			t.Errorf("card lacks %q:\n%s", w, got)
		}
	}
	zh := ReceiptCard(chat.LangZH, rc, "box1")
	for _, w := range []string{"健康 RTX 4090 的 92%", "每张量 TFLOP·小时 ¥0.0124", "仅为代理的声明", "未测：下载（no download URL set）"} {
		if !strings.Contains(zh, w) {
			t.Errorf("Chinese card lacks %q:\n%s", w, zh)
		}
	}
}

// TestReceiptCard_WarningFirst: a power-capped card is said first, with
// its evidence and the money at stake, before the line of figures.
func TestReceiptCard_WarningFirst(t *testing.T) {
	rc := card4090(122, 300)
	rc.Warnings = []ledger.ReceiptWarning{{
		Warning: perf.Warning{Code: perf.WarnSlowTensor, GPU: 0, Value: 122, Expected: 165, Cause: perf.WarnPowerCap},
		Model:   "RTX 4090",
		Because: &perf.Warning{Code: perf.WarnPowerCap, GPU: 0, Value: 300, Expected: 450},
		Share:   ledger.Money{Currency: ledger.CNY, Minor: 188}, Waste: ledger.Money{Currency: ledger.CNY, Minor: 49},
	}}
	got := ReceiptCard(chat.LangEN, rc, "box1")
	lines := strings.Split(got, "\n")
	want := "⚠ tensor 122 TFLOPS, 74 % of a healthy RTX 4090 (165); likely cause: power capped at 300 W of its default 450 W. You pay ¥1.88/h for 74 % of a healthy RTX 4090: ¥0.49/h of it buys nothing"
	if lines[0] != want {
		t.Errorf("first line\n got %q\nwant %q", lines[0], want)
	}
	if !strings.HasPrefix(lines[1], "RTX 4090 on AutoDL") {
		t.Errorf("second line %q, want the figures", lines[1])
	}
	zh := ReceiptCard(chat.LangZH, rc, "box1")
	if !strings.Contains(zh, "可能原因：功耗上限被压到 300 W（默认 450 W）") || !strings.Contains(zh, "¥0.49/小时 白花了") {
		t.Errorf("Chinese warning:\n%s", zh)
	}
}

// TestReceiptCard_NothingMeasured: a bench that could open no GPU still
// gives a card, saying what was not measured and why.
func TestReceiptCard_NothingMeasured(t *testing.T) {
	rc := card4090(152, 450)
	rc.Bench.Bench = perf.Bench{Source: "none", Host: perf.Host{CPUCores: 8},
		Skipped: []perf.Skip{{What: "gpu", GPU: -1, Why: "no CUDA driver: libcuda.so.1 not found"}}}
	rc.Assessment, rc.PerTFLOPHour, rc.TensorTFLOPS = perf.Assessment{}, nil, 0
	got := ReceiptCard(chat.LangEN, rc, "box1")
	for _, w := range []string{"the bench could measure no GPU", "8 cores", "Not measured: GPU (no CUDA driver: libcuda.so.1 not found)", " · ¥1.88/h"} {
		if !strings.Contains(got, w) {
			t.Errorf("card lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "per tensor-TFLOP-hour") {
		t.Errorf("a price per unit without a tensor figure:\n%s", got)
	}
}

func TestReceiptText(t *testing.T) {
	rc := card4090(152, 450)
	rc.Bench.Bounded = []string{"gpus[0].fp16_tflops"}
	rc.SetupTax = &ledger.SetupTax{From: time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC), To: time.Date(2026, 12, 3, 6, 31, 0, 0, time.UTC),
		Money: ledger.Money{Currency: ledger.CNY, Minor: 97}, Priced: true}
	rc.Jobs = []ledger.ReceiptJob{{Run: ledger.JobRun{Label: "yolo-epoch", Source: ledger.JobFromAgent, ExitCode: 0,
		StartedAt: time.Date(2026, 12, 3, 6, 40, 0, 0, time.UTC), EndedAt: time.Date(2026, 12, 3, 6, 52, 0, 0, time.UTC)},
		Cost: ledger.Money{Currency: ledger.CNY, Minor: 38}, Priced: true}}
	now := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	got := ReceiptText(chat.LangEN, rc, "box1", time.UTC, now)
	for _, w := range []string{
		"<b>Receipt of box1</b> · RTX 4090 on AutoDL",
		"tensor bf16 152 TFLOPS · healthy 165 TFLOPS · datasheet 165 TFLOPS · 92 %",
		"memory 0.95 TB/s · healthy 0.897 TB/s · datasheet 1.01 TB/s · 106 %",
		"disk write 1.8 GB/s, read 2.1 GB/s",
		"Not believed, shown as not measured: tensor fp16",
		"Price: ¥1.88/h → ¥0.0124 per tensor-TFLOP-hour",
		"So far: ¥0.03",
		"Setup tax: ¥0.97 before work started: 31m",
		"yolo-epoch", "12m · ¥0.38", "exit 0",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("/receipt lacks %q:\n%s", w, got)
		}
	}
	zh := ReceiptText(chat.LangZH, rc, "box1", time.UTC, now)
	for _, w := range []string{"box1 的测速收据", "准备成本：开始工作前花了 ¥0.97", "至今：¥0.03", "退出码 0"} {
		if !strings.Contains(zh, w) {
			t.Errorf("Chinese /receipt lacks %q:\n%s", w, zh)
		}
	}
}

func TestReceiptFollowUp(t *testing.T) {
	tax := ledger.SetupTax{From: time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC), To: time.Date(2026, 12, 3, 6, 31, 20, 0, time.UTC),
		Money: ledger.Money{Currency: ledger.CNY, Minor: 410}, Priced: true}
	sh, _ := time.LoadLocation("Asia/Shanghai")
	if got, want := ReceiptFollowUp(chat.LangEN, "box1", tax, sh), "<b>box1</b> started working at 14:31: ¥4.10 before training started (31m)."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := ReceiptFollowUp(chat.LangZH, "box1", tax, sh); !strings.Contains(got, "14:31 开始工作：开始训练前花了 ¥4.10（31分钟）") {
		t.Errorf("Chinese: %q", got)
	}
}

func TestNoReceiptText(t *testing.T) {
	for why, want := range map[NoReceipt]string{NoReceiptOff: "/settings bench=on", NoReceiptNoAgent: "/agent box1", NoReceiptYet: "gpuledger-agent bench"} {
		for _, lg := range []string{chat.LangEN, chat.LangZH} {
			if got := NoReceiptText(lg, "box1", why); !strings.Contains(got, want) {
				t.Errorf("%d %s: %q lacks %q", why, lg, got, want)
			}
		}
	}
}

// TestReceiptCard_Bounded: a bench with every list at the hub's bounds
// (16 GPUs with the longest names, 64 reasons of 256 bytes, a neighbour on
// every card) still makes one card within Telegram's 4096, which says
// how many it left to /receipt.
func TestReceiptCard_Bounded(t *testing.T) {
	long := strings.Repeat("x", 200)
	var b perf.Bench
	b.Source = "cuda"
	for i := range 16 {
		b.GPUs = append(b.GPUs, perf.GPU{Index: i, Name: "NVIDIA GeForce RTX 4090 " + long, Model: "RTX 4090",
			BF16TFLOPS: 100, MemGBps: 300, H2DGBps: 3, PowerLimitW: 200, PowerDefaultW: 450, OtherProcs: 9, MemoryUsedMiB: 20000, UtilPercent: 90})
	}
	for i := range 64 {
		b.Skipped = append(b.Skipped, perf.Skip{What: "fp16_tflops", GPU: i % 16, Why: long + long})
	}
	b, bounded := perf.Bound(b)
	r := &ledger.Rental{ID: 7, Name: "box1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 16, Mode: ledger.PerSecond, Priced: true,
		Price: ledger.Price{Amount: ledger.MustDecimal("30"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)}}}
	book := &ledger.Book{User: ledger.User{ID: 1, TZ: "UTC"}, Rentals: []*ledger.Rental{r}}
	rc := ledger.BuildReceipt(ledger.ReceiptInput{Book: book, Rental: r, Now: time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC),
		Benches: []ledger.BenchRecord{{Bench: b, Bounded: append(bounded, strings.Split(strings.Repeat("gpus[3].bf16_tflops,", 20), ",")[:20]...)}}})
	if len(rc.Warnings) <= cardWarnings {
		t.Fatalf("%d warnings: the test wants more than the card shows", len(rc.Warnings))
	}
	for _, lg := range []string{chat.LangEN, chat.LangZH} {
		got := ReceiptCard(lg, rc, "box1")
		if n := chat.UTF16Len(got); n > 4096 {
			t.Errorf("%s card is %d UTF-16 units, over Telegram's 4096", lg, n)
		}
		if !strings.Contains(got, "/receipt box1") || strings.Count(got, "⚠") != cardWarnings {
			t.Errorf("%s card does not say what it left out, or shows %d warnings:\n%s", lg, strings.Count(got, "⚠"), got)
		}
	}
}

// The hub keeps a forged bench's first bounded names and one "…+N" for
// the rest: the card counts N figures, not one.
func TestReceiptCard_BoundedMore(t *testing.T) {
	r := &ledger.Rental{ID: 7, Name: "box1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Priced: true,
		Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)}}}
	book := &ledger.Book{User: ledger.User{ID: 1, TZ: "UTC"}, Rentals: []*ledger.Rental{r}}
	card := func(bounded []string) string {
		b := perf.Bench{Source: "cuda", GPUs: []perf.GPU{{Index: 0, Name: "NVIDIA GeForce RTX 4090", Model: "RTX 4090"}}}
		rc := ledger.BuildReceipt(ledger.ReceiptInput{Book: book, Rental: r, Now: time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC),
			Benches: []ledger.BenchRecord{{Bench: b, Bounded: bounded}}})
		return ReceiptCard(chat.LangEN, rc, "box1")
	}
	names := func(n int) []string {
		var out []string
		for range n {
			out = append(out, "gpus[0].bf16_tflops")
		}
		return append(out, "…+400")
	}
	if got := card(names(2)); !strings.Contains(got, "…+400") || strings.Contains(got, "more: /receipt") {
		t.Errorf("two names and 400 more: the card should list both and say …+400:\n%s", got)
	}
	if got := card(names(10)); !strings.Contains(got, "…and 402 more: /receipt box1") {
		t.Errorf("ten names and 400 more, eight shown: the card should count 2 + 400 left out:\n%s", got)
	}
}
