package connsync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/ledger"
)

const (
	// MissingLists and the span of MissingIntervals intervals: an
	// instance absent from this many valid lists in a row, over at least
	// that long, is released; one glitching list releases nothing.
	MissingLists     = 3
	MissingIntervals = 3
	// seenPersist is how stale a stored LastSeen may get before a
	// round that changes nothing else writes it: a steady round writes
	// nothing, and a release of a vanished instance is placed at most
	// this far before the true last sighting after a restart.
	seenPersist = 15 * time.Minute
)

// pass is one application of a valid list to one user's ledger, under
// the connector's lock.
type pass struct {
	s  *Syncer
	c  ledger.Connector
	st *connState
	// u and loc are the user and their zone, read only when a message
	// needs them (user): a steady round sends nothing.
	u        ledger.User
	uOK      bool
	loc      *time.Location
	poll     time.Time
	interval time.Duration
	rentals  map[int64]*ledger.Rental
	// book is the user's ledger, loaded only when a new instance needs
	// the candidates: a steady round reads no rentals at all.
	book *ledger.Book
	// seen are the unchanged instances whose stored LastSeen has gone
	// stale (seenPersist): written with the round's end, in one
	// transaction (FinishSyncRound), not one each.
	seen []string
}

// user returns the pass's user, read the first time a message needs
// their language or zone.
func (p *pass) user(ctx context.Context) ledger.User {
	if !p.uOK {
		p.u, p.uOK = p.s.user(ctx, p.c.UserID), true
		p.loc = p.u.Location()
	}
	return p.u
}

// zone is the user's time zone, for the times a message shows.
func (p *pass) zone(ctx context.Context) *time.Location {
	p.user(ctx)
	return p.loc
}

