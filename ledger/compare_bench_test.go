package ledger

import (
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// heavyUser is a heavy user's input to Compare: 300 rentals on 3
// platforms, each with a stop, a bench, a volume, 10 labelled runs (3000
// runs to price) and a first work.
func heavyUser() CompareInput {
	var in CompareInput
	book := bookOf()
	in.FirstWorks = map[int64]time.Time{}
	for i := range 300 {
		start := time.Duration(i) * day
		r := on([]string{"autodl", "vast", "runpod"}[i%3], newRental("r", PerSecond, "1.88", UnitHour, CNY, ev(EventStart, start), ev(EventStop, start+12*hour), ev(EventResume, start+13*hour), ev(EventRelease, start+20*hour)))
		book.Rentals = append(book.Rentals, r)
		v := volume("v", "200", "50", "0.0066", PerGBDay, CNY)
		v.ID, v.RentalID = r.ID, r.ID
		book.Volumes = append(book.Volumes, v)
		in.Benches = append(in.Benches, benchOf(r, start+min1, perf.GPU{Model: "RTX 4090", BF16TFLOPS: 150, MemGBps: 950}))
		in.FirstWorks[r.ID] = off(start + 30*min1)
		for j := range 10 {
			s := start + hour + time.Duration(j)*hour
			in.Runs = append(in.Runs, runOf(r, []string{"yolo", "mnist"}[j%2], s, s+40*min1, j%5/4, JobFromAgent))
		}
	}
	in.Book, in.Now = book, off(400*day)
	return in
}

// BenchmarkCompare: the heavy user's whole table.
func BenchmarkCompare(b *testing.B) {
	in := heavyUser()
	b.ReportAllocs()
	for b.Loop() {
		if t := Compare(in); len(t.Labels) != 2 {
			b.Fatal(t.Labels)
		}
	}
}

// BenchmarkCostOver_Runs: pricing the heavy user's 3000 runs, each with
// its own CostOver (each builds its rental's meters and scans the book's
// volumes) against one meter per rental, as Compare does.
func BenchmarkCostOver_Runs(b *testing.B) {
	in := heavyUser()
	byID := map[int64]*Rental{}
	for _, r := range in.Book.Rentals {
		byID[r.ID] = r
	}
	b.Run("each", func(b *testing.B) {
		for b.Loop() {
			for _, run := range in.Runs {
				if _, err := CostOver(in.Book, byID[run.RentalID], run.StartedAt, run.EndedAt); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("shared", func(b *testing.B) {
		for b.Loop() {
			c := &spanCosts{b: in.Book, by: map[*Rental]*spanMeter{}}
			for _, run := range in.Runs {
				if _, err := c.over(byID[run.RentalID], run.StartedAt, run.EndedAt); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
