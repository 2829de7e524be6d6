package dashboard

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// maxDays is how many days of a rental's activity its page lists.
const maxDays = 400

func (s *Server) handleRental(w http.ResponseWriter, r *http.Request, g *grant, b *ledger.Book) {
	q, ok := s.query(w, r)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(q.Get("id"), 10, 64)
	if err != nil || id <= 0 {
		s.fail(w, r, http.StatusBadRequest, "bad_request", "err_rental_id")
		return
	}
	// The book holds this user's rentals only: another user's ID is not
	// found in it, and nothing of that rental is read.
	var rental *ledger.Rental
	for _, rr := range b.Rentals {
		if rr.ID == id && rr.UserID == g.user {
			rental = rr
		}
	}
	if rental == nil || len(rental.Events) == 0 {
		s.fail(w, r, http.StatusNotFound, "not_found", "err_no_rental", id)
		return
	}
	now := s.now()
	end := now
	if at, ok := rental.ReleasedAt(); ok && at.Before(now) {
		end = at
	}
	ctx := r.Context()
	var stats hourList
	if end.After(rental.StartedAt()) {
		if stats, err = s.hourStats(ctx, rental, end, now); err != nil {
			s.internal(w, r, err)
			return
		}
	}
	issued, err := s.store.TokenIssued(ctx, g.user, id)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	page := rentalPage(b, rental, stats, issued || stats.len() > 0, now, g.lang)
	label := rental.Name
	if page.Rental.Ref != "" {
		label = page.Rental.Ref
	}
	if page.Receipt, err = s.receipt(ctx, g.user, b, rental, label, now, g.lang); err != nil {
		s.internal(w, r, err)
		return
	}
	if page.Receipt == nil {
		page.NoReceipt = receiptText.Text(g.lang, "no_receipt")
	}
	s.writeJSON(w, r, http.StatusOK, page)
}

// rentalPage computes one rental's page as of now; its names (platform,
// mode, price) are the chat's in lang.
func rentalPage(b *ledger.Book, rental *ledger.Rental, stats hourList, hasAgent bool, now time.Time, lang string) RentalPage {
	st := ledger.StatementAsOf(b, now)
	var rc *ledger.RentalCost
	for i := range st.Rentals {
		if st.Rentals[i].Rental == rental {
			rc = &st.Rentals[i]
		}
	}
	if rc == nil { // started after now: nothing accrued yet
		z := ledger.Money{Currency: rental.Currency}
		rc = &ledger.RentalCost{Rental: rental, State: ledger.Running, Rate: rental.Price, ComputePriced: rental.Priced,
			StoragePriced: true, TrafficPriced: true, Compute: z, Storage: z, Traffic: z, Other: z, Total: z, IdleCost: z}
	}
	page := RentalPage{Rental: rentalRow(rc, now, hasAgent), AsOf: now, Mode: string(rental.Mode), ModeName: view.FormatMode(rental.Mode, lang),
		StartedAt: rental.StartedAt(), HasAgent: hasAgent}
	page.Rental.PlatformName = view.PlatformName(lang, rental.Platform)
	if rental.Priced {
		p, u, pt := rc.Rate.Amount.String(), string(rc.Rate.Unit), view.FormatPrice(rc.Rate, rental.Currency, lang)
		page.Price, page.PriceUnit, page.PriceText = &p, &u, &pt
	}
	end := now
	if at, ok := rental.ReleasedAt(); ok && !at.After(now) {
		page.ReleasedAt = &at
		end = at
	}
	segs := timeline(rental, stats, hasAgent, end)
	loc := b.User.Location()
	page.Days = dayActivity(segs, loc)
	page.Timeline = capSegments(segs, loc)
	return page
}

// timeline cuts a rental's life up to end into segments: stopped from its
// events; running time split by UTC hour and judged from that hour's
// roll-up (its longest verdict), silent where an agent that had reported
// before sent nothing, running where no agent had reported yet; then the
// stored idle intervals (the hub's evidence, to the second) laid over the
// running time. Adjacent equal segments are merged.
func timeline(r *ledger.Rental, stats hourList, hasAgent bool, end time.Time) []Segment {
	// stats are oldest first (Store.HourStats); an hour with no beat is
	// silence.
	var firstReport time.Time
	for i := range stats.len() {
		if h := stats.at(i); h.Beats > 0 {
			firstReport = h.Hour
			break
		}
	}
	next := 0 // the first hour of stats not yet passed
	var out []Segment
	emit := func(from, to time.Time, state string) {
		if !to.After(from) {
			return
		}
		if n := len(out); n > 0 && out[n-1].State == state && out[n-1].To.Equal(from) {
			out[n-1].To = to
			return
		}
		out = append(out, Segment{From: from.UTC(), To: to.UTC(), State: state})
	}
	idle := r.Idle
	running := func(from, to time.Time) {
		for a := from; a.Before(to); {
			hour := a.Truncate(time.Hour)
			b := hour.Add(time.Hour)
			if b.After(to) {
				b = to
			}
			state := SegRunning
			for next < stats.len() && stats.at(next).Hour.Before(hour) {
				next++
			}
			if next < stats.len() && stats.at(next).Hour.Equal(hour) && stats.at(next).Beats > 0 {
				h := stats.at(next)
				state = SegBusy
				switch {
				case h.IdleS > h.BusyS && h.IdleS >= h.UnknownS:
					state = SegIdle
				case h.UnknownS > h.BusyS && h.UnknownS > h.IdleS:
					state = SegUnknown
				case h.BusyS == 0 && h.IdleS == 0 && h.UnknownS == 0:
					state = SegUnknown
				}
			} else if hasAgent && !firstReport.IsZero() && !hour.Before(firstReport) {
				state = SegSilent
			}
			// Lay the idle intervals over [a, b).
			for len(idle) > 0 && !idleEnd(idle[0], end).After(a) {
				idle = idle[1:]
			}
			x := a
			for i := 0; i < len(idle) && idle[i].From.Before(b); i++ {
				iv := idle[i]
				ia, ib := maxT(iv.From, x), minT(idleEnd(iv, end), b)
				if !ib.After(ia) {
					continue
				}
				emit(x, ia, state)
				emit(ia, ib, SegIdle)
				x = ib
			}
			emit(x, b, state)
			a = b
		}
	}
	stopped := false
	var since time.Time
	for _, ev := range r.Events {
		if !ev.At.Before(end) {
			break
		}
		switch ev.Kind {
		case ledger.EventStart:
			since, stopped = ev.At, false
		case ledger.EventStop:
			if !stopped {
				running(since, ev.At)
				since, stopped = ev.At, true
			}
		case ledger.EventResume:
			if stopped {
				emit(since, ev.At, SegStopped)
				since, stopped = ev.At, false
			}
		case ledger.EventRelease:
			end = ev.At
		}
	}
	if since.IsZero() || !end.After(since) {
		return out
	}
	if stopped {
		emit(since, end, SegStopped)
	} else {
		running(since, end)
	}
	return out
}

