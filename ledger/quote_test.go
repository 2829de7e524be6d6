package ledger

import (
	"math/big"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// qNow is when the quoted rentals would start: after every past rental.
var qNow = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

// past returns a released rental on platform of gpu, priced amount per
// u in cur, billed in mode, that ran a day from day d of November.
func past(name, platform, gpu string, count int, mode Mode, amount string, u Unit, cur Currency, d int) *Rental {
	r := newRental(name, mode, amount, u, cur, ev(EventStart, time.Duration(d)*day), ev(EventRelease, time.Duration(d+1)*day))
	r.Platform, r.GPU, r.GPUCount = platform, gpu, count
	return r
}

func quoteOne(t *testing.T, in QuoteInput) QuoteLine {
	t.Helper()
	ls := Quote(in)
	if len(ls) != 1 {
		t.Fatalf("got %d lines, want 1: %+v", len(ls), ls)
	}
	return ls[0]
}

func TestQuote_HandComputed(t *testing.T) {
	gb := func(s string) *Decimal { d := MustDecimal(s); return &d }
	tests := []struct {
		name    string
		rentals []*Rental
		volumes func(rs []*Rental) []*Volume
		in      QuoteInput
		billed  int64
		compute string
		storage string
		traffic string
		total   string
	}{
		{"a per-hour platform bills 2.5 h as 3 started hours: 3 × ¥2.00",
			[]*Rental{past("h1", "hourly", "RTX 4090", 1, PerHour, "2", UnitHour, "CNY", 1)}, nil,
			QuoteInput{GPU: "4090", Running: 150 * time.Minute}, 3 * 3600, "6.00", "0.00", "0.00", "6.00"},
		{"per second: 2.5 h at $0.69/h is $1.725, rounded once to $1.73",
			[]*Rental{past("rp", "runpod", "NVIDIA GeForce RTX 4090", 1, PerSecond, "0.69", UnitHour, "USD", 1)}, nil,
			QuoteInput{GPU: "RTX 4090", Running: 150 * time.Minute}, 9000, "1.73", "0.00", "0.00", "1.73"},
		{"a one-hour minimum bills 15 min as an hour: $3.00",
			[]*Rental{with(past("m1", "aws", "H100", 1, PerSecond, "3", UnitHour, "USD", 1), func(r *Rental) { r.Min = time.Hour })}, nil,
			QuoteInput{GPU: "h100", Running: 15 * time.Minute}, 3600, "3.00", "0.00", "0.00", "3.00"},
		{"storage while stopped: 100 GB at $0.10/GB/month for 10 h running and $0.20 for 50 h stopped = 1100/720 = $1.53; compute 10 × 0.69",
			[]*Rental{past("rp", "runpod", "RTX 4090", 1, PerSecond, "0.69", UnitHour, "USD", 1)},
			func(rs []*Rental) []*Volume {
				return []*Volume{{ID: 1, Name: "vol", RentalID: rs[0].ID, Platform: "runpod", Currency: "USD", Priced: true,
					Price: MustDecimal("0.10"), PriceUnit: PerGBMonth, StoppedPrice: MustDecimal("0.20"), HasStoppedPrice: true,
					Events: []VolumeEvent{{Kind: VolumeCreate, At: off(day), SizeGB: MustDecimal("100")}}}}
			},
			QuoteInput{GPU: "4090", Running: 10 * time.Hour, Stopped: 50 * time.Hour}, 36000, "6.90", "1.53", "0.00", "8.43"},
		{"traffic: 150 GB out with 100 GB free a month, the other 50 at $0.09 = $4.50",
			[]*Rental{with(past("a1", "aws", "A100", 1, PerSecond, "1", UnitHour, "USD", 1), func(r *Rental) {
				r.Traffic = TrafficTerms{Priced: true, PricePerGB: MustDecimal("0.09"), FreeGB: MustDecimal("100"), Direction: Out}
			})}, nil,
			QuoteInput{GPU: "a100", Running: time.Hour, TrafficGB: MustDecimal("150")}, 3600, "1.00", "0.00", "4.50", "5.50"},
		{"the asked size replaces the rental's: 200 GB above AutoDL's 50 free at ¥0.0066/GB/day for 24 h = ¥0.99",
			[]*Rental{past("box1", "autodl", "RTX 4090", 1, PerSecond, "1.88", UnitHour, "CNY", 1)}, nil,
			QuoteInput{GPU: "4090", Running: 24 * time.Hour, StorageGB: gb("200")}, 86400, "45.12", "0.99", "0.00", "46.11"},
		{"the rate of a 2-GPU rental is halved for one GPU: 2×A100 at $3.28/h → $1.64 an hour",
			[]*Rental{past("big", "runpod", "A100 80GB", 2, PerSecond, "3.28", UnitHour, "USD", 1)}, nil,
			QuoteInput{GPU: "A100-80G", Running: time.Hour}, 3600, "1.64", "0.00", "0.00", "1.64"},
		{"the latest price of the rental is the one quoted: ¥1.88 then ¥2.28",
			[]*Rental{with(past("box1", "autodl", "RTX 4090", 1, PerSecond, "1.88", UnitHour, "CNY", 1), func(r *Rental) {
				r.Events = []Event{r.Events[0], priceEv(day+hour, "2.28", UnitHour), r.Events[1]}
			})}, nil,
			QuoteInput{GPU: "4090", Running: time.Hour}, 3600, "2.28", "0.00", "0.00", "2.28"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bookOf(tt.rentals...)
			if tt.volumes != nil {
				b.Volumes = tt.volumes(tt.rentals)
			}
			in := tt.in
			in.Book, in.At = b, qNow
			l := quoteOne(t, in)
			if l.Source != QuoteFromRental || l.From != tt.rentals[0] {
				t.Errorf("source %s from %v, want the rental %s", l.Source, l.From, tt.rentals[0].Name)
			}
			if l.BilledSeconds != tt.billed {
				t.Errorf("billed %d s, want %d", l.BilledSeconds, tt.billed)
			}
			money(t, l.Compute, tt.compute)
			money(t, l.Storage, tt.storage)
			money(t, l.Traffic, tt.traffic)
			money(t, l.Total, tt.total)
			if !l.Priced() {
				t.Errorf("line not priced: %+v", l)
			}
		})
	}
}

