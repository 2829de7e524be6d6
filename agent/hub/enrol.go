package hub

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// Enrolment: heartbeats sent with a user's enrolment token (wire.
// IsEnrolToken) announce the instance the agent runs on, and the
// Enrolment service lets the user's chat issue and revoke those tokens
// and log (adopt), ignore or reconnect what was announced.
//
// An enrolment heartbeat records nothing but the announcement: no beat,
// no idle interval, no order, no policy. The instance is kept in memory
// and written to the store only when its facts change or once a minute,
// so an instance waiting for its user's answer costs one write a minute,
// not one per heartbeat. The answer carries only the instance's own state
// and, once the user logged it, its rental's name and token.

// Refusals of enrolment heartbeats (and of install.sh for an enrolment
// token): each says what to do.
const (
	msgEnrolUnknown   = "unknown enrolment token: send /agent in the chat for a new install line"
	msgEnrolRevoked   = "this enrolment token was revoked: send /agent in the chat for a new install line"
	msgEnrolNoFacts   = "an enrolment token needs the instance facts: this agent is too old; reinstall it with the line /agent gives"
	msgEnrolNoKey     = "the agent could not tell this host apart (no instance ID, machine-id or host name)"
	msgInstanceClone  = "this token belongs to another instance (%s): a copy? This host must enrol as itself: start its agent with the enrolment token (the install line /agent gives), not with a token copied from another instance"
	announceEvery     = time.Minute     // an unchanged instance is written at most this often
	handoverTTL       = 24 * time.Hour  // how long a rental token waits in memory for its agent
	maxHandovers      = 1000            // rental tokens waiting at once
	maxInstances      = 100_000         // instances remembered
	retryIgnored      = 3600            // seconds an ignored instance's agent waits between heartbeats
	retryHeld         = 300             // seconds a held instance's agent waits
	newBootAfter      = 2 * time.Minute // a boot this much later than the one stored is a new one
	returnedNoteEvery = time.Hour       // the least time between two InstanceReturned of one instance
	lateEnrolFor      = 2 * time.Minute // how long after its agent run's last rental heartbeat an enrolment heartbeat of it is a late one
)

// Enrolment heartbeat results counted in
// gpuledger_hub_enrol_heartbeats_total (with resultUnauthorized,
// resultRateLimited, resultBadRequest, resultTooLarge and resultError).
const (
	enrolAnnounced = "announced" // a new instance was stored and told
	enrolWaiting   = "waiting"
	enrolIgnored   = "ignored"
	enrolHeld      = "held"
	enrolBound     = "bound"    // answered with the rental's token
	enrolReturned  = "returned" // bound, its own token used already: the user is asked
	enrolReleased  = "released" // its rental was released, and the agent run that reported for it still runs
)

// instanceRef names an instance before the store gave it an id.
type instanceRef struct {
	user int64
	key  string
}

// instanceEntry is the hub's memory of an announced instance.
type instanceEntry struct {
	in        ledger.Instance // as the store last returned it
	sent      ledger.Instance // as its agent last announced it (a pending one's stored facts stay the first)
	writtenAt time.Time       // when it was last written (Announce)
}

// handover is a rental's agent token in clear, kept until the instance's
// agent has reported with it (or handoverTTL).
type handover struct {
	instanceID int64
	rentalID   int64
	rental     string
	token      string
	hash       [32]byte
	at         time.Time
}

type returnedNote struct {
	boot time.Time // the instance's boot told
	at   time.Time
}

// errorKey returns the catalog key of a ledger error, or "".
func errorKey(err error) string {
	var le *ledger.Error
	if errors.As(err, &le) {
		return le.Key
	}
	return ""
}

// bearer returns the bearer token of r, or "".
func bearer(r *http.Request) string {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(raw)
}

