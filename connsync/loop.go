package connsync

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// The loop's fixed policy. They are constants, not settings: they follow
// from the platforms' limits and from what a person wants to hear, not
// from a deployment.
const (
	// MaxBackoff caps the wait after failed rounds (interval·2^n).
	MaxBackoff = 30 * time.Minute
	// OutageAfter and OutageRounds: an outage is told when it has lasted
	// this long or this many rounds, whichever comes first, so a single
	// glitch is never a message.
	OutageAfter  = 15 * time.Minute
	OutageRounds = 3
	// BalanceEvery is the least time between two balance reads of one
	// connector: a balance moves by cents a minute, and each read is a
	// call against the platform's limit.
	BalanceEvery = 5 * time.Minute
	// tickMax is the longest Run waits between looks for due connectors.
	tickMax = 5 * time.Second
)

// Run polls every connector that is not rejected on its own schedule
// until ctx ends, sending notices through snd; it returns nil then,
// after the rounds under way have finished (each is bounded by
// CallTimeout). It never retries within a round: a failed round only
// moves the connector's next poll (see roundOne).
func (s *Syncer) Run(ctx context.Context, snd chat.Sender) error {
	s.SetSender(snd)
	tick := time.NewTicker(min(s.cfg.Interval, tickMax))
	defer tick.Stop()
	for {
		if err := s.dispatch(ctx, false); err != nil && ctx.Err() == nil {
			s.log.Error("connsync: list connectors", "err", err)
		}
		select {
		case <-ctx.Done():
			s.wg.Wait()
			return nil
		case <-tick.C:
		case <-s.kick:
		}
	}
}

// Round runs one round of every due connector and waits for them. The
// platforms' faults are handled as in Run (backoff, one message per
// incident) and not returned; the store's errors are.
func (s *Syncer) Round(ctx context.Context) error {
	return s.dispatch(ctx, true)
}

// SyncNow runs one round of the user's connector for platform now,
// whatever its schedule, and returns what it failed with: the
// platform's fault (connector errors, errors.Is-able) or the store's.
// Errors: ENOTFOUND (no such connector), ECONFLICT (its key was
// rejected: /connect a new one).
func (s *Syncer) SyncNow(ctx context.Context, userID int64, platform string) error {
	cs, err := s.store.Connectors(ctx, userID)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if c.Platform != platform {
			continue
		}
		if c.Rejected() {
			return ledger.Errorf(ledger.ECONFLICT, "the %s API key was rejected: send /connect %s NEWKEY with a new key", platform, platform)
		}
		return s.roundOne(ctx, c, s.connState(userID, platform))
	}
	return ledger.Errorf(ledger.ENOTFOUND, "no %s connector: send /connect %s KEY first", platform, platform)
}

// dispatch starts a round of each due connector that has none under
// way, at most MaxParallel at once; with wait it waits for them and
// returns the store's errors they met.
func (s *Syncer) dispatch(ctx context.Context, wait bool) error {
	cs, err := s.store.AllConnectors(ctx)
	if err != nil {
		return fmt.Errorf("connsync: connectors: %w", err)
	}
	now := s.now()
	var (
		wg   sync.WaitGroup
		emu  sync.Mutex
		errs []error
	)
	for _, c := range cs {
		if c.Rejected() || !s.supports(c.Platform) {
			continue
		}
		st := s.connState(c.UserID, c.Platform)
		s.mu.Lock()
		due := !st.busy && !now.Before(st.next)
		if due {
			st.busy = true
		}
		s.mu.Unlock()
		if !due {
			continue
		}
		s.wg.Add(1)
		wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer wg.Done()
			defer func() {
				s.mu.Lock()
				st.busy = false
				s.mu.Unlock()
			}()
			select {
			case s.slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-s.slots }()
			if err := s.roundOne(ctx, c, st); err != nil && !platformFault(err) && ctx.Err() == nil {
				s.log.Error("connsync: sync round", "user", c.UserID, "platform", c.Platform, "err", err)
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
			}
		}()
	}
	if wait {
		wg.Wait()
	}
	return errors.Join(errs...)
}

