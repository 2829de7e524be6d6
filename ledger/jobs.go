package ledger

import "time"

// MaxJobSpan bounds a job run the user names after the fact (/job): a
// longer span is a typo in a date, and no single run of a benchmark lasts
// a month.
const MaxJobSpan = 31 * 24 * time.Hour

// CheckJobSpan reports whether [from, to) may be named a job run of r at
// now: it must end after it starts, last at most MaxJobSpan, and lie
// inside the rental's life (from its start to its release, or to now
// while it runs). The errors are EINVALID with the rental's name and the
// bound crossed, so the chat can say what to write instead.
func CheckJobSpan(r *Rental, from, to, now time.Time) error {
	if len(r.Events) == 0 {
		return Errorc(EINVALID, "not_started", r.Name)
	}
	if !to.After(from) {
		return Errorc(EINVALID, "span_backwards", from, to)
	}
	if to.Sub(from) > MaxJobSpan {
		return Errorc(EINVALID, "job_span_long", to.Sub(from), MaxJobSpan)
	}
	if start := r.StartedAt(); from.Before(start) {
		return Errorc(EINVALID, "job_before_start", from, r.Name, start)
	}
	if end, ok := r.ReleasedAt(); ok && to.After(end) {
		return Errorc(EINVALID, "job_after_release", to, r.Name, end)
	}
	if to.After(now) {
		return Errorc(EINVALID, "job_future", to)
	}
	return nil
}