// newToken returns prefix and 32 random bytes in unpadded base64url.
func newToken(prefix string) (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("hub: new token: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(raw[:]), nil
}

// serveEnrol answers a heartbeat sent with an enrolment token.
func (h *Hub) serveEnrol(w http.ResponseWriter, r *http.Request, raw string) {
	start := time.Now()
	result := resultError
	defer func() { h.m.observeEnrol(result, start) }()
	ctx := r.Context()

	et, ar, err := authToken(ctx, h, h.enrolTokens, raw)
	switch ar {
	case authUnknown:
		result = resultUnauthorized
		writeError(w, http.StatusUnauthorized, msgEnrolUnknown)
		return
	case authRevoked:
		result = resultUnauthorized
		writeError(w, http.StatusUnauthorized, msgEnrolRevoked)
		return
	case authLimited, authError:
		result = writeAuthRefusal(w, ar, err)
		return
	}
	hb, res := readHeartbeat(w, r, checkEnrolHeartbeat)
	if hb == nil {
		result = res
		return
	}
	now := h.now().UTC()
	in := instanceFacts(hb, now)
	if in.Key == "" {
		result = resultBadRequest
		writeError(w, http.StatusBadRequest, msgEnrolNoKey)
		return
	}
	in.UserID, in.TokenID = et.UserID, et.ID
	ans, res, err := h.enrol(ctx, in, hb.BootID, now)
	h.publish(ctx)
	switch errorKey(err) {
	case "enrol_token_revoked", "enrol_token_unknown":
		// Revoked (or gone) since it was cached.
		h.mu.Lock()
		h.enrolTokens.dropLocked(hashToken(raw))
		h.mu.Unlock()
		result = resultUnauthorized
		msg := msgEnrolRevoked
		if errorKey(err) == "enrol_token_unknown" {
			msg = msgEnrolUnknown
		}
		writeError(w, http.StatusUnauthorized, msg)
		return
	}
	if err != nil {
		h.log.Error("hub: enrolment heartbeat", "user", et.UserID, "err", err)
		writeLedgerError(w, err)
		return
	}
	result = res
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(wire.HeartbeatResponse{Enrolment: &ans})
}

// instanceFacts reduces an enrolment heartbeat, which carries Instance,
// to the instance it announces (UserID and TokenID left to the caller).
// Its key is computed as for a rental's heartbeats (heartbeat.key), so
// the two agree.
func instanceFacts(hb *heartbeat, now time.Time) ledger.Instance {
	f := hb.Instance
	return ledger.Instance{
		Key: hb.key, Platform: f.Platform, PlatformID: f.ID, Source: f.PlatformSource,
		Hostname: hb.Host.Hostname, GPUCount: hb.gpu.Count, GPUModel: hb.gpuModel,
		BootAt:    placeBoot(hb, f.BootedAt, now),
		FirstSeen: now, LastSeen: now,
	}
}

// placeBoot returns the agent's claimed time t on the server's clock (moved
// by the offset between its sent_at and now, like placeWindow), never
// after now and never more than ledger.MaxBootAge before it; zero stays
// zero (unknown).
func placeBoot(hb *heartbeat, t, now time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	if sent := sentAt(hb); !sent.IsZero() {
		t = t.Add(now.Sub(sent))
	}
	if t.After(now) {
		t = now
	}
	if lo := now.Add(-ledger.MaxBootAge); t.Before(lo) {
		t = lo
	}
	return t.UTC()
}

// sameFacts reports whether an announcement adds nothing to what was
// written: same token, host, GPUs and platform, and a boot within
// newBootAfter of the stored one (its placement on the server clock
// moves by the network's delay).
func sameFacts(a, b ledger.Instance) bool {
	d := a.BootAt.Sub(b.BootAt)
	return a.TokenID == b.TokenID && a.Hostname == b.Hostname && a.GPUModel == b.GPUModel &&
		a.GPUCount == b.GPUCount && a.Platform == b.Platform && a.PlatformID == b.PlatformID &&
		a.Source == b.Source && a.BootAt.IsZero() == b.BootAt.IsZero() && d <= newBootAfter && d >= -newBootAfter
}

// enrol records the announcement of in, sent by the agent run (boot id)
// run, and answers it by the instance's state.
func (h *Hub) enrol(ctx context.Context, in ledger.Instance, run string, now time.Time) (wire.EnrolmentAnswer, string, error) {
	h.enrolMu.Lock()
	defer h.enrolMu.Unlock()
	ref := instanceRef{in.UserID, in.Key}
	h.mu.Lock()
	ce := h.instances[ref]
	h.mu.Unlock()
	write := ce == nil || !sameFacts(ce.sent, in) || now.Sub(ce.writtenAt) >= announceEvery || now.Before(ce.writtenAt)
	var got ledger.Instance
	if ce != nil {
		got = ce.in
		if got.State == ledger.InstanceBound {
			if ans, res, ok, err := h.releasedStillUp(ctx, got, run, now); ok || err != nil {
				return ans, res, err
			}
		}
	}
	result := ""
	for range 2 {
		if write {
			var created bool
			var err error
			got, created, err = h.store.Announce(ctx, in)
			if ledger.ErrorCode(err) == ledger.ECONFLICT && errorKey(err) == "instances_pending_full" {
				return wire.EnrolmentAnswer{State: wire.EnrolHeld, RetryAfter: retryHeld,
					Message: "too many instances wait for their user's answer; this one is kept back until they answer some"}, enrolHeld, nil
			}
			if err != nil {
				return wire.EnrolmentAnswer{}, "", err
			}
			h.mu.Lock()
			if len(h.instances) >= maxInstances {
				clear(h.instances)
			}
			h.instances[ref] = &instanceEntry{in: got, sent: in, writtenAt: now}
			h.mu.Unlock()
			if created {
				result = enrolAnnounced
				a := got
				h.emit(ledger.InstanceAnnounced{Instance: a})
			}
		}
		if got.State != ledger.InstanceBound {
			break
		}
		// Bound: is its rental still there and unreleased? A release (or
		// an undone adoption) makes the instance pending again when it
		// is announced next (the store does it), so write now.
		re, err := h.rental(ctx, got.RentalID, now)
		if err != nil && ledger.ErrorCode(err) != ledger.ENOTFOUND {
			return wire.EnrolmentAnswer{}, "", err
		}
		gone := err != nil
		if !gone {
			_, gone = re.r.ReleasedAt()
		}
		if !gone {
			return h.answerBound(ctx, got, re.r, run, now)
		}
		h.dropHandover(got.ID)
		if write {
			// Written just now and still bound to a rental that is gone:
			// nothing to hand over.
			return wire.EnrolmentAnswer{State: wire.EnrolWaiting,
				Message: "the rental this instance was logged as is gone; waiting for the user"}, enrolWaiting, nil
		}
		h.forgetRental(got.RentalID)
		write = true
	}
	switch got.State {
	case ledger.InstanceIgnored:
		return wire.EnrolmentAnswer{State: wire.EnrolIgnored, RetryAfter: retryIgnored,
			Message: "the user said this instance is not theirs: nothing more is announced for it"}, enrolIgnored, nil
	}
	if result == "" {
		result = enrolWaiting
	}
	return wire.EnrolmentAnswer{State: wire.EnrolWaiting,
		Message: "announced: waiting for the user to log this instance in the chat"}, result, nil
}

// releasedStillUp answers an enrolment heartbeat of an instance bound to
// a rental that was released, sent by the very agent run (boot id run)
// that reported for that rental with its own token: refused that token
// by the release, the agent went back to the enrolment token, but it
// never stopped, so the instance is still up (and billing on the
// platform unless it was released there too). It is not a new instance
// to offer as one, which a card would: the user is told instead, once,
// that the released rental's agent still reports (noteAfterRelease, after
// the minutes a release takes on the platform), and the instance stays
// bound to the released rental until its agent starts again (a new run:
// the instance came back, or its ID is another instance's now), which is
// announced anew. ok is false when this does not apply. enrolMu is held.
func (h *Hub) releasedStillUp(ctx context.Context, in ledger.Instance, run string, now time.Time) (ans wire.EnrolmentAnswer, result string, ok bool, err error) {
	if run == "" {
		return ans, "", false, nil
	}
	h.mu.Lock()
	a := h.agents[in.RentalID]
	same := a != nil && a.state.Seen() && a.state.BootID == run
	h.mu.Unlock()
	if !same {
		return ans, "", false, nil
	}
	re, err := h.rental(ctx, in.RentalID, now)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		return ans, "", false, nil
	}
	if err != nil {
		return ans, "", false, err
	}
	if _, released := re.r.ReleasedAt(); !released {
		return ans, "", false, nil
	}
	h.noteAfterRelease(ctx, ledger.AgentToken{RentalID: in.RentalID})
	return wire.EnrolmentAnswer{State: wire.EnrolWaiting, RetryAfter: retryHeld,
		Message: fmt.Sprintf("%s was released in the chat, but this agent has run on since: the user is told that the instance is still up; it is announced as a new instance when its agent starts again", re.r.Name)}, enrolReleased, true, nil
}