// platformFault reports whether err is the platform's answer (handled by
// the schedule), not the store's.
func platformFault(err error) bool {
	var rl *connector.RateLimitedError
	return errors.Is(err, connector.ErrUnauthorized) || errors.Is(err, connector.ErrUnavailable) ||
		errors.Is(err, connector.ErrBadAnswer) || errors.As(err, &rl) || errors.Is(err, context.DeadlineExceeded)
}

// roundOne is one round of connector c: one list call, a balance call at
// most every BalanceEvery, the list applied, the schedule moved, and
// FinishSyncRound (MarkSynced when no list was applied). Rounds of one connector never overlap (st.round).
func (s *Syncer) roundOne(ctx context.Context, c ledger.Connector, st *connState) error {
	st.round.Lock()
	defer st.round.Unlock()
	s.restoreOutage(st, c)
	poll := s.now().UTC()
	cl, err := s.client(c)
	if err != nil {
		// A key that does not open (GPULEDGER_SECRET or the key file
		// differs from the one it was sealed with, or the row was
		// altered): nothing is sent to the platform and nothing stored
		// changes, so a start with the right secret finds the connector
		// as it was. It is tried again after MaxBackoff; the user is told
		// once in this run (the listing says it too, see Connectors).
		s.schedule(st, poll.Add(MaxBackoff))
		var ku *keyUnopened
		if errors.As(err, &ku) {
			s.mu.Lock()
			tell := st.incident != incidentUnopened
			st.incident = incidentUnopened
			s.mu.Unlock()
			if tell {
				u := s.user(ctx, c.UserID)
				hint := ""
				if c.Hint != "" {
					hint = messages.Render(u.Lang, "hint", c.Hint)
				}
				s.send(ctx, c.UserID, messages.Render(u.Lang, ku.message(), platformName(c.Platform), chat.RawHTML(hint), c.Platform), false)
			}
		}
		return err
	}
	interval := max(s.cfg.Interval, cl.MinInterval())
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	list, err := cl.Instances(cctx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // shutting down: not the platform's fault
		}
		return s.fault(ctx, c, st, poll, interval, err)
	}
	s.readBalance(ctx, c, cl, st, poll, interval)
	end, applyErr := s.apply(ctx, c, st, list, poll, interval)
	s.recovered(ctx, c, st, poll, interval)
	text := ""
	if applyErr != nil {
		// Shown under /connect (conn_last_error), in English as before.
		text = "applying the list: " + view.LedgerMessage(applyErr, chat.LangEN, time.UTC, s.now())
	}
	// The round's one write when nothing changed: the stale last-seen
	// refreshes and the sync mark together.
	s.finish(ctx, c, st, end, poll, text, applyErr)
	return applyErr
}

// restoreOutage takes back, on the connector's first round in this
// process, the outage its user was told of before a restart: the next
// clean round tells it over, as the message promised, and the failures
// that go on do not tell it a second time.
func (s *Syncer) restoreOutage(st *connState, c ledger.Connector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.restored {
		return
	}
	st.restored = true
	if c.Outage != "" && st.incident == "" {
		st.incident, st.failingSince = c.Outage, c.OutageSince
	}
}

// markOutage stores the outage told (kind) or told over (""); a failure
// is logged: the loop's memory still has it, and only a restart before
// the next write would lose it.
func (s *Syncer) markOutage(ctx context.Context, c ledger.Connector, kind string, since time.Time) {
	if err := s.store.MarkOutage(ctx, c.UserID, c.Platform, kind, since); err != nil && !isCode(err, ledger.ENOTFOUND) {
		s.log.Error("connsync: store the outage told", "user", c.UserID, "platform", c.Platform, "err", err)
	}
}

// schedule sets the connector's next poll.
func (s *Syncer) schedule(st *connState, next time.Time) {
	s.mu.Lock()
	st.next = next
	s.mu.Unlock()
}

// markSynced records the end of a round that applied no list; its own
// failure is only logged (the round's outcome is already in the ledger).
func (s *Syncer) markSynced(ctx context.Context, c ledger.Connector, errText string) {
	if err := s.store.MarkSynced(ctx, c.UserID, c.Platform, s.now().UTC(), errText); err != nil && !isCode(err, ledger.ENOTFOUND) {
		s.log.Error("connsync: mark synced", "user", c.UserID, "platform", c.Platform, "err", err)
	}
}

