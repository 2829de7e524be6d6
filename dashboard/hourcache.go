package dashboard

import (
	"context"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// hourCache keeps the hourly roll-ups of recently shown rentals for the
// hours that can no longer change, so that a rental's page reads only the
// last hours from SQLite: a year-long rental has 8,760 roll-ups, and
// reading them all took about 30 ms here, over the page's 20 ms budget.
// An hour is final one hour after it ends (beats are rolled up by their
// server-clock receipt time). Entries are keyed by rental, user and start
// time, so a rental ID reused after an undo never shows another rental's
// hours. Safe for concurrent use.
type hourCache struct {
	mu sync.Mutex
	m  map[hourKey]*hourEntry
}

// maxCachedRentals bounds the cache (a year of roll-ups is about 700 KB).
const maxCachedRentals = 32

type hourKey struct {
	rental, user, start int64
}

type hourEntry struct {
	stats []ledger.HourStat // hours in [from, until), oldest first
	until time.Time
	used  time.Time
}

// hourList is a rental's roll-ups, oldest first, in two parts (the
// cached final hours and the ones read now), so that a page does not copy
// a year of them.
type hourList struct{ a, b []ledger.HourStat }

func (l hourList) len() int { return len(l.a) + len(l.b) }

func (l hourList) at(i int) *ledger.HourStat {
	if i < len(l.a) {
		return &l.a[i]
	}
	return &l.b[i-len(l.a)]
}

// hourStats returns the rental's roll-ups from the hour it started up to
// to, as Store.HourStats does, reading from the store only the hours not
// cached. Every entry starts at its rental's first hour (the key holds the
// start), so a cached part is always a prefix of the answer. The cache
// entry grows when more hours have become final (at most once an hour).
func (s *Server) hourStats(ctx context.Context, r *ledger.Rental, to, now time.Time) (hourList, error) {
	from := r.StartedAt().Truncate(time.Hour)
	key := hourKey{rental: r.ID, user: r.UserID, start: r.StartedAt().Unix()}
	final := now.UTC().Truncate(time.Hour).Add(-time.Hour)
	if to.Before(final) {
		final = to
	}
	c := &s.hours
	c.mu.Lock()
	var cached []ledger.HourStat
	readFrom := from
	if e, ok := c.m[key]; ok && !e.until.Before(from) {
		cached, readFrom = e.stats, e.until
		e.used = now
	}
	c.mu.Unlock()
	var tail []ledger.HourStat
	if readFrom.Before(to) {
		var err error
		if tail, err = s.store.HourStats(ctx, r.ID, readFrom, to); err != nil {
			return hourList{}, err
		}
	}
	if final.After(readFrom) {
		k := 0
		for k < len(tail) && tail[k].Hour.Before(final) {
			k++
		}
		stats := make([]ledger.HourStat, 0, len(cached)+k)
		stats = append(append(stats, cached...), tail[:k]...)
		c.mu.Lock()
		if c.m == nil {
			c.m = map[hourKey]*hourEntry{}
		}
		if _, ok := c.m[key]; !ok && len(c.m) >= maxCachedRentals {
			var oldest hourKey
			first := true
			for k, e := range c.m {
				if first || e.used.Before(c.m[oldest].used) {
					oldest, first = k, false
				}
			}
			delete(c.m, oldest)
		}
		c.m[key] = &hourEntry{stats: stats, until: final, used: now}
		c.mu.Unlock()
		return hourList{a: stats, b: tail[k:]}, nil
	}
	return hourList{a: cached, b: tail}, nil
}
