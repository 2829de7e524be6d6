package bot

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// boundCase is one value a user writes, what it means, and the ledger's
// verdict on it.
type boundCase struct {
	in     string // the message
	ledger error  // the ledger's check of the value meant
	lo, hi any    // the bounds a refusal must name: a count's text, or a duration
}

// checkBounds: for each case the parser and the ledger agree, and the
// parser's refusal names both bounds in both languages.
func checkBounds(t *testing.T, cases []boundCase) {
	t.Helper()
	for _, c := range cases {
		_, perr := command.Parse(c.in, testNow, shanghai)
		if (perr == nil) != (c.ledger == nil) {
			t.Errorf("%s: parser says %v, ledger says %v", c.in, perr, c.ledger)
			continue
		}
		var pe *command.ParseError
		if perr == nil {
			continue
		}
		if !errors.As(perr, &pe) {
			t.Errorf("%s: %v is no *ParseError", c.in, perr)
			continue
		}
		for _, lang := range []string{chat.LangEN, chat.LangZH} {
			msg := parseErrorText(pe, lang)
			for _, bound := range []any{c.lo, c.hi} {
				b, _ := bound.(string)
				if d, ok := bound.(time.Duration); ok {
					b = chat.FormatDuration(d, lang) // as the reader's replies write it
				}
				if !strings.Contains(msg, b) {
					t.Errorf("%s: %q does not name the bound %s", c.in, msg, b)
				}
			}
		}
	}
}

func rentWith(set func(*ledger.Rental)) error {
	r := ledger.Rental{Name: "box1", Platform: "autodl", GPUCount: 1, Mode: ledger.PerSecond, Currency: ledger.CNY}
	set(&r)
	return r.Validate()
}

func durBounds(lo, hi time.Duration) (any, any) { return lo, hi }

// TestParse_RentTermBounds: count, min=, step= and for= at and around the
// ledger's bounds.
func TestParse_RentTermBounds(t *testing.T) {
	const day = 24 * time.Hour
	count := func(n int) error { return rentWith(func(r *ledger.Rental) { r.GPUCount = n }) }
	cl, ch := "1", "64"
	var cases []boundCase
	for _, c := range []struct {
		n   int
		src string
	}{{0, "0"}, {1, "1"}, {64, "64"}, {65, "65"}} {
		cases = append(cases, boundCase{"/rent box1 autodl 4090 1.88 count=" + c.src, count(c.n), cl, ch})
		if c.n > 0 {
			cases = append(cases, boundCase{"/rent box1 autodl " + c.src + "x4090 1.88", count(c.n), cl, ch})
		}
	}
	bl, bh := durBounds(ledger.MinBillingTerm, ledger.MaxBillingTerm)
	ll, lh := durBounds(ledger.MinLease, ledger.MaxLease)
	for _, c := range []struct {
		src string
		d   time.Duration
	}{{"1s", time.Second}, {"31d", 31 * day}, {"31d1s", 31*day + time.Second}, {"0.5s", 500 * time.Millisecond}} {
		cases = append(cases,
			boundCase{"/rent box1 autodl 4090 1.88 min=" + c.src, rentWith(func(r *ledger.Rental) { r.Min = c.d }), bl, bh},
			boundCase{"/rent box1 autodl 4090 1.88 step=" + c.src, rentWith(func(r *ledger.Rental) { r.Step = c.d }), bl, bh})
	}
	for _, c := range []struct {
		src string
		d   time.Duration
	}{{"30s", 30 * time.Second}, {"1m", time.Minute}, {"366d", 366 * day}, {"366d1s", 366*day + time.Second}} {
		cases = append(cases, boundCase{"/rent box1 autodl 4090 1.88 for=" + c.src, rentWith(func(r *ledger.Rental) { r.Lease = c.d }), ll, lh})
	}
	checkBounds(t, cases)
}

// TestParse_SettingBounds: idle_warn=, silent= and long_run= at and
// around the ledger's bounds for each.
func TestParse_SettingBounds(t *testing.T) {
	const day = 24 * time.Hour
	var cases []boundCase
	for _, c := range []struct {
		key   string
		src   string
		d     time.Duration
		field func(*ledger.Settings) *time.Duration
	}{
		{"idle_warn", "30s", 30 * time.Second, func(s *ledger.Settings) *time.Duration { return &s.IdleWarn }},
		{"idle_warn", "1m", time.Minute, func(s *ledger.Settings) *time.Duration { return &s.IdleWarn }},
		{"idle_warn", "7d", 7 * day, func(s *ledger.Settings) *time.Duration { return &s.IdleWarn }},
		{"idle_warn", "8d", 8 * day, func(s *ledger.Settings) *time.Duration { return &s.IdleWarn }},
		{"silent", "59s", 59 * time.Second, func(s *ledger.Settings) *time.Duration { return &s.Silent }},
		{"silent", "1d", day, func(s *ledger.Settings) *time.Duration { return &s.Silent }},
		{"silent", "2d", 2 * day, func(s *ledger.Settings) *time.Duration { return &s.Silent }},
		{"long_run", "59m", 59 * time.Minute, func(s *ledger.Settings) *time.Duration { return &s.LongRun }},
		{"long_run", "1h", time.Hour, func(s *ledger.Settings) *time.Duration { return &s.LongRun }},
		{"long_run", "30d", 30 * day, func(s *ledger.Settings) *time.Duration { return &s.LongRun }},
		{"long_run", "31d", 31 * day, func(s *ledger.Settings) *time.Duration { return &s.LongRun }},
	} {
		s := ledger.DefaultSettings()
		*c.field(&s) = c.d
		lo, hi, ok := ledger.SettingBounds(c.key)
		if !ok {
			t.Fatalf("ledger.SettingBounds(%q) is not ok", c.key)
		}
		l, h := durBounds(lo, hi)
		cases = append(cases, boundCase{"/settings " + c.key + "=" + c.src, s.Validate(), l, h})
	}
	checkBounds(t, cases)
}
