package connsync

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/ledger"
)

// ErrNotLive is returned by Act for a rental that is not an instance the
// user's connected platform still lists (no platform ID, no connector, a
// rejected key, or the platform already reported it terminated).
var ErrNotLive = errors.New("connsync: the rental is not a live instance of a connected platform")

// Confirmation bounds: the first re-read comes firstGap after the call,
// each later gap doubles up to maxGap, and never more than maxReads
// lists are read (at the 3-minute default: 2+4+8+16+30×5 s, 9 reads).
const (
	firstGap = 2 * time.Second
	maxGap   = 30 * time.Second
	maxReads = 10
	// clockSkew is how far a platform's state time may lie ahead of ours,
	// or before the call, and still be believed (a platform's clock and
	// ours disagree by seconds, not minutes).
	clockSkew = 2 * time.Minute
)

// Live reports whether r is an instance of a platform the user connected
// that the platform still lists: r has a PlatformID, the user's
// connector for r.Platform is not rejected, and the state the sync last
// applied from the platform is not terminated. It makes no platform call
// (the chat calls it while composing a reply). A store error reads as
// not live and is logged.
func (s *Syncer) Live(ctx context.Context, r *ledger.Rental) (platform string, ok bool) {
	_, _, ok, err := s.live(ctx, r)
	if err != nil {
		s.log.Error("connsync: live", "rental", r.ID, "err", err)
	}
	if !ok {
		return "", false
	}
	return r.Platform, true
}

// CanAct is Live, and whether the platform can stop the instance
// (CanStop) rather than only terminate it.
func (s *Syncer) CanAct(ctx context.Context, r *ledger.Rental) (platform string, canStop bool, ok bool) {
	p, ok := s.Live(ctx, r)
	if !ok {
		return "", false, false
	}
	return p, s.cfg.Platforms.CanStop(p), true
}

// Listed returns what the platform last listed for r's instance (its ID,
// GPU, count and public address), when r is live (see Live). The
// scheduler compares it with what r's agent reports before it acts
// through the API without the user's tap (ledger.Corroborate). It makes
// no platform call; a store error reads as not live and is logged.
func (s *Syncer) Listed(ctx context.Context, r *ledger.Rental) (ledger.PlatformInstance, bool) {
	_, in, ok, err := s.live(ctx, r)
	if err != nil {
		s.log.Error("connsync: listed", "rental", r.ID, "err", err)
	}
	return in, ok && err == nil
}

// live finds r's connector and the platform instance it is bound to.
func (s *Syncer) live(ctx context.Context, r *ledger.Rental) (ledger.Connector, ledger.PlatformInstance, bool, error) {
	if r == nil || r.PlatformID == "" || !s.supports(r.Platform) {
		return ledger.Connector{}, ledger.PlatformInstance{}, false, nil
	}
	cs, err := s.store.Connectors(ctx, r.UserID)
	if err != nil {
		return ledger.Connector{}, ledger.PlatformInstance{}, false, err
	}
	var c ledger.Connector
	found := false
	for _, x := range cs {
		if x.Platform == r.Platform {
			c, found = x, true
		}
	}
	if !found || c.Rejected() {
		return c, ledger.PlatformInstance{}, false, nil
	}
	ins, err := s.store.PlatformInstances(ctx, r.UserID, r.Platform)
	if err != nil {
		return c, ledger.PlatformInstance{}, false, err
	}
	for _, in := range ins {
		if in.PlatformID == r.PlatformID && in.Status == ledger.PlatformBound && in.RentalID == r.ID {
			return c, in, in.State != string(connector.Terminated), nil
		}
	}
	return c, ledger.PlatformInstance{}, false, nil
}

// Act stops (terminate false) or terminates r's instance through the
// platform's API, then re-reads the platform's list until it shows the
// new state (Stopped; Terminated or gone from the list) or ConfirmWithin
// passes, in gaps growing from 2 s, waiting out any rate limit, never more
// than 10 reads. It holds the connector's lock throughout, so the sync
// loop does not apply the same change again.
//
// Confirmed: the ledger records the stop (or the release, for a
// terminate) at the platform's own state time when it is sane (not
// before the call or the rental's last event, not in the future beyond
// clock skew), else at the confirming poll's time (Approximate). Not
// confirmed: the result says what the platform listed last and answered
// (Detail), and the ledger is unchanged.
//
// Errors: ErrNotLive; connector.ErrNotSupported (a stop where the
// platform cannot stop: nothing is sent); the platform's error when the
// stop or terminate call itself failed (nothing is known to be done);
// the store's. ErrNotFound from the call is not an error: the list is
// read once, and an instance gone from it is confirmed terminated.
func (s *Syncer) Act(ctx context.Context, r *ledger.Rental, terminate bool) (ledger.PlatformActResult, error) {
	res := ledger.PlatformActResult{Action: "stop"}
	if terminate {
		res.Action = "terminate"
	}
	if r == nil {
		return res, ErrNotLive
	}
	res.Platform, res.PlatformID = r.Platform, r.PlatformID
	if !terminate && !s.cfg.Platforms.CanStop(r.Platform) {
		return res, fmt.Errorf("connsync: %s can only terminate: %w", r.Platform, connector.ErrNotSupported)
	}
	defer s.lockConn(r.UserID, r.Platform)()
	// Read again under the lock: a sync round may have applied a change.
	c, in, ok, err := s.live(ctx, r)
	if err != nil {
		return res, err
	}
	if !ok {
		return res, ErrNotLive
	}
	cl, err := s.client(c)
	if err != nil {
		return res, err
	}
	calledAt := s.now()
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	if terminate {
		err = cl.Terminate(cctx, r.PlatformID)
	} else {
		err = cl.Stop(cctx, r.PlatformID)
	}
	cancel()
	reads := maxReads
	switch {
	case err == nil:
	case errors.Is(err, connector.ErrNotFound):
		// The platform knows no such instance: one read says whether it is gone.
		reads = 1
		res.Detail = err.Error()
	default:
		return res, fmt.Errorf("connsync: %s %s on %s: %w", res.Action, r.PlatformID, r.Platform, err)
	}
	s.log.Info("connsync: sent through the API", "action", res.Action, "platform", r.Platform, "rental", r.ID)
	inst, gone, at, ok := s.confirm(ctx, cl, r.PlatformID, terminate, calledAt, reads, &res)
	if !ok {
		return res, ctx.Err()
	}
	return s.record(ctx, r, in, inst, gone, at, calledAt, terminate, res)
}

