package scheduler

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// Enrolment: the cards of instances that announce themselves with an
// enrolment token (one tap logs one as a rental), and what a host's
// shutdown or new boot does to the ledger (DecideHost).

// Enrolment is what the enrolment cards' buttons ask of the agent hub
// (agent/hub.Enrolment): log an instance, ignore it, hand it a new token,
// revoke the user's enrolment tokens.
type Enrolment interface {
	Adopt(ctx context.Context, a ledger.Action, instanceID int64, offer *ledger.PriceOffer) (*ledger.Rental, error)
	Ignore(ctx context.Context, a ledger.Action, instanceID int64) (ledger.Instance, error)
	Reconnect(ctx context.Context, userID, instanceID int64) (*ledger.Rental, error)
	Revoke(ctx context.Context, userID int64) (int, error)
}

// Button actions of the enrolment and host cards. Payloads: an instance
// ID (ea, ep, en, ec), 0 (ex), "RID.FROMUNIX.TOUNIX" with TO 0 for a stop
// alone (hs), a rental ID (hb).
const (
	ActAdopt       = "ea" // Log at the offered price (or unpriced)
	ActOtherPrice  = "ep" // Other price: how to /adopt at another
	ActNotMine     = "en" // Not mine: announce nothing more for it
	ActReconnect   = "ec" // Reconnect: a new token for the rental it is logged as
	ActRevokeEnrol = "ex" // Revoke the user's enrolment tokens
	ActHostStopped = "hs" // Stopped (at FROM, until TO)
	ActHostBilled  = "hb" // It billed / still billing: nothing recorded
)

// Card kinds of the host cards (one per rental and incident).
const (
	CardHost     ledger.CardKind = "host"     // a shutdown or new boot: did billing stop?
	CardReturned ledger.CardKind = "returned" // an instance reports again without its token
)

// decisionHost is the decision-log kind of the stops and resumes a host's
// shutdown or boot recorded, and of the questions it raised.
const decisionHost ledger.DecisionKind = "host"

// maxMergedList is how many instances the merged card names.
const maxMergedList = 10

// ebutton is an enrolment or host card button before signing.
type ebutton struct {
	text, action, payload string
}

func (s *Scheduler) signE(userID int64, rows [][]ebutton) ([][]chat.Button, error) {
	out := make([][]chat.Button, 0, len(rows))
	for _, row := range rows {
		var r []chat.Button
		for _, b := range row {
			d, err := s.cfg.Buttons.Sign(userID, b.action, b.payload)
			if err != nil {
				return nil, err
			}
			r = append(r, chat.Button{Text: b.text, Data: d})
		}
		out = append(out, r)
	}
	return out, nil
}

// sendE sends (edit 0) or edits a message with buttons; silent makes no
// sound. It returns the message's ID.
func (s *Scheduler) sendE(ctx context.Context, u *ledger.User, edit int, msg string, rows [][]ebutton, silent bool) (int, error) {
	m := chat.Outgoing{ChatID: s.chatOf(ctx, u.ID), Text: msg, EditMessageID: edit, Silent: silent}
	if rows != nil {
		b, err := s.signE(u.ID, rows)
		if err != nil {
			return 0, err
		}
		m.Buttons = b
	}
	id, err := s.send(ctx, m)
	if err != nil {
		return 0, fmt.Errorf("send: %w", err)
	}
	if id == 0 {
		id = edit
	}
	return id, nil
}

// platformName is the profile's name of a platform key ("RunPod"), or ""
// for none.
func platformName(key string) string {
	if key == "" || key == ledger.UnknownPlatform {
		return ""
	}
	if p, ok := ledger.LookupProfile(key); ok {
		return p.Name
	}
	return key
}

// platformIn is platformName in lg: a platform's Chinese name in Chinese
// where it has one (view.PlatformName); "" for none.
func platformIn(lg, key string) string {
	if platformName(key) == "" {
		return ""
	}
	return view.PlatformName(lg, key)
}

// when is a time on a card: "18:02", "yesterday 18:02", in the user's
// zone, to the minute.
func (s *Scheduler) when(u *ledger.User, t time.Time) string {
	return view.FormatTime(t.Truncate(time.Minute), u.Location(), s.now(), lang(u))
}

// whenSpan is a range's two ends on a card: to the minute, or to the
// second when the range is short, so a stop and a boot in the same minute
// do not read "18:02–18:02" (view.FormatSpan).
func (s *Scheduler) whenSpan(u *ledger.User, from, to time.Time) (string, string) {
	return view.FormatSpan(from, to, u.Location(), s.now(), lang(u))
}