// backoff is the wait after the n-th failed round in a row:
// interval·2^n, capped at MaxBackoff (or the interval, if longer).
func backoff(interval time.Duration, n int) time.Duration {
	limit := max(MaxBackoff, interval)
	d := interval
	for i := 0; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// faultKind names a failed list call's kind, for the incident message.
func faultKind(err error) (kind string, retryAfter time.Duration) {
	var rl *connector.RateLimitedError
	switch {
	case errors.As(err, &rl):
		return "rate", rl.RetryAfter
	case errors.Is(err, connector.ErrBadAnswer):
		return "bad", 0
	default:
		return "unavailable", 0
	}
}

// fault handles a failed list call: a rejected key rests the connector
// and is told once; anything else moves the next poll (the platform's
// Retry-After, or the backoff) and is told once when it has lasted
// OutageAfter or OutageRounds. Nothing in the ledger changes.
func (s *Syncer) fault(ctx context.Context, c ledger.Connector, st *connState, poll time.Time, interval time.Duration, err error) error {
	defer s.markSynced(ctx, c, err.Error())
	if errors.Is(err, connector.ErrUnauthorized) {
		said, merr := s.store.MarkRejected(ctx, c.UserID, c.Platform, c.KeyEnc, poll)
		switch {
		case merr != nil && isCode(merr, ledger.ECONFLICT):
			// Replaced meanwhile: the new key is not this one; tell no one.
		case merr != nil:
			return errors.Join(err, merr)
		case !said:
			u := s.user(ctx, c.UserID)
			hint := ""
			if c.Hint != "" {
				hint = messages.Render(u.Lang, "hint", c.Hint)
			}
			s.send(ctx, c.UserID, messages.Render(u.Lang, "rejected", platformName(c.Platform), chat.RawHTML(hint), c.Platform), false)
		}
		return err
	}
	kind, retry := faultKind(err)
	s.mu.Lock()
	st.failures++
	if st.failingSince.IsZero() {
		st.failingSince = poll
	}
	wait := backoff(interval, st.failures)
	if kind == "rate" {
		wait = max(retry, interval)
	}
	st.next = poll.Add(wait)
	tell := st.incident == "" && (st.failures >= OutageRounds || poll.Sub(st.failingSince) >= OutageAfter)
	since, failures := st.failingSince, st.failures
	s.mu.Unlock()
	if tell {
		u := s.user(ctx, c.UserID)
		loc := u.Location()
		last := messages.Render(u.Lang, "never")
		if !c.CheckedAt.IsZero() {
			last = fmtWhen(c.CheckedAt, poll, loc, u.Lang)
		}
		text := messages.Render(u.Lang, "outage", platformName(c.Platform), fmtWhen(since, poll, loc, u.Lang),
			messages.Render(u.Lang, "cause_"+kind), last)
		if s.send(ctx, c.UserID, text, false) {
			s.mu.Lock()
			st.incident = kind
			s.mu.Unlock()
			s.markOutage(ctx, c, kind, since)
		}
	}
	s.log.Warn("connsync: platform fault", "user", c.UserID, "platform", c.Platform, "kind", kind, "failures", failures, "err", err)
	return err
}

// recovered ends a run of failures after a clean list: the next poll is
// an interval away, and an outage the user was told of is told over.
func (s *Syncer) recovered(ctx context.Context, c ledger.Connector, st *connState, poll time.Time, interval time.Duration) {
	s.mu.Lock()
	told := st.incident != ""
	st.next, st.failures, st.failingSince, st.incident, st.lastGood = poll.Add(interval), 0, time.Time{}, "", poll
	s.mu.Unlock()
	if told {
		// Told once: if it cannot be sent, the incident is over anyway.
		// Stored first, so a restart after the message cannot repeat it.
		s.markOutage(ctx, c, "", time.Time{})
		u := s.user(ctx, c.UserID)
		s.send(ctx, c.UserID, messages.Render(u.Lang, "recovered", platformName(c.Platform)), false)
	}
}

// readBalance reads and records the account's balance at most every
// BalanceEvery. A platform without a balance API (Lambda) is fine; a
// failure is logged and retried next time, never an incident of its own
// (the list call is the connector's health).
func (s *Syncer) readBalance(ctx context.Context, c ledger.Connector, cl connector.Client, st *connState, poll time.Time, interval time.Duration) {
	if !st.lastBalance.IsZero() && poll.Sub(st.lastBalance) < BalanceEvery && interval < BalanceEvery {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	b, err := cl.Balance(cctx)
	cancel()
	switch {
	case errors.Is(err, connector.ErrNotSupported):
		st.lastBalance = poll
		return
	case err != nil:
		s.log.Warn("connsync: balance", "user", c.UserID, "platform", c.Platform, "err", err)
		return
	}
	st.lastBalance = poll
	_, err = s.store.RecordPlatformBalance(ctx, ledger.BalanceRecord{UserID: c.UserID, Platform: c.Platform, Amount: b.Amount, Currency: b.Currency, At: poll})
	if err != nil {
		s.log.Error("connsync: record balance", "user", c.UserID, "platform", c.Platform, "err", err)
	}
}

// user returns the user for their language and zone; a user that cannot
// be read gets English and UTC (the message still goes out).
func (s *Syncer) user(ctx context.Context, id int64) ledger.User {
	u, err := s.store.User(ctx, id)
	if err != nil {
		return ledger.User{ID: id, Lang: "en", TZ: "UTC"}
	}
	return u
}

// send sends text to the user's chat and reports whether it went out.
func (s *Syncer) send(ctx context.Context, userID int64, text string, silent bool) bool {
	_, ok := s.sendMsg(ctx, chat.Outgoing{ChatID: s.chatOf(ctx, userID), Text: text, Silent: silent})
	return ok
}

// sendMsg sends m; before Run there is no sender and nothing goes out.
func (s *Syncer) sendMsg(ctx context.Context, m chat.Outgoing) (int, bool) {
	snd := s.sender()
	if snd == nil {
		return 0, false
	}
	id, err := snd.Send(ctx, m)
	if err != nil {
		s.log.Warn("connsync: send", "chat", m.ChatID, "err", err)
		return 0, false
	}
	return id, true
}

// OutboxAge is how long a notice that cannot be sent is retried before
// it is given up (logged): a chat that is gone for a day does not keep
// its notices for ever.
const OutboxAge = 24 * time.Hour

// outboxBatch is the most notices one flush sends: a round never spends
// long on the chat, and what is left goes on the next round.
const outboxBatch = 50

// outboxTopic is the outbox topic of a connector's notices: one
// connector's rounds drain it, under its round lock.
func outboxTopic(platform string) string { return "sync:" + platform }

// flush sends the connector's pending notices, oldest first, deleting
// each once it is sent: at least once, and at most one duplicate when
// the process dies between a send and its delete. A send that fails
// stops the flush (the order is kept; the next round tries again); a
// notice older than OutboxAge that still fails is given up. Without a
// sender (before Run) they wait.
func (s *Syncer) flush(ctx context.Context, c ledger.Connector) {
	if s.sender() == nil {
		return
	}
	items, err := s.store.Outbox(ctx, c.UserID, outboxTopic(c.Platform), outboxBatch)
	if err != nil {
		s.log.Error("connsync: read the outbox", "user", c.UserID, "platform", c.Platform, "err", err)
		return
	}
	for _, it := range items {
		if _, ok := s.sendMsg(ctx, chat.Outgoing{ChatID: s.chatOf(ctx, it.UserID), Text: it.Text, Silent: it.Silent}); !ok {
			if s.now().Sub(it.At) < OutboxAge {
				return
			}
			s.log.Warn("connsync: notice given up", "user", c.UserID, "platform", c.Platform, "written", it.At)
		}
		if err := s.store.SentOutbox(ctx, it.ID); err != nil {
			s.log.Error("connsync: mark a notice sent", "user", c.UserID, "platform", c.Platform, "err", err)
			return
		}
	}
}