func TestQuote_DayPackageBreakEven(t *testing.T) {
	hourly := past("f1", "featurize", "RTX 4090", 1, PerSecond, "2", UnitHour, "CNY", 1)
	pkg := past("f2", "featurize", "RTX 4090", 1, AlwaysOn, "36", UnitDay, "CNY", 3)
	l := quoteOne(t, QuoteInput{GPU: "4090", Running: 20 * time.Hour, Book: bookOf(hourly, pkg), At: qNow})
	if l.From != hourly {
		t.Fatalf("line from %v, want the hourly rental", l.From)
	}
	money(t, l.Total, "40.00") // 20 h × ¥2
	if l.Package == nil {
		t.Fatal("no package")
	}
	if l.Package.From != pkg || l.Package.PerGPU.Amount.String() != "36" || l.Package.PerGPU.Unit != UnitDay {
		t.Errorf("package %+v, want f2's ¥36/day", l.Package)
	}
	if l.Package.BreakEven != 18*time.Hour { // ¥36 ÷ ¥2/h
		t.Errorf("break-even %s, want 18h", l.Package.BreakEven)
	}
	money(t, l.Package.Total, "36.00") // 20 h fit in one day

	// 30 h running and 20 stopped: 50 h of wall time are 3 started days.
	l = quoteOne(t, QuoteInput{GPU: "4090", Running: 30 * time.Hour, Stopped: 20 * time.Hour, Book: bookOf(hourly, pkg), At: qNow})
	money(t, l.Package.Total, "108.00")
	money(t, l.Total, "60.00")

	// A package dearer than a whole day by the hour never beats it.
	dear := past("f3", "featurize", "RTX 4090", 1, AlwaysOn, "60", UnitDay, "CNY", 5)
	l = quoteOne(t, QuoteInput{GPU: "4090", Running: time.Hour, Book: bookOf(hourly, dear), At: qNow})
	if l.Package == nil || l.Package.BreakEven != 0 {
		t.Errorf("package %+v, want one that never breaks even", l.Package)
	}
}