// instanceWhat is "RunPod (ID abc123)" or "a host called NAME": the
// instance as the user knows it.
func instanceWhat(lg string, in ledger.Instance) string {
	var sb strings.Builder
	if n := platformIn(lg, in.Platform); n != "" {
		sb.WriteString(n)
	} else {
		sb.WriteString(text(lg, "inst_platform_unknown"))
	}
	if in.PlatformID != "" {
		sb.WriteString(text(lg, "inst_id", in.PlatformID))
	} else if in.Hostname != "" {
		sb.WriteString(text(lg, "inst_host", in.Hostname))
	}
	return sb.String()
}

func gpuWhat(lg string, in ledger.Instance) string {
	if in.GPUCount <= 0 || in.GPUModel == "" {
		return text(lg, "inst_no_gpu")
	}
	return text(lg, "inst_gpus", in.GPUCount, in.GPUModel)
}

// bootClaimed reports whether the boot time shown is not the instance's
// word as it is: it was moved (ClampBoot) or is unknown.
func bootClaimed(in ledger.Instance, u *ledger.User) bool {
	if in.BootAt.IsZero() || in.BootAt.Equal(in.FirstSeen) || !in.BootAt.After(in.FirstSeen.Add(-ledger.MaxBootAge)) {
		return true
	}
	_, clamped := ledger.ClampBoot(in.BootAt, in.FirstSeen, u.CreatedAt)
	return clamped
}