// rental returns the bound rental id, read once per pass; nil when it is
// gone (an undone sync).
func (p *pass) rental(ctx context.Context, id int64) (*ledger.Rental, error) {
	if r, ok := p.rentals[id]; ok {
		return r, nil
	}
	r, err := p.s.store.RentalByID(ctx, id)
	if isCode(err, ledger.ENOTFOUND) {
		r, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	if r != nil && r.UserID != 0 && r.UserID != p.c.UserID {
		r = nil // never another user's rental
	}
	p.rentals[id] = r
	return r, nil
}

// loadBook loads the user's ledger once per pass.
func (p *pass) loadBook(ctx context.Context) error {
	if p.book != nil {
		return nil
	}
	b, err := p.s.store.Book(ctx, p.c.UserID)
	if err != nil {
		return fmt.Errorf("connsync: book: %w", err)
	}
	p.book = b
	return nil
}

// apply turns a valid list into ledger changes (see the package doc and
// docs/design.md): per listed instance by its platform ID, a known one's
// state change, price notice or refreshed facts; a new one bound,
// asked about or created; a known one missing long enough released.
// Each change is its own store call; one failing is returned (joined)
// and does not stop the others. It returns what the round's end needs
// (roundEnd): the instances it read, their generation, and the platform
// IDs whose LastSeen refresh is left to FinishSyncRound.
func (s *Syncer) apply(ctx context.Context, c ledger.Connector, st *connState, list []connector.Instance, poll time.Time, interval time.Duration) (roundEnd, error) {
	unlock := s.lockConn(c.UserID, c.Platform)
	defer unlock()
	known, gen, err := s.instances(ctx, c, st)
	if err != nil {
		return roundEnd{}, fmt.Errorf("connsync: platform instances: %w", err)
	}
	// What a crash kept from being told is told first, in order.
	s.flush(ctx, c)
	defer s.flush(ctx, c)
	p := &pass{s: s, c: c, st: st, poll: poll, interval: interval, rentals: map[int64]*ledger.Rental{}}
	byID := make(map[string]ledger.PlatformInstance, len(known))
	for _, in := range known {
		byID[in.PlatformID] = in
	}
	var (
		errs []error
		news []connector.Instance // listed, not stored, not terminated
	)
	listed := make(map[string]bool, len(list))
	for _, li := range list {
		if ledger.CheckPlatformID(li.ID) != nil || listed[li.ID] {
			continue // an ID the store cannot key, or listed twice: never a rental
		}
		listed[li.ID] = true
		delete(st.missing, li.ID)
		in, ok := byID[li.ID]
		if !ok {
			if li.State != connector.Terminated {
				news = append(news, li)
			}
			continue
		}
		st.seen[li.ID] = poll
		if err := p.known(ctx, in, li, false); err != nil {
			errs = append(errs, fmt.Errorf("connsync: %s %s: %w", c.Platform, li.ID, err))
		}
	}
	// The new ones are counted before any is logged: a listing of more
	// than the sync logs by itself is one card (flood.go).
	if err := p.newInstances(ctx, known, news); err != nil {
		errs = append(errs, err)
	}
	for _, in := range known {
		if !listed[in.PlatformID] {
			if err := p.missing(ctx, in); err != nil {
				errs = append(errs, fmt.Errorf("connsync: %s %s: %w", c.Platform, in.PlatformID, err))
			}
		}
	}
	return roundEnd{known: known, gen: gen, seen: p.seen}, errors.Join(errs...)
}

// roundEnd is what a round's application leaves for its end.
type roundEnd struct {
	known []ledger.PlatformInstance // the stored instances the round started from
	gen   int64                     // their generation
	seen  []string                  // unchanged ones whose LastSeen is to be refreshed
}

// instances returns the connector's stored instances and their
// generation: the ones the last round kept when the stored generation is
// still theirs (one small read), else read again. The kept ones are
// dropped here; only a round's end that proves them current keeps them
// again (finish).
func (s *Syncer) instances(ctx context.Context, c ledger.Connector, st *connState) ([]ledger.PlatformInstance, int64, error) {
	known, gen := st.known, st.knownGen
	st.known = nil
	if known != nil {
		g, err := s.store.PlatformGeneration(ctx, c.UserID, c.Platform)
		if err != nil {
			return nil, 0, err
		}
		if g == gen {
			return known, gen, nil
		}
	}
	return s.store.PlatformInstancesGen(ctx, c.UserID, c.Platform)
}

// finish writes the round's end (FinishSyncRound: the stale last-seen
// refreshes and the sync mark, one transaction) and keeps the round's
// instances for the next round when the store says nothing but those
// refreshes changed them since they were read; with a failed
// application (applyErr) or any doubt they are read again.
func (s *Syncer) finish(ctx context.Context, c ledger.Connector, st *connState, end roundEnd, poll time.Time, errText string, applyErr error) {
	gen, current, err := s.store.FinishSyncRound(ctx, ledger.SyncRoundEnd{UserID: c.UserID, Platform: c.Platform,
		Seen: end.seen, SeenAt: poll, SyncedAt: s.now().UTC(), Err: errText, Gen: end.gen})
	if err != nil {
		if !isCode(err, ledger.ENOTFOUND) {
			s.log.Error("connsync: finish round", "user", c.UserID, "platform", c.Platform, "err", err)
		}
		return
	}
	if !current || applyErr != nil || end.known == nil {
		return
	}
	seenAt := time.Unix(poll.Unix(), 0).UTC() // as the store keeps it
	refreshed := make(map[string]bool, len(end.seen))
	for _, id := range end.seen {
		refreshed[id] = true
	}
	kept := make([]ledger.PlatformInstance, len(end.known))
	for i, in := range end.known {
		if refreshed[in.PlatformID] && in.LastSeen.Before(seenAt) {
			in.LastSeen = seenAt
		}
		kept[i] = in
	}
	st.known, st.knownGen = kept, gen
}

// listedFacts copies what the platform listed into in, cleaned to what
// the store keeps, and reports whether anything changed.
func listedFacts(in *ledger.PlatformInstance, li connector.Instance) bool {
	name := clean(li.Name, ledger.MaxInstanceLabelBytes)
	gpu := clean(ledger.GPUDisplayName(li.GPU), ledger.MaxInstanceGPUBytes)
	count := min(max(li.GPUCount, 0), ledger.MaxGPUCount)
	price, ok := li.Price, li.PriceOK
	if !ok {
		price = ledger.Decimal{}
	}
	changed := in.Name != name || in.GPU != gpu || in.GPUCount != count || in.PriceOK != ok ||
		!sameDecimal(in.Price, price) || in.Currency != li.Currency || in.Address != li.Address
	in.Name, in.GPU, in.GPUCount, in.Price, in.PriceOK, in.Currency = name, gpu, count, price, ok, li.Currency
	in.Address = li.Address // compared with where the rental's agent reports from (ledger.Corroborate)
	return changed
}

// sameDecimal reports whether a and b are the same number: the same
// representation (the steady case, compared without big.Rat), or equal
// by Cmp ("0.79" and "0.790").
func sameDecimal(a, b ledger.Decimal) bool { return a == b || a.Cmp(b) == 0 }

// clean drops control and format characters from s and clips it to n
// bytes at a character boundary: a platform's label is the user's free
// text, and the store refuses what a chat message cannot show.
func clean(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) {
			return -1
		}
		return r
	}, s)
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return strings.TrimSpace(s)
}

