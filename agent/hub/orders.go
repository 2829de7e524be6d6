package hub

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// signed returns the wire form of o signed with the token hash: the HMAC
// key both ends derive from the token (wire.SigningKey).
func signed(o ledger.Order, hash [32]byte) wire.Order {
	w := wire.Order{ID: o.ID, Rental: o.Rental, Action: wireActions[o.Action], IssuedAt: o.IssuedAt.UTC(),
		ExpiresAt: o.ExpiresAt.UTC(), Nonce: o.Nonce, WaitFor: o.WaitFor, IdlePeopleSeconds: int64(o.IdlePeople / time.Second)}
	w.Signature = wire.SignOrderWithKey(hash[:], w)
	return w
}

// signedPolicy returns p for rental, issued now, valid for
// wire.PolicyTTL and signed with the token hash. The agent takes a policy
// only when it is signed (it can lead to a release), and refuses one
// older than the newest it took, so every answer carries a fresh one.
func signedPolicy(p wire.Policy, rental string, now time.Time, hash [32]byte) wire.Policy {
	p.Rental, p.IssuedAt, p.ExpiresAt = rental, now.UTC(), now.UTC().Add(wire.PolicyTTL)
	p.Signature = wire.SignPolicyWithKey(hash[:], p)
	return p
}

// IssueOrder creates a stop or release order for a rental's agent, handed
// out with its next heartbeats until the agent reports a result or the
// order expires. Errors: EINVALID (unknown action), ENOTFOUND (no such
// live rental, or no agent has reported for it), ECONFLICT (an order is
// already in flight: two presses of Release make one order).
func (h *Hub) IssueOrder(ctx context.Context, rentalID int64, action ledger.OrderAction, origin ledger.OrderOrigin) (ledger.Order, error) {
	if !action.Valid() {
		return ledger.Order{}, ledger.Errorf(ledger.EINVALID, "unknown order action %q: use stop or release", action)
	}
	rl, err := h.store.RentalByID(ctx, rentalID)
	if err != nil {
		return ledger.Order{}, err
	}
	if rl.State() != ledger.Running && !(action == ledger.OrderRelease && rl.State() == ledger.Stopped) {
		return ledger.Order{}, ledger.Errorc(ledger.ECONFLICT, "order_nothing_to", rl.Name, rl.State(), ledger.EventKind(action))
	}
	if _, seen := h.AgentState(rentalID); !seen {
		return ledger.Order{}, ledger.Errorc(ledger.ENOTFOUND, "no_agent_reported", rl.Name)
	}
	now := h.now().UTC().Truncate(time.Second)
	o := ledger.Order{ID: "o-" + randomHex(8), RentalID: rl.ID, UserID: rl.UserID, Rental: rl.Name, Action: action,
		Origin: origin, IssuedAt: now, ExpiresAt: now.Add(h.cfg.OrderTTL), Nonce: randomHex(16)}
	if origin == ledger.OriginAuto {
		// The agent re-checks who is connected just before it acts: the
		// decision rested on a heartbeat up to an interval old.
		pol, err := h.store.AutoPolicy(ctx, rl.ID)
		if err != nil {
			return ledger.Order{}, err
		}
		o.WaitFor = pol.WaitFor.Kinds()
		if len(o.WaitFor) > 0 {
			o.IdlePeople = pol.PeopleBound() // a person idle that long holds nothing
		}
	}
	o, err = h.store.CreateOrder(ctx, o)
	if err != nil {
		return o, err
	}
	h.mu.Lock()
	a := h.agentLocked(rl.ID)
	a.orders = append(a.orders, o)
	h.mu.Unlock()
	h.m.orders.WithLabelValues("issued").Inc()
	h.log.Info("hub: order issued", "order", o.ID, "rental", rl.ID, "action", action, "origin", origin)
	return o, nil
}

// OpenOrder returns the rental's order in flight, if any.
func (h *Hub) OpenOrder(rentalID int64) (ledger.Order, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a := h.agents[rentalID]; a != nil && len(a.orders) > 0 {
		return a.orders[0], true
	}
	return ledger.Order{}, false
}

// outcomeState maps an agent's reported outcome (on the wire) to the
// ledger's word for it and the order's state; false for one this server
// does not know.
func outcomeState(s string) (ledger.OrderOutcome, ledger.OrderState, bool) {
	outcome, known := ledgerOutcome(s)
	if !known {
		return "", "", false
	}
	switch outcome {
	case ledger.OutcomeReleaseStarted:
		return outcome, ledger.OrderStarted, true
	case ledger.OutcomeDone:
		return outcome, ledger.OrderDone, true
	case ledger.OutcomePreReleaseFailed, ledger.OutcomeReleaseFailed:
		return outcome, ledger.OrderFailed, true
	}
	return outcome, ledger.OrderRefused, true // every other outcome an agent sends is a refusal
}

// msgEnrolResult refuses an order result sent with an enrolment token.
const msgEnrolResult = "an enrolment token only announces its instance: order results need the rental's own agent token (the one the hub handed over when the instance was logged)"

