package scheduler

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// An agent token alone never moves money or data through a platform's
// API (docs/threat-model.md). The automatic action asks the platforms
// how it would be carried out (Platforms.AutoWay, ledger.PlanAuto), and
// an agent whose reports contradict the platform's list turns the
// automation off for its rental with one card (checkTrust), kept in the
// store (ledger.AgentTrust) so neither many heartbeats nor a restart
// bring a second one.

// The mismatch card's buttons; the payload is the rental ID.
const (
	ActTrustOff = "tkof" // [Keep automation off]
	ActTrust    = "tktr" // [Trust this agent]
	ActTrustNew = "tknw" // [New token]: revoke the agent's token
)

// autoWay is Platforms.AutoWay; WayAgent when no platform is configured.
func (s *Scheduler) autoWay(ctx context.Context, r *ledger.Rental, action ledger.AutoAction) ledger.AutoWay {
	if s.cfg.Platforms == nil || r == nil || r.State() == ledger.Released {
		return ledger.AutoWay{Kind: ledger.WayAgent}
	}
	return s.cfg.Platforms.AutoWay(ctx, r, action)
}

// askInstead is an automatic action the rule does not let through the
// API (w is WayAsk): the idle card is sent again, with its buttons and
// the reason, so the user can tap Release now; once per idle streak.
func (s *Scheduler) askInstead(ctx context.Context, u *ledger.User, r *ledger.Rental, c *ledger.Card, action ledger.OrderAction, w ledger.AutoWay) error {
	fresh, err := s.store.MarkNotice(ctx, u.ID, "pact_ask:"+strconv.FormatInt(r.ID, 10)+":"+c.Incident, s.now())
	if err != nil || !fresh {
		return err
	}
	lg := lang(u)
	s.decide(ctx, u, r, ledger.DecisionHold, ledger.Msg("d_pact_ask", ledger.AutoAction(action), platformName(w.Platform)), view.WayEvidence(r.Name, w))
	reason := view.WayReason(lg, r.Name, w)
	// The card says so already ("No automatic release: …"); at the moment
	// the action would have been taken it comes again, with a sound.
	line := tr(lg, "idle_auto_ask", chat.RawHTML(tr(lg, "act_"+string(action))), reason)
	body, found := strings.CutSuffix(c.Text, "\n"+line)
	if !found {
		body = c.Text
	}
	return s.sendCard(ctx, u, c, body+"\n"+tr(lg, "pact_ask", reason), idleButtons(lg, r), true, true)
}

// checkTrust puts a mismatch between what the rental's agent reports and
// what its platform lists to the user, once, for a rental whose policy
// stops or releases automatically: the first fresh heartbeat
// that contradicts the list (and is not the disagreement the user
// trusted) turns automation through the API off for the rental and sends
// one card with [Keep automation off] [Trust this agent] [New token].
// While that question stands, or after Keep off, nothing more is asked.
func (s *Scheduler) checkTrust(ctx context.Context, u *ledger.User, r *ledger.Rental, st ledger.AgentState, now time.Time) error {
	if s.cfg.Platforms == nil || r.State() == ledger.Released || !st.Fresh(now, s.cfg.FreshWithin) {
		return nil
	}
	pol, err := s.store.AutoPolicy(ctx, r.ID)
	if err != nil || (pol.Action != ledger.AutoStop && pol.Action != ledger.AutoRelease) {
		// Nothing automatic to turn off: /autorelease, once set, says
		// why it would ask, and the next check puts the question.
		return err
	}
	w := s.cfg.Platforms.AutoWay(ctx, r, pol.Action)
	if w.Kind == ledger.WayAgent || w.Why != ledger.WayWhyMismatch {
		return nil // not on a platform, no mismatch, or one asked or kept off already
	}
	t := ledger.AgentTrust{RentalID: r.ID, UserID: u.ID, State: ledger.TrustAsked, Said: w.Said, Listed: w.Listed, At: now}
	if w.HasTrust && w.Trust.State == ledger.TrustTrusted {
		// What the user trusted before still disagrees: it is shown too,
		// and a Trust now covers both.
		t.Said, t.Listed = mergeFacts(w.Said, w.Trust.Said), mergeFacts(w.Listed, w.Trust.Listed)
	}
	// Stored before the card: a card that could not be sent is not sent
	// again every tick, and the automation is off either way (the idle
	// card, /autorelease and /why say why).
	if err := s.store.SaveAgentTrust(ctx, t); err != nil {
		return err
	}
	name := platformName(w.Platform)
	s.decide(ctx, u, r, ledger.DecisionMismatch, ledger.Msg("d_trust_asked", name), view.WayEvidence(r.Name, w))
	lg := lang(u)
	msg := tr(lg, "trust_ask", r.Name, name, w.PlatformID, view.FactsText(lg, w.Said), view.FactsText(lg, w.Listed))
	rows, err := s.sign(u.ID, [][]button{
		{{text(lg, "btn_trust_off"), ActTrustOff, r.ID}, {text(lg, "btn_trust"), ActTrust, r.ID}},
		{{text(lg, "btn_trust_new"), ActTrustNew, r.ID}},
	})
	if err != nil {
		return err
	}
	id, err := s.send(ctx, chat.Outgoing{ChatID: s.chatOf(ctx, u.ID), Text: msg, Buttons: rows, Silent: ledger.InQuietHours(u, now)})
	if err != nil {
		return err
	}
	t.MessageID = id
	return s.store.SaveAgentTrust(ctx, t)
}