func TestQuote_CurrenciesApartCheapestFirst(t *testing.T) {
	b := bookOf(
		past("rp", "runpod", "RTX 4090", 1, PerSecond, "0.69", UnitHour, "USD", 1),
		past("box1", "autodl", "RTX 4090", 1, PerSecond, "1.88", UnitHour, "CNY", 2),
		past("v1", "vast", "RTX 4090", 1, PerSecond, "0.40", UnitHour, "USD", 3),
		past("old", "vast", "RTX 4090", 1, PerSecond, "0.10", UnitHour, "USD", 0), // older: not the one quoted
		past("h", "runpod", "H100", 1, PerSecond, "0.01", UnitHour, "USD", 4),     // another model
	)
	ls := Quote(QuoteInput{GPU: "4090", Running: 10 * time.Hour, Book: b, At: qNow})
	want := []struct{ plat, cur, total string }{{"autodl", "CNY", "18.80"}, {"vast", "USD", "4.00"}, {"runpod", "USD", "6.90"}}
	if len(ls) != len(want) {
		t.Fatalf("got %d lines, want %d: %+v", len(ls), len(want), ls)
	}
	for i, w := range want {
		if ls[i].Platform != w.plat || string(ls[i].Currency) != w.cur || ls[i].Total.String() != w.total ||
			ls[i].Total.Currency != ls[i].Currency || ls[i].Compute.Currency != ls[i].Currency {
			t.Errorf("line %d: %s %s %s %s, want %s %s %s", i, ls[i].Platform, ls[i].Currency, ls[i].Total, ls[i].Total.Currency, w.plat, w.cur, w.total)
		}
	}
}

func TestQuote_GivenPrice(t *testing.T) {
	t.Run("on AutoDL's rules with the asked disk", func(t *testing.T) {
		size := MustDecimal("100")
		l := quoteOne(t, QuoteInput{GPU: "4090", Running: 10 * time.Hour, StorageGB: &size, At: qNow, Book: bookOf(),
			Price: &QuotePrice{Platform: "autodl", Price: Price{Amount: MustDecimal("1.88"), Unit: UnitHour}, Currency: "CNY"}})
		if l.Source != QuoteFromUser || l.Mode != PerSecond || l.StorageFrom != "profile" {
			t.Errorf("line %+v, want the user's price per second with AutoDL's storage price", l)
		}
		money(t, l.Compute, "18.80")
		money(t, l.Storage, "0.14") // 50 GB above the free 50 × ¥0.0066/day × 10/24 day = 0.1375
		money(t, l.Total, "18.94")
	})
	t.Run("beside the user's rental, per GPU for two", func(t *testing.T) {
		b := bookOf(past("box1", "autodl", "RTX 4090", 1, PerSecond, "1.88", UnitHour, "CNY", 1))
		ls := Quote(QuoteInput{GPU: "RTX 4090", GPUCount: 2, Running: time.Hour, At: qNow, Book: b,
			Price: &QuotePrice{Platform: "autodl", Price: Price{Amount: MustDecimal("1.5"), Unit: UnitHour}, Currency: "CNY"}})
		if len(ls) != 2 || ls[0].Source != QuoteFromUser || ls[1].Source != QuoteFromRental {
			t.Fatalf("lines %+v, want the given price (cheaper) then the rental", ls)
		}
		money(t, ls[0].Total, "3.00")
		money(t, ls[1].Total, "3.76")
	})
	t.Run("a day package given: 30 h running are 2 started days", func(t *testing.T) {
		l := quoteOne(t, QuoteInput{GPU: "4090", Running: 30 * time.Hour, At: qNow,
			Price: &QuotePrice{Platform: "featurize", Price: Price{Amount: MustDecimal("70"), Unit: UnitDay}, Currency: "CNY", Mode: AlwaysOn}})
		if l.Mode != AlwaysOn || l.BilledSeconds != 2*86400 {
			t.Errorf("mode %s billed %d s, want always-on, 2 days", l.Mode, l.BilledSeconds)
		}
		money(t, l.Total, "140.00")
	})
	t.Run("storage on a platform without a storage price is unpriced, not zero", func(t *testing.T) {
		size := MustDecimal("100")
		l := quoteOne(t, QuoteInput{GPU: "4090", Running: time.Hour, StorageGB: &size, TrafficGB: MustDecimal("10"), At: qNow,
			Price: &QuotePrice{Platform: "vast", Price: Price{Amount: MustDecimal("0.4"), Unit: UnitHour}, Currency: "USD"}})
		if l.StoragePriced || l.TrafficPriced || l.Priced() {
			t.Errorf("line %+v, want storage and traffic unpriced", l)
		}
		money(t, l.Total, "0.40")
	})
}

