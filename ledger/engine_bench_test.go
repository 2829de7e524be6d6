package ledger

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// benchBook is one user with 1,000 rentals and 100,000 events in total
// over two months in a zone with a DST change, with idle intervals,
// traffic, 100 volumes and 100 one-off charges.
func benchBook(b *testing.B) *Book {
	b.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	book := randomBook(rng, "America/New_York", start, 60*day, 1000, 100)
	n := 0
	for _, r := range book.Rentals {
		n += len(r.Events)
	}
	if n < 99_000 || n > 101_000 {
		b.Fatalf("bench book has %d events, want about 100,000", n)
	}
	return book
}

func BenchmarkStatementMonth(b *testing.B) {
	book := benchBook(b)
	loc := book.User.Location()
	from, to := MonthRange(time.Date(2026, 11, 15, 0, 0, 0, 0, loc), loc)
	b.ReportAllocs()
	for b.Loop() {
		if st := Spend(book, from, to); len(st.Rentals) == 0 {
			b.Fatal("empty month")
		}
	}
}

func BenchmarkStatementAsOf(b *testing.B) {
	book := benchBook(b)
	asOf := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		if st := StatementAsOf(book, asOf); len(st.Rentals) == 0 {
			b.Fatal("empty statement")
		}
	}
}

func BenchmarkDailySpend30(b *testing.B) {
	book := benchBook(b)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		DailySpend(book, 30, now)
	}
}

func BenchmarkBalances(b *testing.B) {
	book := benchBook(b)
	for _, p := range []string{"autodl", "runpod", "aws"} {
		book.TopUps = append(book.TopUps, TopUp{Platform: p, Amount: MustDecimal("1000"), Currency: CNY, At: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)})
	}
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		if len(Balances(book, now)) != 3 {
			b.Fatal("balances missing")
		}
	}
}

func BenchmarkRentalMeter(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(9, 10))
			r := randomRental(rng, "r", t0, 30*day, n)
			b.ReportAllocs()
			for b.Loop() {
				newRentalMeter(r, time.UTC)
			}
		})
	}
}
