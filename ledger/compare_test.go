package ledger

import (
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

func benchOf(r *Rental, at time.Duration, gpus ...perf.GPU) BenchRecord {
	return BenchRecord{RentalID: r.ID, UserID: 1, At: off(at), Bench: perf.Bench{Source: "simulate", GPUs: gpus}}
}

func on(platform string, r *Rental) *Rental { r.Platform = platform; return r }

func runOf(r *Rental, label string, from, to time.Duration, exit int, src JobSource) JobRun {
	return JobRun{RentalID: r.ID, UserID: 1, Label: label, StartedAt: off(from), EndedAt: off(to), ExitCode: exit, Source: src}
}

// TestCompare: the user's own table from a hand-made book, each figure
// worked out by hand. Two platforms rent the same card in CNY, a third
// in USD (kept apart, never converted); a MIG slice has its own row; a
// bench without a tensor figure gives no price per unit; failed runs are
// counted apart and priced runs are the rental's cost over the run.
func TestCompare(t *testing.T) {
	a1 := on("autodl", newRental("a1", PerSecond, "1.88", UnitHour, CNY, ev(EventStart, 0)))
	a2 := on("autodl", newRental("a2", PerSecond, "2.00", UnitHour, CNY, ev(EventStart, day)))
	a2x := on("autodl", with(newRental("a2x", PerSecond, "3.76", UnitHour, CNY, ev(EventStart, 0)), func(r *Rental) { r.GPUCount = 2 }))
	f1 := on("featurize", newRental("f1", PerSecond, "1.60", UnitHour, CNY, ev(EventStart, 0)))
	v1 := on("vast", newRental("v1", PerSecond, "0.40", UnitHour, USD, ev(EventStart, 0)))
	mig := on("autodl", with(newRental("mig", PerSecond, "1.00", UnitHour, CNY, ev(EventStart, 0)), func(r *Rental) { r.GPU = "A100" }))
	whole := on("autodl", with(newRental("whole", PerSecond, "5.00", UnitHour, CNY, ev(EventStart, 0)), func(r *Rental) { r.GPU = "A100" }))
	g3090 := on("autodl", with(newRental("g3090", PerSecond, "1.20", UnitHour, CNY, ev(EventStart, 0)), func(r *Rental) { r.GPU = "RTX 3090" }))
	free := on("autodl", with(newRental("free", PerSecond, "0", UnitHour, CNY, ev(EventStart, 0)), func(r *Rental) { r.GPU = "RTX 3090"; r.Priced = false }))

	g4090 := func(bf16, mem float64) perf.GPU {
		return perf.GPU{Name: "NVIDIA GeForce RTX 4090", Model: "RTX 4090", BF16TFLOPS: bf16, FP32TFLOPS: 80, MemGBps: mem, H2DGBps: 24, PCIeGen: 4, PCIeWidth: 16}
	}
	in := CompareInput{
		Book: bookOf(a1, a2, a2x, f1, v1, mig, whole, g3090, free),
		Benches: []BenchRecord{
			benchOf(a1, time.Minute, g4090(152, 950)),
			benchOf(a1, time.Hour, g4090(10, 10)), // a later bench: the first one counts
			benchOf(a2, day+time.Minute, g4090(148, 930)),
			benchOf(a2x, time.Minute, g4090(150, 940), g4090(150, 940)),
			benchOf(f1, time.Minute, g4090(120, 900)),
			benchOf(v1, time.Minute, g4090(160, 1000)),
			benchOf(mig, time.Minute, perf.GPU{Name: "NVIDIA A100 80GB PCIe", Model: "A100 80GB PCIe", MIG: true, BF16TFLOPS: 40}),
			benchOf(g3090, time.Minute, perf.GPU{Model: "RTX 3090", MemGBps: 850}),
		},
		Runs: []JobRun{
			runOf(a1, "yolo-epoch", hour, hour+10*min1, 0, JobFromAgent),
			runOf(a1, "yolo-epoch", 2*hour, 2*hour+12*min1, 0, JobFromAgent),
			runOf(a1, "yolo-epoch", 3*hour, 3*hour+3*min1, 1, JobFromAgent), // failed
			runOf(f1, "yolo-epoch", hour, hour+8*min1, 0, JobFromChat),
			runOf(v1, "yolo-epoch", hour, hour+9*min1, 0, JobFromAgent),
			runOf(v1, "", 2*hour, 3*hour, 0, JobFromAgent), // unlabelled: not in any table
			runOf(a1, "mnist", 5*hour, 5*hour+2*min1, 2, JobFromAgent),
		},
		FirstWorks: map[int64]time.Time{a1.ID: off(31 * min1), a2.ID: off(day + 15*min1), v1.ID: off(6 * min1)},
		Now:        off(10 * day),
	}
	tab := Compare(in)

	type card struct {
		platform, gpu string
		mig           bool
		cur           Currency
		rentals, ben  int
		tensor, mem   float64
		pcie          [2]int
		priced        int
		hour          string
		perUnitN      int
		perUnit       string
	}
	want := []card{
		// ¥1.88/152 = 0.01236842, ¥2.00/148 = 0.01351351, ¥3.76/300 = 0.01253333: median 0.01253333
		{"autodl", "RTX 4090", false, CNY, 3, 3, 150, 940, [2]int{4, 16}, 3, "1.88", 3, "0.01253333"},
		// ¥1.60/120 = 0.01333333
		{"featurize", "RTX 4090", false, CNY, 1, 1, 120, 900, [2]int{4, 16}, 1, "1.6", 1, "0.01333333"},
		// a MIG slice: ¥1.00/40 = 0.025, its own row
		{"autodl", "A100 80GB PCIe", true, CNY, 1, 1, 40, 0, [2]int{}, 1, "1", 1, "0.025"},
		{"autodl", "A100", false, CNY, 1, 0, 0, 0, [2]int{}, 1, "5", 0, "0"},
		// no tensor figure: no price per unit; the unpriced rental has no hourly price
		{"autodl", "RTX 3090", false, CNY, 2, 1, 0, 850, [2]int{}, 1, "1.2", 0, "0"},
		// USD apart: $0.40/160 = 0.0025
		{"vast", "RTX 4090", false, USD, 1, 1, 160, 1000, [2]int{4, 16}, 1, "0.4", 1, "0.0025"},
	}
	if len(tab.Cards) != len(want) {
		t.Fatalf("%d card rows, want %d: %+v", len(tab.Cards), len(want), tab.Cards)
	}
	for i, w := range want {
		g := tab.Cards[i]
		if g.Platform != w.platform || g.GPU != w.gpu || g.MIG != w.mig || g.Currency != w.cur {
			t.Errorf("row %d is %s %s mig=%v %s, want %s %s mig=%v %s", i, g.Platform, g.GPU, g.MIG, g.Currency, w.platform, w.gpu, w.mig, w.cur)
			continue
		}
		if g.Rentals != w.rentals || g.Benched != w.ben || g.TensorTFLOPS != w.tensor || g.MemGBps != w.mem || [2]int{g.PCIeGen, g.PCIeWidth} != w.pcie {
			t.Errorf("row %d: rentals %d benched %d tensor %v mem %v pcie %d x%d, want %+v", i, g.Rentals, g.Benched, g.TensorTFLOPS, g.MemGBps, g.PCIeGen, g.PCIeWidth, w)
		}
		if g.PricedRentals != w.priced || g.HourPerGPU.String() != w.hour || g.PerUnitRentals != w.perUnitN || g.PerTFLOPHour.String() != w.perUnit {
			t.Errorf("row %d: priced %d at %s/GPU-h, per unit %d at %s; want %d at %s, %d at %s", i,
				g.PricedRentals, g.HourPerGPU, g.PerUnitRentals, g.PerTFLOPHour, w.priced, w.hour, w.perUnitN, w.perUnit)
		}
	}

	// Setup: autodl 31 and 15 min (¥0.97, ¥0.50): median 23 min, ¥0.735;
	// vast 6 min at $0.40/h: $0.04.
	wantSetup := []SetupRow{
		{Platform: "autodl", Currency: CNY, Rentals: 2, Time: 23 * min1, Priced: 2, Money: MustDecimal("0.735")},
		{Platform: "vast", Currency: USD, Rentals: 1, Time: 6 * min1, Priced: 1, Money: MustDecimal("0.04")},
	}
	if len(tab.Setup) != len(wantSetup) {
		t.Fatalf("setup %+v", tab.Setup)
	}
	for i, w := range wantSetup {
		g := tab.Setup[i]
		if g.Platform != w.Platform || g.Currency != w.Currency || g.Rentals != w.Rentals || g.Time != w.Time || g.Priced != w.Priced || g.Money.Cmp(w.Money) != 0 {
			t.Errorf("setup %d = %+v, want %+v", i, g, w)
		}
	}

	if got := tab.LabelNames(); len(got) != 2 || got[0] != "mnist" || got[1] != "yolo-epoch" {
		t.Fatalf("labels %v", got)
	}
	yolo, ok := tab.Label("yolo-epoch")
	if !ok || yolo.Runs != 4 || yolo.Failed != 1 {
		t.Fatalf("yolo-epoch: %+v", yolo)
	}
	wantRows := []LabelRow{
		// 8 min at ¥1.60/h = ¥0.2133: the cheapest CNY run first
		{Platform: "featurize", GPU: "RTX 4090", Currency: CNY, Runs: 1, Time: 8 * min1, Priced: 1, Money: MustDecimal("0.21")},
		// 10 and 12 min at ¥1.88/h = ¥0.31 and ¥0.38: median 11 min, ¥0.345; the failed run apart
		{Platform: "autodl", GPU: "RTX 4090", Currency: CNY, Runs: 2, Failed: 1, Time: 11 * min1, Priced: 2, Money: MustDecimal("0.345")},
		// 9 min at $0.40/h = $0.06
		{Platform: "vast", GPU: "RTX 4090", Currency: USD, Runs: 1, Time: 9 * min1, Priced: 1, Money: MustDecimal("0.06")},
	}
	if len(yolo.Rows) != len(wantRows) {
		t.Fatalf("yolo rows %+v", yolo.Rows)
	}
	for i, w := range wantRows {
		g := yolo.Rows[i]
		if g.Platform != w.Platform || g.GPU != w.GPU || g.Currency != w.Currency || g.Runs != w.Runs || g.Failed != w.Failed ||
			g.Time != w.Time || g.Priced != w.Priced || g.Money.Cmp(w.Money) != 0 {
			t.Errorf("yolo row %d = %+v, want %+v", i, g, w)
		}
	}
	mn, _ := tab.Label("mnist")
	if len(mn.Rows) != 1 || mn.Rows[0].Runs != 0 || mn.Rows[0].Failed != 1 || mn.Runs != 0 || mn.Failed != 1 {
		t.Errorf("mnist (one failed run) = %+v", mn)
	}
	if tab.Empty() {
		t.Error("a table with benches is empty")
	}
	if _, ok := tab.Label("nope"); ok {
		t.Error("an unknown label found")
	}
}

// TestCompare_Ties: rows that tie on every figure come in the order of
// their platform, whatever the order of the input, so a reply never
// changes between two sends.
func TestCompare_Ties(t *testing.T) {
	x := on("zeta", newRental("x", PerSecond, "1", UnitHour, CNY, ev(EventStart, 0)))
	y := on("alpha", newRental("y", PerSecond, "1", UnitHour, CNY, ev(EventStart, 0)))
	for _, rentals := range [][]*Rental{{x, y}, {y, x}} {
		in := CompareInput{
			Book:    bookOf(rentals...),
			Benches: []BenchRecord{benchOf(x, min1, perf.GPU{Model: "RTX 4090", BF16TFLOPS: 100}), benchOf(y, min1, perf.GPU{Model: "RTX 4090", BF16TFLOPS: 100})},
			Runs:    []JobRun{runOf(x, "l", hour, 2*hour, 0, JobFromChat), runOf(y, "l", hour, 2*hour, 0, JobFromChat)},
			Now:     off(day),
		}
		tab := Compare(in)
		if len(tab.Cards) != 2 || tab.Cards[0].Platform != "alpha" || tab.Cards[1].Platform != "zeta" {
			t.Errorf("cards %+v", tab.Cards)
		}
		l, _ := tab.Label("l")
		if len(l.Rows) != 2 || l.Rows[0].Platform != "alpha" {
			t.Errorf("label rows %+v", l.Rows)
		}
	}
}

// TestCompare_Empty: a user with rentals but no bench and no labelled run
// has an empty table (the chat then says how to get one).
func TestCompare_Empty(t *testing.T) {
	r := newRental("x", PerSecond, "1", UnitHour, CNY, ev(EventStart, 0))
	tab := Compare(CompareInput{Book: bookOf(r), Runs: []JobRun{runOf(r, "", 0, hour, 0, JobFromAgent)}, Now: off(day)})
	if !tab.Empty() || len(tab.Cards) != 1 || tab.Cards[0].Benched != 0 {
		t.Errorf("table %+v", tab)
	}
	if !Compare(CompareInput{}).Empty() {
		t.Error("nothing is not empty")
	}
}
