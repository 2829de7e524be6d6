package ledger_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestParseRentalRef(t *testing.T) {
	ok := map[string]string{
		"yolo@2026-11-02":   "yolo@2026-11-02",
		"yolo@2026-11-02#1": "yolo@2026-11-02",
		"yolo@2026-11-02#2": "yolo@2026-11-02#2",
		"训练@2026-02-28#12":  "训练@2026-02-28#12",
	}
	for in, want := range ok {
		ref, err := ledger.ParseRentalRef(in)
		if err != nil || ref.String() != want {
			t.Errorf("ParseRentalRef(%q) = %v, %v; want %s", in, ref, err, want)
		}
	}
	for _, in := range []string{"yolo", "yolo@", "yolo@2026-13-45", "yolo@2026-02-30", "yolo@2026-1-2", "yolo@2026-11-02#0",
		"yolo@2026-11-02#", "yolo@2026-11-02#02", "yolo@2026-11-02#1000", "@2026-11-02", "yo lo@2026-11-02", "yolo@@2026-11-02"} {
		if _, err := ledger.ParseRentalRef(in); ledger.ErrorCode(err) != ledger.EINVALID {
			t.Errorf("ParseRentalRef(%q) = %v, want invalid", in, err)
		}
	}
}

func TestRentalRefs(t *testing.T) {
	sh, _ := time.LoadLocation("Asia/Shanghai")
	rent := func(id int64, name string, start time.Time) *ledger.Rental {
		return &ledger.Rental{ID: id, Name: name, Events: []ledger.Event{{Kind: ledger.EventStart, At: start}}}
	}
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	a := rent(1, "yolo", day.Add(-2*time.Hour)) // Nov 2 06:00 in Shanghai, Nov 1 22:00 UTC
	b := rent(2, "yolo", day.Add(20*time.Hour)) // Nov 3 04:00 in Shanghai
	c := rent(3, "yolo", day.Add(23*time.Hour)) // Nov 3 07:00 in Shanghai
	d := rent(4, "box1", day)
	rs := []*ledger.Rental{c, a, d, b}
	refs := ledger.RentalRefs(rs, sh)
	want := map[*ledger.Rental]string{a: "yolo@2026-11-02", b: "yolo@2026-11-03", c: "yolo@2026-11-03#2"}
	if len(refs) != len(want) {
		t.Fatalf("RentalRefs = %v, want %v (a name used once has no address shown)", refs, want)
	}
	for x, w := range want {
		if refs[x] != w {
			t.Errorf("ref of %d = %q, want %q", x.ID, refs[x], w)
		}
		ref, err := ledger.ParseRentalRef(w)
		if err != nil || ledger.PickRental(rs, ref, sh) != x {
			t.Errorf("PickRental(%s) is not rental %d", w, x.ID)
		}
	}
	if got := ledger.RefOf(rs, a, time.UTC); got != "yolo@2026-11-01" {
		t.Errorf("in UTC a is %s, want yolo@2026-11-01", got)
	}
	if got := ledger.Label(rs, d, sh); got != "box1" {
		t.Errorf("Label(box1) = %s", got)
	}
	if ref, _ := ledger.ParseRentalRef("yolo@2026-11-03#3"); ledger.PickRental(rs, ref, sh) != nil {
		t.Error("a third yolo of Nov 3 was found")
	}
}

// TestRentalRefs_MatchRefOf: the grouped RentalRefs gives every rental of
// a shared name the address RefOf gives it alone, on a book where names
// repeat within days and across them.
func TestRentalRefs_MatchRefOf(t *testing.T) {
	rs := refBook(600, 20)
	loc, _ := time.LoadLocation("America/New_York")
	refs := ledger.RentalRefs(rs, loc)
	if len(refs) != len(rs) {
		t.Fatalf("RentalRefs gave %d addresses for %d rentals of 20 names", len(refs), len(rs))
	}
	seen := map[string]bool{}
	for _, r := range rs {
		if want := ledger.RefOf(rs, r, loc); refs[r] != want {
			t.Fatalf("rental %d: RentalRefs %q, RefOf %q", r.ID, refs[r], want)
		}
		if seen[refs[r]] {
			t.Fatalf("address %s given twice", refs[r])
		}
		seen[refs[r]] = true
	}
}

// refBook is n rentals over 30 days sharing names names, several a day.
func refBook(n, names int) []*ledger.Rental {
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	rs := make([]*ledger.Rental, n)
	for i := range rs {
		at := start.Add(time.Duration(i*7919%(30*24*60)) * time.Minute)
		rs[i] = &ledger.Rental{ID: int64(i + 1), Name: fmt.Sprintf("box%d", i%names),
			Events: []ledger.Event{{Kind: ledger.EventStart, At: at}}}
	}
	return rs
}

// BenchmarkRentalRefs: the addresses of a book of 10,000 rentals over 100
// names, grouped (RentalRefs) against RefOf for each rental (the naive
// way, each a pass over the book).
func BenchmarkRentalRefs(b *testing.B) {
	rs := refBook(10_000, 100)
	loc, _ := time.LoadLocation("America/New_York")
	b.Run("grouped", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ledger.RentalRefs(rs, loc)
		}
	})
	b.Run("naive", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, r := range rs {
				ledger.RefOf(rs, r, loc)
			}
		}
	})
}