// idleEnd is an idle interval's end; an open one runs to end.
func idleEnd(iv ledger.Interval, end time.Time) time.Time {
	if iv.To.IsZero() {
		return end
	}
	return iv.To
}

func maxT(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minT(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// days cuts time into local days, remembering the last day it found:
// segments come in order, so most cuts fall in the same day as the last.
type days struct {
	loc        *time.Location
	start, end time.Time
}

// eachDay calls f for each piece of seg inside one local day.
func (d *days) eachDay(seg Segment, f func(day time.Time, from, to time.Time)) {
	for a := seg.From; a.Before(seg.To); {
		if a.Before(d.start) || !a.Before(d.end) {
			d.start, d.end = ledger.DayRange(a, d.loc)
		}
		b := minT(d.end, seg.To)
		f(d.start, a, b)
		a = b
	}
}

// dayActivity sums the segments' seconds per local day and state, oldest
// first, the last maxDays days at most.
func dayActivity(segs []Segment, loc *time.Location) []DayActivity {
	out := []DayActivity{}
	var last time.Time
	cut := &days{loc: loc}
	for _, sg := range segs {
		cut.eachDay(sg, func(day, from, to time.Time) {
			if len(out) == 0 || !day.Equal(last) {
				out = append(out, DayActivity{Day: day.Format("2006-01-02")})
				last = day
			}
			d := &out[len(out)-1]
			secs := int64(to.Sub(from) / time.Second)
			switch sg.State {
			case SegBusy:
				d.BusyS += secs
			case SegIdle:
				d.IdleS += secs
			case SegUnknown:
				d.UnknownS += secs
			case SegSilent:
				d.SilentS += secs
			case SegRunning:
				d.RunningS += secs
			case SegStopped:
				d.StoppedS += secs
			}
		})
	}
	if len(out) > maxDays {
		out = out[len(out)-maxDays:]
	}
	return out
}

// capSegments returns segs, or, beyond MaxSegments, one segment per local
// day (the day's longest state) merged where adjacent days agree, and of
// those the last MaxSegments.
func capSegments(segs []Segment, loc *time.Location) []Segment {
	if len(segs) <= MaxSegments {
		if segs == nil {
			return []Segment{}
		}
		return segs
	}
	var out []Segment
	type dayAcc struct {
		from, to time.Time
		secs     [len(segStates)]time.Duration
	}
	var cur *dayAcc
	var curDay time.Time
	flush := func() {
		if cur == nil {
			return
		}
		best := 0
		for i := range segStates {
			if cur.secs[i] > cur.secs[best] {
				best = i
			}
		}
		st := segStates[best]
		if n := len(out); n > 0 && out[n-1].State == st && out[n-1].To.Equal(cur.from) {
			out[n-1].To = cur.to
		} else {
			out = append(out, Segment{From: cur.from, To: cur.to, State: st})
		}
	}
	cut := &days{loc: loc}
	for _, sg := range segs {
		idx := stateIndex(sg.State)
		cut.eachDay(sg, func(day, from, to time.Time) {
			if cur == nil || !day.Equal(curDay) || !cur.to.Equal(from) {
				flush()
				cur, curDay = &dayAcc{from: from, to: to}, day
			}
			cur.secs[idx] += to.Sub(from)
			cur.to = to
		})
	}
	flush()
	if len(out) > MaxSegments {
		out = out[len(out)-MaxSegments:]
	}
	return out
}

// segStates are the timeline's states; a tie for a day's longest goes to
// the first.
var segStates = [...]string{SegBusy, SegIdle, SegUnknown, SegSilent, SegRunning, SegStopped}

func stateIndex(st string) int {
	for i, s := range segStates {
		if s == st {
			return i
		}
	}
	return len(segStates) - 1
}