// eventFor is the ledger event a platform state brings to a rental in
// state rs: a stop, a resume, a release, or none (the ledger already
// agrees, or the platform's word is unknown).
func eventFor(listed connector.State, rs ledger.State) ledger.EventKind {
	switch {
	case listed == connector.Stopped && rs == ledger.Running:
		return ledger.EventStop
	case listed == connector.Running && rs == ledger.Stopped:
		return ledger.EventResume
	case listed == connector.Terminated && rs != ledger.Released:
		return ledger.EventRelease
	}
	return ""
}

// eventTime places a state change: the platform's time when it is sane
// (given, not in the future, not before the state last applied began,
// not before the rental's last event), else the poll's, approximate.
func eventTime(since, lastApplied, rentalLast, poll time.Time) (at time.Time, approx bool) {
	if since.IsZero() || since.After(poll) || since.Before(lastApplied) || since.Before(rentalLast) {
		return poll, true
	}
	return since, false
}

// known applies a listed instance the store already holds. A steady
// instance (same state, same facts) costs no store call: its rental is
// read only when its state or listing changed, or when force (it was
// just bound) asks for the price check.
func (p *pass) known(ctx context.Context, in ledger.PlatformInstance, li connector.Instance, force bool) error {
	cur := in
	dirty := listedFacts(&cur, li)
	if in.Status != ledger.PlatformBound {
		// Asked (waiting for the answer) or declined (never created
		// again): only what it lists is kept.
		return p.save(ctx, in, cur, dirty)
	}
	changed := li.State != connector.Unknown && string(li.State) != in.State
	if !dirty && !changed && !force {
		return p.save(ctx, in, cur, false)
	}
	r, err := p.rental(ctx, in.RentalID)
	if err != nil {
		return err
	}
	if r == nil {
		return p.save(ctx, in, cur, dirty)
	}
	if in.State == string(connector.Terminated) && r.State() == ledger.Released {
		if li.State == connector.Running || li.State == connector.Stopped {
			p.reappeared(ctx, cur, r)
		}
		return p.save(ctx, in, cur, dirty)
	}
	if li.State != connector.Unknown && string(li.State) != in.State {
		kind := eventFor(li.State, r.State())
		at, approx := eventTime(li.StateSince, in.StateAt, r.LastEventAt(), p.poll)
		cur.State, cur.StateAt, cur.LastSeen = string(li.State), at, p.poll
		if kind == "" {
			// The ledger agrees already (the user typed it): only
			// remember the state as applied.
			saved, err := p.s.store.SavePlatformInstance(ctx, cur)
			if err != nil {
				return err
			}
			cur, dirty = saved, false
		} else {
			a := p.action()
			a.Tell = p.eventNotice(ctx, kind, r, at, approx)
			nr, saved, err := p.s.store.ApplyPlatformEvent(ctx, a, cur, ledger.Event{Kind: kind, At: at})
			switch {
			case isCode(err, ledger.EINVALID) || isCode(err, ledger.ECONFLICT):
				// The ledger refuses the event (a later event typed by
				// hand): keep the state as applied, so the refusal is
				// not met again every round.
				p.s.log.Warn("connsync: platform event refused", "user", p.c.UserID, "platform", p.c.Platform, "kind", kind, "err", err)
				saved, err := p.s.store.SavePlatformInstance(ctx, cur)
				if err != nil {
					return err
				}
				cur, dirty = saved, false
			case err != nil:
				return err
			default:
				p.rentals[nr.ID], r, cur, dirty = nr, nr, saved, false
			}
		}
	}
	told, err := p.priceNotice(ctx, &cur, li, r, dirty)
	if err != nil {
		return err
	}
	if told {
		return nil // written with the notice
	}
	return p.save(ctx, in, cur, dirty)
}

