package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
)

// An approval that no longer applies is closed by the system
// (ledger.ApprovalLapsed), not left pending: its rental was released,
// stopped, left the limit's scope (a new owner or project) or came back
// under the bound (the limit raised or removed, another rental of the
// scope stopped), or a month bound's month is over. Each tick lapses
// them (TeamStore.LapseApproval: one conditional update, so an admin's
// press a moment before wins) and edits the admins' cards of each to say
// why, without buttons. Only a positive finding lapses one: a read that
// fails (the limits, the month's book, the rental) lapses nothing that
// tick. A press on a lapsed approval, or on a pending one whose rental
// has ended (which it lapses), is answered that the request was closed,
// and does nothing: Stop it never stops a rental for it. When the same
// rental is over the same bound again, OpenApproval sets the lapsed
// approval back to pending and a fresh card is sent (a new question).

// lapseWhy is why an approval no longer applies: it picks the cards' note.
type lapseWhy int

const (
	lapseUnder    lapseWhy = iota // running, in scope, not over that bound now
	lapseReleased                 // the rental was released
	lapseGone                     // the rental is no longer in the store
	lapseStopped                  // the rental is stopped (nothing runs)
	lapseScope                    // the rental's owner or project is out of the limit's scope
	lapseMonth                    // a month bound's month is over
)

// String names why for the log.
func (why lapseWhy) String() string {
	switch why {
	case lapseReleased:
		return "released"
	case lapseGone:
		return "gone"
	case lapseStopped:
		return "stopped"
	case lapseScope:
		return "out of scope"
	case lapseMonth:
		return "month over"
	}
	return "under the bound"
}

