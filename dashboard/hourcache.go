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

// hourStats returns the rental's roll-ups in [from, to) as Store.HourStats
// does, reading from the store only the hours not cached.
func (s *Server) hourStats(ctx context.Context, r *ledger.Rental, from, to, now time.Time) ([]ledger.HourStat, error) {
	key := hourKey{rental: r.ID, user: r.UserID, start: r.StartedAt().Unix()}
	final := now.UTC().Truncate(time.Hour).Add(-time.Hour)
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
			return nil, err
		}
	}
	all := tail
	if len(cached) > 0 {
		all = append(cached[:len(cached):len(cached)], tail...)
	}
	if final.After(readFrom) {
		n := 0
		for n < len(all) && all[n].Hour.Before(final) {
			n++
		}
		until := final
		if to.Before(until) {
			until = to
		}
		c.mu.Lock()
		if c.m == nil {
			c.m = map[hourKey]*hourEntry{}
		}
		if _, ok := c.m[key]; !ok && len(c.m) >= maxCachedRentals {
			var oldest hourKey
			var first = true
			for k, e := range c.m {
				if first || e.used.Before(c.m[oldest].used) {
					oldest, first = k, false
				}
			}
			delete(c.m, oldest)
		}
		c.m[key] = &hourEntry{stats: all[:n:n], until: until, used: now}
		c.mu.Unlock()
	}
	return all, nil
}