// answerBound answers an instance bound to the unreleased rental r: with
// the rental's token while it waits in memory; with a fresh one when the
// rental's agent never reported (the server restarted before the hand-
// over); else the instance came back without its own token (a new
// container, or a copy), which is published once per boot (at
// most once an hour, within the rental's budget of messages) —
// unless the heartbeat comes from the agent run that reports for the
// rental with its own token right now: sent before that run switched
// tokens and delayed on the way (lateEnrolFor), it is no copy. enrolMu
// is held.
func (h *Hub) answerBound(ctx context.Context, in ledger.Instance, r *ledger.Rental, run string, now time.Time) (wire.EnrolmentAnswer, string, error) {
	h.mu.Lock()
	ho := h.handovers[in.ID]
	if ho != nil && (ho.rentalID != in.RentalID || now.Sub(ho.at) >= handoverTTL || now.Before(ho.at)) {
		h.dropHandoverLocked(in.ID)
		ho = nil
	}
	a := h.agents[in.RentalID]
	seen := a != nil && a.state.Seen()
	late := seen && run != "" && a.state.BootID == run && !now.Before(a.state.LastSeen) && now.Sub(a.state.LastSeen) < lateEnrolFor
	h.mu.Unlock()
	if ho != nil {
		return boundAnswer(ho), enrolBound, nil
	}
	if late {
		return wire.EnrolmentAnswer{State: wire.EnrolWaiting,
			Message: fmt.Sprintf("this agent reports for %s with the rental's own token already; this heartbeat came late", r.Name)}, enrolWaiting, nil
	}
	if !seen {
		ho, err := h.rebind(ctx, in, r, now)
		if err != nil {
			return wire.EnrolmentAnswer{}, "", err
		}
		return boundAnswer(ho), enrolBound, nil
	}
	h.mu.Lock()
	n, told := h.returned[in.ID]
	d := in.BootAt.Sub(n.boot)
	sameBoot := told && d <= newBootAfter && d >= -newBootAfter
	// A new boot is told at most once per returnedNoteEvery, and within
	// the rental's budget of agent-triggered messages: whoever holds the
	// enrolment token can claim the instance's key with a new boot at
	// every heartbeat.
	tell := !sameBoot && (!told || now.Sub(n.at) >= returnedNoteEvery || now.Before(n.at)) && h.noteLocked(a, r, "instance returned", now)
	if tell {
		if len(h.returned) >= maxInstances {
			clear(h.returned)
		}
		h.returned[in.ID] = returnedNote{boot: in.BootAt, at: now}
	}
	h.mu.Unlock()
	if tell {
		i, rl := in, r
		h.emit(ledger.InstanceReturned{Instance: i, Rental: rl})
	}
	return wire.EnrolmentAnswer{State: wire.EnrolWaiting,
		Message: fmt.Sprintf("this instance is logged as %s, whose own token was used already: the user is asked whether to reconnect it", r.Name)}, enrolReturned, nil
}