// lapseApprovals lapses the pending approvals of aps (the team's, read
// this tick) that no longer apply. live is the team's live rentals at
// the tick's start; applies is checkLimits' answer: the keys over a
// bound now, or nil when the bounds could not be judged this tick (then
// only a released rental or a past month lapses an approval, which do
// not depend on the bounds).
func (s *Scheduler) lapseApprovals(ctx context.Context, u *ledger.User, tv *teamView, live []*ledger.Rental, aps []ledger.Approval, applies map[approvalKey]bool) error {
	now := s.now()
	period := now.In(u.Location()).Format("2006-01")
	byID := make(map[int64]*ledger.Rental, len(live))
	for _, r := range live {
		byID[r.ID] = r
	}
	var errs []error
	for _, ap := range aps {
		if ap.State != ledger.ApprovalPending || applies[keyOf(ap)] {
			continue
		}
		var why lapseWhy
		r := byID[ap.RentalID]
		switch {
		case r == nil:
			// Not live at the tick's start: the store says whether it was
			// released or is gone; a read that fails says nothing.
			rr, err := s.store.RentalByID(ctx, ap.RentalID)
			switch {
			case ledger.ErrorCode(err) == ledger.ENOTFOUND:
				why = lapseGone
			case err != nil:
				errs = append(errs, fmt.Errorf("approval %d: %w", ap.ID, err))
				continue
			case rr.UserID != u.ID:
				continue // not this team's rental: never touched
			case rr.State() == ledger.Released:
				why, r = lapseReleased, rr
			default:
				continue // live since the tick read the rentals: the next tick judges it
			}
		case ap.Period != "" && ap.Period < period:
			why = lapseMonth
		case applies == nil:
			continue // the bounds could not be judged this tick
		case r.State() != ledger.Running:
			why = lapseStopped
		case !inScope(ledger.Limit{Scope: ap.Scope, Subject: ap.Subject}, r.Owner, r.Project):
			why = lapseScope
		default:
			why = lapseUnder
		}
		if _, err := s.lapse(ctx, tv, r, ap, why, now); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// lapse lapses approval ap (of rental r, nil when it is gone) at at and
// edits its admins' cards to say why. lapsed is false when it was
// decided (or lapsed) a moment before: that stands, and no card is
// touched.
func (s *Scheduler) lapse(ctx context.Context, tv *teamView, r *ledger.Rental, ap ledger.Approval, why lapseWhy, at time.Time) (lapsed bool, err error) {
	stored, lapsed, err := s.teams().LapseApproval(ctx, ap.ID, at)
	if err != nil {
		return false, fmt.Errorf("lapse approval %d: %w", ap.ID, err)
	}
	if !lapsed {
		return false, nil
	}
	s.log.Info("scheduler: a team's approval no longer applies", "team", tv.team.ID, "approval", ap.ID, "rental", ap.RentalID, "why", why.String())
	s.editLapsedCards(ctx, tv, r, stored, why)
	return true, nil
}

// editLapsedCards edits each stored card of approval ap to its text and
// the note of why it lapsed, in its admin's language, without buttons.
// A card that cannot be edited is logged: a later press on it is
// answered that the request was closed.
func (s *Scheduler) editLapsedCards(ctx context.Context, tv *teamView, r *ledger.Rental, ap ledger.Approval, why lapseWhy) {
	cards, err := s.teams().ApprovalCards(ctx, ap.ID)
	if err != nil {
		s.log.Warn("scheduler: read the cards of a lapsed approval", "approval", ap.ID, "err", err)
		return
	}
	for _, c := range cards {
		lg := chat.LangEN
		if au, err := s.store.User(ctx, c.UserID); err == nil {
			lg = lang(&au)
		} else if tu, err := s.store.User(ctx, tv.team.Ledger()); err == nil {
			lg = lang(&tu)
		}
		msg := s.lapsedCardText(lg, tv, r, ap, lapseNote(lg, tv, r, ap, why))
		if _, err := s.send(ctx, chat.Outgoing{ChatID: c.ChatID, EditMessageID: int(c.MessageID), Text: msg}); err != nil {
			s.log.Warn("scheduler: edit the card of a lapsed approval", "approval", ap.ID, "chat", c.ChatID, "err", err)
		}
	}
}

// lapsedCardText is a closed approval's card: the team, the card's text
// (when its rental is still in the store) and note.
func (s *Scheduler) lapsedCardText(lg string, tv *teamView, r *ledger.Rental, ap ledger.Approval, note string) string {
	msg := "👥 " + chat.Escape(tv.team.Name) + " · "
	if r != nil {
		msg += s.approvalText(lg, tv, r, ap) + "\n"
	}
	return msg + note
}

// lapseNote says why an approval no longer applies: "No longer needed:
// box5 was released." (HTML).
func lapseNote(lg string, tv *teamView, r *ledger.Rental, ap ledger.Approval, why lapseWhy) string {
	if r == nil {
		return tr(lg, "approval_lapsed_gone")
	}
	scope, _, _ := limitWords(lg, tv, ap)
	switch why {
	case lapseReleased:
		return tr(lg, "approval_lapsed_released", r.Name)
	case lapseGone:
		return tr(lg, "approval_lapsed_gone")
	case lapseStopped:
		return tr(lg, "approval_lapsed_stopped", r.Name)
	case lapseScope:
		return tr(lg, "approval_lapsed_scope", r.Name, chat.RawHTML(scope))
	case lapseMonth:
		return tr(lg, "approval_lapsed_month", ap.Period)
	}
	return tr(lg, "approval_lapsed_under", r.Name, chat.RawHTML(scope))
}

// pressOnEnded handles an admin's press on pending approval ap whose
// rental has ended (released, or gone from the store): it lapses the
// approval, edits its cards and answers that the request was closed;
// Stop it never acts on it. done is false when the rental still lives
// (the press goes on to decide) or the approval was decided a moment
// before (the decision's answer follows).
func (s *Scheduler) pressOnEnded(ctx context.Context, p chat.ButtonPress, snd chat.Sender, lg string, tv *teamView, ap ledger.Approval) (done bool, err error) {
	r, err := s.store.RentalByID(ctx, ap.RentalID)
	why := lapseReleased
	switch {
	case ledger.ErrorCode(err) == ledger.ENOTFOUND:
		r, why = nil, lapseGone
	case err != nil:
		return true, err
	case r.UserID != p.ActsOn():
		return true, snd.AnswerCallback(ctx, p.Update.CallbackID, text(lg, "t_broken"))
	case r.State() != ledger.Released:
		return false, nil
	}
	lapsed, err := s.lapse(ctx, tv, r, ap, why, p.Now)
	if err != nil {
		return true, err
	}
	if !lapsed {
		cur, err := s.teams().Approval(ctx, ap.ID)
		if err != nil {
			return true, err
		}
		if cur.State != ledger.ApprovalLapsed {
			return false, nil // decided a moment before: DecideApproval's conflict answers
		}
	}
	return true, s.answerLapsed(ctx, p, snd, lg, tv, ap)
}

// answerLapsed answers a press on a lapsed approval that the request was
// closed ("This request was closed: box5 no longer needs it") and edits
// the pressed card to say so, without buttons. Nothing else happens.
func (s *Scheduler) answerLapsed(ctx context.Context, p chat.ButtonPress, snd chat.Sender, lg string, tv *teamView, ap ledger.Approval) error {
	r, err := s.store.RentalByID(ctx, ap.RentalID)
	if err != nil || r.UserID != p.ActsOn() {
		r = nil
	}
	toast, note := text(lg, "t_lapsed_gone"), tr(lg, "t_lapsed_gone")
	if r != nil {
		toast, note = text(lg, "t_lapsed", r.Name), tr(lg, "t_lapsed", r.Name)
	}
	if p.Update.MessageID != 0 {
		msg := s.lapsedCardText(lg, tv, r, ap, note)
		if _, err := s.send(ctx, chat.Outgoing{ChatID: p.Update.ChatID, EditMessageID: p.Update.MessageID, Text: msg}); err != nil {
			s.log.Warn("scheduler: edit the card of a lapsed approval", "approval", ap.ID, "err", err)
		}
	}
	return snd.AnswerCallback(ctx, p.Update.CallbackID, clip.Bytes("👥 "+tv.team.Name+" · "+toast, 190, "…"))
}
