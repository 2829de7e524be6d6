package ledger

import (
	"bytes"
	"encoding/csv"
	"math/rand/v2"
	"testing"
	"time"
)

// TestMonthDays: the days of a month (a DST month in New York, cut at now
// mid-month) add up exactly to Spend over the same window, and each day
// starts at local midnight.
func TestMonthDays(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatalf("load zone: %v", err)
	}
	from, _ := MonthRange(time.Date(2026, 11, 10, 0, 0, 0, 0, loc), loc)
	now := time.Date(2026, 11, 17, 13, 5, 7, 0, loc)
	for i := range 30 {
		b := randomBook(rng, "America/New_York", time.Date(2026, 10, 20, 0, 0, 0, 0, loc), 40*day, 5, 16)
		days := MonthDays(b, from, now)
		if len(days) != 17 {
			t.Fatalf("book %d: %d days from the 1st to the 17th", i, len(days))
		}
		if !days[0].Day.Equal(from) || !days[16].End.Equal(now) {
			t.Fatalf("book %d: days span %s..%s", i, days[0].Day, days[16].End)
		}
		for _, d := range days {
			if h, m, s := d.Day.In(loc).Clock(); h+m+s != 0 {
				t.Fatalf("book %d: day %s does not start at midnight", i, d.Day)
			}
		}
		want := Spend(b, from, now)
		for c, tot := range want.Totals {
			sum := newTotals(c)
			for _, d := range days {
				if dt, ok := d.Totals[c]; ok {
					for _, cat := range []Category{CategoryCompute, CategoryStorage, CategoryTraffic, CategoryOther} {
						sum.add(cat, dt.Of(cat))
					}
				}
			}
			for _, cat := range []Category{CategoryCompute, CategoryStorage, CategoryTraffic, CategoryOther, ""} {
				if sum.Of(cat) != tot.Of(cat) {
					t.Fatalf("book %d %s %s: days sum to %s, Spend says %s", i, c, cat, sum.Of(cat), tot.Of(cat))
				}
			}
		}
	}
	if MonthDays(&Book{}, now, now) != nil {
		t.Error("an empty window has days")
	}
}

// TestWriteExportCSVPeriod: the period export has the export's columns,
// only the lines active in the window, the window's charges, and totals
// equal to Spend's; the same window twice gives the same bytes.
func TestWriteExportCSVPeriod(t *testing.T) {
	b, asOf := designBook(t)
	loc := b.User.Location()
	// An old rental released before the window must not appear.
	old := &Rental{ID: 2, Name: "old", Platform: "autodl", GPU: "A100", GPUCount: 1, Mode: PerSecond,
		Priced: true, Price: Price{MustDecimal("3"), UnitHour}, Currency: CNY,
		Events: []Event{{Kind: EventStart, At: asOf.Add(-40 * day)}, {Kind: EventRelease, At: asOf.Add(-39 * day)}}}
	b.Rentals = append(b.Rentals, old)
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, loc)
	var buf bytes.Buffer
	if err := WriteExportCSVPeriod(&buf, b, from, asOf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil {
		t.Fatalf("read csv: %v", err)
	}
	if got, want := len(recs[0]), len(ExportCSVColumns); got != want {
		t.Fatalf("header has %d columns, want %d", got, want)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	st := Spend(b, from, asOf)
	var rentals, totals int
	for _, r := range recs[1:] {
		switch r[col["record"]] {
		case "rental":
			rentals++
			if r[col["name"]] != "box1" {
				t.Errorf("rental %q is in the window's export", r[col["name"]])
			}
		case "volume":
			// one day of 150 GB at 0.0066/GB/day: 0.99
			if r[col["charge"]] != "0.99" {
				t.Errorf("volume charge %s, want the window's 0.99", r[col["charge"]])
			}
		case "total":
			totals++
			if got, want := r[col["total"]], st.Total(CNY).Total.String(); got != want {
				t.Errorf("total %s, Spend says %s", got, want)
			}
		}
		if r[col["as_of"]] != asOf.Format(time.RFC3339) {
			t.Errorf("as_of %s, want %s", r[col["as_of"]], asOf.Format(time.RFC3339))
		}
	}
	if rentals != 1 || totals != 1 {
		t.Errorf("%d rental and %d total rows, want 1 and 1", rentals, totals)
	}
	var again bytes.Buffer
	if err := WriteExportCSVPeriod(&again, b, from, asOf); err != nil || !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Errorf("a second export differs (err %v)", err)
	}
	if err := WriteExportCSVPeriod(&again, b, asOf, from); err == nil {
		t.Error("a window that ends before it starts was exported")
	}
}

// TestBurnPerHour: running rentals and live volumes burn, per currency;
// stopped, released and not yet started ones do not.
func TestBurnPerHour(t *testing.T) {
	b, asOf := designBook(t)
	stopped := &Rental{ID: 3, Name: "st", Platform: "vast", Mode: PerSecond, Priced: true, Price: Price{MustDecimal("0.5"), UnitHour}, Currency: USD,
		Events: []Event{{Kind: EventStart, At: asOf.Add(-2 * time.Hour)}, {Kind: EventStop, At: asOf.Add(-time.Hour)}}}
	usd := &Rental{ID: 4, Name: "u", Platform: "vast", Mode: PerSecond, Priced: true, Price: Price{MustDecimal("0.35"), UnitHour}, Currency: USD,
		Events: []Event{{Kind: EventStart, At: asOf.Add(-time.Hour)}}}
	later := &Rental{ID: 5, Name: "later", Platform: "vast", Mode: PerSecond, Priced: true, Price: Price{MustDecimal("9"), UnitHour}, Currency: USD,
		Events: []Event{{Kind: EventStart, At: asOf.Add(time.Hour)}}}
	b.Rentals = append(b.Rentals, stopped, usd, later)
	got := BurnPerHour(b, asOf)
	// box1 1.88/h + data1 150 GB × 0.0066/GB/day / 24 = 1.92125 → 1.92
	if got[CNY].String() != "1.92" || got[USD].String() != "0.35" || len(got) != 2 {
		t.Errorf("burn %v, want CNY 1.92 and USD 0.35", got)
	}
	if n := len(BurnPerHour(&Book{}, asOf)); n != 0 {
		t.Errorf("an empty book burns in %d currencies", n)
	}
}