func boundAnswer(ho *handover) wire.EnrolmentAnswer {
	return wire.EnrolmentAnswer{State: wire.EnrolBound, Rental: ho.rental, Token: ho.token,
		Message: "logged as " + ho.rental + ": report with this rental's own token from now on"}
}

// rebind issues a new token for the rental instance in is bound to
// (revoking its earlier ones) and keeps it for the hand-over.
func (h *Hub) rebind(ctx context.Context, in ledger.Instance, r *ledger.Rental, now time.Time) (*handover, error) {
	tok, err := newToken("")
	if err != nil {
		return nil, err
	}
	hash := hashToken(tok)
	if _, err := h.store.RebindInstance(ctx, in.UserID, in.ID, hash, now); err != nil {
		return nil, err
	}
	ho := &handover{instanceID: in.ID, rentalID: r.ID, rental: r.Name, token: tok, hash: hash, at: now}
	h.mu.Lock()
	h.forgetTokensLocked(r.ID)
	h.tokens.storedLocked(hash)
	h.putHandoverLocked(ho)
	h.mu.Unlock()
	return ho, nil
}

// putHandoverLocked keeps ho, dropping the oldest beyond maxHandovers.
// h.mu is held.
func (h *Hub) putHandoverLocked(ho *handover) {
	h.dropHandoverLocked(ho.instanceID)
	for len(h.handovers) >= maxHandovers {
		var oldest *handover
		for _, o := range h.handovers {
			if oldest == nil || o.at.Before(oldest.at) {
				oldest = o
			}
		}
		h.dropHandoverLocked(oldest.instanceID)
	}
	h.handovers[ho.instanceID] = ho
	h.handoverBy[ho.hash] = ho.instanceID
}

