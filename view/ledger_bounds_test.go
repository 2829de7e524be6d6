package view_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// TestLedgerMessage_NamesBounds: the ledger's refusals of a rental's terms
// and of a setting show the ledger's bounds in the user's language.
func TestLedgerMessage_NamesBounds(t *testing.T) {
	r := func(set func(*ledger.Rental)) error {
		x := ledger.Rental{Name: "box1", Platform: "autodl", GPUCount: 1, Mode: ledger.PerSecond, Currency: ledger.CNY}
		set(&x)
		return x.Validate()
	}
	s := ledger.DefaultSettings()
	s.LongRun = 40 * 24 * time.Hour
	for _, c := range []struct {
		err    error
		lo, hi any
	}{
		{r(func(x *ledger.Rental) { x.GPUCount = 65 }), ledger.MinGPUCount, ledger.MaxGPUCount},
		{r(func(x *ledger.Rental) { x.Min = 32 * 24 * time.Hour }), ledger.MinBillingTerm, ledger.MaxBillingTerm},
		{r(func(x *ledger.Rental) { x.Step = 40 * 24 * time.Hour }), ledger.MinBillingTerm, ledger.MaxBillingTerm},
		{r(func(x *ledger.Rental) { x.Lease = 30 * time.Second }), ledger.MinLease, ledger.MaxLease},
		{s.ValidateStored(), ledger.MinLongRun, ledger.MaxLongRun},
	} {
		if c.err == nil {
			t.Fatalf("no error for the bounds %v..%v", c.lo, c.hi)
		}
		for _, lang := range []string{chat.LangEN, chat.LangZH} {
			msg := view.LedgerMessage(c.err, lang, time.UTC, time.Date(2026, 11, 2, 2, 0, 0, 0, time.UTC))
			for _, b := range []any{c.lo, c.hi} {
				want := ""
				switch b := b.(type) {
				case time.Duration:
					want = chat.FormatDuration(b, lang)
				case int:
					want = strconv.Itoa(b)
				}
				if !strings.Contains(msg, want) {
					t.Errorf("%s: %q does not name the bound %s", lang, msg, want)
				}
			}
		}
	}
}