func (h *Hub) serveResult(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if wire.IsEnrolToken(bearer(r)) {
		// Refused before the agent tokens are looked up: an enrolment
		// token is not one, and must not be remembered as unknown (that
		// would refuse its announcements for a while).
		writeError(w, http.StatusUnauthorized, msgEnrolResult)
		return
	}
	tok, ar, err := h.authenticate(ctx, r)
	switch ar {
	case authUnknown, authRevoked:
		// A revoked token may still report the result of the release
		// that revoked it: let that through below.
		if ar == authUnknown {
			writeError(w, http.StatusUnauthorized, "unknown agent token")
			return
		}
	case authLimited, authError:
		writeAuthRefusal(w, ar, err)
		return
	}
	res := readResult(w, r)
	if res == nil {
		return
	}
	id := r.PathValue("id")
	if res.OrderID == "" {
		res.OrderID = id
	}
	if res.OrderID != id {
		writeError(w, http.StatusBadRequest, "order_id in the body differs from the path")
		return
	}
	outcome, state, known := outcomeState(res.Outcome)
	if !known {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("unknown outcome %q", res.Outcome))
		return
	}
	o, err := h.store.Order(ctx, id)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND || err == nil && o.RentalID != tok.RentalID {
		// Another rental's order is as unknown as a made-up one.
		writeError(w, http.StatusNotFound, "no such order for this token")
		return
	}
	if err != nil {
		h.log.Error("hub: order result: read the order", "order", id, "err", err)
		writeLedgerError(w, err)
		return
	}
	if ar == authRevoked && !o.State.Open() {
		writeError(w, http.StatusUnauthorized, "agent token revoked")
		return
	}
	h.m.results.WithLabelValues(res.Outcome).Inc()
	if !o.State.Open() {
		// A retried or late result changes nothing.
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if o.State == ledger.OrderStarted && state == ledger.OrderStarted {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	now := h.now().UTC()
	o.State, o.Outcome, o.Message, o.UpdatedAt = state, outcome, res.Message, now
	o.Notes = notesOf(res)
	if state == ledger.OrderStarted {
		if st, ok := h.AgentState(o.RentalID); ok {
			o.BootID = st.BootID
		}
	}
	var ev *ledger.Event
	if state == ledger.OrderDone {
		// Recorded at the moment the agent confirms it, on the server's
		// clock.
		kind := ledger.EventRelease
		if o.Action == ledger.OrderStop {
			kind = ledger.EventStop
		}
		ev = &ledger.Event{Kind: kind, At: now}
	}
	err = h.finishOrder(ctx, o, ev)
	h.publish(ctx)
	if err != nil {
		h.log.Error("hub: order result", "order", o.ID, "err", err)
		writeLedgerError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// finishOrder stores an order's new state (and the confirmed event),
// updates the hub's memory and publishes the change (OrderUpdated).
func (h *Hub) finishOrder(ctx context.Context, o ledger.Order, ev *ledger.Event) error {
	saved, rl, err := h.store.UpdateOrder(ctx, o, ev)
	if ledger.ErrorCode(err) == ledger.ECONFLICT && !saved.State.Open() && saved.ID != "" {
		// Someone else finished it first (a retried result): nothing to do.
		h.dropOrder(o)
		return nil
	}
	if err != nil {
		return err
	}
	if saved.ID == o.ID && saved.Outcome == o.Outcome {
		saved.Notes = o.Notes // not stored: the scheduler words them
	}
	h.mu.Lock()
	a := h.agentLocked(saved.RentalID)
	for i := range a.orders {
		if a.orders[i].ID == saved.ID {
			a.orders[i] = saved
		}
	}
	h.mu.Unlock()
	if !saved.State.Open() {
		h.dropOrder(saved)
		h.m.orders.WithLabelValues(string(saved.State)).Inc()
	}
	if ev != nil {
		h.forgetRental(saved.RentalID)
		h.mu.Lock()
		a.idleOpen = false
		h.mu.Unlock()
		if ev.Kind == ledger.EventRelease {
			h.mu.Lock()
			h.forgetTokensLocked(saved.RentalID)
			h.mu.Unlock()
		}
	}
	h.log.Info("hub: order updated", "order", saved.ID, "state", saved.State, "outcome", saved.Outcome)
	h.emit(ledger.OrderUpdated{Order: saved, Rental: rl})
	return nil
}

func (h *Hub) dropOrder(o ledger.Order) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.agents[o.RentalID]
	if a == nil {
		return
	}
	keep := a.orders[:0]
	for _, x := range a.orders {
		if x.ID != o.ID {
			keep = append(keep, x)
		}
	}
	a.orders = keep
}

// ExpireOrders gives up orders never picked up before they expired, and
// orders started but never confirmed within StartedTimeout, telling the
// user either way. The scheduler calls it on every tick.
func (h *Hub) ExpireOrders(ctx context.Context) error {
	now := h.now().UTC()
	h.mu.Lock()
	var due []ledger.Order
	for _, a := range h.agents {
		for _, o := range a.orders {
			switch {
			case o.State == ledger.OrderPending && !now.Before(o.ExpiresAt):
				o.Message = "the agent did not pick the order up in time (is it running?)"
				due = append(due, o)
			case o.State == ledger.OrderStarted && now.Sub(o.UpdatedAt) >= h.cfg.StartedTimeout:
				o.Message = "the release command started but its end was never reported"
				due = append(due, o)
			}
		}
	}
	h.mu.Unlock()
	var firstErr error
	for _, o := range due {
		o.State, o.Outcome, o.UpdatedAt = ledger.OrderExpired, ledger.OutcomeExpired, now
		if err := h.finishOrder(ctx, o, nil); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	h.publish(ctx)
	return firstErr
}

// notesOf keeps an agent's notes as messages (the code, then its values
// as strings), as the door bounded them.
func notesOf(res *orderResult) []ledger.Message {
	var out []ledger.Message
	for _, n := range res.Notes {
		args := make([]any, len(n.Args))
		for j, a := range n.Args {
			args[j] = a
		}
		out = append(out, ledger.Msg(string(ledgerNote(n.Code)), args...))
	}
	return out
}