func (h *Hub) dropHandover(instanceID int64) {
	h.mu.Lock()
	h.dropHandoverLocked(instanceID)
	h.mu.Unlock()
}

func (h *Hub) dropHandoverLocked(instanceID int64) {
	if ho := h.handovers[instanceID]; ho != nil {
		delete(h.handoverBy, ho.hash)
		delete(h.handovers, instanceID)
	}
}

// handedOverLocked forgets the hand-over of the token with hash: its
// agent reported with it. h.mu is held.
func (h *Hub) handedOverLocked(hash [32]byte) {
	if id, ok := h.handoverBy[hash]; ok {
		h.dropHandoverLocked(id)
	}
}

// setInstanceLocked updates the remembered instance after the user
// answered for it. h.mu is held.
func (h *Hub) setInstanceLocked(in ledger.Instance) {
	ref := instanceRef{in.UserID, in.Key}
	if e := h.instances[ref]; e != nil {
		e.in = in
	}
}

// Enrolment issues and revokes a user's enrolment tokens and carries out
// the user's answers to announced instances. It is what the conversation
// core (bot.Enrolment) and the scheduler's buttons call. Safe for
// concurrent use.
type Enrolment struct {
	hub *Hub
}

// Enrolment returns the hub's enrolment service.
func (h *Hub) Enrolment() *Enrolment { return &Enrolment{hub: h} }

// Issue makes a new enrolment token for the user: wire.EnrolTokenPrefix
// and 32 random bytes in unpadded base64url, returned once and never
// stored or logged (the store keeps its SHA-256). The user's earlier
// tokens stay valid, up to ledger.MaxEnrolTokens: beyond that the oldest
// is revoked and returned as revoked.
func (e *Enrolment) Issue(ctx context.Context, userID int64) (token string, revoked *ledger.EnrolToken, err error) {
	return e.IssueBy(ctx, userID, 0)
}

// IssueBy is Issue on a team's ledger userID for its member createdBy,
// whom the store records as the token's maker (an instance it announces
// is theirs when adopted; their tokens go when they leave the team).
// createdBy 0 is Issue.
func (e *Enrolment) IssueBy(ctx context.Context, userID, createdBy int64) (token string, revoked *ledger.EnrolToken, err error) {
	tok, err := newToken(wire.EnrolTokenPrefix)
	if err != nil {
		return "", nil, err
	}
	h := e.hub
	hash := hashToken(tok)
	rec, revoked, err := h.store.IssueEnrolTokenBy(ctx, userID, createdBy, hash, h.now())
	if err != nil {
		return "", nil, err
	}
	h.mu.Lock()
	h.enrolTokens.putLocked(hash, rec, h.now())
	if revoked != nil {
		h.enrolTokens.dropLocked(revoked.Hash)
	}
	h.mu.Unlock()
	return tok, revoked, nil
}

// Tokens returns the user's valid enrolment tokens, oldest first.
func (e *Enrolment) Tokens(ctx context.Context, userID int64) ([]ledger.EnrolToken, error) {
	return e.hub.store.EnrolTokens(ctx, userID)
}

