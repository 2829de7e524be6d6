package ledger

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/internal/clip"
)

// A rental's address tells it from the other rentals of the same name: a
// name is free again once its rental is released, so "yolo" may have been
// three rentals over a year, and the bare name reaches only the unreleased
// one (else the newest). The address is NAME@YYYY-MM-DD, the day the rental
// started in the user's zone, and NAME@YYYY-MM-DD#N for the Nth of that
// name started that day (in order of start, then of creation; #1 is the
// same as no number). It needs no number the user never saw, reads as what
// the user remembers ("the yolo of Nov 2"), and is what /status, /spend
// and the export show beside a shared name.

// RentalRef is a parsed rental address.
type RentalRef struct {
	Name  string
	Year  int
	Month time.Month
	Day   int
	N     int // 1 for the first rental of the name started that day
}

// maxRefN bounds the #N of an address: nobody starts a thousand rentals
// of one name in a day.
const maxRefN = 999

// IsRentalRef reports whether s is written as an address (holds '@'),
// rather than as a bare name.
func IsRentalRef(s string) bool { return strings.Contains(s, "@") }

// ParseRentalRef reads NAME@YYYY-MM-DD[#N]. Errors: EINVALID "bad_name"
// or "name_length" for the name part, "bad_rental_ref" for anything else
// (a missing or impossible date such as 2026-13-45, a bad #N).
func ParseRentalRef(s string) (RentalRef, error) {
	name, rest, ok := strings.Cut(s, "@")
	if !ok {
		return RentalRef{}, Errorc(EINVALID, "bad_rental_ref", clip.Runes(s, 60, "…"))
	}
	if err := ValidateName(name); err != nil {
		return RentalRef{}, err
	}
	date, num, hasNum := strings.Cut(rest, "#")
	d, err := time.Parse(time.DateOnly, date)
	if err != nil || d.Format(time.DateOnly) != date {
		return RentalRef{}, Errorc(EINVALID, "bad_rental_ref", clip.Runes(s, 60, "…"))
	}
	ref := RentalRef{Name: name, Year: d.Year(), Month: d.Month(), Day: d.Day(), N: 1}
	if hasNum {
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 || n > maxRefN || strconv.Itoa(n) != num {
			return RentalRef{}, Errorc(EINVALID, "bad_rental_ref", clip.Runes(s, 60, "…"))
		}
		ref.N = n
	}
	return ref, nil
}

// String writes the address in its canonical form (#1 left out).
func (r RentalRef) String() string {
	s := r.Name + "@" + r.Date()
	if r.N > 1 {
		s += "#" + strconv.Itoa(r.N)
	}
	return s
}

// Date is the address's day, YYYY-MM-DD.
func (r RentalRef) Date() string {
	return time.Date(r.Year, r.Month, r.Day, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
}

// Begins returns the start of the address's day in loc.
func (r RentalRef) Begins(loc *time.Location) time.Time {
	return time.Date(r.Year, r.Month, r.Day, 0, 0, 0, 0, loc)
}

// refOrder sorts rentals of one name by start, then by creation (ID).
func refOrder(a, b *Rental) int {
	if c := a.StartedAt().Compare(b.StartedAt()); c != 0 {
		return c
	}
	switch {
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

// dayOf is the day t falls on in loc, as an address writes it.
func dayOf(t time.Time, loc *time.Location) string {
	return t.In(loc).Format(time.DateOnly)
}

// PickRental returns the rental among rs that ref addresses, its day read
// in loc, or nil.
func PickRental(rs []*Rental, ref RentalRef, loc *time.Location) *Rental {
	var same []*Rental
	for _, r := range rs {
		if r.Name == ref.Name && len(r.Events) > 0 && dayOf(r.StartedAt(), loc) == ref.Date() {
			same = append(same, r)
		}
	}
	slices.SortFunc(same, refOrder)
	if ref.N < 1 || ref.N > len(same) {
		return nil
	}
	return same[ref.N-1]
}

// RefOf returns x's address among rs (which may hold any rentals of the
// user; those of other names are ignored), its day read in loc.
func RefOf(rs []*Rental, x *Rental, loc *time.Location) string {
	day := dayOf(x.StartedAt(), loc)
	n := 1
	for _, r := range rs {
		if r != x && r.Name == x.Name && len(r.Events) > 0 && dayOf(r.StartedAt(), loc) == day && refOrder(r, x) < 0 {
			n++
		}
	}
	ref := x.Name + "@" + day
	if n > 1 {
		ref += "#" + strconv.Itoa(n)
	}
	return ref
}

// RentalRefs returns the address of every rental in rs whose name another
// rental in rs has too, keyed by the rental: the listings show it beside
// those names, and only those (a name used once is its own address). It
// reads each rental's day once and sorts within a name, so a book of
// thousands of rentals costs what grouping them does; nil when no name is
// shared.
func RentalRefs(rs []*Rental, loc *time.Location) map[*Rental]string {
	// Most books share no name: count first, and group only the shared.
	count := make(map[string]int, len(rs))
	shared := false
	for _, r := range rs {
		if len(r.Events) > 0 {
			count[r.Name]++
			shared = shared || count[r.Name] > 1
		}
	}
	if !shared {
		return nil
	}
	byName := map[string][]*Rental{}
	for _, r := range rs {
		if len(r.Events) > 0 && count[r.Name] > 1 {
			byName[r.Name] = append(byName[r.Name], r)
		}
	}
	type dayed struct {
		r   *Rental
		day string
	}
	out := map[*Rental]string{}
	var ds []dayed
	for _, g := range byName {
		ds = ds[:0]
		for _, r := range g {
			ds = append(ds, dayed{r, dayOf(r.StartedAt(), loc)})
		}
		slices.SortFunc(ds, func(a, b dayed) int {
			if c := strings.Compare(a.day, b.day); c != 0 {
				return c
			}
			return refOrder(a.r, b.r)
		})
		n := 0
		for i, d := range ds {
			n++
			if i == 0 || ds[i-1].day != d.day {
				n = 1
			}
			ref := d.r.Name + "@" + d.day
			if n > 1 {
				ref += "#" + strconv.Itoa(n)
			}
			out[d.r] = ref
		}
	}
	return out
}

// Label returns how listings name x among the user's rentals rs: its
// address when another rental has its name, else the name.
func Label(rs []*Rental, x *Rental, loc *time.Location) string {
	for _, r := range rs {
		if r != x && r.Name == x.Name {
			return RefOf(rs, x, loc)
		}
	}
	return x.Name
}
