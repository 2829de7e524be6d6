package dashboard

import (
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestTimeline(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	at := func(h float64) time.Time { return t0.Add(time.Duration(h * float64(time.Hour))) }
	r := &ledger.Rental{ID: 1, Events: []ledger.Event{
		{Kind: ledger.EventStart, At: at(0)}, {Kind: ledger.EventStop, At: at(3)}, {Kind: ledger.EventResume, At: at(5)},
		{Kind: ledger.EventRelease, At: at(8)}}}
	t.Run("NoAgent", func(t *testing.T) {
		got := timeline(r, hourList{}, false, at(20))
		want := []Segment{{at(0), at(3), SegRunning}, {at(3), at(5), SegStopped}, {at(5), at(8), SegRunning}}
		same(t, got, want)
	})
	t.Run("Agent", func(t *testing.T) {
		stats := []ledger.HourStat{
			{Hour: at(1), BusyS: 3000, IdleS: 600, Beats: 120},
			{Hour: at(2), IdleS: 3000, BusyS: 600, Beats: 120},
			{Hour: at(5), UnknownS: 3600, Beats: 120},
		}
		rr := *r
		rr.Idle = []ledger.Interval{{From: at(1.5), To: at(1.75)}, {From: at(7.5)}} // the last one still open
		got := timeline(&rr, hourList{a: stats[:1], b: stats[1:]}, true, at(7.9))
		want := []Segment{
			{at(0), at(1), SegRunning}, // before the agent first reported
			{at(1), at(1.5), SegBusy}, {at(1.5), at(1.75), SegIdle}, {at(1.75), at(2), SegBusy},
			{at(2), at(3), SegIdle}, {at(3), at(5), SegStopped}, {at(5), at(6), SegUnknown},
			{at(6), at(7.5), SegSilent}, {at(7.5), at(7.9), SegIdle},
		}
		same(t, got, want)
		days := dayActivity(got, time.UTC)
		if len(days) != 1 || days[0].StoppedS != 7200 || days[0].IdleS != 900+3600+1440 || days[0].RunningS != 3600 {
			t.Errorf("days %+v", days)
		}
	})
	t.Run("Capped", func(t *testing.T) {
		// A year of alternating busy and idle hours: 8,760 segments, more
		// than MaxSegments, so whole days of the longest state.
		long := &ledger.Rental{ID: 2, Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}}}
		var stats []ledger.HourStat
		for h := range 365 * 24 {
			st := ledger.HourStat{Hour: t0.Add(time.Duration(h) * time.Hour), Beats: 120}
			day := h / 24
			// Even days mostly busy, odd days mostly idle.
			if (day%2 == 0 && (h%2 == 0 || h%24 < 20)) || (day%2 == 1 && h%2 == 0 && h%24 < 8) {
				st.BusyS = 3600
			} else {
				st.IdleS = 3600
			}
			stats = append(stats, st)
		}
		end := t0.Add(365 * 24 * time.Hour)
		segs := timeline(long, hourList{b: stats}, true, end)
		if len(segs) <= MaxSegments {
			t.Fatalf("only %d segments before the cap", len(segs))
		}
		capped := capSegments(segs, time.UTC)
		if len(capped) > MaxSegments || len(capped) == 0 {
			t.Fatalf("%d segments after the cap", len(capped))
		}
		if !capped[0].From.Equal(t0) || !capped[len(capped)-1].To.Equal(end) {
			t.Errorf("capped timeline spans %s..%s", capped[0].From, capped[len(capped)-1].To)
		}
		for i := 1; i < len(capped); i++ {
			if !capped[i].From.Equal(capped[i-1].To) || capped[i].State == capped[i-1].State {
				t.Fatalf("segments %d and %d not adjacent or not merged: %+v %+v", i-1, i, capped[i-1], capped[i])
			}
		}
		if capped[0].State != SegBusy || capped[0].To.Sub(capped[0].From) != 24*time.Hour {
			t.Errorf("first day %+v, want one busy day", capped[0])
		}
		if len(capped) != 365 || capped[1].State != SegIdle {
			t.Errorf("%d capped segments, want one a day alternating", len(capped))
		}
		if d := dayActivity(segs, time.UTC); len(d) != 365 {
			t.Errorf("%d days, want 365", len(d))
		}
		two := timeline(long, hourList{a: stats}, true, end.Add(100*24*time.Hour))
		if d := dayActivity(two, time.UTC); len(d) != maxDays || d[len(d)-1].Day != "2028-02-08" {
			t.Errorf("%d days ending %s, want the last %d", len(d), d[len(d)-1].Day, maxDays)
		}
	})
}

func same(t *testing.T, got, want []Segment) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d segments %+v, want %d %+v", len(got), got, len(want), want)
	}
	for i := range want {
		if !got[i].From.Equal(want[i].From) || !got[i].To.Equal(want[i].To) || got[i].State != want[i].State {
			t.Errorf("segment %d = %s..%s %s, want %s..%s %s", i, got[i].From.Format("15:04"), got[i].To.Format("15:04"), got[i].State,
				want[i].From.Format("15:04"), want[i].To.Format("15:04"), want[i].State)
		}
	}
}