func TestQuote_NoPrice(t *testing.T) {
	b := bookOf(past("h", "runpod", "H100", 1, PerSecond, "2", UnitHour, "USD", 1))
	if ls := Quote(QuoteInput{GPU: "4090", Running: time.Hour, Book: b, At: qNow}); len(ls) != 0 {
		t.Errorf("got %+v, want no line for a model never rented and no price", ls)
	}
}

func TestQuote_OwnRunsAndBench(t *testing.T) {
	rp := past("rp", "runpod", "RTX 4090", 1, PerSecond, "0.69", UnitHour, "USD", 1)
	other := past("ad", "autodl", "RTX 4090", 1, PerSecond, "1.88", UnitHour, "CNY", 2)
	run := func(r *Rental, label string, d time.Duration, exit int) JobRun {
		s := r.StartedAt().Add(time.Hour)
		return JobRun{RentalID: r.ID, Label: label, StartedAt: s, EndedAt: s.Add(d), ExitCode: exit, Source: JobFromAgent}
	}
	jobs := []JobRun{
		run(rp, "yolo", 6*time.Minute, 0), run(rp, "yolo", 6*time.Minute+30*time.Second, 0),
		run(rp, "yolo", 5*time.Minute+30*time.Second, 0), run(rp, "yolo", time.Minute, 1), // failed: not counted
		run(other, "yolo", 60*time.Minute, 0), // another platform
	}
	benches := []BenchRecord{{RentalID: rp.ID, At: rp.StartedAt().Add(time.Minute),
		Bench: perf.Bench{Source: "cuda", GPUs: []perf.GPU{{Model: "RTX 4090", BF16TFLOPS: 150, FP16TFLOPS: 138}}}}}
	ls := Quote(QuoteInput{GPU: "4090", Running: time.Hour, Book: bookOf(rp, other), Jobs: jobs, Benches: benches, At: qNow})
	var l QuoteLine
	for _, x := range ls {
		if x.Platform == "runpod" {
			l = x
		}
	}
	if len(l.Runs) != 1 {
		t.Fatalf("runs %+v, want one label", l.Runs)
	}
	r := l.Runs[0]
	if r.Label != "yolo" || r.Median != 6*time.Minute || r.Count != 3 || r.Runs != 10 {
		t.Errorf("runs %+v, want yolo: median 6m of 3, 10 in an hour", r)
	}
	money(t, r.PerRun, "0.07") // $0.69 ÷ 10
	if l.TensorTFLOPS != 150 || l.PerTFLOPHour == nil || l.PerTFLOPHour.Cmp(big.NewRat(69, 15000)) != 0 {
		t.Errorf("tensor %v, per TFLOP-hour %v, want 150 and 0.69/150", l.TensorTFLOPS, l.PerTFLOPHour)
	}
	for _, x := range ls {
		if x.Platform == "autodl" && (x.PerTFLOPHour != nil || len(x.Runs) != 1 || x.Runs[0].Median != time.Hour) {
			t.Errorf("autodl line %+v: no bench there, its own run only", x)
		}
	}
}