// offerFor is the price a new instance's card offers: the user's last
// price for its platform and GPU (ledger.OfferFor), or nil.
func (s *Scheduler) offerFor(ctx context.Context, u *ledger.User, in ledger.Instance) (*ledger.PriceOffer, error) {
	b, err := s.store.Book(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	o, ok := ledger.OfferFor(b, in)
	if !ok {
		return nil, nil
	}
	return &o, nil
}

func offerText(lg string, o *ledger.PriceOffer) string {
	return view.FormatPrice(o.Price, o.Currency, lg)
}

// instanceCard is the card of one new instance: what it is, and
// [Log at PRICE] (or [Log, price later]) [Other price] [Not mine].
func (s *Scheduler) instanceCard(u *ledger.User, in ledger.Instance, offer *ledger.PriceOffer) (string, [][]ebutton) {
	lg := lang(u)
	// The time shown is the one a Log press starts the rental at.
	start, _ := ledger.ClampBoot(in.BootAt, in.FirstSeen, u.CreatedAt)
	up := s.when(u, start)
	host := in.Hostname
	if host == "" {
		host = "?"
	}
	var msg string
	if in.Platform == "" {
		msg = tr(lg, "inst_new_unknown", instanceID(lg, in), gpuWhat(lg, in), host, up)
	} else {
		msg = tr(lg, "inst_new", platformIn(lg, in.Platform), instanceID(lg, in), gpuWhat(lg, in), host, up)
	}
	if bootClaimed(in, u) {
		msg += " " + tr(lg, "inst_claimed")
	}
	id := strconv.FormatInt(in.ID, 10)
	other, notMine := ebutton{text(lg, "btn_other_price"), ActOtherPrice, id}, ebutton{text(lg, "btn_not_mine"), ActNotMine, id}
	if offer == nil && !currencyKnown(in) {
		// Neither a price nor a platform to take the currency from: a
		// rental cannot be logged without one, so the user gives both.
		msg += "\n" + tr(lg, "inst_no_offer_currency", id)
		return msg, [][]ebutton{{other, notMine}}
	}
	log := ebutton{text(lg, "btn_log_later"), ActAdopt, id}
	if offer != nil {
		log.text = text(lg, "btn_log_at", offerText(lg, offer))
	} else {
		msg += "\n" + tr(lg, "inst_no_offer")
	}
	return msg, [][]ebutton{{log, other, notMine}}
}

// currencyKnown reports whether the instance's platform has a profile,
// and so a currency an unpriced rental can be logged in.
func currencyKnown(in ledger.Instance) bool {
	_, ok := ledger.LookupProfile(in.Platform)
	return ok
}

func instanceID(lg string, in ledger.Instance) string {
	if in.PlatformID == "" {
		return ""
	}
	return text(lg, "inst_id", in.PlatformID)
}

// onInstanceAnnounced shows the user a new instance an enrolment token
// announced: a card of its own while its token has brought fewer than
// ledger.MaxCardsPerHour cards in the last hour, else a line in the one
// merged card, edited in place. A new instance is not urgent: in quiet
// hours its card comes silently, not held.
func (s *Scheduler) onInstanceAnnounced(ctx context.Context, in ledger.Instance) {
	if err := s.instanceAnnounced(ctx, in); err != nil {
		s.log.Error("scheduler: instance announced", "user", in.UserID, "instance", in.ID, "err", err)
	}
}

func (s *Scheduler) instanceAnnounced(ctx context.Context, in ledger.Instance) error {
	defer s.lockUser(in.UserID)()
	es := s.store
	u, err := s.store.User(ctx, in.UserID)
	if err != nil {
		return err
	}
	pending, err := es.PendingInstances(ctx, in.UserID)
	if err != nil {
		return err
	}
	now := s.now()
	cards := 0
	for _, p := range pending {
		if p.ID != in.ID && p.Carded && p.TokenID == in.TokenID && p.FirstSeen.After(now.Add(-time.Hour)) {
			cards++
		}
	}
	if cards < ledger.MaxCardsPerHour {
		return s.cardInstance(ctx, es, &u, in)
	}
	return s.updateMerged(ctx, es, &u)
}

// InstanceCard returns a fresh card of the user's instance when it waits
// for an answer again: /undo of a Log or a Not mine asks for it, so that
// the instance the store put back to pending is not left without a way
// to answer it. The core sends the card after its reply, stored with it,
// so it is returned rather than sent. An instance that had a card of its
// own gets a fresh one in its place (the old one lost its buttons to the
// answer, and may be far up the chat); the cap counts instances with a
// card, so this adds none. One that waited on the merged card is shown as
// a new announcement is (its own card or the merged card, sent here; ok
// false). Another state (it was ignored before it was logged) has no card.
func (s *Scheduler) InstanceCard(ctx context.Context, userID, instanceID int64) (card chat.Outgoing, ok bool, err error) {
	unlock := s.lockUser(userID)
	u, err := s.store.User(ctx, userID)
	if err != nil {
		unlock()
		return card, false, err
	}
	in, err := s.store.Instance(ctx, userID, instanceID)
	if err != nil || in.State != ledger.InstancePending {
		unlock()
		return card, false, err
	}
	if !in.Carded {
		unlock()
		return card, false, s.instanceAnnounced(ctx, in)
	}
	defer unlock()
	offer, err := s.offerFor(ctx, &u, in)
	if err != nil {
		return card, false, err
	}
	msg, rows := s.instanceCard(&u, in, offer)
	buttons, err := s.signE(u.ID, rows)
	if err != nil {
		return card, false, err
	}
	return chat.Outgoing{ChatID: s.chatOf(ctx, u.ID), Text: msg, Buttons: buttons}, true, nil
}

// cardInstance sends an instance its own card and records it.
func (s *Scheduler) cardInstance(ctx context.Context, es ledger.EnrolStore, u *ledger.User, in ledger.Instance) error {
	offer, err := s.offerFor(ctx, u, in)
	if err != nil {
		return err
	}
	msg, rows := s.instanceCard(u, in, offer)
	id, err := s.sendE(ctx, u, 0, msg, rows, ledger.InQuietHours(u, s.now()))
	if err != nil {
		return err
	}
	return es.SetInstanceCard(ctx, u.ID, in.ID, id)
}

// updateMerged shows the pending instances that have no card of their own
// on the user's one merged card, sent once and then edited in place; when
// none is left it says so (and loses its button).
func (s *Scheduler) updateMerged(ctx context.Context, es ledger.EnrolStore, u *ledger.User) error {
	pending, err := es.PendingInstances(ctx, u.ID)
	if err != nil {
		return err
	}
	var waiting []ledger.Instance
	for _, p := range pending {
		if !p.Carded {
			waiting = append(waiting, p)
		}
	}
	s.mu.Lock()
	msgID := s.merged[u.ID]
	s.mu.Unlock()
	lg := lang(u)
	if len(waiting) == 0 {
		if msgID == 0 {
			return nil
		}
		_, err := s.sendE(ctx, u, msgID, tr(lg, "inst_merged_none"), nil, true)
		s.mu.Lock()
		delete(s.merged, u.ID)
		s.mu.Unlock()
		return err
	}
	var list []string
	for i, p := range waiting {
		if i == maxMergedList {
			list = append(list, text(lg, "inst_merged_more", len(waiting)-maxMergedList))
			break
		}
		host := p.Hostname
		if host == "" {
			host = "?"
		}
		list = append(list, "• "+clip.Runes(host, 40, "…")+" · "+instanceWhat(lg, p)+" · "+gpuWhat(lg, p))
	}
	msg := tr(lg, "inst_merged", len(waiting), chat.RawHTML(chat.Escape(strings.Join(list, "\n"))))
	rows := [][]ebutton{{{text(lg, "btn_revoke_enrol"), ActRevokeEnrol, "0"}}}
	id, err := s.sendE(ctx, u, msgID, msg, rows, ledger.InQuietHours(u, s.now()))
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.merged[u.ID] = id
	s.mu.Unlock()
	return nil
}

// nextCard gives the oldest pending instance without a card of its own a
// card (the user answered one), and updates the merged card. The caller
// holds the user's lock.
func (s *Scheduler) nextCard(ctx context.Context, es ledger.EnrolStore, u *ledger.User) {
	pending, err := es.PendingInstances(ctx, u.ID)
	if err != nil {
		s.log.Error("scheduler: next instance card", "user", u.ID, "err", err)
		return
	}
	for _, p := range pending {
		if !p.Carded {
			if err := s.cardInstance(ctx, es, u, p); err != nil {
				s.log.Error("scheduler: next instance card", "user", u.ID, "instance", p.ID, "err", err)
				return
			}
			break
		}
	}
	if err := s.updateMerged(ctx, es, u); err != nil {
		s.log.Error("scheduler: merged instance card", "user", u.ID, "err", err)
	}
}

// lockUser serialises a user's enrolment cards (the merged card is one
// message per user). The rental locks use positive IDs; users take the
// negative side of the same map.
func (s *Scheduler) lockUser(id int64) func() { return s.lockRental(-id - 1) }

// onInstanceReturned tells the user that an instance logged as r reports
// again without its own token: [Reconnect it to NAME] [Not mine]. Once per
// boot of the instance.
func (s *Scheduler) onInstanceReturned(ctx context.Context, in ledger.Instance, r *ledger.Rental) {
	if err := s.instanceReturned(ctx, in, r); err != nil {
		s.log.Error("scheduler: instance returned", "rental", r.ID, "instance", in.ID, "err", err)
	}
}

func (s *Scheduler) instanceReturned(ctx context.Context, in ledger.Instance, r *ledger.Rental) error {
	defer s.lockRental(r.ID)()
	u, err := s.store.User(ctx, r.UserID)
	if err != nil {
		return err
	}
	c, seen, err := s.cardFor(ctx, &u, r, CardReturned, strconv.FormatInt(in.BootAt.Unix(), 10))
	if err != nil || seen {
		return err
	}
	lg := lang(&u)
	msg := tr(lg, "inst_returned", r.Name, instanceID(lg, in))
	id := strconv.FormatInt(in.ID, 10)
	rows := [][]ebutton{{{text(lg, "btn_reconnect", r.Name), ActReconnect, id}, {text(lg, "btn_not_mine"), ActNotMine, id}}}
	mid, err := s.sendE(ctx, &u, 0, msg, rows, ledger.InQuietHours(&u, s.now()))
	if err != nil {
		return err
	}
	c.MessageID, c.Text, c.FirstAt, c.LastAt = mid, msg, s.now(), s.now()
	if _, err := s.store.SaveCard(ctx, c); err != nil {
		return err
	}
	s.decide(ctx, &u, r, decisionHost, ledger.Msg("d_returned"), ledger.Msg("e_instance", in.Key))
	return nil
}

// enrolPress handles a verified press of an enrolment or host card button.
func (s *Scheduler) enrolPress(ctx context.Context, p chat.ButtonPress, snd chat.Sender) error {
	lg := chat.LangEN
	// The ledger the card was made for (a team's, for its members).
	u, uerr := s.store.User(ctx, p.ActsOn())
	if uerr == nil {
		lg = lang(&u)
	} else if ledger.ErrorCode(uerr) != ledger.ENOTFOUND {
		return uerr
	}
	answer := func(t string) error {
		return snd.AnswerCallback(ctx, p.Update.CallbackID, clip.Bytes(chat.StripHTML(t), 190, "…"))
	}
	if uerr != nil {
		return answer(text(lg, "t_broken"))
	}
	if p.Role != "" {
		lg = s.pressLang(ctx, p)
		switch p.Action {
		case ActHostStopped, ActHostBilled:
			// They change the rental: its owner's or an admin's.
			if rid, _, _, ok := parseRange(p.Payload); ok {
				if no := s.mayChange(ctx, p, rid, lg); no != "" {
					return answer(no)
				}
			}
		case ActReconnect:
			// A new agent token for the rental, the old one revoked: the
			// rental's owner's or an admin's.
			if id, err := strconv.ParseInt(p.Payload, 10, 64); err == nil && id > 0 {
				if in, err := s.store.Instance(ctx, u.ID, id); err == nil && in.RentalID != 0 {
					if no := s.mayChange(ctx, p, in.RentalID, lg); no != "" {
						return answer(no)
					}
				}
			}
		case ActRevokeEnrol:
			// The team's enrolment is its admins'.
			if !ledger.Role(p.Role).Admin() {
				return answer(text(lg, "t_admin_only"))
			}
		}
	}
	// Adopt and Not mine pass the update's key to their one store call;
	// the others record it first, so a redelivered press changes nothing.
	if p.Action != ActAdopt && p.Action != ActNotMine {
		err := s.store.MarkHandled(ctx, ledger.Action{UserID: u.ID, At: p.Now, Key: p.Update.Key})
		if ledger.ErrorCode(err) == ledger.EDUPLICATE {
			return answer("")
		}
		if err != nil && p.Update.Key != "" {
			return err
		}
	}
	var toast string
	var err error
	switch p.Action {
	case ActHostStopped:
		toast, err = s.pressStopped(ctx, &u, p)
	case ActHostBilled:
		toast, err = s.pressBilled(ctx, &u, p)
	default:
		toast, err = s.pressInstance(ctx, &u, p)
	}
	if err != nil {
		return err // the router words it (a redelivered press: no toast)
	}
	return answer(toast)
}

// pressInstance handles Log, Other price, Not mine, Reconnect and Revoke.
func (s *Scheduler) pressInstance(ctx context.Context, u *ledger.User, p chat.ButtonPress) (string, error) {
	lg := lang(u)
	id, err := strconv.ParseInt(p.Payload, 10, 64)
	if err != nil || id < 0 {
		return text(lg, "t_broken"), nil
	}
	es := s.store
	if s.cfg.Enrolment == nil {
		return text(lg, "t_no_enrolment"), nil
	}
	defer s.lockUser(u.ID)()
	if p.Action == ActRevokeEnrol {
		n, err := s.cfg.Enrolment.Revoke(ctx, u.ID)
		if err != nil {
			return "", err
		}
		if p.Update.MessageID != 0 {
			if _, err := s.sendE(ctx, u, p.Update.MessageID, tr(lg, "inst_revoked", n), nil, true); err != nil {
				s.log.Error("scheduler: merged card", "user", u.ID, "err", err)
			}
			s.mu.Lock()
			if s.merged[u.ID] == p.Update.MessageID {
				delete(s.merged, u.ID)
			}
			s.mu.Unlock()
		}
		if n == 0 {
			return text(lg, "t_none_to_revoke"), nil
		}
		return text(lg, "t_revoked", n), nil
	}
	in, err := es.Instance(ctx, u.ID, id)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		return text(lg, "t_inst_unknown"), nil
	}
	if err != nil {
		return "", err
	}
	boundName := func() string {
		if r, err := s.store.RentalByID(ctx, in.RentalID); err == nil && r.UserID == u.ID {
			return r.Name
		}
		return "?"
	}
	// A card's button: /undo asks. On a team's ledger the presser acts
	// (an instance adopted this way is theirs).
	a := ledger.Action{UserID: u.ID, By: p.By(), At: p.Now, Key: p.Update.Key, Via: ledger.ViaButton}
	switch p.Action {
	case ActAdopt:
		if in.State == ledger.InstanceBound {
			return text(lg, "t_inst_bound", boundName()), nil
		}
		offer, err := s.offerFor(ctx, u, in)
		if err != nil {
			return "", err
		}
		if offer == nil && !currencyKnown(in) {
			return chat.StripHTML(tr(lg, "inst_no_offer_currency", strconv.FormatInt(in.ID, 10))), nil
		}
		r, err := s.cfg.Enrolment.Adopt(ctx, a, in.ID, offer)
		if err != nil {
			return "", err
		}
		msg := AdoptedText(lg, u.Location(), s.now(), r)
		if b, err := s.store.Book(ctx, u.ID); err == nil {
			// A name a released rental had: say how that one is reached now.
			if n := view.ReuseNote(r, b.Rentals, u.Location(), s.now(), lg); n != "" {
				msg += "\n" + n
			}
		}
		if p.Update.MessageID != 0 {
			if _, err := s.sendE(ctx, u, p.Update.MessageID, msg, nil, true); err != nil {
				s.log.Error("scheduler: instance card", "user", u.ID, "err", err)
			}
		}
		s.decideAdopted(ctx, u, r, in, offer)
		s.nextCard(ctx, es, u)
		return text(lg, "t_logged", r.Name), nil
	case ActOtherPrice:
		if in.State == ledger.InstanceBound {
			return text(lg, "t_inst_bound", boundName()), nil
		}
		hint := tr(lg, "inst_other_price", strconv.FormatInt(in.ID, 10))
		if err := s.quietLine(ctx, u, hint); err != nil {
			s.log.Error("scheduler: other price", "user", u.ID, "err", err)
		}
		return chat.StripHTML(hint), nil
	case ActNotMine:
		if in.State == ledger.InstanceBound {
			// A returned copy of a logged instance: nothing changes; it
			// gets no token, and its rental stays.
			name := boundName()
			if p.Update.MessageID != 0 {
				if _, err := s.sendE(ctx, u, p.Update.MessageID, tr(lg, "inst_not_reconnected", name), nil, true); err != nil {
					s.log.Error("scheduler: returned card", "user", u.ID, "err", err)
				}
			}
			if err := s.store.MarkHandled(ctx, a); err != nil && ledger.ErrorCode(err) != ledger.EDUPLICATE && a.Key != "" {
				return "", err
			}
			return text(lg, "t_not_reconnected", name), nil
		}
		if _, err := s.cfg.Enrolment.Ignore(ctx, a, in.ID); err != nil {
			return "", err
		}
		if p.Update.MessageID != 0 {
			if _, err := s.sendE(ctx, u, p.Update.MessageID, tr(lg, "inst_ignored", instanceWhat(lg, in)), nil, true); err != nil {
				s.log.Error("scheduler: instance card", "user", u.ID, "err", err)
			}
		}
		s.nextCard(ctx, es, u)
		return text(lg, "t_ignored"), nil
	case ActReconnect:
		if in.State != ledger.InstanceBound {
			return text(lg, "t_inst_not_bound"), nil
		}
		r, err := s.cfg.Enrolment.Reconnect(ctx, u.ID, in.ID)
		if err != nil {
			return "", err
		}
		if p.Update.MessageID != 0 {
			if c, err := s.store.CardByMessage(ctx, u.ID, p.Update.MessageID); err == nil && c.RentalID == r.ID {
				c.Closed = true
				c.Text = tr(lg, "inst_reconnected", r.Name)
				if err := s.sendCard(ctx, u, &c, c.Text, nil, false, true); err != nil {
					s.log.Error("scheduler: returned card", "user", u.ID, "err", err)
				}
			}
		}
		s.decide(ctx, u, r, ledger.DecisionUser, ledger.Msg("d_reconnect_pressed"), ledger.Msg("e_instance", in.Key))
		return text(lg, "t_reconnected", r.Name), nil
	}
	return text(lg, "t_broken"), nil
}

// AdoptedText is the reply to a Log press or /adopt: "✓ Logged as
// runpod-abc123 from 10:02 at $0.79/h. /undo takes it back.", or without
// a price, how to set one.
func AdoptedText(lg string, loc *time.Location, now time.Time, r *ledger.Rental) string {
	from := view.FormatTime(r.StartedAt().Truncate(time.Minute), loc, now, lg)
	if !r.Priced {
		return tr(lg, "inst_logged_unpriced", r.Name, from)
	}
	return tr(lg, "inst_logged", r.Name, from, view.FormatPrice(r.Price, r.Currency, lg))
}

func (s *Scheduler) decideAdopted(ctx context.Context, u *ledger.User, r *ledger.Rental, in ledger.Instance, offer *ledger.PriceOffer) {
	why := ledger.Msg("e_adopted_unpriced", r.StartedAt())
	if offer != nil {
		why = ledger.Msg("e_adopted", r.StartedAt(), view.FormatPrice(offer.Price, offer.Currency, chat.LangEN))
	}
	s.decide(ctx, u, r, ledger.DecisionUser, ledger.Msg("d_adopted", in.Key), why)
}
