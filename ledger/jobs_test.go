package ledger

import (
	"testing"
	"time"
)

// TestCheckJobSpan: a named job run lies in its rental's life, ends after
// it starts and lasts at most MaxJobSpan; each refusal names its bound.
func TestCheckJobSpan(t *testing.T) {
	live := newRental("a", PerSecond, "1", UnitHour, CNY, ev(EventStart, hour))
	gone := newRental("b", PerSecond, "1", UnitHour, CNY, ev(EventStart, hour), ev(EventRelease, 3*hour))
	now := off(40 * day)
	for _, tc := range []struct {
		name     string
		r        *Rental
		from, to time.Duration
		key      string
	}{
		{"inside", live, 2 * hour, 3 * hour, ""},
		{"to the release", gone, 2 * hour, 3 * hour, ""},
		{"before the start", live, 0, 2 * hour, "job_before_start"},
		{"after the release", gone, 2 * hour, 4 * hour, "job_after_release"},
		{"backwards", live, 3 * hour, 2 * hour, "span_backwards"},
		{"empty", live, 3 * hour, 3 * hour, "span_backwards"},
		{"over 31 days", live, 2 * hour, 2*hour + 31*day + sec, "job_span_long"},
		{"31 days", live, 2 * hour, 2*hour + 31*day, ""},
		{"in the future", live, 39 * day, 41 * day, "job_future"},
		{"not started", newRental("c", PerSecond, "1", UnitHour, CNY), 0, hour, "not_started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJobSpan(tc.r, off(tc.from), off(tc.to), now)
			if tc.key == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if e, ok := err.(*Error); !ok || e.Code != EINVALID || e.Key != tc.key {
				t.Errorf("err = %v, want %s", err, tc.key)
			}
		})
	}
}