// save writes cur when it changed. An unchanged one whose stored
// LastSeen has gone stale (seenPersist) is only noted: the round's end
// refreshes them all in one transaction.
func (p *pass) save(ctx context.Context, was, cur ledger.PlatformInstance, dirty bool) error {
	if !dirty {
		// Only a bound instance's sighting matters (a release after it
		// goes missing): an asked or declined one is not refreshed, so
		// thousands of ignored instances cost no writes.
		if was.Status == ledger.PlatformBound && p.poll.Sub(was.LastSeen) >= seenPersist {
			p.seen = append(p.seen, was.PlatformID)
		}
		return nil
	}
	cur.LastSeen = p.poll
	_, err := p.s.store.SavePlatformInstance(ctx, cur)
	return err
}

// action is the sync's own action: the poll's time, no dedupe key (the
// connector's lock and the applied State make it apply once).
func (p *pass) action() ledger.Action {
	return ledger.Action{UserID: p.c.UserID, At: p.poll}
}

// notice is the sync's notice for the outbox: silent, drained by this
// connector's rounds (flush).
func (p *pass) notice(text func(r *ledger.Rental) string) *ledger.Notice {
	return &ledger.Notice{Topic: outboxTopic(p.c.Platform), Silent: true, Text: text}
}

// eventNotice is the silent line for a synced stop, resume or release,
// written with the event (ApplyPlatformEvent's Tell).
func (p *pass) eventNotice(ctx context.Context, kind ledger.EventKind, r *ledger.Rental, at time.Time, approx bool) *ledger.Notice {
	lang := p.user(ctx).Lang
	when := messages.Render(lang, "time_platform")
	if approx {
		when = messages.Render(lang, "time_approx")
	}
	busy := ""
	if kind == ledger.EventStop && p.s.cfg.Agents != nil {
		if as, ok := p.s.cfg.Agents.AgentState(r.ID); ok && as.Verdict == ledger.VerdictBusy {
			busy = messages.Render(lang, "busy_note")
		}
	}
	at2 := fmtWhen(at, p.poll, p.zone(ctx), lang)
	return p.notice(func(r *ledger.Rental) string {
		return messages.Render(lang, "ev_"+string(kind), platformName(p.c.Platform), r.Name, at2, chat.RawHTML(when)) + busy
	})
}

// currentRate is the rental's rate now: its start price or its latest
// price change.
func currentRate(r *ledger.Rental) ledger.Price {
	pr := r.Price
	for _, e := range r.Events {
		if e.Kind == ledger.EventPrice {
			pr = e.Price
		}
	}
	return pr
}