// confirm re-reads the platform's list until the instance shows the new
// state. ok is false when it did not within the bound; res then holds
// what the platform listed or answered last.
func (s *Syncer) confirm(ctx context.Context, cl connector.Client, id string, terminate bool, calledAt time.Time, reads int, res *ledger.PlatformActResult) (inst connector.Instance, gone bool, at time.Time, ok bool) {
	deadline := calledAt.Add(s.cfg.ConfirmWithin)
	// What the call answered (a "not found"), kept unless a read says more.
	answered := res.Detail
	defer func() {
		if !ok && res.Detail == "" {
			res.Detail = answered
		}
	}()
	gap := firstGap
	wait := gap
	if reads == 1 {
		wait = 0
	}
	for n := 0; n < reads; n++ {
		if wait > 0 {
			if err := s.sleep(ctx, wait); err != nil {
				return inst, false, at, false
			}
		}
		cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
		list, err := cl.Instances(cctx)
		cancel()
		now := s.now()
		var rl *connector.RateLimitedError
		wait = gap * 2
		if wait > maxGap {
			wait = maxGap
		}
		gap = wait
		switch {
		case errors.As(err, &rl):
			res.Detail = err.Error()
			wait = max(wait, rl.RetryAfter)
		case err != nil:
			res.Detail = err.Error()
		default:
			res.Detail = ""
			found := false
			for _, x := range list {
				if x.ID == id {
					inst, found = x, true
				}
			}
			if !found {
				res.State, res.RawState = string(connector.Terminated), ""
				if terminate || reads == 1 {
					// Terminated, or the platform said it knows no such
					// instance and its list agrees: gone.
					return inst, true, now, true
				}
				res.Detail = "no longer in the platform's list"
				break
			}
			res.State, res.RawState = string(inst.State), inst.RawState
			if inst.State == connector.Terminated || (!terminate && inst.State == connector.Stopped) {
				return inst, false, now, true
			}
		}
		left := deadline.Sub(now)
		if left <= 0 || (rl != nil && wait > left) {
			break // the bound has passed, or the platform asks us to wait past it
		}
		wait = min(wait, left)
	}
	return inst, false, at, false
}

// sleep waits d or until ctx ends; Config.Sleep replaces it in tests,
// which advance their clock instead.
func (s *Syncer) sleep(ctx context.Context, d time.Duration) error {
	if s.cfg.Sleep != nil {
		return s.cfg.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// record writes a confirmed change to the ledger: the stop, or the
// release for a terminate, on the bound rental, with the instance's new
// state, in one transaction (ApplyPlatformEvent), so the sync loop finds
// it applied.
func (s *Syncer) record(ctx context.Context, r *ledger.Rental, in ledger.PlatformInstance, inst connector.Instance, gone bool, pollAt, calledAt time.Time, terminate bool, res ledger.PlatformActResult) (ledger.PlatformActResult, error) {
	cur, err := s.store.RentalByID(ctx, r.ID)
	if err != nil {
		return res, err
	}
	at, approx := pollAt, true
	if ss := inst.StateSince; !gone && !ss.IsZero() && !ss.After(pollAt.Add(clockSkew)) && !ss.Before(calledAt.Add(-clockSkew)) {
		at, approx = ss, false
		if at.After(pollAt) {
			at = pollAt // a platform clock ahead of ours: not in our future
		}
	}
	if last := cur.LastEventAt(); at.Before(last) {
		at, approx = last, true
	}
	kind, state := ledger.EventStop, connector.Stopped
	if terminate || gone || inst.State == connector.Terminated {
		kind, state = ledger.EventRelease, connector.Terminated
	}
	in.State, in.StateAt = string(state), at
	if !gone {
		in.LastSeen = pollAt
	}
	res.Confirmed, res.At, res.Approximate, res.State, res.Rental = true, at, approx, string(state), cur
	switch {
	case cur.State() == ledger.Released, kind == ledger.EventStop && cur.State() == ledger.Stopped:
		// The ledger already says so (the user typed it): keep the
		// instance's state in step, change no money.
		if _, err := s.store.SavePlatformInstance(ctx, in); err != nil {
			return res, err
		}
		return res, nil
	}
	a := ledger.Action{UserID: r.UserID, At: pollAt,
		Key: "pact:" + strconv.FormatInt(in.ID, 10) + ":" + string(kind) + ":" + strconv.FormatInt(at.Unix(), 10)}
	nr, _, err := s.store.ApplyPlatformEvent(ctx, a, in, ledger.Event{Kind: kind, At: at})
	if ledger.ErrorCode(err) == ledger.EDUPLICATE {
		nr, err = s.store.RentalByID(ctx, r.ID)
	}
	if err != nil {
		res.Confirmed = false
		return res, fmt.Errorf("connsync: record the %s of %s: %w", kind, r.Name, err)
	}
	res.Rental = nr
	return res, nil
}