// TestQuote_Extremes: the largest input the parser lets through gives
// sums, never a panic or an overflowed amount; a price beyond the
// ledger's bound once scaled gets no line.
func TestQuote_Extremes(t *testing.T) {
	big1 := past("big", "runpod", "H100", 1, PerSecond, "999999999", UnitMonth, "USD", 1)
	size := MaxSizeGB
	ls := Quote(QuoteInput{GPU: "h100", GPUCount: 1, Running: MaxQuoteHours * time.Hour, Stopped: MaxQuoteHours * time.Hour,
		StorageGB: &size, TrafficGB: MaxSizeGB, Book: bookOf(big1), At: qNow,
		Price: &QuotePrice{Platform: "aws", Price: Price{Amount: MustDecimal("999999999"), Unit: UnitSecond}, Currency: "USD"}})
	if len(ls) != 2 {
		t.Fatalf("lines %+v, want 2", ls)
	}
	for _, l := range ls {
		if l.Compute.Minor <= 0 || l.Total.Minor < l.Compute.Minor {
			t.Errorf("%s: compute %s total %s", l.Source, l.Compute, l.Total)
		}
	}
	// A year of 999999999 a month: 365 days are 73/6 months.
	money(t, ls[0].Compute, "12166666654.50") // 1e9 × 73/6 − 73/6
	if ls := Quote(QuoteInput{GPU: "h100", GPUCount: 64, Running: time.Hour, Book: bookOf(big1), At: qNow}); len(ls) != 0 {
		t.Errorf("64 GPUs at a billion each: %+v, want no line", ls)
	}
}

// A disk the user never priced is still the quote's disk: its size is
// kept and the line says storage has no price, never a 0 GB disk billed
// nothing and a total called whole.
func TestQuote_UnpricedDiskKeepsItsSize(t *testing.T) {
	r := past("v1", "vast", "RTX 4090", 1, PerSecond, "0.40", UnitHour, "USD", 1)
	b := bookOf(r)
	b.Volumes = []*Volume{{ID: 1, Name: "data", RentalID: r.ID, Platform: "vast", Currency: "USD",
		Events: []VolumeEvent{{Kind: VolumeCreate, At: off(day), SizeGB: MustDecimal("500")}}}}
	l := quoteOne(t, QuoteInput{GPU: "4090", Running: 10 * time.Hour, Book: b, At: qNow})
	if l.StorageGB.String() != "500" {
		t.Errorf("storage %s GB, want the rental's 500", l.StorageGB.String())
	}
	if l.Priced() {
		t.Errorf("line priced as whole with an unpriced 500 GB disk: %+v", l)
	}
	money(t, l.Compute, "4.00")
}

// A bench that measured 4 of 8 GPUs says what one GPU delivers: the
// quote's TFLOPS a GPU is the mean of those measured, not half of it.
func TestQuote_PartialBenchPerGPU(t *testing.T) {
	r := past("big", "runpod", "H200", 8, PerSecond, "28.8", UnitHour, "USD", 1)
	var gpus []perf.GPU
	for i := 0; i < 8; i++ {
		g := perf.GPU{Index: i, Model: "H200"}
		if i < 4 {
			g.BF16TFLOPS = 648
		}
		gpus = append(gpus, g)
	}
	l := quoteOne(t, QuoteInput{GPU: "h200", Running: time.Hour, Book: bookOf(r), At: qNow,
		Benches: []BenchRecord{{ID: 1, RentalID: r.ID, At: off(day + hour), Bench: perf.Bench{GPUs: gpus}}}})
	if l.TensorTFLOPS != 648 {
		t.Errorf("%v TFLOPS a GPU, want 648 (the mean of the 4 measured)", l.TensorTFLOPS)
	}
	// $3.60 a GPU-hour ÷ 648 TFLOPS
	if want := big.NewRat(360, 64800); l.PerTFLOPHour == nil || l.PerTFLOPHour.Cmp(want) != 0 {
		t.Errorf("per TFLOP-hour %v, want %s", l.PerTFLOPHour, want.FloatString(6))
	}
}