// priceNotice tells the user once per distinct price when the platform
// lists a price other than the bound rental's rate (compared exactly, in
// the same currency and per hour), with the /price command that would
// change it. The ledger is never rewritten. The price told is stored with
// the notice in one transaction (TellPlatformInstance), with in's other
// changes; told reports that in was written so.
func (p *pass) priceNotice(ctx context.Context, in *ledger.PlatformInstance, li connector.Instance, r *ledger.Rental, dirty bool) (told bool, err error) {
	if !li.PriceOK || r.State() == ledger.Released || (r.Priced && r.Currency != li.Currency) {
		return false, nil
	}
	rate := currentRate(r)
	if r.Priced && (rate.Unit != ledger.UnitHour || rate.Amount.Cmp(li.Price) == 0) {
		return false, nil
	}
	if in.PriceToldOK && in.PriceTold.Cmp(li.Price) == 0 {
		return false, nil
	}
	lang := p.user(ctx).Lang
	has := messages.Render(lang, "no_price")
	if r.Priced {
		has = fmtRate(rate.Amount, r.Currency)
	}
	text := messages.Render(lang, "price", platformName(p.c.Platform), r.Name, fmtRate(li.Price, li.Currency), has, li.Price.String()+"/h")
	cur := *in
	cur.PriceTold, cur.PriceToldOK = li.Price, true
	if dirty {
		cur.LastSeen = p.poll
	}
	saved, err := p.s.store.TellPlatformInstance(ctx, cur, *p.notice(func(*ledger.Rental) string { return text }))
	if err != nil {
		return false, err
	}
	*in = saved
	return true, nil
}

// reappeared tells once that an instance released as missing is listed
// again; nothing is logged by itself (no duplicate rental).
func (p *pass) reappeared(ctx context.Context, in ledger.PlatformInstance, r *ledger.Rental) {
	key := fmt.Sprintf("sync_reappeared:%s:%s:%d", in.Platform, in.PlatformID, r.ID)
	fresh, err := p.s.store.MarkNotice(ctx, p.c.UserID, key, p.poll)
	if err != nil || !fresh {
		return
	}
	// Through the outbox, so a failed send is retried; a crash between
	// the mark and this write still loses it (it changes no money).
	text := messages.Render(p.user(ctx).Lang, "reappeared", platformName(p.c.Platform), in.PlatformID, r.Name)
	if _, err := p.s.store.Tell(ctx, p.c.UserID, *p.notice(func(*ledger.Rental) string { return text })); err != nil {
		p.s.log.Error("connsync: store a notice", "user", p.c.UserID, "platform", p.c.Platform, "err", err)
	}
}

// missing counts a known instance absent from a valid list and releases
// its rental once it has been absent from MissingLists lists in a row
// spanning MissingIntervals intervals, at its last sighting
// (approximate).
func (p *pass) missing(ctx context.Context, in ledger.PlatformInstance) error {
	if in.Status != ledger.PlatformBound || in.State == string(connector.Terminated) {
		return nil
	}
	p.st.missing[in.PlatformID]++
	last := in.LastSeen
	if t := p.st.seen[in.PlatformID]; t.After(last) {
		last = t
	}
	if p.st.missing[in.PlatformID] < MissingLists || p.poll.Sub(last) < time.Duration(MissingIntervals)*p.interval {
		return nil
	}
	r, err := p.rental(ctx, in.RentalID)
	if err != nil {
		return err
	}
	cur := in
	cur.State, cur.LastSeen = string(connector.Terminated), last
	if r == nil || r.State() == ledger.Released {
		cur.StateAt = last
		_, err := p.s.store.SavePlatformInstance(ctx, cur)
		return err
	}
	at := last
	if l := r.LastEventAt(); at.Before(l) {
		at = l
	}
	cur.StateAt = at
	a := p.action()
	lang := p.user(ctx).Lang
	when := fmtWhen(at, p.poll, p.zone(ctx), lang)
	a.Tell = p.notice(func(r *ledger.Rental) string {
		return messages.Render(lang, "ev_missing", platformName(p.c.Platform), r.Name, when)
	})
	nr, _, err := p.s.store.ApplyPlatformEvent(ctx, a, cur, ledger.Event{Kind: ledger.EventRelease, At: at})
	if err != nil {
		return err
	}
	p.rentals[nr.ID] = nr
	delete(p.st.missing, in.PlatformID)
	return nil
}