// TrustAnswer is a press on the mismatch card: keep the automation off,
// trust the agent (the disagreement shown is accepted from now on; the
// next heartbeat is checked again and any other disagreement asks
// again), or revoke the agent's token (a new one, from /agent, is checked
// afresh). Each is journaled in the decision log. It edits the card and
// returns the toast. Errors: ENOTFOUND.
func (s *Scheduler) TrustAnswer(ctx context.Context, userID, rentalID int64, action string) (string, error) {
	defer s.lockRental(rentalID)()
	r, u, err := s.ownRental(ctx, userID, rentalID)
	if err != nil {
		return "", err
	}
	lg := lang(u)
	t, ok, err := s.store.AgentTrust(ctx, r.ID)
	if err != nil {
		return "", err
	}
	if !ok || t.State != ledger.TrustAsked {
		return text(lg, "t_trust_settled"), nil
	}
	name := platformName(r.Platform)
	said, listed := view.FactsText(lg, t.Said), view.FactsText(lg, t.Listed)
	now := s.now()
	var msg, toast, what string
	switch action {
	case ActTrustOff:
		t.State, what = ledger.TrustOff, "d_trust_off"
		msg, toast = tr(lg, "trust_kept_off", r.Name, name, said, listed), text(lg, "t_trust_off", r.Name)
	case ActTrust:
		t.State, what = ledger.TrustTrusted, "d_trust_trusted"
		msg, toast = tr(lg, "trust_trusted", r.Name, name, said, listed), text(lg, "t_trust")
	case ActTrustNew:
		if err := s.store.RevokeTokens(ctx, r.ID, now); err != nil {
			return "", err
		}
		if s.hub != nil {
			s.hub.Refresh(r.ID)
		}
		t.State, what = ledger.TrustReset, "d_trust_new"
		msg, toast = tr(lg, "trust_new", r.Name), text(lg, "t_trust_new", r.Name)
	default:
		return text(lg, "t_broken"), nil
	}
	t.At = now
	if err := s.store.SaveAgentTrust(ctx, t); err != nil {
		return "", err
	}
	w := ledger.AutoWay{Why: ledger.WayWhyMismatch, Platform: r.Platform, PlatformID: r.PlatformID, Said: t.Said, Listed: t.Listed}
	s.decide(ctx, u, r, ledger.DecisionUser, ledger.Msg(what), view.WayEvidence(r.Name, w))
	if t.MessageID != 0 {
		if _, err := s.send(ctx, chat.Outgoing{ChatID: s.chatOf(ctx, u.ID), EditMessageID: t.MessageID, Text: msg}); err != nil {
			s.log.Error("scheduler: edit the mismatch card", "rental", r.ID, "err", err)
		}
	} else if err := s.notifyText(ctx, u, msg); err != nil {
		s.log.Error("scheduler: tell the answer", "rental", r.ID, "err", err)
	}
	return toast, nil
}

// mergeFacts is f with the fields it lacks taken from g.
func mergeFacts(f, g ledger.HostFacts) ledger.HostFacts {
	if f.Instance == "" {
		f.Instance = g.Instance
	}
	if f.GPU == "" {
		f.GPU = g.GPU
	}
	if f.GPUCount == 0 {
		f.GPUCount = g.GPUCount
	}
	if f.Address == "" {
		f.Address = g.Address
	}
	return f
}