// Revoke revokes all the user's enrolment tokens and returns how many
// were valid. They are refused from the next heartbeat on (the hub's
// cache of them is dropped). The user's per-rental tokens are untouched.
func (e *Enrolment) Revoke(ctx context.Context, userID int64) (int, error) {
	h := e.hub
	n, err := h.store.RevokeEnrolTokens(ctx, userID, h.now())
	if err != nil {
		return 0, err
	}
	h.mu.Lock()
	h.enrolTokens.forgetLocked(func(t *ledger.EnrolToken) bool { return t.UserID == userID })
	h.mu.Unlock()
	return n, nil
}

// Adopt logs the user's announced instance as a rental at offer (nil:
// unpriced), as the user's action a (undoable): named, typed and billed
// by ledger.RentalFromInstance, starting at the instance's boot as
// ledger.ClampBoot allows. The rental's own agent token is issued with
// it and handed to the instance's agent on its next enrolment heartbeat.
// Errors: ENOTFOUND (no such instance of this user), ECONFLICT (bound
// already), and the store's.
func (e *Enrolment) Adopt(ctx context.Context, a ledger.Action, instanceID int64, offer *ledger.PriceOffer) (*ledger.Rental, error) {
	h := e.hub
	// Under enrolMu, so that an announcement written meanwhile does not
	// put the instance back in memory as it was before.
	h.enrolMu.Lock()
	defer h.enrolMu.Unlock()
	in, err := h.store.Instance(ctx, a.UserID, instanceID)
	if err != nil {
		return nil, err
	}
	u, err := h.store.User(ctx, a.UserID)
	if err != nil {
		return nil, err
	}
	start, _ := ledger.ClampBoot(in.BootAt, in.FirstSeen, u.CreatedAt)
	tok, err := newToken("")
	if err != nil {
		return nil, err
	}
	hash := hashToken(tok)
	rl, got, err := h.store.AdoptInstance(ctx, a, in.ID, ledger.RentalFromInstance(in, offer, start), hash)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.tokens.storedLocked(hash)
	h.forgetTokensLocked(rl.ID)
	delete(h.rentals, rl.ID)
	h.setInstanceLocked(got)
	delete(h.returned, got.ID)
	h.putHandoverLocked(&handover{instanceID: got.ID, rentalID: rl.ID, rental: rl.Name, token: tok, hash: hash, at: h.now()})
	h.mu.Unlock()
	return rl, nil
}

// Ignore marks the user's pending instance "Not mine", as the user's
// action a: its agent is answered ignored and nothing more is announced
// for it. Errors: ENOTFOUND (no such instance of this user), ECONFLICT
// (bound).
func (e *Enrolment) Ignore(ctx context.Context, a ledger.Action, instanceID int64) (ledger.Instance, error) {
	h := e.hub
	h.enrolMu.Lock()
	defer h.enrolMu.Unlock()
	if _, err := h.store.Instance(ctx, a.UserID, instanceID); err != nil {
		return ledger.Instance{}, err
	}
	in, err := h.store.IgnoreInstance(ctx, a, instanceID)
	if err != nil {
		return ledger.Instance{}, err
	}
	h.mu.Lock()
	h.setInstanceLocked(in)
	h.mu.Unlock()
	return in, nil
}

// Reconnect gives the rental the user's instance is bound to a new agent
// token (revoking its earlier ones) and hands it to the instance's agent
// on its next enrolment heartbeat: the instance came back without its
// own token (InstanceReturned) and the user said it is theirs. Errors:
// ENOTFOUND (no such instance of this user), ECONFLICT (not bound, or
// the rental is released).
func (e *Enrolment) Reconnect(ctx context.Context, userID, instanceID int64) (*ledger.Rental, error) {
	h := e.hub
	in, err := h.store.Instance(ctx, userID, instanceID)
	if err != nil {
		return nil, err
	}
	if in.State != ledger.InstanceBound || in.RentalID == 0 {
		return nil, ledger.Errorc(ledger.ECONFLICT, "instance_not_bound", ledger.InstanceRentalName(in), in.ID)
	}
	r, err := h.store.RentalByID(ctx, in.RentalID)
	if err != nil {
		return nil, err
	}
	h.enrolMu.Lock()
	defer h.enrolMu.Unlock()
	if _, err := h.rebind(ctx, in, r, h.now()); err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.setInstanceLocked(in)
	h.mu.Unlock()
	return r, nil
}
