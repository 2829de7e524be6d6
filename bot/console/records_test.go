package console_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestConsole_Records: in the terminal, /records shows each record with
// its number, and /fix and /delete take it; the numbers are the journal's,
// so a fresh ledger's are known: /rent is #1, /charge #2, /topup #3.
func TestConsole_Records(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 2, 4, 0, 0, 0, time.UTC)
	db, core := newCore(t, func() time.Time { return now })
	in := strings.Join([]string{
		"/rent box1 autodl 4090 1.88/h at 10:00",
		"/charge box1 5 image fee",
		"/topup autodl 100",
		"/records",
		"/fix #2 6.50",
		"/delete #3",
		"/records autodl",
	}, "\n")
	got := runLines(t, core, in)
	for _, want := range []string{
		"#3 12:00 top-up autodl ¥100.00",
		"#2 12:00 charge box1 ¥5.00 image fee",
		"✓ Corrected #2 12:00 charge box1 ¥6.50 image fee",
		"✓ Deleted #3 12:00 top-up autodl ¥100.00",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "<b>") || strings.Contains(got, "<code>") {
		t.Errorf("the terminal shows HTML tags:\n%s", got)
	}
	b, err := db.Book(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.TopUps) != 0 || len(b.Charges) != 1 || b.Charges[0].Amount.String() != "6.5" {
		t.Errorf("top-ups %+v, charges %+v", b.TopUps, b.Charges)
	}
}
